//! Reading raw text before the parser sees it: where long text can be cut into
//! pieces, and how deep it nests.

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
fn find_from(b: &[u8], from: usize, x: u8) -> usize {
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

/// Most parentheses open at once (`(`, `$(`, `$((`, `<(`, inside arithmetic too) in
/// text that leaves some of them unclosed. brush-parser 0.4.0 backtracks exponentially
/// over unclosed parentheses: 24 of them (`(( (( …`) take it minutes, 45 bytes of `(`
/// hours (found by fuzzing). Such text cannot parse anyway; it is refused before the
/// parser sees it, as deep nesting is.
pub(crate) const MAX_PARENS: usize = 8;

/// Returns `Some(depth)` when the text nests deeper than `limit`, or leaves parentheses
/// unclosed after holding more than [`MAX_PARENS`] open at once.
///
/// Over-approximates what the parser will recurse on: every `(`, `{`, `$(`, `${`,
/// backtick and double quote opened inside a substitution, and every `if`, `case`,
/// `for`, `while`, `until`, `select` keyword counts one level until its closer.
/// Over-counting only refuses very odd text; under-counting could crash, so closers
/// pop only the kind they close.
pub(super) fn exceeds_nesting(text: &str, limit: usize) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Open {
        Paren,
        Brace,
        DoubleQuote,
        Backtick,
        Keyword,
        Case,
    }
    let b = text.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    let mut word_start = true;
    let mut most_parens = 0;
    while i < b.len() {
        let c = b[i];
        let top = stack.last().copied();
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        if top == Some(Open::DoubleQuote) {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    stack.pop();
                }
                b'$' if matches!(b.get(i + 1), Some(b'(') | Some(b'{')) => {
                    stack.push(if b[i + 1] == b'(' {
                        Open::Paren
                    } else {
                        Open::Brace
                    });
                    i += 1;
                }
                b'`' => stack.push(Open::Backtick),
                _ => {}
            }
        } else {
            match c {
                b'\\' => i += 1,
                b'\'' => i = find_from(b, i + 1, b'\''),
                b'"' => stack.push(Open::DoubleQuote),
                b'`' if top == Some(Open::Backtick) => {
                    stack.pop();
                }
                b'`' => stack.push(Open::Backtick),
                b'(' if top == Some(Open::Case) => {}
                b'(' => stack.push(Open::Paren),
                b')' if top == Some(Open::Paren) => {
                    stack.pop();
                }
                b'{' => stack.push(Open::Brace),
                b'}' if top == Some(Open::Brace) => {
                    stack.pop();
                }
                b'#' if at_word_start => i = find_from(b, i, b'\n'),
                _ if at_word_start && c.is_ascii_lowercase() => {
                    let (word, end) = keyword_at(b, i);
                    match word {
                        Some(b"if" | b"for" | b"while" | b"until" | b"select") => {
                            stack.push(Open::Keyword);
                        }
                        Some(b"case") => stack.push(Open::Case),
                        Some(b"fi" | b"done") if top == Some(Open::Keyword) => {
                            stack.pop();
                        }
                        Some(b"esac") if top == Some(Open::Case) => {
                            stack.pop();
                        }
                        _ => {}
                    }
                    i = end;
                    word_start = false;
                    continue;
                }
                _ => {}
            }
        }
        if stack.len() > limit {
            return Some(stack.len());
        }
        if matches!(stack.last(), Some(Open::Paren)) {
            let parens = stack.iter().filter(|o| **o == Open::Paren).count();
            most_parens = most_parens.max(parens);
        }
        i += 1;
    }
    // Balanced parentheses parse in linear time however deep (up to `limit`); the
    // parser backtracks over the ones left open.
    if most_parens > MAX_PARENS && stack.contains(&Open::Paren) {
        return Some(most_parens);
    }
    None
}

/// Most parameter expansions with a subscript left open that text may hold: `${a[}` and
/// `${a[0}` (the brace closes before any `]`), `${a[` with no closer. bash rejects each
/// as a bad substitution; brush-parser 0.4.0 backtracks exponentially over several in a
/// word that begins like an array element (`u[${a[}${a[}…`: five take it seconds, six
/// (37 bytes) minutes; found by fuzzing). Text with more cannot run anyway; it is refused
/// before the parser sees it.
pub(crate) const MAX_OPEN_SUBSCRIPTS: usize = 2;

/// How far a subscript is searched for its `]`; one longer counts as left open.
const SUBSCRIPT_SCAN: usize = 4096;

/// Whether the text holds more than [`MAX_OPEN_SUBSCRIPTS`] parameter expansions whose
/// subscript is left open. Quotes are not followed: a quoted `${a[}` is counted too,
/// which only refuses very odd text.
pub(super) fn too_many_open_subscripts(text: &str) -> bool {
    let b = text.as_bytes();
    let mut open = 0;
    let mut i = 0;
    while let Some(off) = b
        .get(i..)
        .and_then(|r| r.windows(2).position(|w| w == b"${"))
    {
        let mut j = i + off + 2;
        i = j;
        // `${!a[…}` (the indices) and `${#a[…}` (a length) take a subscript too.
        if matches!(b.get(j), Some(b'!' | b'#')) {
            j += 1;
        }
        let name_start = j;
        while b
            .get(j)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            j += 1;
        }
        if j == name_start || b.get(j) != Some(&b'[') {
            continue;
        }
        if !subscript_closes(&b[j + 1..]) {
            open += 1;
            if open > MAX_OPEN_SUBSCRIPTS {
                return true;
            }
        }
    }
    false
}

/// Whether a subscript (the text after its `[`) reaches its `]` before the brace of its
/// expansion closes, within [`SUBSCRIPT_SCAN`] bytes; expansions inside it are skipped.
fn subscript_closes(rest: &[u8]) -> bool {
    let mut depth = 0usize;
    let mut k = 0;
    let end = rest.len().min(SUBSCRIPT_SCAN);
    while k < end {
        match rest[k] {
            b'$' if rest.get(k + 1) == Some(&b'{') => {
                depth += 1;
                k += 1;
            }
            b'}' if depth == 0 => return false,
            b'}' => depth -= 1,
            b']' if depth == 0 => return true,
            _ => {}
        }
        k += 1;
    }
    false
}
