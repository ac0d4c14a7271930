//! Credential files wherever they lie: the names beside the core list of
//! [`guards::is_secret_file_name`], HOME's credential paths in their relative form
//! ([`credential_anywhere`]: a project's `.aws/credentials` is the same file as
//! `~/.aws/credentials`), editors' backup and swap copies of any of them, and the
//! content test for the few formats that say what they are whatever their name
//! ([`holds_private_key`]).
//!
//! The policy denies reading any of these by path; the sandbox masks what its walk of the
//! writable roots finds by the same functions, and masks also the files whose content
//! [`holds_private_key`] recognises (which no path rule can see). No I/O here.

use crate::guards::{self, SENSITIVE_HOME_PATHS};
use std::ffi::OsStr;
use std::sync::LazyLock;

/// HOME's credential paths that are a project's ordinary configuration when they lie
/// elsewhere: a project's `.npmrc` names its registries (a token there is normally
/// `${NPM_TOKEN}`), and npm must read it to install anything. libpq's `.pg_service.conf`
/// is a credential at HOME only too: elsewhere its name is one of every `*.conf` a glob
/// may reach (`/etc/*.conf` would otherwise be refused as naming it).
pub(crate) const HOME_ONLY: &[&str] = &[".npmrc", ".pg_service.conf"];

/// More exact names of files that hold secrets (case-insensitive): direnv's `.envrc`
/// (it `export`s tokens), Wrangler's `.dev.vars`, Streamlit's and Dynaconf's secrets,
/// Docker's legacy credentials file, a kubeconfig, Apache's password file, a wallet.
pub const SECRET_NAMES_MORE: &[&str] = &[
    ".envrc",
    ".dev.vars",
    "secrets.toml",
    ".secrets.toml",
    "secrets.json",
    ".secrets",
    "credentials.json",
    ".dockercfg",
    "kubeconfig",
    ".htpasswd",
    "wallet.dat",
    // Google service-account keys and OAuth tokens by their usual names, Rails' and
    // Kubernetes-style secrets files, clasp's login.
    "service-account.json",
    "service_account.json",
    "token.json",
    "secrets.yml",
    "secrets.yaml",
    ".clasprc.json",
];

/// Name endings of files that hold secrets: Terraform state (every resource's
/// attributes, passwords included), Java and Android keystores, PuTTY keys, dotenv
/// files named for their environment (`prod.env`).
pub const SECRET_SUFFIXES_MORE: &[&str] = &[
    ".tfstate",
    ".tfstate.backup",
    ".jks",
    ".keystore",
    ".ppk",
    ".env",
    // Terraform variable files (`terraform.tfvars`, `prod.auto.tfvars`) hold the
    // passwords and keys the configuration is given.
    ".tfvars",
];

/// Name beginnings of dotenv variants (`.env-prod`, `.env_local`, `.dev.vars.staging`).
pub const SECRET_PREFIXES_MORE: &[&str] = &[".env-", ".env_", ".dev.vars."];

/// Endings that make a copy of a file: editors' backups and swap files, saves.
pub const BACKUP_SUFFIXES: &[&str] = &[
    "~", ".bak", ".orig", ".swp", ".swo", ".save", ".old", ".tmp",
];

/// Words in a name that mark a template (`example.env`, `.envrc.sample`).
const TEMPLATE_WORDS: &[&str] = &["example", "sample", "template"];

fn has_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// The names of [`SECRET_NAMES_MORE`], [`SECRET_SUFFIXES_MORE`] and
/// [`SECRET_PREFIXES_MORE`] as glob patterns (`.envrc`, `*.tfstate`, `.env-*`), but the
/// names with a common extension (`secrets.json`, `secrets.toml`, `secrets.yml`): a glob such as
/// `*.json` or `*.toml` names a project's ordinary files, and each path it expands to is
/// still judged by name.
pub(crate) fn more_secret_patterns() -> impl Iterator<Item = String> {
    SECRET_NAMES_MORE
        .iter()
        .filter(|n| {
            ![".json", ".toml", ".yml", ".yaml"]
                .iter()
                .any(|e| n.ends_with(e))
        })
        .map(|n| (*n).to_string())
        .chain(SECRET_SUFFIXES_MORE.iter().map(|s| format!("*{s}")))
        .chain(SECRET_PREFIXES_MORE.iter().map(|p| format!("{p}*")))
}

/// Is `n` one of the names of this module (not a backup: see [`backup_of`])?
pub(crate) fn is_more_secret_name(n: &[u8]) -> bool {
    let eq = |s: &str| n.eq_ignore_ascii_case(s.as_bytes());
    let starts = |s: &str| n.len() > s.len() && n[..s.len()].eq_ignore_ascii_case(s.as_bytes());
    let ends =
        |s: &str| n.len() > s.len() && n[n.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    // Android's shared debug keystore has a published password and is read by every
    // debug build.
    if TEMPLATE_WORDS.iter().any(|w| has_ci(n, w.as_bytes())) || eq("debug.keystore") {
        return false;
    }
    SECRET_NAMES_MORE.iter().any(|s| eq(s))
        || SECRET_SUFFIXES_MORE.iter().any(|s| ends(s))
        || SECRET_PREFIXES_MORE.iter().any(|s| starts(s))
}

/// The name `n` is a copy of, when it is an editor's backup, swap or save of it
/// (`.env~`, `.env.bak`, `#.env#`, `.#.env`, vim's `.id_rsa.swp`); `None` otherwise.
/// The result may still end in a backup suffix (`x.pem.bak~`): callers test it again.
pub fn backup_of(n: &[u8]) -> Option<&[u8]> {
    // Emacs: `#name#` while editing, `.#name` as its lock link.
    if n.len() > 2 && n[0] == b'#' && n[n.len() - 1] == b'#' {
        return Some(&n[1..n.len() - 1]);
    }
    if n.len() > 2 && n.starts_with(b".#") {
        return Some(&n[2..]);
    }
    for s in BACKUP_SUFFIXES {
        let s = s.as_bytes();
        if n.len() > s.len() && n[n.len() - s.len()..].eq_ignore_ascii_case(s) {
            return Some(&n[..n.len() - s.len()]);
        }
    }
    None
}

/// Is `name` a backup or swap copy of a secret file name, or of the last name of a
/// HOME credential path (`.netrc~`, `.git-credentials.bak`)? Vim's swap file of `NAME`
/// is `.NAME.swp`, so a leading dot is also tried away.
pub(crate) fn is_backup_of_secret(name: &[u8]) -> bool {
    let mut cur = name;
    // Bounded: each step removes at least one byte, and a name has at most 255.
    while let Some(orig) = backup_of(cur) {
        let undotted = orig.strip_prefix(b".").filter(|r| !r.is_empty());
        for cand in std::iter::once(orig).chain(undotted) {
            if guards::is_secret_name_itself(cand) || last_of_home_credential(cand) {
                return true;
            }
        }
        cur = orig;
    }
    false
}

/// Is `n` the last name of a single-name HOME credential path (`.netrc`, `.pgpass`)?
fn last_of_home_credential(n: &[u8]) -> bool {
    SENSITIVE_HOME_PATHS
        .iter()
        .filter(|r| !r.contains('/') && !HOME_ONLY.contains(r))
        .any(|r| n.eq_ignore_ascii_case(r.as_bytes()))
}

/// Every name `n` is a backup copy of, nearest first.
fn backup_chain(n: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::successors(backup_of(n), |b| backup_of(b))
}

/// A component of a HOME credential path, split once.
#[derive(Clone, Copy)]
enum Pat {
    Literal(&'static str),
    Glob(&'static str, &'static str),
}

impl Pat {
    fn matches(self, got: &[u8]) -> bool {
        match self {
            Pat::Literal(w) => got.len() == w.len() && got.eq_ignore_ascii_case(w.as_bytes()),
            Pat::Glob(head, tail) => {
                got.len() >= head.len() + tail.len()
                    && got[..head.len()].eq_ignore_ascii_case(head.as_bytes())
                    && got[got.len() - tail.len()..].eq_ignore_ascii_case(tail.as_bytes())
            }
        }
    }
}

/// [`SENSITIVE_HOME_PATHS`] but [`HOME_ONLY`], each split into its components once:
/// these are tested for every entry of a walk and every path the policy judges.
static CREDENTIAL_PATHS: LazyLock<Vec<(&'static str, Vec<Pat>)>> = LazyLock::new(|| {
    SENSITIVE_HOME_PATHS
        .iter()
        .filter(|r| !HOME_ONLY.contains(r))
        .map(|r| {
            let pats = r
                .split('/')
                .map(|c| match c.split_once('*') {
                    None => Pat::Literal(c),
                    Some((h, t)) => Pat::Glob(h, t),
                })
                .collect();
            (*r, pats)
        })
        .collect()
});

/// Does `pat` match `got`, or (when `backups` is given) one of the names `got` is a
/// backup copy of?
fn matches_or_backup(pat: Pat, got: &[u8], backups: &[&[u8]]) -> bool {
    pat.matches(got) || backups.iter().any(|b| pat.matches(b))
}

/// [`CREDENTIAL_PATHS`] by their first component, so that [`credential_anywhere`] tries
/// at each component of a path only the entries that can begin there: a merge judges
/// every entry a run left, and most components (`src`, `crates`) begin none.
struct ByFirst {
    /// Entries whose first component is a literal, by that literal (ASCII lowercase).
    literal: std::collections::HashMap<Box<[u8]>, Vec<usize>>,
    /// The longest such literal: a longer name begins none of them.
    longest: usize,
    /// Entries whose first component has a `*`: tried at every component.
    glob: Vec<usize>,
}

static BY_FIRST: LazyLock<ByFirst> = LazyLock::new(|| {
    let mut by = ByFirst {
        literal: std::collections::HashMap::new(),
        longest: 0,
        glob: Vec::new(),
    };
    for (i, (_, pats)) in CREDENTIAL_PATHS.iter().enumerate() {
        match pats.first() {
            Some(Pat::Literal(w)) => {
                by.longest = by.longest.max(w.len());
                by.literal
                    .entry(w.to_ascii_lowercase().into_bytes().into_boxed_slice())
                    .or_default()
                    .push(i);
            }
            Some(Pat::Glob(..)) | None => by.glob.push(i),
        }
    }
    by
});

impl ByFirst {
    /// Add to `out` the entries whose first component is the literal `name`
    /// (ASCII case-insensitively).
    fn add_literal(&self, name: &[u8], out: &mut Vec<usize>) {
        if name.len() > self.longest {
            return;
        }
        let mut buf = [0u8; 256];
        let Some(lower) = buf.get_mut(..name.len()) else {
            return;
        };
        for (d, s) in lower.iter_mut().zip(name) {
            *d = s.to_ascii_lowercase();
        }
        if let Some(found) = self.literal.get(&*lower) {
            out.extend_from_slice(found);
        }
    }
}

/// The HOME credential path ([`SENSITIVE_HOME_PATHS`], relative) that `comps` (a
/// path's normal components) is or lies beneath, wherever it lies: `proj/.aws` and
/// `proj/.aws/credentials` both give `.aws`; the last name may be a backup copy
/// (`proj/.netrc~`). Of several, the one that begins first, then the first in the table.
pub fn credential_anywhere(comps: &[&OsStr]) -> Option<&'static str> {
    let n = comps.len();
    let backups: Vec<&[u8]> = comps
        .last()
        .map(|l| backup_chain(l.as_encoded_bytes()).collect())
        .unwrap_or_default();
    let by = &*BY_FIRST;
    let mut candidates = Vec::new();
    for start in 0..n {
        let first = comps[start].as_encoded_bytes();
        let last_at = |i: usize| start + i == n - 1;
        // Only an entry whose first component matches `first` (or, when `first` is the
        // last name, one of the names it is a backup of) can match here.
        candidates.clear();
        candidates.extend_from_slice(&by.glob);
        by.add_literal(first, &mut candidates);
        if last_at(0) {
            for b in &backups {
                by.add_literal(b, &mut candidates);
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        for &k in &candidates {
            let (rel, pats) = &CREDENTIAL_PATHS[k];
            if start + pats.len() > n {
                continue;
            }
            let ok = pats.iter().enumerate().all(|(i, p)| {
                let got = comps[start + i].as_encoded_bytes();
                matches_or_backup(*p, got, if last_at(i) { &backups } else { &[] })
            });
            if ok {
                return Some(rel);
            }
        }
    }
    None
}

/// The HOME credential path that `comps` ends with (`proj/.kube/config` gives
/// `.kube/config`, `proj/.aws` gives `.aws`): what a walk that does not descend into a
/// credential directory asks of each entry. `backup_last` also tries the last name as a
/// backup copy (`.netrc~`).
pub fn credential_ending(comps: &[&OsStr], backup_last: bool) -> Option<&'static str> {
    let last = comps.last()?.as_encoded_bytes();
    let backups: Vec<&[u8]> = if backup_last {
        backup_chain(last).collect()
    } else {
        Vec::new()
    };
    CREDENTIAL_PATHS
        .iter()
        .find(|(_, pats)| {
            let k = pats.len();
            k <= comps.len()
                && pats
                    .last()
                    .is_some_and(|p| matches_or_backup(*p, last, &backups))
                && pats[..k - 1]
                    .iter()
                    .zip(&comps[comps.len() - k..])
                    .all(|(p, g)| p.matches(g.as_encoded_bytes()))
        })
        .map(|(r, _)| *r)
}

/// The most bytes of a file the content test reads; a larger file is not tested (a
/// private key or a service account's key file is a few KiB).
pub const SNIFF_MAX_BYTES: u64 = 64 * 1024;

/// Name endings of files whose content is tested by [`holds_private_key`] (beside names
/// without any dot): where keys and key files are saved under a name that says nothing.
pub const SNIFF_SUFFIXES: &[&str] = &[
    ".json", ".txt", ".crt", ".cer", ".cert", ".asc", ".priv", ".private", ".sec", ".conf", ".cfg",
];

/// Should a file named `name` have its content tested? Names in no other list: a
/// JSON file (a service account's key), a text or certificate file, a name without an
/// extension.
pub fn sniff_candidate(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    let ends =
        |s: &str| n.len() > s.len() && n[n.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    let no_ext = !n.iter().skip(1).any(|&b| b == b'.');
    no_ext || SNIFF_SUFFIXES.iter().any(|s| ends(s))
}

/// Does `content` (the first [`SNIFF_MAX_BYTES`] of a file) hold a private key: a PEM,
/// OpenSSH or PGP private key block (`-----BEGIN … PRIVATE KEY…-----`), or a Google
/// Cloud service account's key file (`"type": "service_account"` with a
/// `"private_key"`)? Both are unambiguous: no other file spells them.
pub fn holds_private_key(content: &[u8]) -> bool {
    let pem = content
        .windows(11)
        .enumerate()
        .filter(|(_, w)| *w == b"-----BEGIN ")
        .any(|(i, _)| {
            let rest = &content[i + 11..];
            let line = &rest[..rest.len().min(48)];
            let line = line
                .split(|&b| b == b'\n' || b == b'\\')
                .next()
                .unwrap_or(&[]);
            has_ci(line, b"PRIVATE KEY")
        });
    pem || (has_ci(content, b"\"service_account\"") && has_ci(content, b"\"private_key\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn comps(p: &str) -> Vec<&OsStr> {
        Path::new(p)
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    /// [`credential_anywhere`] as it was before the index: every entry at every component.
    fn credential_anywhere_each(comps: &[&OsStr]) -> Option<&'static str> {
        let n = comps.len();
        let backups: Vec<&[u8]> = comps
            .last()
            .map(|l| backup_chain(l.as_encoded_bytes()).collect())
            .unwrap_or_default();
        for start in 0..n {
            for (rel, pats) in CREDENTIAL_PATHS.iter() {
                if start + pats.len() > n {
                    continue;
                }
                let ok = pats.iter().enumerate().all(|(i, p)| {
                    let last = start + i == n - 1;
                    let got = comps[start + i].as_encoded_bytes();
                    matches_or_backup(*p, got, if last { &backups } else { &[] })
                });
                if ok {
                    return Some(rel);
                }
            }
        }
        None
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        /// The index changes no answer: paths made of credential components (any case,
        /// backup copies, what a `*` stands for) and ordinary names.
        #[test]
        fn the_index_answers_as_every_entry_tried_does(
            picks in proptest::collection::vec((0usize..1000, 0usize..8), 0..7)
        ) {
            let mut pool: Vec<String> = SENSITIVE_HOME_PATHS
                .iter()
                .flat_map(|r| r.split('/'))
                .map(|c| c.replace('*', "v20.1.0"))
                .collect();
            pool.extend(["src", "w", "node_modules", "x", ".", "a*b", "~", "#", ""].map(String::from));
            let path: Vec<String> = picks
                .iter()
                .map(|&(k, form)| {
                    let c = &pool[k % pool.len()];
                    match form {
                        0 => c.to_ascii_uppercase(),
                        1 => format!("{c}~"),
                        2 => format!("{c}.bak"),
                        3 => format!("#{c}#"),
                        4 => format!(".#{c}.orig"),
                        5 => format!("{c}x"),
                        _ => c.clone(),
                    }
                })
                .filter(|c| !c.is_empty())
                .collect();
            let comps: Vec<&OsStr> = path.iter().map(OsStr::new).collect();
            proptest::prop_assert_eq!(credential_anywhere(&comps), credential_anywhere_each(&comps), "{:?}", path);
        }
    }

    #[test]
    fn home_credentials_anywhere() {
        for (p, want) in [
            ("w/.aws/credentials", ".aws"),
            ("w/sub/.aws", ".aws"),
            ("w/.git-credentials", ".git-credentials"),
            ("w/.NETRC", ".netrc"),
            ("w/.netrc~", ".netrc"),
            ("w/.git-credentials.bak", ".git-credentials"),
            ("w/deploy/.kube/config", ".kube/config"),
            ("w/.m2/settings.xml", ".m2/settings.xml"),
            (
                "w/ci/.gradle/gradle.properties",
                ".gradle/gradle.properties",
            ),
            ("w/.docker/config.json.orig", ".docker/config.json"),
        ] {
            assert_eq!(credential_anywhere(&comps(p)), Some(want), "{p}");
        }
        for p in [
            "w/.npmrc",
            "w/kube/config",
            "w/src/aws/credentials.rs",
            "w/.netrc.d/x",
            "w/settings.xml",
        ] {
            assert_eq!(credential_anywhere(&comps(p)), None, "{p}");
        }
    }

    #[test]
    fn backups_of_secret_names() {
        for n in [
            ".env~",
            "#.env#",
            ".#.env",
            ".envrc.bak",
            "server.pem.orig",
            ".id_rsa.swp",
            "x.key.bak~",
            ".netrc.save",
            "terraform.tfstate.old",
        ] {
            assert!(is_backup_of_secret(n.as_bytes()), "{n}");
        }
        for n in [
            "main.rs~",
            "README.md.bak",
            ".bashrc.swp",
            "#notes#",
            "env~",
        ] {
            assert!(!is_backup_of_secret(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn more_names() {
        for n in [
            ".envrc",
            ".dev.vars",
            ".dev.vars.staging",
            "terraform.tfstate",
            "prod.TFSTATE.backup",
            "release.keystore",
            "keystore.jks",
            "prod.env",
            ".env-prod",
            ".env_local",
            "secrets.toml",
            "credentials.json",
            "terraform.tfvars",
            "prod.auto.tfvars",
            "service-account.json",
            "token.json",
            "secrets.yml",
        ] {
            assert!(is_more_secret_name(n.as_bytes()), "{n}");
            assert!(guards::is_secret_file_name(OsStr::new(n)), "{n}");
        }
        for n in [
            "example.env",
            ".envrc.sample",
            "env.d.ts",
            "environment.yml",
            "tfstate.rs",
        ] {
            assert!(!guards::is_secret_file_name(OsStr::new(n)), "{n}");
        }
    }

    #[test]
    fn private_keys_by_content() {
        for c in [
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n",
            "junk\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n",
            "{\"type\": \"service_account\", \"project_id\": \"p\", \"private_key_id\": \"1\", \"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIE\\n\"}",
            "{\"type\":\"service_account\",\"private_key\":\"x\"}",
        ] {
            assert!(holds_private_key(c.as_bytes()), "{c}");
        }
        for c in [
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "-----BEGIN PUBLIC KEY-----\n",
            "{\"type\": \"service_account\", \"client_email\": \"x\"}",
            "the words PRIVATE KEY in prose",
            "-----BEGIN CERTIFICATE-----\nPRIVATE KEY\n",
        ] {
            assert!(!holds_private_key(c.as_bytes()), "{c}");
        }
    }

    #[test]
    fn sniff_candidates() {
        for n in ["sa.json", "key", "id", "notes.txt", "server.crt", "LICENSE"] {
            assert!(sniff_candidate(OsStr::new(n)), "{n}");
        }
        for n in ["main.rs", "image.png", "lib.so", "Cargo.lock"] {
            assert!(!sniff_candidate(OsStr::new(n)), "{n}");
        }
    }

    #[test]
    fn a_long_chain_of_backup_suffixes_is_judged_in_linear_time() {
        // Found by the shell fuzz target: `re~~~…` took seconds per extra `~` when each
        // step of the chain asked the whole check again.
        let name = format!("re{}", "~".repeat(200));
        let start = std::time::Instant::now();
        assert!(!guards::is_secret_file_name(OsStr::new(&name)));
        let env = format!(".env{}", "~".repeat(200));
        assert!(guards::is_secret_file_name(OsStr::new(&env)));
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }
}
