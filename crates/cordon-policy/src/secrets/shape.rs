//! What a value looks like: its entropy, whether it is a placeholder or a template, and
//! whether a name says that what is assigned to it is a secret.

/// Shannon entropy of `s`, in bits per byte.
pub(crate) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for &b in s.as_bytes() {
        counts[b as usize] += 1;
    }
    let len = s.len() as f64;
    counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) / len;
            -p * p.log2()
        })
        .sum()
}

/// A value that stands for a secret without being one: a variable, a template, an
/// empty or masked value, a literal that is no credential.
pub(crate) fn is_template_or_placeholder(v: &str) -> bool {
    if v.is_empty()
        || v.starts_with(['$', '{', '<', '%', '(', '[', '`', '@', '&'])
        || v.contains("${")
        || v.contains("{{")
        || v.contains("$(")
    {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "null"
            | "none"
            | "nil"
            | "true"
            | "false"
            | "undefined"
            | "redacted"
            | "string"
            | "password"
            | "passwd"
            | "pass"
            | "secret"
            | "token"
            | "pwd"
    ) {
        return true;
    }
    v.len() >= 4
        && v.chars()
            .all(|c| matches!(c, 'x' | 'X' | '*' | '.' | '#' | '-'))
}

/// A value shaped like a name in code rather than a credential: lowercase words joined by
/// `_ - . : /`, UPPER_SNAKE words, or camelCase / PascalCase words, where digits are at
/// most a fifth of the value (`DOT11_AUTH_ALGORITHM`, `v2_token`; random tokens carry
/// more digits or mix cases in ways no identifier does).
pub(crate) fn is_identifier_shaped(v: &str) -> bool {
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    if digits * 5 > v.len() {
        return false;
    }
    let words = v.split(['_', '-', '.', ':', '/']).filter(|w| !w.is_empty());
    let mut any = false;
    for w in words {
        any = true;
        let letters = || w.bytes().filter(|b| !b.is_ascii_digit());
        let lower = letters().all(|b| b.is_ascii_lowercase());
        let upper = letters().all(|b| b.is_ascii_uppercase());
        let stripped: String = w.chars().filter(|c| !c.is_ascii_digit()).collect();
        if !(lower || upper || is_camel(&stripped)) {
            return false;
        }
    }
    any
}

/// `fooBar`, `FooBar`, `Foo`: every capital but a leading one follows a lowercase
/// letter and is followed by one.
fn is_camel(w: &str) -> bool {
    let b = w.as_bytes();
    if !b.iter().all(u8::is_ascii_alphabetic) {
        return false;
    }
    (1..b.len()).all(|i| {
        !b[i].is_ascii_uppercase()
            || (b[i - 1].is_ascii_lowercase() && b.get(i + 1).is_some_and(u8::is_ascii_lowercase))
    })
}

/// Words whose presence in a name marks its value as a secret.
const SECRET_WORDS: &[&str] = &[
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pass",
    "credential",
    "credentials",
    "creds",
    "apikey",
    "privatekey",
    "secretkey",
    "accesskey",
    "authtoken",
    "auth",
    "authorization",
    "cookie",
    "sessionid",
];

/// The word before `key` (or `id`) that makes the pair a secret: `api_key`,
/// `session_id`.
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "secret",
    "access",
    "private",
    "signing",
    "encryption",
    "master",
    "account",
    "shared",
    "license",
    "client",
    "service",
    "storage",
    "admin",
    "deploy",
    "ssh",
    "app",
];

/// A last word that says the name is *about* a secret, not the secret itself:
/// `token_type`, `password_file`, `SECRET_NAME`.
const META_WORDS: &[&str] = &[
    "file",
    "files",
    "path",
    "dir",
    "name",
    "names",
    "type",
    "url",
    "uri",
    "endpoint",
    "env",
    "var",
    "field",
    "header",
    "prefix",
    "suffix",
    "kind",
    "len",
    "length",
    "size",
    "count",
    "limit",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "timeout",
    "format",
    "mode",
    "policy",
    "hash",
    "schema",
    "label",
    "hint",
    "location",
    "source",
    "provider",
    "store",
    "cache",
    "column",
    "regex",
    "pattern",
    "param",
    "method",
    "scope",
    "scopes",
    "version",
    "enabled",
    "required",
    "min",
    "max",
    "error",
    "message",
    "msg",
    "help",
    "description",
    "placeholder",
    "example",
    "id",
    "ids",
    "index",
    "idx",
    "key",
    "keys",
    "start",
    "end",
    "pos",
    "offset",
    "span",
    "range",
    "kinds",
    "stream",
    "tree",
    "list",
    "map",
    "set",
    "type_",
    "ty",
    "fn",
    "callback",
    "handler",
    "validator",
    "parser",
    "manager",
    "service",
    "client",
    "command",
    "cmd",
    "prompt",
    "input",
    "output",
    "text",
    "str",
    "string",
    "bytes",
    "buf",
    "buffer",
    "reader",
    "writer",
    "builder",
    "config",
    "options",
    "opts",
    "flag",
    "flags",
    "storage",
    "generator",
    "fetcher",
    "loader",
    "request",
    "response",
    "result",
    "status",
    "state",
    "policy_",
    "mask",
    "masked",
    "redacted",
    "needed",
    "stdin",
    "present",
    "exists",
    "valid",
    "check",
];

/// How much a context says about the value after a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strength {
    /// An environment assignment, a command-line flag, a query parameter, a JSON key: any
    /// value not a placeholder is a secret, and `…_KEY` names count.
    Strong,
    /// Anything else: the value must also look random.
    Weak,
}

/// The words of a name: split at `_ - .` and camelCase boundaries, lowercased.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Words that end in a password word without naming one: `BYPASS`, `COMPASS`.
const NOT_PASS: &[&str] = &[
    "bypass",
    "compass",
    "encompass",
    "surpass",
    "trespass",
    "overpass",
    "underpass",
    "multipass",
    "onepass",
    "firstpass",
    "secondpass",
    "singlepass",
    "twopass",
];

/// A word that names a password with a tool's or database's name glued on
/// (`PGPASSWORD`, `SSHPASS`, `MYPASSWD`), or `PWD` after another word (`MYSQL_PWD`;
/// `PWD` alone is the shell's working directory and `OLDPWD` the previous one).
/// A glued `…pass` counts only in an upper-case name (`SSHPASS`), where no package or
/// identifier (`minipass`, `fs-minipass`) is spelled.
fn is_password_word(words: &[String], i: usize, upper: bool) -> bool {
    let w = words[i].as_str();
    w.ends_with("password")
        || w.ends_with("passwd")
        || (upper && w.ends_with("pass") && !NOT_PASS.contains(&w))
        || (w == "pwd" && i > 0)
}

/// Whether a value assigned to `name` is a secret, by the name alone.
pub(crate) fn is_secret_name(name: &str, strength: Strength) -> bool {
    let words = words(name);
    let upper = !name.bytes().any(|b| b.is_ascii_lowercase());
    let Some(last) = words.last() else {
        return false;
    };
    let pair = |i: usize| {
        i > 0
            && matches!(words[i].as_str(), "key" | "keys" | "id")
            && KEY_QUALIFIERS.contains(&words[i - 1].as_str())
            && (words[i] != "id" || words[i - 1] == "session")
    };
    let session_id = words.windows(2).any(|w| w[0] == "session" && w[1] == "id");
    let last_is_pair = pair(words.len() - 1) || (session_id && last == "id");
    if META_WORDS.contains(&last.as_str()) && !last_is_pair {
        // `TOKEN_FILE`, `api_key_path`; a name ending in `key` counts only when strong
        // (`STRIPE_KEY=…`) or qualified (`api_key`).
        let strong_key = strength == Strength::Strong
            && matches!(last.as_str(), "key" | "keys")
            && name.bytes().all(|b| !b.is_ascii_lowercase());
        return strong_key;
    }
    words.iter().enumerate().any(|(i, w)| {
        SECRET_WORDS.contains(&w.as_str()) || pair(i) || is_password_word(&words, i, upper)
    }) || session_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for n in [
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "api_key",
            "apiKey",
            "OPENAI_API_KEY",
            "password",
            "db_pass",
            "clientSecret",
            "x-api-key",
            "--password",
            "session_id",
            "private_key",
            "PGPASSWORD",
            "MYSQL_PWD",
            "SSHPASS",
            "MYPASSWORD",
            "REDISCLI_AUTH",
            "LDAP_BIND_PASSWD",
            "db_pwd",
        ] {
            assert!(is_secret_name(n, Strength::Weak), "{n}");
        }
        assert!(is_secret_name("STRIPE_KEY", Strength::Strong));
        assert!(!is_secret_name("STRIPE_KEY", Strength::Weak));
        for n in [
            "PATH",
            "token_type",
            "TOKEN_FILE",
            "secret_name",
            "tokenizer",
            "keyboard",
            "primary_key",
            "key",
            "author",
            "password_hash",
            "api_key_path",
            "monkey",
            "PWD",
            "OLDPWD",
            "BYPASS",
            "COMPASS_DIR",
            "PGPASSFILE",
            "SSHPASS_FILE",
            "minipass",
            "fs-minipass",
        ] {
            assert!(!is_secret_name(n, Strength::Weak), "{n}");
        }
    }

    #[test]
    fn shapes() {
        assert!(is_identifier_shaped("access_token"));
        assert!(is_identifier_shaped("parseToken"));
        assert!(is_identifier_shaped("TOKEN_KIND"));
        assert!(!is_identifier_shaped("aZ9kLmQpR2"));
        assert!(!is_identifier_shaped("QWmZkdPPx"));
        assert!(is_template_or_placeholder("${TOKEN}"));
        assert!(is_template_or_placeholder("xxxxxxxx"));
        assert!(!is_template_or_placeholder("hunter2"));
        assert!(entropy("aaaa") < 0.01);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }
}
