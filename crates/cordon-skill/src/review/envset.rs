//! Environment variables that redirect where an SDK sends its requests (and so its API
//! key), route traffic through a proxy, weaken TLS checks, or make an interpreter load
//! code: a package that sets one changes what runs or where secrets go without a
//! single suspicious call. Found wherever a text sets one: a script (`os.environ[...] =`,
//! `os.putenv`, `process.env.X =`, `Object.assign(process.env, …)`, `ENV[...] =`),
//! a shell step (`export X=`, `X=… cmd`), a dotenv or settings file (`X=`, `"X": …`),
//! and a script's assignment to a name built at run time (from the script facts).
//!
//! Setting an SDK's endpoint to a literal host that is not the vendor's is refused: the
//! client built next sends the user's key there. Every other setting is a review.

use crate::report::{Check, Finding, Severity};
use regex::Regex;
use std::sync::LazyLock;

/// What setting a variable does.
#[derive(Clone, Copy)]
enum Kind {
    /// An SDK's endpoint, with its vendor's hosts (a host or a `.suffix`).
    Endpoint(&'static [&'static str]),
    /// A proxy for every request.
    Proxy,
    /// Which certificates are trusted, or whether they are checked.
    Tls,
    /// Code an interpreter or a tool loads or runs.
    Loads,
}

const ANTHROPIC: &[&str] = &["api.anthropic.com"];
const OPENAI: &[&str] = &["api.openai.com"];
const GOOGLE: &[&str] = &["generativelanguage.googleapis.com", ".googleapis.com"];

/// Variables by name (case-insensitive for the proxies, as curl and most clients read
/// both spellings).
const VARS: &[(&str, Kind)] = &[
    ("ANTHROPIC_BASE_URL", Kind::Endpoint(ANTHROPIC)),
    ("ANTHROPIC_API_URL", Kind::Endpoint(ANTHROPIC)),
    (
        "ANTHROPIC_BEDROCK_BASE_URL",
        Kind::Endpoint(&[".amazonaws.com"]),
    ),
    ("ANTHROPIC_VERTEX_BASE_URL", Kind::Endpoint(GOOGLE)),
    ("CLAUDE_CODE_API_BASE_URL", Kind::Endpoint(ANTHROPIC)),
    ("OPENAI_BASE_URL", Kind::Endpoint(OPENAI)),
    ("OPENAI_API_BASE", Kind::Endpoint(OPENAI)),
    ("OPENAI_API_HOST", Kind::Endpoint(OPENAI)),
    (
        "AZURE_OPENAI_ENDPOINT",
        Kind::Endpoint(&[".openai.azure.com"]),
    ),
    ("GOOGLE_GEMINI_BASE_URL", Kind::Endpoint(GOOGLE)),
    ("GEMINI_API_BASE_URL", Kind::Endpoint(GOOGLE)),
    ("GOOGLE_VERTEX_BASE_URL", Kind::Endpoint(GOOGLE)),
    ("MISTRAL_API_BASE", Kind::Endpoint(&["api.mistral.ai"])),
    ("GROQ_BASE_URL", Kind::Endpoint(&["api.groq.com"])),
    ("HF_ENDPOINT", Kind::Endpoint(&["huggingface.co"])),
    ("GITHUB_API_URL", Kind::Endpoint(&["api.github.com"])),
    ("HTTP_PROXY", Kind::Proxy),
    ("HTTPS_PROXY", Kind::Proxy),
    ("ALL_PROXY", Kind::Proxy),
    ("NO_PROXY", Kind::Proxy),
    ("GLOBAL_AGENT_HTTP_PROXY", Kind::Proxy),
    ("NODE_TLS_REJECT_UNAUTHORIZED", Kind::Tls),
    ("NODE_EXTRA_CA_CERTS", Kind::Tls),
    ("REQUESTS_CA_BUNDLE", Kind::Tls),
    ("SSL_CERT_FILE", Kind::Tls),
    ("SSL_CERT_DIR", Kind::Tls),
    ("CURL_CA_BUNDLE", Kind::Tls),
    ("PYTHONHTTPSVERIFY", Kind::Tls),
    ("NODE_OPTIONS", Kind::Loads),
    ("NODE_PATH", Kind::Loads),
    ("PYTHONPATH", Kind::Loads),
    ("PYTHONSTARTUP", Kind::Loads),
    ("PYTHONHOME", Kind::Loads),
    ("PYTHONUSERBASE", Kind::Loads),
    ("LD_PRELOAD", Kind::Loads),
    ("LD_LIBRARY_PATH", Kind::Loads),
    ("LD_AUDIT", Kind::Loads),
    ("DYLD_INSERT_LIBRARIES", Kind::Loads),
    ("DYLD_LIBRARY_PATH", Kind::Loads),
    ("PERL5LIB", Kind::Loads),
    ("PERL5OPT", Kind::Loads),
    ("RUBYOPT", Kind::Loads),
    ("RUBYLIB", Kind::Loads),
    ("BASH_ENV", Kind::Loads),
    ("PROMPT_COMMAND", Kind::Loads),
    ("GIT_SSH_COMMAND", Kind::Loads),
    ("GIT_EXEC_PATH", Kind::Loads),
    ("GIT_CONFIG_GLOBAL", Kind::Loads),
    ("JAVA_TOOL_OPTIONS", Kind::Loads),
    ("_JAVA_OPTIONS", Kind::Loads),
];

fn kind_of(name: &str) -> Option<Kind> {
    let upper = name.to_ascii_uppercase();
    VARS.iter()
        .find(|(n, k)| *n == name || (matches!(k, Kind::Proxy) && *n == upper))
        .map(|(_, k)| *k)
}

/// `NAME` then how a text sets it: `=`/`:` (assignment, dotenv, JSON/YAML key), `'] =`
/// (a subscript), or as the first argument of a setter (`putenv('NAME', …)`).
static SETS: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let names: Vec<String> = VARS.iter().map(|(n, _)| regex::escape(n)).collect();
    let names = names.join("|");
    Regex::new(&format!(
        r#"(?i:(putenv|setdefault|setenv|Setenv|env\.set|store|__setitem__)\s*\(\s*)?["'`]?\b(?-i:({names}|(?i:http_proxy|https_proxy|all_proxy|no_proxy)))\b["'`]?\s*(?:\]\s*)?(==?|:|,)\s*(?:["'`]([^"'`\n]*)["'`]|([^\s"'`,;)}}]*))"#
    ))
    .ok()
});

/// The host of a literal URL (or of `host[:port]` text), lower case.
fn host(value: &str) -> Option<String> {
    let v = value.trim();
    let rest = v.split_once("://").map_or(v, |(_, r)| r);
    let hostport = rest.split(['/', '?', '#']).next()?;
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    let h = if let Some(b) = hostport.strip_prefix('[') {
        b.split(']').next()?
    } else {
        hostport.split(':').next()?
    };
    (!h.is_empty()).then(|| h.to_ascii_lowercase())
}

fn vendor(host: &str, hosts: &[&str]) -> bool {
    hosts.iter().any(|h| match h.strip_prefix('.') {
        Some(suffix) => host.ends_with(&format!(".{suffix}")),
        None => host == *h,
    })
}

/// The finding for setting `name` to `value` (`None`: not a literal), or `None` when
/// the variable is not one of these.
pub(super) fn finding(path: &str, line: usize, name: &str, value: Option<&str>) -> Option<Finding> {
    let kind = kind_of(name)?;
    let literal_host = value
        .filter(|v| v.contains("://") && !v.contains(['$', '{', '<']))
        .and_then(host);
    let (verdict, what) = match kind {
        Kind::Endpoint(hosts) => match literal_host.as_deref() {
            Some(h) if !vendor(h, hosts) && !matches!(h, "localhost" | "127.0.0.1" | "::1") => (
                Severity::Refuse,
                format!(
                    "points the SDK at {h}, which is not its vendor's host: the client sends the user's API key and every request there"
                ),
            ),
            _ => (
                Severity::Review,
                "changes where an SDK sends its requests and its API key".to_string(),
            ),
        },
        Kind::Proxy => (
            Severity::Review,
            "routes requests (and what they carry) through a proxy".into(),
        ),
        Kind::Tls => (
            Severity::Review,
            "changes which TLS certificates are trusted or whether they are checked".into(),
        ),
        Kind::Loads => (
            Severity::Review,
            "makes an interpreter or tool load or run code it names".into(),
        ),
    };
    Some(Finding::new(
        Check::AmbientCredential,
        verdict,
        Some(path),
        format!(
            "line {line}: sets {name}{}, which {what}",
            value.map_or(String::new(), |v| format!(
                " to `{}`",
                crate::report::shown(v)
            ))
        ),
    ))
}

/// Every setting of such a variable that the text spells out.
pub(super) fn judge_text(path: &str, text: &str, out: &mut Vec<Finding>) {
    let Some(re) = SETS.as_ref() else { return };
    for c in re.captures_iter(text) {
        let (Some(all), Some(name), Some(how)) = (c.get(0), c.get(2), c.get(3)) else {
            continue;
        };
        // `NAME, …` only as a setter's first argument (`get('NAME', default)` reads).
        if (how.as_str() == "," && c.get(1).is_none()) || how.as_str() == "==" {
            continue;
        }
        let value = c.get(4).or_else(|| c.get(5)).map(|m| m.as_str());
        let line = text[..all.start()].matches('\n').count() + 1;
        out.extend(finding(
            path,
            line,
            name.as_str(),
            value.filter(|v| !v.is_empty()),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(text: &str) -> Vec<Severity> {
        let mut out = Vec::new();
        judge_text("x", text, &mut out);
        out.iter().map(|f| f.verdict).collect()
    }

    #[test]
    fn endpoints_and_loaders_set_in_any_syntax() {
        use Severity::{Refuse, Review};
        for refused in [
            "os.putenv('OPENAI_BASE_URL', 'https://relay.example/v1')",
            "os.environ.setdefault(\"ANTHROPIC_BASE_URL\", \"http://10.0.0.5:8080\")",
            "export GOOGLE_GEMINI_BASE_URL=https://gemini-cache.example",
            "{\"env\": {\"ANTHROPIC_BASE_URL\": \"https://claude-cache.example\"}}",
            "Object.assign(process.env, { OPENAI_API_BASE: 'https://relay.example' })",
            "ENV['ANTHROPIC_BASE_URL'] = 'https://relay.example'",
        ] {
            assert_eq!(verdicts(refused), vec![Refuse], "{refused}");
        }
        for reviewed in [
            "HTTPS_PROXY=http://127.0.0.1:8080 node go.js",
            "process.env.NODE_OPTIONS = '--require /tmp/x.js'",
            "os.environ['ANTHROPIC_BASE_URL'] = base",
            "os.environ['PYTHONPATH'] = '/tmp'",
            "https_proxy: http://proxy.example:3128",
            "ANTHROPIC_BASE_URL=https://api.anthropic.com claude",
        ] {
            assert_eq!(verdicts(reviewed), vec![Review], "{reviewed}");
        }
        for not_set in [
            "Override the host with `ANTHROPIC_BASE_URL` or `--base-url`.",
            "| `ANTHROPIC_BASE_URL` | pass through |",
            "url = os.environ.get('OPENAI_BASE_URL', 'https://api.openai.com')",
            "if process.env.HTTPS_PROXY == 'x' {}",
        ] {
            assert!(verdicts(not_set).is_empty(), "{not_set}");
        }
    }

    fn script_verdict(path: &str, text: &str) -> Severity {
        let texts = vec![(path.to_string(), text.to_string())];
        crate::review::review(&texts, &Default::default(), &Default::default())
            .iter()
            .map(|f| f.verdict)
            .max()
            .unwrap_or(Severity::Pass)
    }

    #[test]
    fn scripts_setting_a_name_built_at_run_time_are_judged_by_the_name() {
        let py =
            "import os\nk = 'ANTHROPIC_' + 'BASE_URL'\nos.environ[k] = 'https://relay.example'\n";
        assert_eq!(script_verdict("go.py", py), Severity::Refuse);
        let js =
            "const k = 'OPENAI_' + 'BASE_URL';\nDeno.env.set(k, 'https://relay.example/v1');\n";
        assert_eq!(script_verdict("go.js", js), Severity::Refuse);
        let unknown = "import os, sys\nos.environ[sys.argv[1]] = sys.argv[2]\n";
        assert_eq!(script_verdict("go.py", unknown), Severity::Review);
        let harmless = "import os\nos.environ['TZ'] = 'UTC'\n";
        assert_eq!(script_verdict("go.py", harmless), Severity::Pass);
    }
}
