//! Identifiers as the language reads them. Python compares identifiers after NFKC
//! normalization (`ｏｓ.ｓｙｓｔｅｍ` and `𝐞𝐱𝐞𝐜` are `os.system` and `exec`); JavaScript
//! decodes `\uXXXX` and `\u{…}` escapes in identifiers (`requir\u0065` is `require`).
//! The analysis reads every name from the tree, so the source is rewritten once, before
//! anything is looked up: each identifier the parser found is replaced by its normal
//! form and the result is parsed again. String contents are never touched (Python looks
//! `getattr(os, 'ｓｙｓｔｅｍ')` up as written).

use super::Lang;
use tree_sitter::Tree;
use unicode_normalization::UnicodeNormalization;

/// Node kinds that are identifiers in the grammars cordon uses.
const IDENT_KINDS: &[&str] = &[
    "identifier",
    "property_identifier",
    "shorthand_property_identifier",
    "shorthand_property_identifier_pattern",
    "private_property_identifier",
    "type_identifier",
    "statement_identifier",
    "constant",
];

/// The source with every identifier in its normal form, or `None` when it already is.
pub(super) fn normalized_source(lang: Lang, src: &str, tree: &Tree) -> Option<String> {
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for n in super::all_nodes(tree.root_node()) {
        if !IDENT_KINDS.contains(&n.kind()) {
            continue;
        }
        let text = src.get(n.byte_range()).unwrap_or("");
        if let Some(norm) = normalize(lang, text).filter(|t| t != text) {
            edits.push((n.byte_range(), norm));
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for (r, t) in edits {
        if r.start < at {
            continue; // nested identifier nodes: the outer one was rewritten
        }
        out.push_str(src.get(at..r.start)?);
        out.push_str(&t);
        at = r.end;
    }
    out.push_str(src.get(at..)?);
    Some(out)
}

/// One identifier as the language compares it; `None` when it has no normal form (an
/// escape that is not valid, which the language would reject).
pub(crate) fn normalize(lang: Lang, text: &str) -> Option<String> {
    match lang {
        Lang::Python => Some(if text.is_ascii() {
            text.to_string()
        } else {
            text.nfkc().collect()
        }),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => js_unescape(text),
        Lang::Ruby => Some(text.to_string()),
    }
}

/// Decode `\uXXXX` and `\u{X…}` escapes in a JavaScript identifier.
fn js_unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return Some(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let esc = rest[i..].strip_prefix("\\u")?;
        let (hex, after) = match esc.strip_prefix('{') {
            Some(b) => {
                let end = b.find('}')?;
                (&b[..end], &b[end + 1..])
            }
            None => (esc.get(..4)?, esc.get(4..)?),
        };
        let c = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)?;
        // An escape must stand for an identifier character (not a quote or a dot).
        if !(c == '$' || c == '_' || c.is_alphanumeric()) {
            return None;
        }
        out.push(c);
        rest = after;
    }
    out.push_str(rest);
    Some(out)
}
