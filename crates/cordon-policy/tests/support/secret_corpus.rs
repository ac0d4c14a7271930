//! The two corpora of the secrets measurements, shared by the test
//! (`tests/secrets_corpus.rs`) and the example (`examples/secrets_corpus.rs`):
//! - a bounded, deterministic sample of ordinary source code (the Rust toolchain's
//!   library sources and the cargo registry's unpacked crates), for false positives;
//! - generated credentials of every shape, random but seeded, for recall.
//!
//! The token formats follow the vendors' own descriptions: GitHub's token prefixes
//! (docs.github.com, "About authentication to GitHub"), GitLab's token prefixes
//! (docs.gitlab.com, "Token overview"), Slack's token types (api.slack.com, "Tokens"),
//! Stripe's key prefixes (docs.stripe.com, "API keys"), AWS access key ids
//! (docs.aws.amazon.com, IAM "Manage access keys", unique id prefixes), Azure storage
//! connection strings and SAS (learn.microsoft.com), RFC 7519 (JWT), RFC 7617 (Basic),
//! RFC 6750 (Bearer) and RFC 3986 (userinfo).
#![allow(dead_code)]
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use std::path::{Path, PathBuf};

/// A deterministic generator (xorshift64*), so the recall set is the same on every run.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    pub fn from(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n).map(|_| a[self.below(a.len())] as char).collect()
    }
}

pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const B62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const HEX: &str = "0123456789abcdef";

/// One generated case: the text, the secret inside it, and the kind expected.
pub struct Case {
    pub kind: &'static str,
    pub text: String,
    pub secret: String,
}

fn b64url_json(json: &str) -> String {
    // Real base64url of the JSON, so the header and payload decode as JWTs do.
    let bytes = json.as_bytes();
    let a = B64URL.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(a[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Wrap a secret in one of several ordinary surroundings.
fn around(rng: &mut Rng, secret: &str) -> String {
    match rng.below(6) {
        0 => format!("export VALUE={secret}\n"),
        1 => format!("{{\"value\": \"{secret}\", \"n\": 1}}"),
        2 => format!("config:\n  value: {secret}\n"),
        3 => format!("curl -d 'x={secret}' https://example.com/api"),
        4 => format!("The credential {secret} was printed in the log."),
        _ => format!("let v = \"{secret}\";"),
    }
}

/// `per_kind` generated cases of every shape.
pub fn generated(seed: u64, per_kind: usize) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..per_kind {
        let r = &mut rng;
        let mut shaped = |kind: &'static str, secret: String, r: &mut Rng| {
            let text = around(r, &secret);
            out.push(Case { kind, text, secret });
        };
        for p in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
            let s = format!("{p}{}", r.from(B62, 36));
            shaped("github-token", s, r);
        }
        let s = format!("github_pat_{}_{}", r.from(B62, 22), r.from(B62, 59));
        shaped("github-token", s, r);
        for p in ["glpat-", "gldt-", "glrt-"] {
            let s = format!(
                "{p}{}",
                r.from(
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
                    20
                )
            );
            shaped("gitlab-token", s, r);
        }
        for p in ["xoxb", "xoxp", "xoxa", "xoxr", "xoxs"] {
            let s = format!(
                "{p}-{}-{}-{}",
                r.from("0123456789", 11),
                r.from("0123456789", 13),
                r.from(B62, 24)
            );
            shaped("slack-token", s, r);
        }
        let s = format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            r.from(UPPER, 8),
            r.from(UPPER, 10),
            r.from(B62, 24)
        );
        shaped("slack-webhook", s, r);
        for p in ["sk_live_", "rk_live_", "sk_test_"] {
            let n = r.range(24, 99);
            let s = format!("{p}{}", r.from(B62, n));
            shaped("stripe-key", s, r);
        }
        let n = r.range(48, 156);
        let s = format!("sk-proj-{}", r.from(B64URL, n));
        shaped("openai-key", s, r);
        let s = format!("sk-{}", r.from(B62, 48));
        shaped("openai-key", s, r);
        let s = format!("sk-ant-api03-{}AA", r.from(B64URL, 93));
        shaped("anthropic-key", s, r);
        let s = format!("npm_{}", r.from(B62, 36));
        shaped("npm-token", s, r);
        let s = format!("hf_{}", r.from(B62, 34));
        shaped("huggingface-token", s, r);
        let s = format!("pypi-AgEIcHlwaS5vcmc{}", r.from(B64URL, 70));
        shaped("pypi-token", s, r);
        for p in ["AKIA", "ASIA"] {
            let s = format!("{p}{}", r.from("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16));
            shaped("aws-access-key-id", s, r);
        }
        let s = format!("AIza{}", r.from(B64URL, 35));
        shaped("gcp-api-key", s, r);
        let header = b64url_json("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
        let (sub, iat) = (r.from(B62, 10), r.range(1_000_000_000, 2_000_000_000));
        let payload = b64url_json(&format!("{{\"sub\":\"{sub}\",\"iat\":{iat}}}"));
        let s = format!("{header}.{payload}.{}", r.from(B64URL, 43));
        shaped("jwt", s, r);

        // Shapes whose context is part of the format.
        let mut push = |kind: &'static str, text: String, secret: String| {
            out.push(Case { kind, text, secret });
        };
        let key = r.from(B64, 40);
        push(
            "aws-secret-access-key",
            format!(
                "[default]\naws_access_key_id = AKIA{}\naws_secret_access_key = {key}\n",
                r.from(UPPER, 16)
            ),
            key,
        );
        let key = format!("{}==", r.from(B64, 86));
        push(
            "azure-storage-key",
            format!(
                "DefaultEndpointsProtocol=https;AccountName={};AccountKey={key};EndpointSuffix=core.windows.net",
                r.from("abcdefghijklmnopqrstuvwxyz", 10)
            ),
            key,
        );
        let sig = format!("{}%3D", r.from(B62, 43));
        push(
            "azure-sas-signature",
            format!(
                "https://acct.blob.core.windows.net/c/b?sp=r&st=2024-01-01T00:00:00Z&se=2024-01-02T00:00:00Z&spr=https&sv=2022-11-02&sr=b&sig={sig}"
            ),
            sig,
        );
        let lines: Vec<String> = (0..r.range(3, 12)).map(|_| r.from(B64, 64)).collect();
        for label in [
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "PGP PRIVATE KEY BLOCK",
        ] {
            let block = format!(
                "-----BEGIN {label}-----\n{}\n-----END {label}-----",
                lines.join("\n")
            );
            push("private-key", format!("key file:\n{block}\n"), block);
        }
        let n = r.range(8, 24);
        let pass = r.from(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!*~_-",
            n,
        );
        let scheme = ["https", "postgres", "mysql", "redis", "amqp", "mongodb+srv"][r.below(6)];
        let userinfo = format!("{}:{pass}", r.from("abcdefghijklmnopqrstuvwxyz", 6));
        push(
            "url-password",
            format!("DATABASE_URL={scheme}://{userinfo}@db.internal:5432/app"),
            userinfo.clone(),
        );
        let n = r.range(20, 48);
        let tok = r.from(B62, n);
        push(
            "authorization-header",
            format!("curl -H 'Authorization: Bearer {tok}' https://api.example.com"),
            tok,
        );
        let tok = r.from(B64, 24);
        push(
            "authorization-header",
            format!("Authorization: Basic {tok}\r\n"),
            tok,
        );
        let tok = r.from(B62, 32);
        push(
            "authorization-header",
            format!("-H \"X-Api-Key: {tok}\""),
            tok,
        );
        let tok = r.from(HEX, 32);
        push(
            "cookie",
            format!("Cookie: session={tok}\n"),
            format!("session={tok}"),
        );
        // Values under secret names, in each context the detector knows.
        let n = r.range(6, 40);
        let v = r.from(B62, n);
        let name = [
            "API_KEY",
            "DB_PASSWORD",
            "SERVICE_TOKEN",
            "CLIENT_SECRET",
            "STRIPE_KEY",
        ][r.below(5)];
        push("named-secret", format!("{name}={v} ./run.sh"), v);
        let n = r.range(6, 24);
        let v = r.from(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#%^*()-+=",
            n,
        );
        push(
            "named-secret",
            format!("{{\"user\": \"svc\", \"password\": \"{v}\"}}"),
            v,
        );
        let n = r.range(20, 48);
        let v = r.from(B62, n);
        push("named-secret", format!("auth:\n  token: {v}\n"), v);
        let n = r.range(16, 40);
        let v = r.from(B62, n);
        push("named-secret", format!("const API_KEY: &str = \"{v}\";"), v);
        let n = r.range(6, 20);
        let v = r.from(B62, n);
        push("named-secret", format!("deploy --token {v} --yes"), v);
        let n = r.range(6, 20);
        let v = r.from(B62, n);
        push(
            "named-secret",
            format!("https://example.com/x?format=json&access_token={v}&page=2"),
            v,
        );
        let n = r.range(6, 16);
        let v = r.from(B62, n);
        push("named-secret", format!("mysql -h db -u root -p{v} app"), v);
    }
    out
}

/// Roots of the ordinary-source corpus that exist on this machine.
pub fn corpus_roots() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut roots = Vec::new();
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".rustup"));
    if let Ok(toolchains) = std::fs::read_dir(rustup.join("toolchains")) {
        let mut tcs: Vec<PathBuf> = toolchains.flatten().map(|e| e.path()).collect();
        tcs.sort();
        for tc in tcs {
            let src = tc.join("lib/rustlib/src");
            if src.is_dir() {
                roots.push(src);
            }
        }
    }
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    if cargo.join("registry/src").is_dir() {
        roots.push(cargo.join("registry/src"));
    }
    roots
}

const TEXT_EXTENSIONS: &[&str] = &[
    "rs", "toml", "md", "json", "yml", "yaml", "txt", "sh", "py", "js", "ts", "c", "h", "cc",
    "cpp", "go", "lock", "html", "cfg", "ini",
];

/// Up to `budget` bytes of text files under `roots`, chosen deterministically: files in
/// the order of a hash of their path below the root (the same crate versions give the
/// same sample on any machine), each at most 256 KiB.
pub fn sample(roots: &[PathBuf], budget: usize) -> Vec<(String, String)> {
    let mut files: Vec<(u64, PathBuf, String)> = Vec::new();
    for root in roots {
        walk(root, root, &mut files, 0);
    }
    files.sort();
    let mut out = Vec::new();
    let mut total = 0;
    for (_, path, rel) in files {
        if total >= budget {
            break;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if text.len() > 256 * 1024 {
            continue;
        }
        total += text.len();
        out.push((rel, text));
    }
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(u64, PathBuf, String)>, depth: usize) {
    if depth > 12 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(root, &path, out, depth + 1);
        } else if ft.is_file()
            && path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| TEXT_EXTENSIONS.contains(&x))
        {
            // The first component under the registry is the index's directory name,
            // which differs between machines; hash the rest.
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let stable: PathBuf = rel
                .components()
                .skip_while(|c| c.as_os_str().to_string_lossy().starts_with("index."))
                .collect();
            let rel = stable.to_string_lossy().into_owned();
            out.push((fnv(&rel), path, rel));
        }
    }
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
