//! Brace expansion (`{a,b}`, `{1..9}`), bounded in words and work.

use super::{MAX_BRACE_DEPTH, MAX_BRACE_WORDS, int_literal};
use crate::word::{find_byte, match_brace, match_paren, skip_dq, slice};

/// Does brace expansion change this word (so it is not one assignment)?
pub(crate) fn brace_expands(raw: &str) -> bool {
    if !raw.contains('{') {
        return false;
    }
    let mut work = Work {
        scan: 8 * raw.len() + 256,
        build: 64 * 1024,
    };
    brace_expand(raw, 0, &mut work).is_none_or(|w| w.len() != 1 || w[0] != raw)
}

/// What one brace expansion may still spend: scanning steps and bytes of words built.
pub(super) struct Work {
    pub(super) scan: usize,
    pub(super) build: usize,
}

/// Brace-expand a word; `None` when it would make more than [`MAX_BRACE_WORDS`]
/// words, nest deeper than [`MAX_BRACE_DEPTH`], or spend more than `work` allows.
pub(super) fn brace_expand(raw: &str, depth: usize, work: &mut Work) -> Option<Vec<String>> {
    if depth > MAX_BRACE_DEPTH {
        return None;
    }
    let b = raw.as_bytes();
    let mut out = vec![String::new()];
    let mut i = 0;
    let mut chunk_start = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => i = find_byte(b, i + 1, b'\'') + 1,
            b'"' => i = skip_dq(b, i + 1) + 1,
            b'`' => i = find_byte(b, i + 1, b'`') + 1,
            b'$' if matches!(b.get(i + 1), Some(b'{')) => i = match_brace(b, i + 2) + 1,
            b'$' if matches!(b.get(i + 1), Some(b'(')) => i = match_paren(b, i + 2) + 1,
            b'{' => match brace_group(raw, i, work)? {
                Some((alts, end)) => {
                    let head = slice(raw, chunk_start, i);
                    let mut items: Vec<String> = Vec::new();
                    for alt in alts {
                        let sub = match alt {
                            Alt::Text(t) => brace_expand(&t, depth + 1, work)?,
                            Alt::Plain(t) => vec![t],
                        };
                        items.extend(sub);
                        if items.len() > MAX_BRACE_WORDS {
                            return None;
                        }
                    }
                    if out.len().saturating_mul(items.len()) > MAX_BRACE_WORDS {
                        return None;
                    }
                    let mut next = Vec::with_capacity(out.len() * items.len());
                    for o in &out {
                        for it in &items {
                            let len = o.len() + head.len() + it.len();
                            work.build = work.build.checked_sub(len)?;
                            let mut w = String::with_capacity(len);
                            w.push_str(o);
                            w.push_str(head);
                            w.push_str(it);
                            next.push(w);
                        }
                    }
                    out = next;
                    i = end + 1;
                    chunk_start = i;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    let tail = slice(raw, chunk_start, b.len());
    for o in &mut out {
        o.push_str(tail);
    }
    Some(out)
}

/// One alternative of a brace group: text to expand further, or a generated
/// sequence item.
enum Alt {
    Text(String),
    Plain(String),
}

/// A brace group at `i`: its alternatives and the index of the closing `}`; `Some(None)`
/// when the braces at `i` are not a brace expansion, `None` when the scanning budget is
/// spent (an unclosed `{` scans to the end of the word, so many of them would cost
/// quadratic time).
#[allow(clippy::option_option)]
fn brace_group(raw: &str, i: usize, work: &mut Work) -> Option<Option<(Vec<Alt>, usize)>> {
    let b = raw.as_bytes();
    let mut depth = 0usize;
    let mut j = i + 1;
    let mut commas = Vec::new();
    while j < b.len() {
        work.scan = work.scan.checked_sub(1)?;
        match b[j] {
            b'\\' => j += 1,
            b'\'' => j = find_byte(b, j + 1, b'\''),
            b'"' => j = skip_dq(b, j + 1),
            b'`' => j = find_byte(b, j + 1, b'`'),
            b'$' if matches!(b.get(j + 1), Some(b'{')) => j = match_brace(b, j + 2),
            b'$' if matches!(b.get(j + 1), Some(b'(')) => j = match_paren(b, j + 2),
            b'{' => depth += 1,
            b'}' if depth == 0 => break,
            b'}' => depth -= 1,
            b',' if depth == 0 => commas.push(j),
            _ => {}
        }
        j += 1;
    }
    if j >= b.len() {
        return Some(None);
    }
    let inner = slice(raw, i + 1, j);
    if commas.is_empty() {
        return Some(sequence(inner).map(|items| (items.into_iter().map(Alt::Plain).collect(), j)));
    }
    let mut alts = Vec::with_capacity(commas.len() + 1);
    let mut start = i + 1;
    for c in commas.into_iter().chain(std::iter::once(j)) {
        alts.push(Alt::Text(slice(raw, start, c).to_owned()));
        start = c + 1;
    }
    Some(Some((alts, j)))
}

/// `x..y[..step]` of integers or single letters.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step = match parts.get(2) {
        Some(s) => int_literal(s)?.unsigned_abs().max(1),
        None => 1,
    };
    let (a, z) = (parts[0], parts[1]);
    if let (Some(x), Some(y)) = (int_literal(a), int_literal(z)) {
        if a.trim() != a || z.trim() != z {
            return None;
        }
        let count = x.abs_diff(y) / step + 1;
        if count > MAX_BRACE_WORDS as u64 {
            // Too many: more items than the caller accepts, so the word stays opaque
            // (`None` would make the braces literal text).
            return Some(vec![String::new(); MAX_BRACE_WORDS + 1]);
        }
        let width = if has_leading_zero(a) || has_leading_zero(z) {
            a.len().max(z.len())
        } else {
            0
        };
        let mut out = Vec::with_capacity(count as usize);
        let mut v = x;
        for _ in 0..count {
            out.push(if width > 0 {
                if v < 0 {
                    format!("-{:0w$}", v.unsigned_abs(), w = width - 1)
                } else {
                    format!("{v:0width$}")
                }
            } else {
                v.to_string()
            });
            if x <= y {
                v += step as i64;
            } else {
                v -= step as i64;
            }
        }
        return Some(out);
    }
    let (mut ca, mut cz) = (a.chars(), z.chars());
    let (Some(x), None, Some(y), None) = (ca.next(), ca.next(), cz.next(), cz.next()) else {
        return None;
    };
    if !x.is_ascii_alphabetic() || !y.is_ascii_alphabetic() {
        return None;
    }
    let (lo, hi) = (u32::from(x), u32::from(y));
    let mut out = Vec::new();
    let mut v = lo;
    loop {
        let c = char::from_u32(v)?;
        if !c.is_ascii_alphanumeric() {
            // `{Z..a}` passes `[`, `\`, backtick: characters the rest of the word
            // reading would treat specially.
            return None;
        }
        out.push(c.to_string());
        if v == hi {
            break;
        }
        let next = if lo <= hi {
            v + step as u32
        } else {
            v.checked_sub(step as u32)?
        };
        if (lo <= hi && next > hi) || (lo > hi && next < hi) {
            break;
        }
        v = next;
    }
    Some(out)
}

fn has_leading_zero(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    d.len() > 1 && d.starts_with('0')
}
