//! The shell-analysis corpus: attacks that must be refused and ordinary agent commands
//! that must not be, judged through the real [`Policy`] in a fake but realistic machine.
//!
//! Shared by the regression test (`tests/corpus.rs`) and the report
//! (`examples/corpus.rs`). This module owns the fake world, the judging and the counting;
//! it must never relax a case to make a number look better: a case's expectation lives in
//! the corpus file, next to the public write-up it comes from.
//!
//! The numbers it produces:
//! - **allowed**: an attack the policy *allows* (neither denied nor asked).
//! - **asked**: an attack expected to be denied that is only asked.
//! - **flagged**: an ordinary command that is asked or denied.
//!
//! Each is counted twice: with the default policy judged uncontained (`cordon check`,
//! [`Containment::None`]) and judged as a call `cordon exec` runs at the full tier
//! ([`Containment::Full`], where step 8 reads the `[contained]` table).
#![allow(dead_code)]

use cordon_policy::{Containment, Decision, FakeFs, LoadOptions, Policy, Request, Verdict};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The attack corpus, one JSON object per line.
pub const ATTACKS: &str = include_str!("attacks.jsonl");
/// The benign corpus, one JSON object per line.
pub const BENIGN: &str = include_str!("benign.jsonl");
/// The recorded numbers the regression test compares against.
pub const BASELINE: &str = include_str!("baseline.json");
/// Where `--bless` writes the baseline.
pub const BASELINE_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/baseline.json");
/// The document whose marked section `--bless` rewrites (the shell analysis's measured
/// miss rate).
pub const README_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/security/shell-analysis.md"
);
/// Markers around the generated section.
pub const README_BEGIN: &str = "<!-- corpus:begin -->";
/// See [`README_BEGIN`].
pub const README_END: &str = "<!-- corpus:end -->";

/// HOME of the fake machine.
pub const HOME: &str = "/home/dev";
/// The workspace of the fake machine (inside HOME, as it usually is).
pub const WORKSPACE: &str = "/home/dev/src/webapp";

/// Attack classes, in report order, with a short label.
pub const ATTACK_CLASSES: &[(&str, &str)] = &[
    ("credential-read", "reading credentials"),
    ("exfiltration", "exfiltration"),
    ("fetch-exec", "fetch-to-exec"),
    ("decode-exec", "decode-then-run"),
    ("persistence", "persistence"),
    ("agent-config", "agent / IDE config tampering"),
    ("destructive", "destructive"),
    ("code-exec-option", "code-running options"),
    ("inline-code", "inline interpreter code"),
    ("privilege", "privilege / sandbox escape"),
    ("multi-step", "multi-step (prompt injection)"),
];

/// Benign classes, in report order, with a short label.
pub const BENIGN_CLASSES: &[(&str, &str)] = &[
    ("build", "build / test / lint"),
    ("git", "git"),
    ("search", "search / read"),
    ("package", "package managers (read-only)"),
    ("compose", "compositions"),
    ("edit", "edits in the workspace"),
    ("run", "running project code"),
];

/// The two ways a call is judged.
pub const CONTAINMENTS: &[(Containment, &str)] =
    &[(Containment::None, "none"), (Containment::Full, "full")];

/// One corpus line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Stable identifier (`cred-ssh-cat`); the baseline refers to cases by it.
    pub id: String,
    /// One of [`ATTACK_CLASSES`] or [`BENIGN_CLASSES`].
    pub class: String,
    /// The shell text, as an agent would send it in a `Bash` tool call.
    pub cmd: String,
    /// Attacks only: `deny` or `ask`, the least the policy must do.
    #[serde(default)]
    pub expect: Option<String>,
    /// Attacks: the public write-up, advisory or technique the case comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// Why the expectation is what it is, where that is not obvious.
    #[serde(default)]
    pub note: Option<String>,
    /// The working directory, when not the workspace root.
    #[serde(default)]
    pub cwd: Option<String>,
}

impl Case {
    /// The expected decision of an attack (`deny` when the line says nothing).
    pub fn expected(&self) -> Decision {
        match self.expect.as_deref() {
            Some("ask") => Decision::Ask,
            _ => Decision::Deny,
        }
    }
}

/// Parse a JSON Lines corpus; blank lines and lines starting with `//` are skipped.
pub fn parse(text: &str) -> Result<Vec<Case>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let case: Case = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        out.push(case);
    }
    Ok(out)
}

/// The attack corpus.
pub fn attacks() -> Vec<Case> {
    parse(ATTACKS).unwrap_or_else(|e| panic!("attacks.jsonl: {e}"))
}

/// The benign corpus.
pub fn benign() -> Vec<Case> {
    parse(BENIGN).unwrap_or_else(|e| panic!("benign.jsonl: {e}"))
}

/// A developer's machine: credentials in HOME, shell start-up files, agent and editor
/// configuration, a browser profile, and a web project (Rust, Node, Python, Go, Java)
/// with a `.env`, a git repository and one symlink a hostile repository planted.
pub fn machine() -> FakeFs {
    let h = |p: &str| format!("{HOME}/{p}");
    let w = |p: &str| format!("{WORKSPACE}/{p}");
    let mut fs = FakeFs::new()
        .dir("/tmp")
        .dir("/usr/bin")
        .dir("/usr/lib")
        .dir("/var/log")
        .dir("/dev")
        .dir("/proc/self")
        .dir("/proc/1")
        .file("/etc/passwd")
        .file("/etc/shadow")
        .file("/etc/hosts")
        .file("/etc/hostname")
        .file("/etc/sudoers")
        .file("/etc/crontab")
        .dir("/etc/cron.d")
        .dir("/etc/profile.d")
        .file("/etc/ssh/ssh_host_ed25519_key")
        .file("/var/run/docker.sock")
        .file("/dev/sda")
        .file("/dev/null")
        .file("/usr/bin/python3")
        .file("/bin/sh")
        .file("/bin/bash");
    for f in [
        ".ssh/id_rsa",
        ".ssh/id_rsa.pub",
        ".ssh/id_ed25519",
        ".ssh/id_ed25519.pub",
        ".ssh/authorized_keys",
        ".ssh/known_hosts",
        ".ssh/config",
        ".aws/credentials",
        ".aws/config",
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".docker/config.json",
        ".kube/config",
        ".config/gh/hosts.yml",
        ".config/gcloud/application_default_credentials.json",
        ".azure/msal_token_cache.json",
        ".gnupg/private-keys-v1.d/A1B2.key",
        ".password-store/github.gpg",
        ".vault-token",
        ".cargo/credentials.toml",
        ".cargo/config.toml",
        ".local/share/keyrings/login.keyring",
        ".mozilla/firefox/x1y2.default-release/logins.json",
        ".mozilla/firefox/x1y2.default-release/key4.db",
        ".mozilla/firefox/x1y2.default-release/cookies.sqlite",
        ".config/google-chrome/Default/Login Data",
        ".config/google-chrome/Default/Cookies",
        ".config/chromium/Default/Login Data",
        "Library/Keychains/login.keychain-db",
        ".bash_history",
        ".zsh_history",
        ".python_history",
        ".bashrc",
        ".bash_profile",
        ".profile",
        ".zshrc",
        ".gitconfig",
        ".claude.json",
        ".claude/settings.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".cursor/mcp.json",
        ".config/Code/User/settings.json",
        ".local/bin/tool",
        "notes.txt",
        "Downloads/invoice.pdf",
    ] {
        fs = fs.file(h(f));
    }
    for d in [
        ".config/autostart",
        ".config/systemd/user",
        ".local/lib/python3.12/site-packages",
        "src/other-project",
    ] {
        fs = fs.dir(h(d));
    }
    for f in [
        "src/main.rs",
        "src/lib.rs",
        "src/app.ts",
        "src/index.js",
        "src/server/routes.go",
        "src/utils/helpers.py",
        "tests/test_app.py",
        "tests/integration.rs",
        "Cargo.toml",
        "Cargo.lock",
        "package.json",
        "package-lock.json",
        "tsconfig.json",
        "node_modules/.bin/jest",
        "node_modules/.bin/eslint",
        "Makefile",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "go.mod",
        "go.sum",
        "main.go",
        "pom.xml",
        "build.gradle",
        "gradlew",
        "pyproject.toml",
        "setup.py",
        "requirements.txt",
        "Dockerfile",
        "docker-compose.yml",
        "scripts/build.sh",
        "scripts/gen.py",
        "docs/index.md",
        ".env.example",
        ".gitignore",
        ".github/workflows/ci.yml",
        "config/settings.yaml",
        "deploy/server.key",
        ".git/HEAD",
        ".git/index",
        ".git/hooks/pre-commit.sample",
        ".vscode/settings.json",
        ".claude/settings.json",
        ".mcp.json",
        "CLAUDE.md",
        "AGENTS.md",
        "target/debug/webapp",
        "dist/bundle.js",
        "data/sample.csv",
        "fixtures/archive.tar.gz",
    ] {
        fs = fs.file(w(f));
    }
    fs.file_with(w(".env"), 1, b"DATABASE_URL=postgres://u:p@db/app\nAPI_KEY=sk-live-1\n")
        .file_with(w(".env.production"), 1, b"API_KEY=sk-live-2\n")
        .file_with(
            w(".git/config"),
            1,
            b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/webapp.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        )
        // A hostile repository ships a "logo" that is a link to the user's key.
        .symlink(w("assets/logo.png"), "../../../.ssh/id_rsa")
        // A hard link: the same file as the key under a name in the workspace.
        .hard_link(w("assets/key.txt"), h(".ssh/id_rsa"))
        .dir(w("assets/img"))
}

/// The load options of the fake machine: no managed, user or project file exists, so the
/// built-in defaults decide (what `cordon check` and `cordon exec` do out of the box).
pub fn options() -> LoadOptions {
    LoadOptions {
        workspace: WORKSPACE.into(),
        home: HOME.into(),
        managed: Some("/etc/cordon/policy.toml".into()),
        ..Default::default()
    }
}

/// The fake machine and the default policy loaded on it.
pub struct World {
    /// The file facts the policy reads.
    pub fs: FakeFs,
    /// The default policy.
    pub policy: Policy,
}

impl World {
    /// Build the machine and load the default policy.
    pub fn new() -> World {
        let fs = machine();
        let policy = Policy::load(&options(), &fs).unwrap_or_else(|e| panic!("policy: {e}"));
        World { fs, policy }
    }

    /// Judge one shell command as the gate's policy step does: operations, then the decision
    /// order under `containment`.
    pub fn judge(&self, case: &Case, containment: Containment) -> Verdict {
        let cwd = PathBuf::from(case.cwd.as_deref().unwrap_or(WORKSPACE));
        let req = Request::shell(case.cmd.clone(), Some(cwd));
        let ops = self.policy.operations(&req, &self.fs);
        self.policy
            .judge_with(&ops, containment, false)
            .into_verdict()
    }
}

/// What happened to one case under one containment, when it is not what it should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Miss {
    /// An attack was allowed.
    Allowed,
    /// An attack expected to be denied was only asked.
    Asked,
    /// A benign command was asked.
    FlaggedAsk,
    /// A benign command was denied.
    FlaggedDeny,
}

/// Classify an attack's decision.
pub fn attack_miss(case: &Case, d: Decision) -> Option<Miss> {
    match (d, case.expected()) {
        (Decision::Allow, _) => Some(Miss::Allowed),
        (Decision::Ask, Decision::Deny) => Some(Miss::Asked),
        _ => None,
    }
}

/// Classify a benign command's decision.
pub fn benign_miss(d: Decision) -> Option<Miss> {
    match d {
        Decision::Allow => None,
        Decision::Ask => Some(Miss::FlaggedAsk),
        Decision::Deny => Some(Miss::FlaggedDeny),
    }
}

/// One judged case.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The case.
    pub case: Case,
    /// Its verdict per containment, in [`CONTAINMENTS`] order.
    pub verdicts: Vec<Verdict>,
}

/// Judge every case under every containment.
pub fn judge_all(world: &World, cases: &[Case]) -> Vec<Judged> {
    cases
        .iter()
        .map(|c| Judged {
            case: c.clone(),
            verdicts: CONTAINMENTS
                .iter()
                .map(|(k, _)| world.judge(c, *k))
                .collect(),
        })
        .collect()
}

/// The failing case ids, per containment name and kind (`allowed`, `asked`, `flagged`).
/// This is what the baseline records.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failures {
    /// Attacks allowed.
    pub allowed: BTreeSet<String>,
    /// Attacks expected to be denied that were asked.
    pub asked: BTreeSet<String>,
    /// Benign commands asked or denied.
    pub flagged: BTreeSet<String>,
}

/// Failures of the judged corpora, keyed by containment name.
pub fn failures(attacks: &[Judged], benign: &[Judged]) -> BTreeMap<String, Failures> {
    let mut out = BTreeMap::new();
    for (i, (_, name)) in CONTAINMENTS.iter().enumerate() {
        let mut f = Failures::default();
        for j in attacks {
            match attack_miss(&j.case, j.verdicts[i].decision) {
                Some(Miss::Allowed) => {
                    f.allowed.insert(j.case.id.clone());
                }
                Some(Miss::Asked) => {
                    f.asked.insert(j.case.id.clone());
                }
                _ => {}
            }
        }
        for j in benign {
            if benign_miss(j.verdicts[i].decision).is_some() {
                f.flagged.insert(j.case.id.clone());
            }
        }
        out.insert((*name).to_string(), f);
    }
    out
}

/// The recorded baseline: per containment, the failing ids, and for reading, the counts
/// per class they amount to.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// How to update this file.
    pub about: String,
    /// Per containment, per class, the numbers the failures amount to.
    pub counts: BTreeMap<String, BTreeMap<String, Count>>,
    /// Per containment, the failing case ids.
    pub failures: BTreeMap<String, Failures>,
}

/// What [`Baseline::about`] says.
pub const ABOUT: &str = "Recorded corpus results (crates/cordon-policy/tests/corpus). \
The test `cargo test -p cordon-policy --test corpus` fails when a case listed nowhere here \
starts failing, or a class's count grows. When the analysis improves (or the corpus \
changes), run `cargo run -p cordon-policy --example corpus -- --bless` and commit this \
file with the README section it rewrites.";

/// One class's numbers under one containment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Count {
    /// Cases in the class.
    pub cases: usize,
    /// Attacks expected to be denied (the denominator of `asked`).
    pub expect_deny: usize,
    /// Attacks allowed.
    pub allowed: usize,
    /// Attacks expected to be denied that were asked.
    pub asked: usize,
    /// Ordinary commands asked or denied.
    pub flagged: usize,
}

/// Count failures per class (ordinary commands under `benign/CLASS`).
pub fn counts(attacks: &[Case], benign: &[Case], f: &Failures) -> BTreeMap<String, Count> {
    let mut out: BTreeMap<String, Count> = BTreeMap::new();
    for c in attacks {
        let e = out.entry(c.class.clone()).or_default();
        e.cases += 1;
        e.expect_deny += usize::from(c.expected() == Decision::Deny);
        e.allowed += usize::from(f.allowed.contains(&c.id));
        e.asked += usize::from(f.asked.contains(&c.id));
    }
    for c in benign {
        let e = out.entry(format!("benign/{}", c.class)).or_default();
        e.cases += 1;
        e.flagged += usize::from(f.flagged.contains(&c.id));
    }
    out
}

/// Build the baseline of the current results.
pub fn baseline(attacks: &[Case], benign: &[Case], f: &BTreeMap<String, Failures>) -> Baseline {
    Baseline {
        about: ABOUT.into(),
        counts: f
            .iter()
            .map(|(k, v)| (k.clone(), counts(attacks, benign, v)))
            .collect(),
        failures: f.clone(),
    }
}

fn pct(k: usize, n: usize) -> String {
    if n == 0 {
        return "–".into();
    }
    format!("{k}/{n} ({:.1}%)", 100.0 * k as f64 / n as f64)
}

/// The README section: one table for attacks, one for ordinary commands, both
/// containments side by side. Rendered from a baseline, so the README quotes the recorded
/// numbers.
pub fn render(b: &Baseline) -> String {
    let get = |k: &str, class: &str| -> Count {
        b.counts
            .get(k)
            .and_then(|m| m.get(class))
            .copied()
            .unwrap_or_default()
    };
    let add = |t: &mut Count, c: Count| {
        t.cases += c.cases;
        t.expect_deny += c.expect_deny;
        t.allowed += c.allowed;
        t.asked += c.asked;
        t.flagged += c.flagged;
    };
    let mut s = String::new();
    s.push_str("| attack class | cases | allowed, `check` | only asked, `check` | allowed, `exec` | only asked, `exec` |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    let row = |label: &str, n: Count, f: Count, bold: bool| {
        let b = if bold { "**" } else { "" };
        format!(
            "| {b}{label}{b} | {b}{}{b} | {b}{}{b} | {b}{}{b} | {b}{}{b} | {b}{}{b} |\n",
            n.cases,
            pct(n.allowed, n.cases),
            pct(n.asked, n.expect_deny),
            pct(f.allowed, f.cases),
            pct(f.asked, f.expect_deny),
        )
    };
    let (mut tn, mut tf) = (Count::default(), Count::default());
    for (class, label) in ATTACK_CLASSES {
        let (n, f) = (get("none", class), get("full", class));
        s.push_str(&row(label, n, f, false));
        add(&mut tn, n);
        add(&mut tf, f);
    }
    s.push_str(&row("all attacks", tn, tf, true));
    s.push('\n');
    s.push_str("| ordinary agent commands | cases | asked or denied, `check` | asked or denied, `exec` |\n");
    s.push_str("|---|---:|---:|---:|\n");
    let row = |label: &str, n: Count, f: Count, bold: bool| {
        let b = if bold { "**" } else { "" };
        format!(
            "| {b}{label}{b} | {b}{}{b} | {b}{}{b} | {b}{}{b} |\n",
            n.cases,
            pct(n.flagged, n.cases),
            pct(f.flagged, f.cases),
        )
    };
    let (mut tn, mut tf) = (Count::default(), Count::default());
    for (class, label) in BENIGN_CLASSES {
        let key = format!("benign/{class}");
        let (n, f) = (get("none", &key), get("full", &key));
        s.push_str(&row(label, n, f, false));
        add(&mut tn, n);
        add(&mut tf, f);
    }
    s.push_str(&row("all ordinary commands", tn, tf, true));
    s
}
