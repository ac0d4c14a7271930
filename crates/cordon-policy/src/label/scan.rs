//! The tokenizer and matcher behind trust labels: it finds every place in a text where a
//! reader (a model, a browser, a person) could see the start of an `untrusted_content`
//! tag, however it is spelled.
//!
//! A *tag start* is an opener (`<`, a look-alike, or an encoding of either), then any run
//! of ignorable characters and slashes, then letters that fold to `untrusted`, with
//! ignorable characters allowed between them. Folding is deliberately wider than any one
//! parser: compatibility decomposition (fullwidth and mathematical letters, `﹤`),
//! lowercase, a table of look-alike letters from other scripts, and decoding of HTML
//! entities, percent-encoding and backslash escapes one character at a time. Matching
//! too much costs a bracket changed in an odd text; matching too little lets data end
//! the wrapper. Every token is looked at a bounded number of times, so the scan is
//! linear in the input.

use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// What one piece of the input means to a tag reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// `<` or anything a reader could take for it.
    Open,
    /// `>` or anything a reader could take for it.
    Close,
    /// `/` `\` and look-alikes.
    Slash,
    /// Characters a reader might not see or might drop: whitespace, controls, format
    /// characters, combining marks, `_` and dashes.
    Skip,
    /// A letter, folded to lowercase ASCII.
    Letter(u8),
    /// Anything else.
    Other,
}

/// The letters of a tag name that must never start inside labelled content.
const NAME: &[u8] = b"untrusted";

/// A place where a tag could start: the opener's byte range, and the byte range of the
/// closer that ends the same tag when one was found nearby.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagStart {
    pub open: (usize, usize),
    pub close: Option<(usize, usize)>,
}

/// How far past a tag start a closer is looked for (bytes); beyond it the closer is left
/// alone, which is harmless: only the opener matters.
const CLOSER_REACH: usize = 256;

const OPENERS: &[char] = &[
    '<',
    '\u{FF1C}',
    '\u{FE64}',
    '\u{2039}',
    '\u{00AB}',
    '\u{27E8}',
    '\u{2329}',
    '\u{3008}',
    '\u{300A}',
    '\u{29FC}',
    '\u{276E}',
    '\u{276C}',
    '\u{2770}',
    '\u{27EA}',
    '\u{02C2}',
    '\u{1438}',
    '\u{2329}',
    '\u{227A}',
    '\u{2A7D}',
    '\u{2264}',
    '\u{E003C}',
];
const CLOSERS: &[char] = &[
    '>',
    '\u{FF1E}',
    '\u{FE65}',
    '\u{203A}',
    '\u{00BB}',
    '\u{27E9}',
    '\u{232A}',
    '\u{3009}',
    '\u{300B}',
    '\u{29FD}',
    '\u{276F}',
    '\u{276D}',
    '\u{2771}',
    '\u{27EB}',
    '\u{02C3}',
    '\u{1433}',
    '\u{227B}',
    '\u{2A7E}',
    '\u{2265}',
    '\u{E003E}',
];
const SLASHES: &[char] = &[
    '/',
    '\\',
    '\u{FF0F}',
    '\u{FF3C}',
    '\u{2044}',
    '\u{2215}',
    '\u{29F8}',
    '\u{29F9}',
    '\u{2571}',
    '\u{2572}',
    '\u{FE68}',
    '\u{E002F}',
    '\u{E005C}',
];

/// Characters a reader may not see, or a normalizer may drop.
fn is_skip(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || is_combining_mark(c)
        || matches!(c,
            '_' | '-' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}'
            | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}'
            | '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFD}' | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}')
}

/// Letters of other scripts, and small capitals, that read as the Latin letters of the
/// tag name (after lowercasing). Not all of Unicode's confusables: the ones a reader
/// would take for `u n t r s e d c o` and their neighbours.
fn confusable(c: char) -> Option<u8> {
    Some(match c {
        'а' | 'ɑ' | 'α' | 'ᴀ' => b'a',
        'с' | 'ϲ' | 'ᴄ' => b'c',
        'ԁ' | 'ᴅ' | 'ɗ' => b'd',
        'е' | 'ё' | 'ε' | 'ᴇ' | 'ҽ' => b'e',
        'ո' | 'п' | 'ɴ' | 'η' => b'n',
        'о' | 'ο' | 'օ' | 'ᴏ' | 'σ' => b'o',
        'г' | 'ʀ' | 'ᴦ' => b'r',
        'ѕ' | 'ꜱ' => b's',
        'т' | 'τ' | 'ᴛ' => b't',
        'ս' | 'υ' | 'ᴜ' | 'ʋ' | 'μ' => b'u',
        'і' | 'ı' | 'ι' => b'i',
        'р' | 'ρ' => b'p',
        'х' | 'χ' => b'x',
        'у' => b'y',
        _ => return None,
    })
}

/// The tokens one character stands for, after compatibility decomposition.
fn classify(c: char, emit: &mut impl FnMut(Tok)) {
    if c.is_ascii() {
        emit(classify_one(c));
        return;
    }
    if OPENERS.contains(&c) {
        return emit(Tok::Open);
    }
    if CLOSERS.contains(&c) {
        return emit(Tok::Close);
    }
    if SLASHES.contains(&c) {
        return emit(Tok::Slash);
    }
    decompose_compatible(c, |d| emit(classify_one(d)));
}

fn classify_one(c: char) -> Tok {
    if c.is_ascii() {
        return match c {
            '<' => Tok::Open,
            '>' => Tok::Close,
            '/' | '\\' => Tok::Slash,
            'a'..='z' | 'A'..='Z' => Tok::Letter(c.to_ascii_lowercase() as u8),
            '_' | '-' => Tok::Skip,
            _ if c.is_ascii_whitespace() || c.is_ascii_control() => Tok::Skip,
            _ => Tok::Other,
        };
    }
    if OPENERS.contains(&c) {
        return Tok::Open;
    }
    if CLOSERS.contains(&c) {
        return Tok::Close;
    }
    if SLASHES.contains(&c) {
        return Tok::Slash;
    }
    if is_skip(c) {
        return Tok::Skip;
    }
    if c.is_ascii_alphabetic() {
        return Tok::Letter(c.to_ascii_lowercase() as u8);
    }
    if c.is_ascii() {
        return Tok::Other;
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) if l.is_ascii_alphabetic() => Tok::Letter(l as u8),
        (Some(l), None) => confusable(l).map_or(Tok::Other, Tok::Letter),
        _ => Tok::Other,
    }
}

/// `&…;` entities that stand for one character (ASCII case-insensitive), with `&amp;`
/// prefixes for double encoding. Returns the token and the entity's length in bytes.
fn entity(rest: &[u8]) -> Option<(Tok, usize)> {
    let mut i = 1; // past '&'
    while starts_with_ci(&rest[i..], b"amp;") {
        i += 4;
    }
    const NAMED: &[(&[u8], Tok)] = &[
        (b"leftanglebracket;", Tok::Open),
        (b"rightanglebracket;", Tok::Close),
        (b"langle;", Tok::Open),
        (b"rangle;", Tok::Close),
        (b"lsaquo;", Tok::Open),
        (b"rsaquo;", Tok::Close),
        (b"laquo;", Tok::Open),
        (b"raquo;", Tok::Close),
        (b"lang;", Tok::Open),
        (b"rang;", Tok::Close),
        (b"frasl;", Tok::Slash),
        (b"bsol;", Tok::Slash),
        (b"sol;", Tok::Slash),
        (b"lowbar;", Tok::Skip),
        (b"hyphen;", Tok::Skip),
        (b"dash;", Tok::Skip),
        (b"nbsp;", Tok::Skip),
        (b"shy;", Tok::Skip),
        (b"lt;", Tok::Open),
        (b"gt;", Tok::Close),
        (b"lt", Tok::Open),
        (b"gt", Tok::Close),
    ];
    for (name, tok) in NAMED {
        if starts_with_ci(&rest[i..], name) {
            return Some((*tok, i + name.len()));
        }
    }
    if rest.get(i) != Some(&b'#') {
        return None;
    }
    i += 1;
    let hex = matches!(rest.get(i), Some(b'x' | b'X'));
    if hex {
        i += 1;
    }
    let (value, digits) = number(&rest[i..], if hex { 16 } else { 10 });
    if digits == 0 {
        return None;
    }
    i += digits;
    if rest.get(i) == Some(&b';') {
        i += 1;
    }
    Some((code_point_token(value), i))
}

/// `%3C`, `%253C`, …: percent-encoding of an ASCII character, any depth.
fn percent(rest: &[u8]) -> Option<(Tok, usize)> {
    let mut i = 1;
    while rest.len() >= i + 4 && &rest[i..i + 2] == b"25" && rest[i + 2] == b'%' {
        i += 3;
    }
    while rest.len() >= i + 2 && &rest[i..i + 2] == b"25" && is_hex_pair(&rest[i + 2..]) {
        i += 2;
    }
    if !is_hex_pair(&rest[i..]) {
        return None;
    }
    let (value, _) = number(&rest[i..i + 2], 16);
    Some((code_point_token(value), i + 2))
}

/// `\u003c`, `\u{3c}`, `\U0000003c`, `\x3c`.
fn backslash(rest: &[u8]) -> Option<(Tok, usize)> {
    let (start, width) = match rest.get(1)? {
        b'u' if rest.get(2) == Some(&b'{') => {
            let (value, digits) = number(&rest[3..], 16);
            if digits == 0 || digits > 8 || rest.get(3 + digits) != Some(&b'}') {
                return None;
            }
            return Some((code_point_token(value), 4 + digits));
        }
        b'u' => (2, 4),
        b'U' => (2, 8),
        b'x' => (2, 2),
        _ => return None,
    };
    let digits = rest.get(start..start + width)?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let (value, _) = number(digits, 16);
    Some((code_point_token(value), start + width))
}

fn code_point_token(value: u32) -> Tok {
    let Some(c) = char::from_u32(value) else {
        return Tok::Other;
    };
    let mut tok = Tok::Other;
    let mut first = true;
    classify(c, &mut |t| {
        if first {
            tok = t;
            first = false;
        }
    });
    tok
}

/// Digits of `radix` at the start of `s`: their value (saturating) and how many.
fn number(s: &[u8], radix: u32) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut n = 0;
    for &b in s {
        let Some(d) = (b as char).to_digit(radix) else {
            break;
        };
        value = value.saturating_mul(radix).saturating_add(d);
        n += 1;
    }
    (value, n)
}

fn is_hex_pair(s: &[u8]) -> bool {
    s.len() >= 2 && s[0].is_ascii_hexdigit() && s[1].is_ascii_hexdigit()
}

fn starts_with_ci(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Where the matcher is.
#[derive(Clone, Copy)]
enum State {
    Idle,
    /// After an opener (its byte range), skipping slashes and ignorables.
    Opened(usize, usize),
    /// `n` letters of [`NAME`] matched after the opener.
    Name(usize, usize, usize),
    /// A tag start was found; looking for its closer until the reach ends.
    Closing(usize),
}

/// Every tag start in `text`, in order.
pub(crate) fn tag_starts(text: &str) -> Vec<TagStart> {
    let bytes = text.as_bytes();
    let mut found: Vec<TagStart> = Vec::new();
    let mut state = State::Idle;
    let mut i = 0;
    while i < bytes.len() {
        // Idle stays idle on anything but an opener, and an opener starts with one of
        // these bytes or a non-ASCII character: skip the rest without tokenizing.
        if matches!(state, State::Idle) {
            match bytes[i..]
                .iter()
                .position(|&b| matches!(b, b'<' | b'&' | b'%' | b'\\') || !b.is_ascii())
            {
                Some(skip) => i += skip,
                None => break,
            }
        }
        let (toks, len) = tokens_at(text, i);
        let is_newline = bytes[i] == b'\n';
        for tok in toks.iter().copied().flatten() {
            state = step(state, tok, i, i + len, is_newline, &mut found);
        }
        i += len;
    }
    found
}

/// The tokens of the piece of input at byte `i` (at most four: a decomposition), and the
/// piece's length.
fn tokens_at(text: &str, i: usize) -> ([Option<Tok>; 4], usize) {
    let bytes = text.as_bytes();
    let rest = &bytes[i..];
    let special = match rest[0] {
        b'&' => entity(rest),
        b'%' => percent(rest),
        b'\\' => backslash(rest),
        _ => None,
    };
    if let Some((tok, len)) = special {
        return ([Some(tok), None, None, None], len);
    }
    let Some(c) = text[i..].chars().next() else {
        return ([Some(Tok::Other), None, None, None], 1);
    };
    let mut out = [None; 4];
    let mut n = 0;
    classify(c, &mut |t| {
        // A decomposition longer than four (a few ligatures and squared words) ends in
        // `Other`, so it can never complete a letter run it did not fully show.
        if n < out.len() {
            out[n] = Some(t);
        } else {
            out[3] = Some(Tok::Other);
        }
        n += 1;
    });
    (out, c.len_utf8())
}

fn step(
    state: State,
    tok: Tok,
    start: usize,
    end: usize,
    is_newline: bool,
    found: &mut Vec<TagStart>,
) -> State {
    match (state, tok) {
        (_, Tok::Open) => State::Opened(start, end),
        (State::Opened(s, e), Tok::Skip | Tok::Slash) => State::Opened(s, e),
        (State::Opened(s, e), Tok::Letter(l)) if l == NAME[0] => State::Name(s, e, 1),
        (State::Name(s, e, n), Tok::Skip) => State::Name(s, e, n),
        (State::Name(s, e, n), Tok::Letter(l)) if l == NAME[n] => {
            if n + 1 == NAME.len() {
                found.push(TagStart {
                    open: (s, e),
                    close: None,
                });
                State::Closing(e)
            } else {
                State::Name(s, e, n + 1)
            }
        }
        (State::Closing(_), Tok::Close) => {
            if let Some(last) = found.last_mut() {
                last.close = Some((start, end));
            }
            State::Idle
        }
        (State::Closing(from), _) if !is_newline && end - from <= CLOSER_REACH => {
            State::Closing(from)
        }
        _ => State::Idle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opens(text: &str) -> usize {
        tag_starts(text).len()
    }

    #[test]
    fn plain_and_spelled_tags_are_found() {
        for t in [
            "<untrusted_content>",
            "</untrusted_content>",
            "</ UNTRUSTED_CONTENT >",
            "&lt;/untrusted_content&gt;",
            "&amp;lt;/untrusted_content&amp;gt;",
            "&#60;/untrusted_content>",
            "&#x3C;&#x2F;untrusted_content",
            "%3C/untrusted_content%3E",
            "%253C/untrusted_content",
            "\\u003c/untrusted_content",
            "\\u{3c}/untrusted_content",
            "\\x3c/untrusted_content",
            "＜／ｕｎｔｒｕｓｔｅｄ_content＞",
            "﹤/untrusted_content﹥",
            "‹/untrusted_content›",
            "⟨/untrusted_content⟩",
            "〈/untrusted_content〉",
            "<\u{200B}/untr\u{200D}usted_content>",
            "<\0/untrusted_content>",
            "</untrustеd_content>", // Cyrillic е
            "</𝐮𝐧𝐭𝐫𝐮𝐬𝐭𝐞𝐝_content>",
            "<&#117;ntrusted_content>",
            "<\n/\nuntrusted-content>",
        ] {
            assert_eq!(opens(t), 1, "{t:?}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for t in [
            "Vec<u8> and x < y && y > z",
            "<div>untrusted_content</div>",
            "a &lt; b, 5 % 3, path\\to\\file",
            "<unt rusty>",
        ] {
            assert_eq!(opens(t), 0, "{t:?}");
        }
    }

    #[test]
    fn closer_is_found_within_the_tag() {
        let t = "x </untrusted_content foo=\"1\"> y";
        let hits = tag_starts(t);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].open, (2, 3));
        assert_eq!(hits[0].close, Some((29, 30)));
    }
}
