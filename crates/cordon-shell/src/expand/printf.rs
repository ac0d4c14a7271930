//! bash's `printf` for the formats the text alone fixes.

use super::int_literal;
use crate::env::MAX_VALUE;

/// bash's `printf FORMAT ARGS…` for the simple formats (`%s`, `%b`, `%c`, `%d`, `%%`,
/// escapes); `None` for anything else (widths, precisions, other conversions).
pub(crate) fn printf(fmt: &str, args: &[String]) -> Option<String> {
    let f: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut next = 0usize;
    loop {
        let mut i = 0;
        let mut used = false;
        while i < f.len() {
            match f[i] {
                '\\' => {
                    let (s, n) = escape(&f[i..], false)?;
                    out.push_str(&s);
                    i += n;
                }
                '%' => {
                    let c = *f.get(i + 1)?;
                    i += 2;
                    if c == '%' {
                        out.push('%');
                        continue;
                    }
                    used = true;
                    let arg = args.get(next).map(String::as_str);
                    next += 1;
                    match c {
                        's' => out.push_str(arg.unwrap_or("")),
                        'b' => {
                            let a: Vec<char> = arg.unwrap_or("").chars().collect();
                            let mut k = 0;
                            while k < a.len() {
                                if a[k] == '\\' {
                                    let (s, n) = escape(&a[k..], true)?;
                                    out.push_str(&s);
                                    k += n;
                                } else {
                                    out.push(a[k]);
                                    k += 1;
                                }
                            }
                        }
                        'c' => out.extend(arg.unwrap_or("").chars().next()),
                        'd' | 'i' => {
                            let v = match arg {
                                None => 0,
                                Some(a) => int_literal(a)?,
                            };
                            out.push_str(&v.to_string());
                        }
                        _ => return None,
                    }
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
            if out.len() > MAX_VALUE {
                return None;
            }
        }
        if !used || next >= args.len() {
            break;
        }
    }
    Some(out)
}

/// One backslash escape of printf's format (`b`: of a `%b` argument, where octal is
/// `\0NNN`); returns the text and the characters consumed.
fn escape(s: &[char], b: bool) -> Option<(String, usize)> {
    let c = *s.get(1)?;
    let simple = match c {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'e' | 'E' => Some('\u{1b}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '"' => Some('"'),
        '\'' => Some('\''),
        '?' => Some('?'),
        _ => None,
    };
    if let Some(x) = simple {
        return Some((x.to_string(), 2));
    }
    let digits = |from: usize, max: usize, radix: u32| {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match s.get(from + n).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    match c {
        '0'..='7' => {
            let (from, max) = if b && c == '0' { (2, 3) } else { (1, 3) };
            let (v, n) = digits(from, max, 8);
            Some((char::from_u32(v & 0xff)?.to_string(), from + n))
        }
        'x' => {
            let (v, n) = digits(2, 2, 16);
            if n == 0 {
                return Some(("\\x".into(), 2));
            }
            Some((char::from_u32(v)?.to_string(), 2 + n))
        }
        'u' | 'U' => {
            let (v, n) = digits(2, if c == 'u' { 4 } else { 8 }, 16);
            if n == 0 {
                return Some((format!("\\{c}"), 2));
            }
            Some((char::from_u32(v)?.to_string(), 2 + n))
        }
        'c' if b => None,
        _ => Some((format!("\\{c}"), 2)),
    }
}
