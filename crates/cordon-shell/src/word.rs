//! Scanning of shell text for what bash would find in it: the extent of quotes,
//! `$( )`, `${ }` and backticks, ANSI-C escapes, and the bodies of nested command and
//! process substitutions in text that is not evaluated (arithmetic, unused operands).
//!
//! Owns: the lexical helpers `expand.rs` builds on. Never evaluates anything.

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
    fn mark(&mut self, d: Dynamic) {
        if !self.dynamic.contains(&d) {
            self.dynamic.push(d);
        }
    }
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

pub(crate) fn next_char(s: &str, i: usize) -> &str {
    let mut end = i + 1;
    while end < s.len() && !s.is_char_boundary(end) {
        end += 1;
    }
    slice(s, i, end)
}

pub(crate) fn slice(s: &str, start: usize, end: usize) -> &str {
    let end = end.min(s.len());
    s.get(start.min(end)..end).unwrap_or("")
}

pub(crate) fn find_byte(b: &[u8], from: usize, what: u8) -> usize {
    b.get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == what))
        .map_or(b.len(), |p| from + p)
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

/// The body of the backtick substitution opening at `i` (its ``\` ``, `\\` and `\$`
/// unescaped) and the index of its closing backtick (`raw.len()` when unclosed).
pub(crate) fn backtick_body(raw: &str, i: usize) -> (String, usize) {
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
    (body, j)
}

fn backtick(raw: &str, i: usize, d: &mut Decoded) -> usize {
    let (body, j) = backtick_body(raw, i);
    d.substs.push(Subst {
        kind: SubstKind::Command,
        body,
    });
    d.mark(Dynamic::CommandSubstitution);
    d.value.push_str(slice(raw, i, j + 1));
    j + 1
}

/// Decode `$'…'` starting after the opening quote; returns (value, index after close).
pub(crate) fn ansi_c(raw: &str, mut i: usize) -> (String, usize) {
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

/// Index of the `}` closing a `${` whose content starts at `i`.
pub(crate) fn match_brace(b: &[u8], mut i: usize) -> usize {
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
pub(crate) fn skip_dq(b: &[u8], mut i: usize) -> usize {
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
    fn ansi_c_escapes() {
        let dec = |s: &str| ansi_c(s, 0).0;
        assert_eq!(dec(r"\x72m'"), "rm");
        assert_eq!(dec(r"\162\155'"), "rm");
        assert_eq!(dec(r"a\nb'"), "a\nb");
        assert_eq!(dec(r"\u0072m'"), "rm");
    }

    #[test]
    fn substitutions() {
        let d = decode_heredoc("a$(b \"$(c)\")d");
        assert_eq!(d.substs.len(), 1);
        assert_eq!(d.substs[0].body, "b \"$(c)\"");
        let d = decode_heredoc("${x:-$(id)}");
        assert_eq!(d.substs[0].body, "id");
        let d = decode_heredoc("\"`id`\"");
        assert_eq!(d.substs[0].body, "id");
    }
}
