//! Values assigned to secret-looking names: `API_KEY=…`, `"password": "…"`, `token: …`,
//! `--password=…`, `--token …`, `?api_key=…`.
//!
//! A keyword search finds candidate names; each candidate is extended to the whole name
//! and the value after it is read, all within fixed bounds ([`NAME_REACH`],
//! [`VALUE_MAX`]), so the work per keyword is constant and the scan linear.
//!
//! How sure the context is decides what the value must look like:
//! - **strong** (an `UPPER_CASE=value` environment assignment, a `--flag`, a query
//!   parameter, a `"quoted": "key"` of a JSON object): any value that is not a template
//!   or placeholder is redacted, short ones included: a command line's
//!   `GITHUB_TOKEN=abc123` is a secret however weak it is;
//! - **weak** (`token = …`, `password: …` in code or prose): a quoted value must be
//!   12–512 bytes without whitespace with at least 3.0 bits of entropy per byte and not
//!   shaped like an identifier; an unquoted one 16–512 bytes, at least 3.2 bits per byte,
//!   with a digit (or mixed case and 4.0 bits per byte). Random base62 strings of 12 bytes average about 3.4 bits per byte and
//!   of 16 bytes about 3.7, while code identifiers and English words assigned to such
//!   names (`"access_token"`, `parse_token(x)`, `"Password:"`) sit below or are turned
//!   down by shape; the thresholds were set where the source corpus stopped yielding
//!   findings without losing the generated credentials (see
//!   docs/security/trust-labels.md).

use super::SecretKind;
use super::shape::{
    Strength, entropy, is_identifier_shaped, is_secret_name, is_template_or_placeholder,
};
use std::ops::Range;

/// How far a name may extend either side of its keyword, in bytes.
const NAME_REACH: usize = 64;
/// The longest value read after a name, in bytes.
const VALUE_MAX: usize = 512;

/// The keywords a secret-looking name holds, in the order they are tried at each
/// position, and whether an ASCII word boundary must follow. Each is an ASCII literal,
/// compared with the text in ASCII lower case; `[_-.]?` between two words is spelled out.
const KEYWORDS: &[(&str, bool)] = &[
    ("token", false),
    ("secret", false),
    ("passw", false),
    ("passphrase", false),
    ("pass", true),
    ("pwd", true),
    ("_pass", false),
    ("credential", false),
    ("creds", false),
    ("apikey", false),
    ("api_key", false),
    ("api-key", false),
    ("api.key", false),
    ("accesskey", false),
    ("access_key", false),
    ("access-key", false),
    ("access.key", false),
    ("privatekey", false),
    ("private_key", false),
    ("private-key", false),
    ("private.key", false),
    ("_key", true),
    ("auth", false),
    ("cookie", false),
    ("sessionid", false),
    ("session_id", false),
    ("session-id", false),
    ("session.id", false),
];

/// Where the keywords are in `lower` (a text in ASCII lower case): leftmost first, the
/// first keyword of [`KEYWORDS`] that matches at a position winning, the search going on
/// after it, as a regular expression alternation of them would find them. A hand-written
/// scan rather than a compiled expression: compiling one took about 1.5 ms of a hook
/// process whose call merely mentioned a credential.
fn keyword_matches(lower: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < lower.len() {
            // Every keyword starts with one of these bytes.
            if !matches!(lower[at], b't' | b's' | b'p' | b'_' | b'c' | b'a') {
                at += 1;
                continue;
            }
            let rest = &lower[at..];
            let found = KEYWORDS.iter().find(|(k, boundary)| {
                rest.starts_with(k.as_bytes())
                    && (!boundary
                        || !rest
                            .get(k.len())
                            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_'))
            });
            match found {
                Some((k, _)) => {
                    let m = at..at + k.len();
                    at += k.len();
                    return Some(m);
                }
                None => at += 1,
            }
        }
        None
    })
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Every value assigned to a secret-looking name in `text`.
pub(crate) fn find(text: &str, lower: &str, out: &mut Vec<(SecretKind, Range<usize>)>) {
    let bytes = text.as_bytes();
    // Every keyword holds one of these (ASCII, any case): without one, nothing to look for.
    if ![
        "token", "secret", "pass", "cred", "key", "auth", "cookie", "session", "pwd",
    ]
    .iter()
    .any(|k| lower.contains(k))
    {
        return;
    }
    let mut done_until = 0;
    for m in keyword_matches(lower.as_bytes()) {
        if m.start < done_until {
            continue;
        }
        // The whole name around the keyword.
        let lo = m.start.saturating_sub(NAME_REACH);
        let mut start = m.start;
        while start > lo && is_name_byte(bytes[start - 1]) {
            start -= 1;
        }
        if start == lo && start > 0 && is_name_byte(bytes[start - 1]) {
            continue; // longer than any name worth reading
        }
        let hi = (m.end + NAME_REACH).min(bytes.len());
        let mut end = m.end;
        while end < hi && is_name_byte(bytes[end]) {
            end += 1;
        }
        if end == hi && end < bytes.len() && is_name_byte(bytes[end]) {
            continue;
        }
        done_until = end;
        // `--flag`s keep their dashes in the name; dots at either end are punctuation.
        let name = text[start..end].trim_end_matches('.');
        let name_end = start + name.len();
        if let Some((range, kind)) = value_after(text, start, name, name_end) {
            done_until = range.end;
            out.push((kind, range));
        }
    }
}

/// The separator between a name and its value at `bytes[i..]`: `:=`, `=>`, `=` or `:`,
/// else (`spaced_flag`: a `--flag` followed by blanks) a blank; `None` when there is none.
fn separator(bytes: &[u8], i: usize, spaced_flag: bool) -> Option<&[u8]> {
    if bytes[i..].starts_with(b":=") || bytes[i..].starts_with(b"=>") {
        Some(&bytes[i..i + 2])
    } else if matches!(bytes.get(i), Some(b'=' | b':')) {
        Some(&bytes[i..i + 1])
    } else if spaced_flag {
        Some(b" ")
    } else {
        None
    }
}

/// After `--flag `, an option or a usage text's metavariable (`--token TOKEN`): not a
/// value.
fn is_metavariable(v: &str) -> bool {
    v.starts_with('-')
        || (v.starts_with(|c: char| c.is_ascii_uppercase())
            && v.bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-'))
}

/// The secret assigned to `name` (which spans `start..name_end`), if the text after it
/// is an assignment whose value passes the checks for its context.
fn value_after(
    text: &str,
    start: usize,
    name: &str,
    name_end: usize,
) -> Option<(Range<usize>, SecretKind)> {
    let bytes = text.as_bytes();
    let before = start.checked_sub(1).map(|i| bytes[i]);
    let flag = name.starts_with('-');
    let bare = name.trim_start_matches('-');
    if bare.is_empty() {
        return None;
    }
    // A quote around the name: `"password": …`.
    let quoted_name =
        matches!(before, Some(b'"' | b'\'')) && bytes.get(name_end) == before.as_ref();
    let mut i = name_end + usize::from(quoted_name);
    let spaces_before = skip_spaces(bytes, i) - i;
    i += spaces_before;
    let sep = separator(bytes, i, flag && spaces_before > 0 && i > name_end)?;
    let sep_len = if sep == b" " { 0 } else { sep.len() };
    let mut after_sep = i + sep_len;
    if sep == b":" {
        // A typed binding, `const API_KEY: &str = "…"`: the value follows the `=`.
        if let Some(eq) = typed_binding(bytes, after_sep) {
            after_sep = eq + 1;
        }
    }
    let value_start = skip_spaces(bytes, after_sep);
    let tight = spaces_before == 0 && value_start == after_sep;

    let env = !quoted_name
        && tight
        && sep == b"="
        && bare.bytes().all(|b| !b.is_ascii_lowercase())
        && bare.bytes().any(|b| b.is_ascii_uppercase())
        && before.is_none_or(|b| {
            b.is_ascii_whitespace() || matches!(b, b';' | b'&' | b'(' | b'"' | b'\'' | b'`' | b'|')
        });
    let query = !quoted_name && tight && sep == b"=" && matches!(before, Some(b'?' | b'&'));
    let json = quoted_name && before == Some(b'"') && sep == b":";
    let strength = if flag || env || query || json {
        Strength::Strong
    } else {
        Strength::Weak
    };
    if flag && !matches!(sep, b"=" | b" ") {
        return None;
    }
    if !is_secret_name(bare, strength) {
        return None;
    }

    let (range, quoted) = read_value(text, value_start, query)?;
    let value = &text[range.clone()];
    if is_template_or_placeholder(value) || (sep == b" " && is_metavariable(value)) {
        return None;
    }
    // A whole line `name = value` or `name: value` (ini, properties, YAML, `.env`, a
    // dictionary entry) whose value is the rest of the line: sure, unless the value holds
    // a blank or is shaped like a name in code (`token = self.token`, `"Password:"`)
    // without the digits and mixed case of a random string.
    let whole_line = !flag
        && matches!(sep, b"=" | b":" | b":=")
        && starts_line(bytes, start - usize::from(quoted_name))
        && ends_line(bytes, range.end + usize::from(quoted));
    // A line ending in `,` or `;` is code or a literal's entry: its value must be quoted
    // (`NL80211_ATTR_COOKIE = 88,`, `session_id: *session_id,` are not secrets); a short
    // number (`token = 0`, `port: 8080`) is none either.
    let punctuated = matches!(
        bytes.get(range.end + usize::from(quoted)),
        Some(b',' | b';')
    );
    let short_number = !quoted && value.len() < 8 && value.bytes().all(|b| b.is_ascii_digit());
    if whole_line
        && (quoted || !punctuated)
        && !short_number
        && !value.contains(char::is_whitespace)
        && (!is_identifier_shaped(value)
            || (value.bytes().any(|b| b.is_ascii_digit())
                && value.bytes().any(|b| b.is_ascii_uppercase())
                && value.bytes().any(|b| b.is_ascii_lowercase())))
    {
        return Some((range, SecretKind::NamedSecret));
    }
    let accepted = match (strength, quoted) {
        (Strength::Strong, _) => true,
        (Strength::Weak, true) => {
            (12..=VALUE_MAX).contains(&value.len())
                && !value.contains(char::is_whitespace)
                && entropy(value) >= 3.0
                && !is_identifier_shaped(value)
        }
        (Strength::Weak, false) => {
            (16..=VALUE_MAX).contains(&value.len())
                && entropy(value) >= 3.2
                && (value.bytes().any(|b| b.is_ascii_digit())
                    || (value.bytes().any(|b| b.is_ascii_uppercase())
                        && value.bytes().any(|b| b.is_ascii_lowercase())
                        && entropy(value) >= 4.0))
                && !is_identifier_shaped(value)
        }
    };
    accepted.then_some((range, SecretKind::NamedSecret))
}

/// The `=` of `: TYPE =` after a name, when the bytes at `i` are a type and then one.
fn typed_binding(bytes: &[u8], i: usize) -> Option<usize> {
    let start = skip_spaces(bytes, i);
    let limit = (start + NAME_REACH).min(bytes.len());
    let eq = start + bytes[start..limit].iter().position(|&b| b == b'=')?;
    let ty = &bytes[start..eq];
    let is_type = !ty.is_empty()
        && ty.iter().all(|&b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'&'
                        | b'\''
                        | b'<'
                        | b'>'
                        | b':'
                        | b' '
                        | b'['
                        | b']'
                        | b';'
                        | b'?'
                        | b'|'
                )
        })
        && !matches!(bytes.get(eq + 1), Some(b'=' | b'>'));
    is_type.then_some(eq)
}

/// Whether only blanks, or blanks around a YAML list's `- `, come between the line's
/// start and `i`. Reads back over those bytes only (never to the line's start across
/// other text), so the cost per name is the blanks before it and the scan stays linear.
fn starts_line(bytes: &[u8], i: usize) -> bool {
    let blanks_before = |mut j: usize| {
        while j > 0 && matches!(bytes[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        j
    };
    let at_line_start = |j: usize| j == 0 || bytes[j - 1] == b'\n';
    let j = blanks_before(i);
    if at_line_start(j) {
        return true;
    }
    // `- name: value`: a dash, then at least one blank.
    j < i && bytes[j] == b' ' && bytes[j - 1] == b'-' && at_line_start(blanks_before(j - 1))
}

/// Whether only an optional `,` or `;` and blanks come between `i` and the line's end.
fn ends_line(bytes: &[u8], mut i: usize) -> bool {
    if matches!(bytes.get(i), Some(b',' | b';')) {
        i += 1;
    }
    i = skip_spaces(bytes, i);
    matches!(bytes.get(i), None | Some(b'\n' | b'\r'))
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// The value at `i`: a quoted string on one line (without its quotes), or an unquoted
/// run. Returns its range and whether it was quoted. Unquoted values in code that are
/// calls, paths of fields or types (`parse(x)`, `self.token`, `Vec<u8>`) are not values.
fn read_value(text: &str, i: usize, query: bool) -> Option<(Range<usize>, bool)> {
    let bytes = text.as_bytes();
    let first = *bytes.get(i)?;
    if matches!(first, b'"' | b'\'' | b'`') {
        let body = i + 1;
        let limit = (body + VALUE_MAX + 1).min(bytes.len());
        let close = bytes[body..limit]
            .iter()
            .position(|&b| b == first || b == b'\n')?;
        if bytes[body + close] != first {
            return None;
        }
        return Some((body..body + close, true));
    }
    let limit = (i + VALUE_MAX + 1).min(bytes.len());
    let stop = |b: u8| {
        b.is_ascii_whitespace()
            || matches!(
                b,
                b'"' | b'\'' | b'`' | b',' | b';' | b')' | b'}' | b']' | b'<' | b'>'
            )
            || (query && matches!(b, b'&' | b'#'))
    };
    let len = bytes[i..limit]
        .iter()
        .position(|&b| stop(b))
        .unwrap_or(limit - i);
    if len == 0 || i + len == limit && limit < bytes.len() && !stop(bytes[limit]) {
        return None;
    }
    let value = &text[i..i + len];
    if value.contains(['(', '{', '[']) {
        return None;
    }
    Some((i..i + len, false))
}

#[cfg(test)]
mod keyword_tests {
    use super::keyword_matches;

    /// The alternation the scan replaces, as it was written (case-insensitive).
    const ORACLE: &str = r"(?i)token|secret|passw|passphrase|pass(?-u:\b)|pwd(?-u:\b)|_pass|credential|creds|api[_\-.]?key|access[_\-.]?key|private[_\-.]?key|_key(?-u:\b)|auth|cookie|session[_\-.]?id";

    fn both(
        re: &regex::Regex,
        text: &str,
    ) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
        let want: Vec<_> = re.find_iter(text).map(|m| m.range()).collect();
        let lower = text.to_ascii_lowercase();
        let got: Vec<_> = keyword_matches(lower.as_bytes()).collect();
        (got, want)
    }

    /// On ASCII text the scan finds exactly what the expression finds, position for
    /// position: over every ordered pair and triple of fragments chosen to sit on the
    /// edges (a keyword inside another, a boundary word character or not, the separators
    /// of `api_key`, upper and mixed case).
    #[test]
    fn the_scan_finds_what_the_alternation_finds() {
        let parts = [
            "token",
            "TOKEN",
            "Secret",
            "passw",
            "passphrase",
            "pass",
            "PASS",
            "pwd",
            "_PWD",
            "pwdx",
            "_pass",
            "passport",
            "passecret",
            "credential",
            "creds",
            "cred",
            "apikey",
            "API_KEY",
            "api-key",
            "api.key",
            "api key",
            "accesskey",
            "Access_Key",
            "access-key",
            "access.key",
            "privatekey",
            "private_key",
            "PRIVATE-KEY",
            "private.key",
            "_key",
            "_keys",
            "_key9",
            "_KEY",
            "auth",
            "AUTHOR",
            "cookie",
            "sessionid",
            "SESSION_ID",
            "session-id",
            "session.id",
            "session",
            "id",
            "=",
            ":",
            " ",
            "_",
            "-",
            ".",
            "x",
            "9",
            "\"",
            "p",
            "as",
            "s",
        ];
        let re = regex::Regex::new(ORACLE).unwrap();
        let mut cases = 0;
        for a in parts {
            for b in parts {
                let (got, want) = both(&re, &format!("{a}{b}"));
                assert_eq!(got, want, "{a}{b}");
                for c in ["", "=", "s", "_key", "word", "pass"] {
                    let t = format!("{a}{b}{c}");
                    let (got, want) = both(&re, &t);
                    assert_eq!(got, want, "{t}");
                    cases += 1;
                }
            }
        }
        assert!(cases > 10_000);
        let long = "export DB_PASSWORD=hunter2 GITHUB_TOKEN=ghp_x curl -H 'Authorization: Bearer abc' \
                    --api-key=1 ?session_id=2 my_passport private.key=3 x_key_y _key";
        let (got, want) = both(&re, long);
        assert_eq!(got, want);
        assert!(got.len() >= 8, "{got:?}");
    }
}
