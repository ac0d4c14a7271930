//! Decoding of one shell word as bash would read it: quote removal, escapes, ANSI-C
//! quoting, tilde prefixes, and discovery of every expansion in it.
//!
//! Owns: turning the raw text of a word into its value plus the reasons it may differ
//! at run time, and handing back the bodies of nested command and process
//! substitutions so they can be analyzed in turn. Never evaluates anything.

use crate::model::Dynamic;

/// Kind of nested code found inside a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubstKind {
    /// `$(…)` or backticks.
    Command,
    /// `<(…)` or `>(…)` inside a word.
    Process,
}

/// Nested code found inside a word.
#[derive(Debug, Clone)]
pub(crate) struct Subst {
    pub kind: SubstKind,
    pub body: String,
}

/// A decoded word.
#[derive(Debug, Clone, Default)]
pub(crate) struct Decoded {
    pub value: String,
    pub dynamic: Vec<Dynamic>,
    pub substs: Vec<Subst>,
}

impl Decoded {
    pub fn literal(&self) -> bool {
        self.dynamic.is_empty()
    }

    fn mark(&mut self, d: Dynamic) {
        if !self.dynamic.contains(&d) {
            self.dynamic.push(d);
        }
    }
}

/// Decode a word as it appears in a command (tilde prefix, quotes, globs, braces).
pub(crate) fn decode(raw: &str) -> Decoded {
    let mut d = Decoded::default();
    let b = raw.as_bytes();
    let mut i = tilde_prefix(raw, &mut d);
    if i == 0 {
        i = home_prefix(raw, &mut d);
    }
    let mut glob = false;
    let mut brace = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if i + 1 < b.len() {
                    if b[i + 1] == b'\n' {
                        i += 2;
                    } else {
                        let ch = next_char(raw, i + 1);
                        d.value.push_str(ch);
                        i += 1 + ch.len();
                    }
                } else {
                    i += 1;
                }
            }
            b'\'' => {
                let end = find_byte(b, i + 1, b'\'');
                d.value.push_str(slice(raw, i + 1, end));
                i = end + 1;
            }
            b'"' => {
                i = double_quoted(raw, i + 1, &mut d);
            }
            b'$' => {
                i = dollar(raw, i, &mut d, false);
            }
            b'`' => {
                i = backtick(raw, i, &mut d);
            }
            b'*' | b'?' => {
                glob = true;
                d.value.push(b[i] as char);
                i += 1;
            }
            b'[' if b[i + 1..].contains(&b']') => {
                glob = true;
                d.value.push('[');
                i += 1;
            }
            b'@' | b'!' | b'+' if b.get(i + 1) == Some(&b'(') => {
                // extglob pattern such as @(a|b)
                glob = true;
                d.value.push(b[i] as char);
                i += 1;
            }
            b'<' | b'>' if b.get(i + 1) == Some(&b'(') => {
                let end = match_paren(b, i + 2);
                d.substs.push(Subst {
                    kind: SubstKind::Process,
                    body: slice(raw, i + 2, end).to_owned(),
                });
                d.mark(Dynamic::ProcessSubstitution);
                d.value.push_str(slice(raw, i, end + 1));
                i = end + 1;
            }
            b'{' => {
                if !brace && brace_expansion_at(b, i) {
                    brace = true;
                }
                d.value.push('{');
                i += 1;
            }
            _ => {
                let ch = next_char(raw, i);
                d.value.push_str(ch);
                i += ch.len();
            }
        }
    }
    if glob {
        d.mark(Dynamic::Glob(raw.to_owned()));
    }
    if brace {
        d.mark(Dynamic::BraceExpansion(raw.to_owned()));
    }
    d
}

/// Decode the body of a here-document whose delimiter was not quoted: only `$`,
/// backticks and backslash escapes of `$ \` \\` and newline are special.
pub(crate) fn decode_heredoc(raw: &str) -> Decoded {
    let mut d = Decoded::default();
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if i + 1 < b.len() && matches!(b[i + 1], b'$' | b'`' | b'\\' | b'\n') => {
                if b[i + 1] != b'\n' {
                    d.value.push(b[i + 1] as char);
                }
                i += 2;
            }
            b'$' => i = dollar(raw, i, &mut d, true),
            b'`' => i = backtick(raw, i, &mut d),
            _ => {
                let ch = next_char(raw, i);
                d.value.push_str(ch);
                i += ch.len();
            }
        }
    }
    d
}

/// Scan text that bash evaluates but that is not a word (arithmetic, `${…}`
/// operands) for nested substitutions and expansions.
pub(crate) fn scan_expansions(raw: &str, d: &mut Decoded) {
    let sub = decode_heredoc(raw);
    for x in sub.dynamic {
        d.mark(x);
    }
    d.substs.extend(sub.substs);
}

fn next_char(s: &str, i: usize) -> &str {
    let mut end = i + 1;
    while end < s.len() && !s.is_char_boundary(end) {
        end += 1;
    }
    slice(s, i, end)
}

fn slice(s: &str, start: usize, end: usize) -> &str {
    let end = end.min(s.len());
    s.get(start.min(end)..end).unwrap_or("")
}

fn find_byte(b: &[u8], from: usize, what: u8) -> usize {
    b.get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == what))
        .map_or(b.len(), |p| from + p)
}

/// `~`, `~/x`: normalised; `~user`, `~+`, `~-`: dynamic. Returns bytes consumed.
fn tilde_prefix(raw: &str, d: &mut Decoded) -> usize {
    let b = raw.as_bytes();
    if b.first() != Some(&b'~') {
        return 0;
    }
    let end = find_byte(b, 1, b'/');
    let user = slice(raw, 1, end);
    if user.is_empty() {
        d.value.push('~');
        return 1;
    }
    if user
        .bytes()
        .any(|c| matches!(c, b'\'' | b'"' | b'\\' | b'$' | b'`'))
    {
        // A quoted tilde prefix is not a tilde expansion.
        return 0;
    }
    d.mark(Dynamic::TildeUser(format!("~{user}")));
    d.value.push('~');
    d.value.push_str(user);
    end
}

/// `$HOME`, `${HOME}`, `"$HOME"`, `"${HOME}"` at the start of the word, followed by
/// `/` or the end: normalised to `~`. Returns bytes consumed.
fn home_prefix(raw: &str, d: &mut Decoded) -> usize {
    for p in ["$HOME", "${HOME}", "\"$HOME", "\"${HOME}"] {
        let Some(rest) = raw.strip_prefix(p) else {
            continue;
        };
        let next = rest.as_bytes().first();
        let ends_name = match next {
            None | Some(b'/') | Some(b'"') | Some(b'\'') => true,
            Some(c) => p.ends_with('}') && *c != b'[',
        };
        if !ends_name {
            continue;
        }
        d.value.push('~');
        if p.starts_with('"') {
            // Still inside the double quotes: decode the rest of the quoted part.
            return double_quoted(raw, p.len(), d);
        }
        return p.len();
    }
    0
}

/// Decode a double-quoted section starting after the opening quote; returns the index
/// after the closing quote.
fn double_quoted(raw: &str, mut i: usize, d: &mut Decoded) -> usize {
    let b = raw.as_bytes();
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' if i + 1 < b.len() => {
                match b[i + 1] {
                    b'$' | b'`' | b'"' | b'\\' => d.value.push(b[i + 1] as char),
                    b'\n' => {}
                    _ => {
                        d.value.push('\\');
                        let ch = next_char(raw, i + 1);
                        d.value.push_str(ch);
                        i += 1 + ch.len();
                        continue;
                    }
                }
                i += 2;
            }
            b'$' => i = dollar(raw, i, d, true),
            b'`' => i = backtick(raw, i, d),
            _ => {
                let ch = next_char(raw, i);
                d.value.push_str(ch);
                i += ch.len();
            }
        }
    }
    i
}

/// Handle a `$` at `i`; returns the index after the construct.
fn dollar(raw: &str, i: usize, d: &mut Decoded, quoted: bool) -> usize {
    let b = raw.as_bytes();
    match b.get(i + 1) {
        Some(b'(') if b.get(i + 2) == Some(&b'(') => {
            // $(( arithmetic )) — unless it is really $( (subshell) ).
            let end = match_paren(b, i + 3);
            let close_ok = b.get(end + 1) == Some(&b')');
            if close_ok {
                let inner = slice(raw, i + 3, end);
                d.mark(Dynamic::Arithmetic);
                scan_expansions(inner, d);
                d.value.push_str(slice(raw, i, end + 2));
                end + 2
            } else {
                command_subst(raw, i, d)
            }
        }
        Some(b'(') => command_subst(raw, i, d),
        Some(b'{') => {
            let end = match_brace(b, i + 2);
            let inner = slice(raw, i + 2, end);
            d.mark(Dynamic::ParameterExpansion(format!("${{{inner}}}")));
            scan_expansions(inner, d);
            d.value.push_str(slice(raw, i, end + 1));
            end + 1
        }
        Some(b'\'') if !quoted => {
            let (value, end) = ansi_c(raw, i + 2);
            d.value.push_str(&value);
            end
        }
        Some(b'"') if !quoted => double_quoted(raw, i + 2, d),
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
            let mut end = i + 1;
            while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
                end += 1;
            }
            let text = slice(raw, i, end);
            d.mark(Dynamic::ParameterExpansion(text.to_owned()));
            d.value.push_str(text);
            end
        }
        Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(c) => {
            let text = slice(raw, i, i + 2);
            d.mark(Dynamic::ParameterExpansion(text.to_owned()));
            d.value.push_str(text);
            i + 2
        }
        _ => {
            d.value.push('$');
            i + 1
        }
    }
}

fn command_subst(raw: &str, i: usize, d: &mut Decoded) -> usize {
    let b = raw.as_bytes();
    let end = match_paren(b, i + 2);
    d.substs.push(Subst {
        kind: SubstKind::Command,
        body: slice(raw, i + 2, end).to_owned(),
    });
    d.mark(Dynamic::CommandSubstitution);
    d.value.push_str(slice(raw, i, end + 1));
    end + 1
}

fn backtick(raw: &str, i: usize, d: &mut Decoded) -> usize {
    let b = raw.as_bytes();
    let mut body = String::new();
    let mut j = i + 1;
    while j < b.len() && b[j] != b'`' {
        if b[j] == b'\\' && j + 1 < b.len() && matches!(b[j + 1], b'`' | b'\\' | b'$') {
            body.push(b[j + 1] as char);
            j += 2;
        } else {
            let ch = next_char(raw, j);
            body.push_str(ch);
            j += ch.len();
        }
    }
    d.substs.push(Subst {
        kind: SubstKind::Command,
        body,
    });
    d.mark(Dynamic::CommandSubstitution);
    d.value.push_str(slice(raw, i, j + 1));
    j + 1
}

/// Decode `$'…'` starting after the opening quote; returns (value, index after close).
fn ansi_c(raw: &str, mut i: usize) -> (String, usize) {
    let b = raw.as_bytes();
    let mut out: Vec<u8> = Vec::new();
    while i < b.len() && b[i] != b'\'' {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'e' | b'E' => out.push(27),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' | b'\'' | b'"' | b'?' => out.push(c),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let (v, used) = hex(b, i, 2);
                if used == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push((v & 0xff) as u8);
                }
                i += used;
            }
            b'u' | b'U' => {
                let max = if c == b'u' { 4 } else { 8 };
                let (v, used) = hex(b, i, max);
                if used == 0 {
                    out.push(b'\\');
                    out.push(c);
                } else {
                    let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                i += used;
            }
            b'c' if i < b.len() => {
                out.push(b[i] & 0x1f);
                i += 1;
            }
            _ => {
                out.push(b'\\');
                out.push(c);
            }
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), i + 1)
}

fn hex(b: &[u8], i: usize, max: usize) -> (u32, usize) {
    let mut v = 0u32;
    let mut used = 0;
    while used < max {
        let Some(c) = b.get(i + used) else { break };
        let Some(x) = (*c as char).to_digit(16) else {
            break;
        };
        v = v.wrapping_mul(16).wrapping_add(x);
        used += 1;
    }
    (v, used)
}

/// True when an unquoted `{` at `i` starts a brace expansion: a matching `}` with a
/// top-level `,` or `..` between them.
fn brace_expansion_at(b: &[u8], i: usize) -> bool {
    let mut depth = 0usize;
    let mut j = i + 1;
    let mut found = false;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'{' => depth += 1,
            b'}' if depth == 0 => return found,
            b'}' => depth -= 1,
            b',' if depth == 0 => found = true,
            b'.' if depth == 0 && b.get(j + 1) == Some(&b'.') => found = true,
            b'\'' | b'"' | b' ' => return false,
            _ => {}
        }
        j += 1;
    }
    false
}

/// Index of the `}` closing a `${` whose content starts at `i`.
fn match_brace(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => i = find_byte(b, i + 1, b'\''),
            b'"' => i = skip_dq(b, i + 1),
            b'$' if b.get(i + 1) == Some(&b'(') => i = match_paren(b, i + 2),
            b'`' => i = find_byte(b, i + 1, b'`'),
            b'{' => depth += 1,
            b'}' if depth == 0 => return i,
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Index of the closing quote of a double-quoted section whose content starts at `i`.
fn skip_dq(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => return i,
            b'$' if b.get(i + 1) == Some(&b'(') => i = match_paren(b, i + 2),
            b'`' => i = find_byte(b, i + 1, b'`'),
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// Index of the `)` closing a parenthesis whose content starts at `i` (shell-aware:
/// quotes, escapes, nested substitutions, `case` patterns). Returns `b.len()` when
/// unterminated.
pub(crate) fn match_paren(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    let mut case_depth = 0usize;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        match c {
            b'\\' => i += 1,
            b'\'' => i = find_byte(b, i + 1, b'\''),
            b'"' => i = skip_dq(b, i + 1),
            b'`' => i = find_byte(b, i + 1, b'`'),
            b'#' if at_word_start => i = find_byte(b, i, b'\n').saturating_sub(1),
            b'(' => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b')' if case_depth > 0 => {}
            b')' => return i,
            b'c' if at_word_start && keyword_at(b, i, b"case") => {
                case_depth += 1;
                i += 3;
            }
            b'e' if at_word_start && case_depth > 0 && keyword_at(b, i, b"esac") => {
                case_depth -= 1;
                i += 3;
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

fn keyword_at(b: &[u8], i: usize, kw: &[u8]) -> bool {
    b.get(i..i + kw.len()) == Some(kw)
        && b.get(i + kw.len())
            .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | b';' | b')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(decode(r#"'a b'"c\"d"e\ f"#).value, "a bc\"de f");
        assert!(decode(r#"'a b'"c\"d"e\ f"#).literal());
    }

    #[test]
    fn ansi_c() {
        assert_eq!(decode(r"$'\x72m'").value, "rm");
        assert_eq!(decode(r"$'\162\155'").value, "rm");
        assert_eq!(decode(r"$'a\nb'").value, "a\nb");
        assert_eq!(decode(r"$'\u0072m'").value, "rm");
    }

    #[test]
    fn home_forms() {
        for w in ["~/x", "$HOME/x", "${HOME}/x", "\"$HOME\"/x", "\"$HOME/x\""] {
            let d = decode(w);
            assert_eq!(d.value, "~/x", "{w}");
            assert!(d.literal(), "{w}");
        }
        assert!(!decode("$HOMEX/y").literal());
        assert!(!decode("~root/x").literal());
    }

    #[test]
    fn substitutions() {
        let d = decode("a$(b \"$(c)\")d");
        assert_eq!(d.substs.len(), 1);
        assert_eq!(d.substs[0].body, "b \"$(c)\"");
        let d = decode("${x:-$(id)}");
        assert_eq!(d.substs[0].body, "id");
        let d = decode("\"`id`\"");
        assert_eq!(d.substs[0].body, "id");
    }
}
