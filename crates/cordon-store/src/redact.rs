//! Redaction of obvious secrets before anything reaches the audit log.
//!
//! This is a net for the common shapes, not a guarantee: values under secret-looking
//! keys, `NAME=value` assignments with secret-looking names, `Authorization:` headers,
//! bearer tokens, URL userinfo, `--password=…`-style flags, MySQL's `-pPASSWORD`, and a
//! few well-known token prefixes.

use serde_json::Value;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Name fragments (upper-cased) that mark a key or variable as secret.
const SECRET_NAMES: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "KEY",
    "CREDENTIAL",
    "AUTHORIZATION",
    "COOKIE",
    "SESSION_ID",
    "PRIVATE",
];

/// Long flags whose value is a secret.
const SECRET_FLAGS: &[&str] = &[
    "--password",
    "--passwd",
    "--token",
    "--api-key",
    "--apikey",
    "--secret",
    "--auth",
    "--access-token",
    "--client-secret",
    "--private-key",
];

/// Prefixes of well-known credential formats.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "sk-",
    "sk_live_",
    "rk_live_",
    "AKIA",
    "ASIA",
    "npm_",
    "pypi-",
    "hf_",
];

/// Programs whose `-pVALUE` is a password.
const DASH_P_PASSWORD: &[&str] = &[
    "mysql",
    "mysqldump",
    "mysqladmin",
    "mariadb",
    "mariadb-dump",
];

fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAMES.iter().any(|s| upper.contains(s))
}

/// A copy of `value` with secrets replaced by [`REDACTED`].
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret_name(k) && !matches!(v, Value::Null | Value::Bool(_)) {
                        Value::String(REDACTED.into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) => Value::String(redact_text(s)),
        other => other.clone(),
    }
}

/// Strip the quotes a shell word may start or end with, returning (lead, core, trail).
fn split_quotes(word: &str) -> (&str, &str, &str) {
    let q = |c: char| c == '\'' || c == '"';
    let core_start = word.len() - word.trim_start_matches(q).len();
    let trimmed = word.trim_end_matches(q);
    let core_end = trimmed.len().max(core_start);
    (
        &word[..core_start],
        &word[core_start..core_end],
        &word[core_end..],
    )
}

/// Redact secrets inside free text (a command line, a URL, a header).
pub fn redact_text(text: &str) -> String {
    // Split into words and the whitespace between them, keeping both.
    let mut pieces: Vec<(bool, &str)> = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        match in_space {
            Some(prev) if prev != space => {
                pieces.push((prev, &text[start..i]));
                start = i;
            }
            _ => {}
        }
        in_space = Some(space);
    }
    if let Some(prev) = in_space {
        pieces.push((prev, &text[start..]));
    }

    let dash_p = pieces.iter().any(|(space, w)| {
        !space && {
            let (_, core, _) = split_quotes(w);
            let base = core.rsplit('/').next().unwrap_or(core);
            DASH_P_PASSWORD.contains(&base)
        }
    });

    let mut out = String::with_capacity(text.len());
    // How many following words are secret because of what came before.
    let mut hide_next = 0usize;
    for (space, word) in pieces {
        if space {
            out.push_str(word);
            continue;
        }
        let (lead, core, trail) = split_quotes(word);
        if hide_next > 0 {
            hide_next -= 1;
            let scheme = ["bearer", "basic", "token", "digest"]
                .contains(&core.to_ascii_lowercase().as_str());
            if scheme {
                hide_next = 1;
                out.push_str(word);
            } else {
                out.push_str(lead);
                out.push_str(REDACTED);
                out.push_str(trail);
            }
            continue;
        }
        let lower = core.to_ascii_lowercase();
        if lower.ends_with("authorization:")
            || lower.ends_with("cookie:")
            || lower.ends_with("x-api-key:")
        {
            hide_next = 1;
            out.push_str(word);
            continue;
        }
        if lower == "bearer" {
            hide_next = 1;
            out.push_str(word);
            continue;
        }
        if SECRET_FLAGS.contains(&lower.as_str()) {
            hide_next = 1;
            out.push_str(word);
            continue;
        }
        out.push_str(lead);
        out.push_str(&redact_word(core, dash_p));
        out.push_str(trail);
    }
    out
}

fn redact_word(word: &str, dash_p: bool) -> String {
    // --password=VALUE
    if let Some((flag, _)) = word.split_once('=')
        && word.starts_with("--")
        && SECRET_FLAGS.contains(&flag.to_ascii_lowercase().as_str())
    {
        return format!("{flag}={REDACTED}");
    }
    // NAME=value, alone (an environment assignment) or among query parameters.
    if word.contains('=') {
        let mut out = String::with_capacity(word.len());
        let mut changed = false;
        for (i, part) in word.split_inclusive(['&', '?', ';']).enumerate() {
            let sep = part.ends_with(['&', '?', ';']);
            let body = if sep { &part[..part.len() - 1] } else { part };
            match body.split_once('=') {
                Some((name, _))
                    if !name.is_empty()
                        && (i > 0 || !name.contains("://"))
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        && is_secret_name(name) =>
                {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(REDACTED);
                    changed = true;
                }
                _ => out.push_str(body),
            }
            if sep {
                out.push_str(&part[part.len() - 1..]);
            }
        }
        if changed {
            return out;
        }
    }
    // scheme://user:pass@host
    if let Some(pos) = word.find("://") {
        let rest = &word[pos + 3..];
        let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..auth_end].rfind('@') {
            return format!(
                "{}{}@{}",
                &word[..pos + 3],
                REDACTED,
                redact_word(&rest[at + 1..], false)
            );
        }
    }
    if dash_p && word.len() > 2 && word.starts_with("-p") {
        return format!("-p{REDACTED}");
    }
    if TOKEN_PREFIXES.iter().any(|p| word.starts_with(p)) && word.len() >= 16 {
        return REDACTED.to_string();
    }
    word.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    macro_rules! redacts {
        ($name:ident, $input:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(redact_text($input), $want);
            }
        };
    }

    redacts!(
        env_assignment,
        "GITHUB_TOKEN=abc123 gh pr list",
        "GITHUB_TOKEN=[REDACTED] gh pr list"
    );
    redacts!(
        auth_header,
        "curl -H 'Authorization: Bearer abc.def' https://x",
        "curl -H 'Authorization: Bearer [REDACTED]' https://x"
    );
    redacts!(bare_bearer, "Bearer abc", "Bearer [REDACTED]");
    redacts!(
        url_userinfo,
        "git clone https://me:hunter2@example.com/r.git",
        "git clone https://[REDACTED]@example.com/r.git"
    );
    redacts!(
        mysql_dash_p,
        "mysql -uroot -phunter2 db",
        "mysql -uroot -p[REDACTED] db"
    );
    redacts!(mkdir_dash_p_untouched, "mkdir -p src/x", "mkdir -p src/x");
    redacts!(
        long_flag_eq,
        "tool --password=hunter2 go",
        "tool --password=[REDACTED] go"
    );
    redacts!(
        long_flag_space,
        "tool --token hunter2 go",
        "tool --token [REDACTED] go"
    );
    redacts!(
        known_prefix,
        "echo ghp_0123456789abcdefghij",
        "echo [REDACTED]"
    );
    redacts!(
        query_param,
        "https://x/y?a=1&api_key=zzz",
        "https://x/y?a=1&api_key=[REDACTED]"
    );
    redacts!(
        plain_text_untouched,
        "cargo test -p foo",
        "cargo test -p foo"
    );
    redacts!(whitespace_kept, "a  \tb\n", "a  \tb\n");

    #[test]
    fn keys_in_objects() {
        let v = json!({"tool": "bash", "input": {"command": "ls", "env": {"AWS_SECRET_ACCESS_KEY": "x", "PATH": "/bin"}}, "api_key": 42});
        let r = redact(&v);
        assert_eq!(r["input"]["env"]["AWS_SECRET_ACCESS_KEY"], REDACTED);
        assert_eq!(r["input"]["env"]["PATH"], "/bin");
        assert_eq!(r["api_key"], REDACTED);
        assert_eq!(r["input"]["command"], "ls");
    }
}
