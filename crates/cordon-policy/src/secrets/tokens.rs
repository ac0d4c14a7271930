//! Credentials recognisable by their own shape: vendor token formats, private key blocks,
//! JWTs, URL userinfo, HTTP credential headers. Every pattern is for the `regex` crate,
//! whose matching is linear in the input; a pattern's secret is its first capture group.

use super::SecretKind;
use super::shape::{entropy, is_identifier_shaped, is_template_or_placeholder};
use regex::Regex;
use std::ops::Range;
use std::sync::OnceLock;

/// A check on a captured secret and the byte after it.
type Check = fn(&str, Option<u8>) -> bool;

/// One shape: the kind it finds, its regex, and a check on the captured secret (with
/// the byte after it) that can still turn the match down.
pub(crate) struct Shape {
    pub kind: SecretKind,
    pub re: &'static Regex,
    pub check: Check,
    pub left: Left,
}

/// What may touch a match on its left.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Left {
    /// Anything: the pattern starts with a prefix distinctive enough (`ghp_`, `AKIA`,
    /// `glpat-`, `xoxb-`) to be a token wherever it sits, glued into a word included
    /// (`MY_ghp_…`, `xAKIA…`).
    Glued,
    /// Anything but a letter or digit: a shorter prefix (`sk-`, `hf_`, `sk_live_`) ends
    /// words too (`task-…`, `desk_live_…`), but `MY_sk-…` is a token.
    NotAlnum,
    /// Anything, and the pattern is an ordinary one (its own context, `sig=`, `://`, makes
    /// it sure).
    Free,
    /// Not a token byte: the match is not a slice of a longer word or base64 run.
    NotToken,
}

fn any(_: &str, _: Option<u8>) -> bool {
    true
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/')
}

/// The token does not run on into more token characters (it is not a slice of a longer
/// base64 or identifier run).
fn ends_clean(_: &str, next: Option<u8>) -> bool {
    !next.is_some_and(is_token_byte)
}

/// The token does not run on into more letters or digits (its own alphabet, which the
/// pattern reads greedily): `ghp_…_abc` and `ghp_…-x` end at the `_` and `-`.
fn ends_alnum(_: &str, next: Option<u8>) -> bool {
    !next.is_some_and(|b| b.is_ascii_alphanumeric())
}

/// An AWS key id (upper case and digits, fixed length) does not run on into more letters
/// or digits, nor into base64 (`…AKIA…==` inside an encoded image is not a key).
fn ends_upper(_: &str, next: Option<u8>) -> bool {
    !next.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

fn ends_clean_b64(s: &str, next: Option<u8>) -> bool {
    ends_clean(s, next) && next != Some(b'=')
}

fn userinfo(s: &str, _: Option<u8>) -> bool {
    let password = s.split_once(':').map_or("", |(_, p)| p);
    !is_template_or_placeholder(password)
}

fn header_credential(s: &str, _: Option<u8>) -> bool {
    !is_template_or_placeholder(s)
        && !s.contains(['(', ')', '{', '}', '<', '>', '$'])
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "bearer" | "basic" | "token" | "digest" | "negotiate" | "ntlm"
        )
}

fn unqualified_header_credential(s: &str, next: Option<u8>) -> bool {
    header_credential(s, next) && !is_identifier_shaped(s) && s.len() >= 8
}

fn random_bearer(s: &str, _: Option<u8>) -> bool {
    !is_identifier_shaped(s) && entropy(s) >= 3.0
}

fn cookie(s: &str, _: Option<u8>) -> bool {
    s.trim().len() >= 8 && s.contains('=') && !is_template_or_placeholder(s.trim())
}

/// The table: kind, pattern, check, and what may touch the match on its left (checked
/// after the match, so the pattern starts with a literal, which the regex engine searches
/// for quickly, instead of a class). Order matters only for overlapping matches, which
/// are merged anyway.
const TABLE: &[(SecretKind, &str, Check, Left)] = &[
    (
        SecretKind::AwsAccessKeyId,
        r"((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})",
        ends_upper,
        Left::Glued,
    ),
    (
        SecretKind::AwsSecretAccessKey,
        r#"(?i)(?:aws[_\-. ]?secret[_\-. ]?(?:access[_\-. ]?)?key|secret[_\-. ]?access[_\-. ]?key)["']?\s*(?:=>|:=|[:=])\s*["']?([A-Za-z0-9/+]{40})"#,
        ends_clean_b64,
        Left::Free,
    ),
    (
        SecretKind::GcpApiKey,
        r"(AIza[0-9A-Za-z_\-]{35})",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::AzureStorageKey,
        r"(?i)(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})",
        any,
        Left::Free,
    ),
    (
        SecretKind::AzureSasSignature,
        r"[?&;]sig=([A-Za-z0-9%+/=]{16,})",
        any,
        Left::Free,
    ),
    (
        SecretKind::GitHubToken,
        r"((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::GitLabToken,
        r"((?:glpat|gldt|glrt|glptt|glcbt|gloas|glsoat|glffct|glimt|glagent|glft)-[A-Za-z0-9_\-]{20,255}(?:\.[A-Za-z0-9_\-]+)*)",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::SlackToken,
        r"(xox[abposre]-[A-Za-z0-9\-]{10,255}|xapp-[0-9]-[A-Za-z0-9\-]{10,255})",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::SlackWebhook,
        r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,})",
        any,
        Left::Free,
    ),
    (
        SecretKind::StripeKey,
        r"((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,255}|whsec_[A-Za-z0-9]{20,255})",
        ends_alnum,
        Left::NotAlnum,
    ),
    (
        SecretKind::AnthropicKey,
        r"(sk-ant-[A-Za-z0-9_\-]{20,255})",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::OpenAiKey,
        r"(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,255}|sk-[A-Za-z0-9]{32,255})",
        ends_alnum,
        Left::NotAlnum,
    ),
    (
        SecretKind::NpmToken,
        r"(npm_[A-Za-z0-9]{36})",
        ends_alnum,
        Left::NotAlnum,
    ),
    (
        SecretKind::PyPiToken,
        r"(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
        ends_alnum,
        Left::Glued,
    ),
    (
        SecretKind::HuggingFaceToken,
        r"(hf_[A-Za-z0-9]{34,40})",
        ends_alnum,
        Left::NotAlnum,
    ),
    (
        SecretKind::Jwt,
        r"(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)",
        ends_clean,
        Left::NotToken,
    ),
    (
        SecretKind::UrlPassword,
        r#"(?i)[a-z][a-z0-9+.\-]{0,31}://([^\s/?#@:'"<>\\]+:[^\s/?#@'"<>\\]+)@"#,
        userinfo,
        Left::Free,
    ),
    (
        SecretKind::AuthorizationHeader,
        r#"(?i)(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest|negotiate|ntlm|apikey|bot|sso-key|aws4-hmac-sha256)\s+([^\s'",;]+)"#,
        header_credential,
        Left::NotToken,
    ),
    (
        SecretKind::AuthorizationHeader,
        r#"(?i)(?:proxy-)?authorization["']?\s*:\s*["']?([^\s'",;]+)"#,
        unqualified_header_credential,
        Left::NotToken,
    ),
    (
        SecretKind::AuthorizationHeader,
        r"(?i)bearer\s+([A-Za-z0-9_\-.~+/]{16,}=*)",
        random_bearer,
        Left::NotToken,
    ),
    (
        SecretKind::AuthorizationHeader,
        r#"(?i)(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|x-vault-token)["']?\s*:\s*["']?([^\s'",;]+)"#,
        header_credential,
        Left::NotToken,
    ),
    (
        SecretKind::Cookie,
        r#"(?i)(?:set-)?cookie["']?\s*:\s*["']?([^\r\n'"\\]+)"#,
        cookie,
        Left::NotToken,
    ),
];

/// For each [`TABLE`] entry (same order), groups of literals, in ASCII lower case: every
/// match contains one literal of each group. A text that misses a group (most text) cannot
/// match, and the entry's pattern is then never compiled. Compiling every pattern costs
/// milliseconds, which a one-shot process (`cordon hook`, `check`) redacting a short input
/// pays for nothing otherwise (the pattern of a password in a URL alone took 0.9 ms: it needs
/// the `@` of its `user:password@` as well as a `://`).
const ANCHORS: &[&[&[&str]]] = &[
    &[&["akia", "asia", "abia", "acca"]],
    &[&["secret"]],
    &[&["aiza"]],
    &[&["accountkey", "sharedaccesskey"]],
    &[&["sig="]],
    &[&["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]],
    &[&[
        "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glffct-", "glimt-",
        "glagent-", "glft-",
    ]],
    &[&["xox", "xapp-"]],
    &[&["hooks.slack.com"]],
    &[&["sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"]],
    &[&["sk-ant-"]],
    &[&["sk-"]],
    &[&["npm_"]],
    &[&["pypi-"]],
    &[&["hf_"]],
    &[&["eyj"]],
    &[&["://"], &["@"]],
    &[&["authorization"]],
    &[&["authorization"]],
    &[&["bearer"]],
    &[&[
        "api-key",
        "auth-token",
        "access-token",
        "private-token",
        "vault-token",
    ]],
    &[&["cookie"]],
];

/// The compiled pattern of [`TABLE`] entry `i`, compiled on first need.
fn shape_re(i: usize) -> Option<&'static Regex> {
    static RES: OnceLock<Vec<OnceLock<Option<Regex>>>> = OnceLock::new();
    let all = RES.get_or_init(|| TABLE.iter().map(|_| OnceLock::new()).collect());
    // The patterns are constants, compiled and matched by this module's tests; one that
    // failed to compile would be left out, and the test `all_shapes_compile` fails.
    all.get(i)?
        .get_or_init(|| TABLE.get(i).and_then(|e| Regex::new(e.1).ok()))
        .as_ref()
}

/// The entries each of whose anchor groups `lower` (the text in ASCII lower case) holds.
fn candidates(lower: &str) -> impl Iterator<Item = usize> + '_ {
    (0..TABLE.len()).filter(move |&i| {
        ANCHORS.get(i).is_none_or(|groups| {
            groups
                .iter()
                .all(|group| group.iter().any(|a| lower.contains(a)))
        })
    })
}

/// How far back from a prefixed token's end the search goes on: the longest prefix
/// (`github_pat_`, `pypi-AgEIcHlwaS5vcmc`) and one byte more.
const GLUE_BACK: usize = 20;

/// The index of the character after the one at `at` (or `at + 1` at the end).
fn next_char(text: &str, at: usize) -> usize {
    let mut i = at + 1;
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Whether a token of the same shape starts right at `at` (`AKIA…AKIA…`, two fixed-length
/// tokens glued together). Reads a bounded window, so a rejected match costs little.
fn glued_on(re: &Regex, text: &str, at: usize) -> bool {
    let mut end = (at + GLUED_WINDOW).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(at..end)
        .and_then(|window| re.find(window))
        .is_some_and(|m| m.start() == 0)
}

/// How much of the text after a token [`glued_on`] reads: more than the longest bounded
/// token (255 bytes and a prefix).
const GLUED_WINDOW: usize = 300;

/// Every shaped credential in `text` (`lower` is `text` in ASCII lower case), unordered
/// and possibly overlapping.
pub(crate) fn find(text: &str, lower: &str, out: &mut Vec<(SecretKind, Range<usize>)>) {
    let bytes = text.as_bytes();
    for i in candidates(lower) {
        let (Some(&(kind, _, check, left)), Some(re)) = (TABLE.get(i), shape_re(i)) else {
            continue;
        };
        let shape = Shape {
            kind,
            re,
            check,
            left,
        };
        // A prefixed token's pattern reads its alphabet greedily and may swallow the start
        // of a second token glued on (`ghp_…ghp_…` matches up to the second `ghp`): after
        // such a match the search goes on from [`GLUE_BACK`] bytes before its end (a
        // bounded rescan per match, so the pass stays linear) instead of from its end.
        let prefixed = matches!(shape.left, Left::Glued | Left::NotAlnum);
        let mut pos = 0;
        let mut last_end = None;
        while pos <= text.len() {
            let Some(caps) = shape.re.captures_at(text, pos) else {
                break;
            };
            let (Some(whole), Some(m)) = (caps.get(0), caps.get(1)) else {
                break;
            };
            pos = if prefixed {
                let mut back = whole.end().saturating_sub(GLUE_BACK).max(m.start() + 1);
                while !text.is_char_boundary(back) {
                    back += 1;
                }
                back
            } else if whole.end() > whole.start() {
                whole.end()
            } else {
                next_char(text, whole.end())
            };
            let before = whole.start().checked_sub(1).map(|i| bytes[i]);
            let left_ok = match shape.left {
                Left::Glued | Left::Free => true,
                // Or right after a token of its own shape (`npm_…npm_…`).
                Left::NotAlnum => {
                    !before.is_some_and(|b| b.is_ascii_alphanumeric())
                        || last_end == Some(whole.start())
                }
                Left::NotToken => !before.is_some_and(is_token_byte),
            };
            if !left_ok {
                continue;
            }
            let mut range = m.range();
            let mut secret = m.as_str();
            // A token that ends a sentence keeps its full stop outside.
            while secret.ends_with('.') && shape.kind == SecretKind::GitLabToken {
                secret = &secret[..secret.len() - 1];
                range.end -= 1;
            }
            let next = bytes.get(range.end).copied();
            if (shape.check)(secret, next) || (prefixed && glued_on(shape.re, text, range.end)) {
                last_end = Some(range.end);
                out.push((shape.kind, range));
            }
        }
    }
    if lower.contains("-----begin") || lower.contains("private key") {
        private_keys(text, out);
    }
}

fn pem_re() -> Option<&'static (Regex, Regex)> {
    static RE: OnceLock<Option<(Regex, Regex)>> = OnceLock::new();
    RE.get_or_init(|| {
        let begin = Regex::new(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----").ok()?;
        let end = Regex::new(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----").ok()?;
        Some((begin, end))
    })
    .as_ref()
}

/// Private key blocks (PEM, OpenSSH, PGP, encrypted or not), whole: from the BEGIN line
/// to the END line, or, when the END line is missing (a cut-off log), to the end of the
/// run of key characters after it. Each byte is searched at most twice: once END is not
/// found after some point, it is not looked for again.
fn private_keys(text: &str, out: &mut Vec<(SecretKind, Range<usize>)>) {
    let Some((begin, end)) = pem_re() else {
        // Treat any BEGIN marker as the start of a key to the end of the text rather
        // than miss one.
        if let Some(at) = text.find("PRIVATE KEY") {
            out.push((SecretKind::PrivateKey, at..text.len()));
        }
        return;
    };
    let mut from = 0;
    let mut no_end_after = usize::MAX;
    while let Some(b) = begin.find_at(text, from) {
        let found_end = if b.end() < no_end_after {
            let e = end.find_at(text, b.end());
            if e.is_none() {
                no_end_after = b.end();
            }
            e
        } else {
            None
        };
        let stop = match found_end {
            Some(e) => e.end(),
            None => {
                let body = &text[b.end()..];
                let run = body
                    .find(|c: char| {
                        !(c.is_ascii_alphanumeric()
                            || c.is_ascii_whitespace()
                            || matches!(c, '+' | '/' | '=' | '\\' | ':' | ',' | '-'))
                    })
                    .unwrap_or(body.len());
                b.end() + run
            }
        };
        out.push((SecretKind::PrivateKey, b.start()..stop));
        from = stop.max(b.end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_shapes_compile() {
        assert_eq!(ANCHORS.len(), TABLE.len(), "one anchor list per pattern");
        assert!((0..TABLE.len()).all(|i| shape_re(i).is_some()));
        assert!(pem_re().is_some());
    }
}
