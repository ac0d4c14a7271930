//! A lexer for awk programs: enough of the language to tell code from string and
//! regular-expression literals, which finding `system()`, pipes, `getline <` and output
//! redirections needs. It follows gawk where the awks differ (a `/` inside a bracket
//! expression does not end a regular expression) and marks string literals whose escapes
//! mean different things in different awks as inexact, so their text is never taken as
//! the command that runs.
//!
//! A `/` is a regular expression where an operand may start and a division after one,
//! as in gawk's grammar: after a value (a name, a number, a string, `)`, `]`, `++`) it
//! divides, except after the `)` that closes the condition of `if`, `while` or `for`,
//! where a statement (which may be `/re/`) starts.

/// One token of an awk program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// A string literal: its text with escapes decoded, and whether every awk decodes
    /// it to that text.
    Str { text: String, exact: bool },
    /// A regular-expression literal: its text as written, and whether a `/` inside a
    /// bracket expression (`/[/]/`) was taken as part of it, where awks disagree (gawk
    /// reads on, bwk awk and busybox end the expression there).
    Regex { text: String, bracket_slash: bool },
    /// A number.
    Num,
    /// A name or keyword.
    Name(String),
    /// gawk's `@` (`@load`, `@include`, `@namespace`, indirect calls `@f(…)`).
    At,
    /// An operator or punctuation; a newline is `"\n"`.
    Op(&'static str),
}

impl Tok {
    /// Does a value end with this token (so a `/` after it divides)?
    pub(super) fn ends_value(&self) -> bool {
        match self {
            Tok::Str { .. } | Tok::Regex { .. } | Tok::Num => true,
            Tok::Name(n) => !REGEX_AFTER.contains(&n.as_str()),
            Tok::Op(o) => matches!(*o, ")" | "]" | "++" | "--"),
            Tok::At => false,
        }
    }
}

/// Keywords after which an operand starts, so a `/` begins a regular expression.
const REGEX_AFTER: &[&str] = &[
    "print",
    "printf",
    "return",
    "do",
    "else",
    "in",
    "case",
    "exit",
    "if",
    "while",
    "for",
    "switch",
    "delete",
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "function",
    "func",
];

/// Operators, longest first.
const OPS: &[&str] = &[
    "**=", "||", "&&", "|&", ">>", ">=", "<=", "==", "!=", "++", "--", "+=", "-=", "*=", "/=",
    "%=", "^=", "**", "!~", "(", ")", "[", "]", "{", "}", ";", ",", "|", ">", "<", "!", "~", "?",
    ":", "+", "-", "*", "/", "%", "^", "=", "$", "\n", "&",
];

/// The tokens of `src`, or why it cannot be read as awk (an unterminated string or
/// regular expression, a stray backslash).
pub(super) fn lex(src: &str) -> Result<Vec<Tok>, &'static str> {
    let chars: Vec<char> = src.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    // For each open `(`: whether it opens the condition of `if`/`while`/`for`/`switch`.
    let mut parens: Vec<bool> = Vec::new();
    // A `/` here starts a regular expression.
    let mut regex_ok = true;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' | '\u{c}' => {
                i += 1;
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\r') && chars.get(i + 2) == Some(&'\n') => {
                i += 3;
                continue;
            }
            '\\' => return Err("a backslash outside a string"),
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' => {
                let (tok, next) = string(&chars, i + 1)?;
                out.push(tok);
                i = next;
            }
            '/' if regex_ok => {
                let (tok, next) = regex(&chars, i + 1)?;
                out.push(tok);
                i = next;
            }
            '@' => {
                out.push(Tok::At);
                i += 1;
            }
            _ if c.is_ascii_digit()
                || c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit) =>
            {
                i = number_end(&chars, i);
                out.push(Tok::Num);
            }
            _ if c.is_alphabetic() || c == '_' => {
                let start = i;
                i = name_end(&chars, i);
                out.push(Tok::Name(chars[start..i].iter().collect()));
            }
            _ => {
                let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
                let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                    // Any other character is no operator awk knows; it ends nothing.
                    i += 1;
                    continue;
                };
                i += op.chars().count();
                match *op {
                    "(" => {
                        let control = matches!(
                            out.last(),
                            Some(Tok::Name(n)) if matches!(n.as_str(), "if" | "while" | "for" | "switch")
                        );
                        parens.push(control);
                    }
                    ")" => {
                        let control = parens.pop().unwrap_or(false);
                        out.push(Tok::Op(op));
                        regex_ok = control;
                        continue;
                    }
                    _ => {}
                }
                out.push(Tok::Op(op));
            }
        }
        regex_ok = !out.last().is_some_and(Tok::ends_value);
    }
    Ok(out)
}

/// The index after the number starting at `chars[i]` (digits, letters of a hex number
/// or an exponent, a point, an exponent's sign).
fn number_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        let d = chars[i];
        let sign = matches!(d, '+' | '-')
            && matches!(chars.get(i.wrapping_sub(1)), Some('e' | 'E'))
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if d.is_ascii_alphanumeric() || d == '.' || sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The index after the name starting at `chars[i]` (gawk's `namespace::name` included).
fn name_end(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        let d = chars[i];
        if d.is_alphanumeric() || d == '_' {
            i += 1;
        } else if d == ':'
            && chars.get(i + 1) == Some(&':')
            && chars
                .get(i + 2)
                .is_some_and(|e| e.is_alphabetic() || *e == '_')
        {
            i += 2;
        } else {
            break;
        }
    }
    i
}

/// A string literal whose body starts at `chars[at]`: the token and the index after its
/// closing quote.
fn string(chars: &[char], mut at: usize) -> Result<(Tok, usize), &'static str> {
    let mut text = String::new();
    let mut exact = true;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err("an unterminated string");
        };
        at += 1;
        match c {
            '"' => break,
            '\n' => return Err("a string that runs past the end of its line"),
            '\\' => {
                let Some(&e) = chars.get(at) else {
                    return Err("an unterminated string");
                };
                at += 1;
                match e {
                    '"' | '\\' | '/' => text.push(e),
                    'a' => text.push('\u{7}'),
                    'b' => text.push('\u{8}'),
                    'f' => text.push('\u{c}'),
                    'n' => text.push('\n'),
                    'r' => text.push('\r'),
                    't' => text.push('\t'),
                    'v' => text.push('\u{b}'),
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.get(at).and_then(|d| d.to_digit(8)) {
                                Some(d) => {
                                    v = v * 8 + d;
                                    at += 1;
                                }
                                None => break,
                            }
                        }
                        push_byte(&mut text, v, &mut exact);
                    }
                    'x' => {
                        let digits = chars[at..]
                            .iter()
                            .take_while(|d| d.is_ascii_hexdigit())
                            .count();
                        // gawk and mawk read at most two digits; older awks read them all.
                        if digits == 0 || digits > 2 {
                            exact = false;
                        }
                        let mut v = 0;
                        for d in chars[at..at + digits.min(2)].iter() {
                            v = v * 16 + d.to_digit(16).unwrap_or(0);
                        }
                        at += digits.min(2);
                        push_byte(&mut text, v, &mut exact);
                    }
                    '\n' => exact = false,
                    _ => {
                        // gawk drops the backslash, others keep it.
                        exact = false;
                        text.push('\\');
                        text.push(e);
                    }
                }
            }
            _ => text.push(c),
        }
    }
    Ok((Tok::Str { text, exact }, at))
}

/// A byte from an escape: ASCII text as is; a NUL (which ends the C string `system()`
/// hands to the shell) or a byte of a multi-byte character makes the text inexact.
fn push_byte(text: &mut String, v: u32, exact: &mut bool) {
    match char::from_u32(v) {
        Some(ch) if v != 0 && v < 0x80 => text.push(ch),
        _ => {
            *exact = false;
            text.push('\u{fffd}');
        }
    }
}

/// A regular-expression literal whose body starts at `chars[at]`: the token and the
/// index after its closing `/`. A `/` inside a bracket expression does not close it.
fn regex(chars: &[char], mut at: usize) -> Result<(Tok, usize), &'static str> {
    let start = at;
    let mut bracket = false;
    let mut bracket_slash = false;
    loop {
        let Some(&c) = chars.get(at) else {
            return Err("an unterminated regular expression");
        };
        match c {
            '\n' => return Err("a regular expression that runs past the end of its line"),
            '\\' => at += 2,
            '[' if !bracket => {
                bracket = true;
                at += 1;
                // `[]…]` and `[^]…]`: a leading `]` is a member.
                if chars.get(at) == Some(&'^') {
                    at += 1;
                }
                if chars.get(at) == Some(&']') {
                    at += 1;
                }
            }
            ']' if bracket => {
                bracket = false;
                at += 1;
            }
            '/' if !bracket => {
                let text: String = chars[start..at].iter().collect();
                return Ok((
                    Tok::Regex {
                        text,
                        bracket_slash,
                    },
                    at + 1,
                ));
            }
            '/' => {
                bracket_slash = true;
                at += 1;
            }
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(src: &str) -> Vec<String> {
        lex(src)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                Tok::Str { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn strings_regexes_and_division() {
        assert_eq!(strs(r#"/a"b/ { system("x") }"#), ["x"]);
        assert_eq!(strs(r#"{ n = a / 2; s = "/" } /x/"#), ["/"]);
        assert_eq!(strs(r#"$0 ~ /[/"]/ { print "y" }"#), ["y"]);
        assert_eq!(strs(r#"if (x) /"/ ; print "z""#), ["z"]);
        assert_eq!(strs("# \"not\" code\n{ print \"w\" }"), ["w"]);
        assert_eq!(strs(r#"BEGIN { system("rm -rf \176") }"#), ["rm -rf ~"]);
        assert_eq!(strs(r#"BEGIN { system("a\x2fb\"c\\") }"#), ["a/b\"c\\"]);
    }

    #[test]
    fn escapes_that_awks_read_differently_are_inexact() {
        for src in [r#""\q""#, r#""\x414""#, r#""id\0x""#, "\"a\\\nb\""] {
            match lex(src).unwrap().first() {
                Some(Tok::Str { exact, .. }) => assert!(!exact, "{src}"),
                t => panic!("{src}: {t:?}"),
            }
        }
    }

    #[test]
    fn unterminated_literals_do_not_lex() {
        for src in [
            r#"BEGIN { system("x) }"#,
            "/abc",
            "{ print \"a\nb\" }",
            "a \\ b",
        ] {
            assert!(lex(src).is_err(), "{src}");
        }
    }
}
