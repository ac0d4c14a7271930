//! Reading raw text before the parser sees it: where long text can be cut into
//! pieces.

/// Byte offsets just after newlines that end a complete top-level command, at least
/// `every` bytes apart. Tracks quotes, escapes, brackets, compound keywords and
/// here-document bodies; anything it misjudges makes a piece fail to parse, which
/// [`parse`](super::parse) answers by parsing the whole text.
pub(crate) fn split_points(text: &str, every: usize) -> Vec<usize> {
    let b = text.as_bytes();
    let mut cuts = Vec::new();
    let mut last = 0;
    let mut depth: isize = 0;
    let mut case_depth: isize = 0;
    let mut in_dq = false;
    let mut heredocs: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut i = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        if in_dq {
            match c {
                b'\\' => i += 1,
                b'"' => in_dq = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'\\' => i += 1,
            b'\'' => i = find_from(b, i + 1, b'\''),
            b'"' => in_dq = true,
            b'`' => i = find_from(b, i + 1, b'`'),
            // Inside `case`, pattern parentheses need not balance.
            b'(' | b')' if case_depth > 0 => {}
            b'(' | b'{' => depth += 1,
            b')' | b'}' => depth -= 1,
            b'#' if at_word_start => i = find_from(b, i, b'\n').saturating_sub(1),
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                let (heredoc, j) = heredoc_start(b, i + 2);
                heredocs.push(heredoc);
                i = j;
                continue;
            }
            b'\n' => {
                // Skip the bodies of here-documents started on this line.
                i = past_heredoc_bodies(b, i + 1, heredocs.drain(..));
                if depth == 0
                    && i - last >= every
                    && i < b.len()
                    && !ends_with_continuation(&b[last..i])
                {
                    cuts.push(i);
                    last = i;
                }
                word_start = true;
                continue;
            }
            _ if at_word_start && c.is_ascii_lowercase() => {
                let (word, end) = keyword_at(b, i);
                match word {
                    Some(b"if" | b"for" | b"while" | b"until" | b"select") => depth += 1,
                    Some(b"fi" | b"done") => depth -= 1,
                    Some(b"case") => case_depth += 1,
                    Some(b"esac") => case_depth -= 1,
                    _ => {}
                }
                i = end;
                word_start = false;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    cuts
}

/// The index of the next `x` in `b` at or after `from`, else `b.len()`.
pub(super) fn find_from(b: &[u8], from: usize, x: u8) -> usize {
    b.get(from..)
        .and_then(|r| r.iter().position(|&y| y == x))
        .map_or(b.len(), |p| from + p)
}

/// The lowercase word starting at `b[i]`, when what follows it may end a keyword, and
/// the index after it.
fn keyword_at(b: &[u8], i: usize) -> (Option<&[u8]>, usize) {
    let end = b[i..]
        .iter()
        .position(|x| !x.is_ascii_lowercase())
        .map_or(b.len(), |p| i + p);
    let next_ok = b
        .get(end)
        .is_none_or(|x| matches!(x, b' ' | b'\t' | b'\n' | b';' | b')' | b'&' | b'|'));
    (next_ok.then(|| &b[i..end]), end)
}

/// The here-document whose operator ends at `b[j]` (after `<<`): its delimiter, quotes
/// removed, and whether `<<-` strips leading tabs; and the index after the delimiter.
fn heredoc_start(b: &[u8], mut j: usize) -> ((Vec<u8>, bool), usize) {
    let strip = b.get(j) == Some(&b'-');
    if strip {
        j += 1;
    }
    while b.get(j).is_some_and(|x| *x == b' ' || *x == b'\t') {
        j += 1;
    }
    let mut delim = Vec::new();
    while let Some(&x) = b.get(j) {
        if matches!(
            x,
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
        ) {
            break;
        }
        if !matches!(x, b'\'' | b'"' | b'\\') {
            delim.push(x);
        }
        j += 1;
    }
    ((delim, strip), j)
}

/// The index after the bodies of `heredocs` that start at `b[j]`, each ending at the line
/// that is its delimiter (or at the end of the text).
fn past_heredoc_bodies(
    b: &[u8],
    mut j: usize,
    heredocs: impl Iterator<Item = (Vec<u8>, bool)>,
) -> usize {
    for (delim, strip) in heredocs {
        loop {
            let end = find_from(b, j, b'\n');
            let line = b.get(j..end).unwrap_or(&[]);
            let line = if strip {
                let k = line.iter().position(|&x| x != b'\t').unwrap_or(line.len());
                &line[k..]
            } else {
                line
            };
            j = (end + 1).min(b.len());
            if line == delim.as_slice() || end >= b.len() {
                break;
            }
        }
    }
    j
}

/// A line ending in `|`, `&&` or `||` continues on the next line.
fn ends_with_continuation(piece: &[u8]) -> bool {
    let trimmed = piece
        .iter()
        .rposition(|x| !x.is_ascii_whitespace())
        .map_or(&piece[..0], |p| &piece[..=p]);
    trimmed.ends_with(b"|") || trimmed.ends_with(b"&&")
}
