#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! What a contained command can read of the user's credentials, with real processes
//! (the outside attack on `cordon exec`, F4, F5, F8, F17, F18): the walk of the workspace
//! refuses the run rather than leave secrets past its budget unmasked; credential files
//! in the workspace (HOME's names, backups, keys by content) and in HOME (build tools,
//! nvm's global npmrc, deploy CLIs) read as empty; a `read-only` run leaves nothing in
//! the caches for the next run. The policy guards the same names.
//!
//! Needs user namespaces; skips with a reason when the host has none, unless
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`, which turns the skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;
use common::{World, bin};

use std::process::{Command, Output, Stdio};

/// Everything the command may do is allowed by policy: containment is what is observed.
const ALLOW_ALL: &str = r#"
mode = "bypass"
[defaults]
read_inside = "allow"
read_outside = "allow"
write_inside = "allow"
write_outside = "allow"
exec = "allow"
network = "allow"
"#;

/// A world whose policy allows everything ([`ALLOW_ALL`]).
fn world() -> World {
    World::made("cordon-masking-", None, Some(ALLOW_ALL))
}

impl World {
    /// `cordon exec FLAGS -- sh -c SCRIPT` in the workspace.
    fn exec(&self, flags: &[&str], script: &str) -> Output {
        Command::new(bin())
            .arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.config)
            .arg("--workspace")
            .arg(&self.ws)
            .args(flags)
            .args(["--", "sh", "-c", script])
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("CORDON_STATE_DIR", &self.state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Run `script` as an opaque `sh probe.sh` (the policy sees no path in it; the
    /// sandbox is what stops it), the script written into the workspace first.
    fn probe(&self, flags: &[&str], script: &str) -> Output {
        std::fs::write(self.ws.join("probe.sh"), script).unwrap();
        self.exec(flags, "sh probe.sh")
    }

    /// `cordon check` of a Bash call, with the default policy: the exit code.
    fn check_bash(&self, command: &str) -> i32 {
        let req = serde_json::json!({"tool": "Bash", "input": {"command": command}});
        Command::new(bin())
            .args(["check", &req.to_string()])
            .current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .env("CORDON_STATE_DIR", &self.state)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .status
            .code()
            .unwrap()
    }
}

const DENY: i32 = 4;

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether this host can give a full sandbox; panics instead when it must.
fn sandbox_available(test: &str) -> bool {
    let w = world();
    let o = w.exec(&["--require", "full"], "true");
    if o.status.success() {
        return true;
    }
    assert!(
        std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but the full sandbox is unavailable: {}",
        text(&o)
    );
    eprintln!(
        "skipping {test}: the full sandbox is unavailable here ({})",
        text(&o)
    );
    false
}

macro_rules! need_sandbox {
    ($name:expr) => {
        if !sandbox_available($name) {
            return;
        }
    };
}

/// `cat` each of `files` (relative to the command's working directory or absolute) and
/// print it between markers; the secrets are the `SECRET-…` words.
fn cat_all(files: &[String]) -> String {
    files
        .iter()
        .map(|f| format!("echo '>> {f}'; cat '{f}' 2>&1;"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn assert_no_secret(o: &Output, what: &str) {
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("SECRET-"),
        "{what}: a secret was read\n{}",
        text(o)
    );
}

/// F8: a run plants more entries than the walk visits before the user's `z/cfg/.env`;
/// the next run is refused with one sentence naming the directory to hide, instead of
/// starting with the secret readable; hidden with `--mask`, it runs and the secret reads
/// as empty. (The planted files are made on the host: what the first run leaves lands
/// there as ordinary files.)
#[test]
fn a_walk_past_its_budget_refuses_the_run_instead_of_unmasking() {
    need_sandbox!("a_walk_past_its_budget_refuses_the_run_instead_of_unmasking");
    let w = world();
    w.put(&w.ws, "z/cfg/.env", "SECRET-DEEP-ENV");
    let a = w.ws.join("a");
    std::fs::create_dir_all(&a).unwrap();
    // The reproduction's 25,000 files: within the budget now, so the secret is masked.
    for i in 0..25_000 {
        std::fs::File::create(a.join(format!("{i}"))).unwrap();
    }
    let o = w.probe(&[], "cat z/cfg/.env; echo ran");
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(&o, "25,000 planted files");
    // Past the budget, the run is refused.
    for i in 25_000..200_001 {
        std::fs::File::create(a.join(format!("{i}"))).unwrap();
    }
    let o = w.probe(&[], "cat z/cfg/.env; echo ran");
    assert_no_secret(&o, "over the budget");
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("--mask {}", a.display())),
        "{}",
        text(&o)
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("ran"));

    let a_flag = a.display().to_string();
    let o = w.probe(&["--mask", &a_flag], "cat z/cfg/.env; echo ran");
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(&o, "with the big directory masked");
    assert!(String::from_utf8_lossy(&o.stdout).contains("ran"));
}

/// F8, second spelling: the first run itself plants a directory chain deeper than the
/// walk goes (it lands as ordinary directories); the next run is refused, not started
/// with a `.env` below the limit unmasked.
#[test]
fn a_planted_deep_tree_refuses_the_next_run() {
    need_sandbox!("a_planted_deep_tree_refuses_the_next_run");
    let w = world();
    let deep = (0..70)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    let o = w.exec(&[], &format!("mkdir -p deep/{deep} && echo planted"));
    assert!(o.status.success(), "{}", text(&o));
    assert!(w.ws.join("deep").join(&deep).is_dir(), "{}", text(&o));
    w.put(&w.ws.join("deep"), &format!("{deep}/.env"), "SECRET-DEEPER");
    let o = w.probe(&[], &format!("cat deep/{deep}/.env; echo ran"));
    assert_no_secret(&o, "deep tree");
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--mask"),
        "{}",
        text(&o)
    );
}

/// F5/F5b: credential files in the workspace read as empty (HOME's names in relative
/// form, more names, editors' backups of a masked name, keys by content), and reading
/// them is denied by the policy; ordinary files stay readable.
#[test]
fn workspace_credential_files_are_masked_and_guarded() {
    need_sandbox!("workspace_credential_files_are_masked_and_guarded");
    let w = world();
    let by_name = [
        ".aws/credentials",
        ".git-credentials",
        ".netrc",
        "deploy/.kube/config",
        "infra/terraform.tfstate",
        ".env",
        ".env~",
        ".env.bak",
        ".envrc",
        ".dev.vars",
        ".m2/settings.xml",
        "secrets.toml",
    ];
    for (i, f) in by_name.iter().enumerate() {
        w.put(&w.ws, f, &format!("SECRET-N{i}\n"));
    }
    w.put(
        &w.ws,
        "keys/gcp-key.json",
        r#"{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nSECRET-SA\n"}"#,
    );
    w.put(
        &w.ws,
        "ops/deploy_ed",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-PEM\n-----END OPENSSH PRIVATE KEY-----\n",
    );
    w.put(&w.ws, "README.md", "ORDINARY-README\n");
    w.put(&w.ws, "package.json", "{\"name\": \"ORDINARY-PKG\"}\n");
    let mut files: Vec<String> = by_name.iter().map(|s| (*s).to_string()).collect();
    files.extend(["keys/gcp-key.json", "ops/deploy_ed"].map(String::from));
    files.extend(["README.md", "package.json"].map(String::from));
    let o = w.probe(&[], &cat_all(&files));
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(&o, "workspace credentials");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("ORDINARY-README") && out.contains("ORDINARY-PKG"),
        "{}",
        text(&o)
    );
    // Second spelling: through a program that opens them itself, from a subdirectory.
    let o = w.probe(
        &[],
        "cd deploy && for f in .kube/config ../.aws/credentials ../.env~ ../.envrc; do dd if=$f status=none; done; echo done",
    );
    assert_no_secret(&o, "read with dd");
    assert!(String::from_utf8_lossy(&o.stdout).contains("done"));
    for f in [".aws/credentials", ".git-credentials", ".env~", ".envrc"] {
        assert_eq!(w.check_bash(&format!("cat {f}")), DENY, "cat {f}");
    }
}

/// F4: Maven's and Gradle's credentials and nvm's global npmrc are readable in neither
/// HOME view, and a plain `cat` of them is denied by the policy.
#[test]
fn home_build_tool_credentials_are_masked_and_guarded() {
    need_sandbox!("home_build_tool_credentials_are_masked_and_guarded");
    let w = world();
    let files = [
        ".m2/settings.xml",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
        ".nvm/versions/node/v20.11.1/etc/npmrc",
    ];
    for (i, f) in files.iter().enumerate() {
        w.put(&w.home, f, &format!("SECRET-H{i}\n"));
    }
    w.put(&w.home, ".m2/repository/ORDINARY", "ORDINARY-M2\n");
    let abs: Vec<String> = files
        .iter()
        .map(|f| w.home.join(f).display().to_string())
        .collect();
    for view in ["hidden", "visible"] {
        let o = w.probe(&["--home", view], &cat_all(&abs));
        assert!(o.status.success(), "{view}: {}", text(&o));
        assert_no_secret(&o, view);
    }
    let o = w.exec(&[], "cat ~/.m2/repository/ORDINARY");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("ORDINARY-M2"),
        "{}",
        text(&o)
    );
    for f in files {
        assert_eq!(w.check_bash(&format!("cat ~/{f}")), DENY, "cat ~/{f}");
    }
}

/// F17: with `--home visible`, the deploy and cloud CLIs' logins are masked too.
#[test]
fn home_visible_masks_deploy_cli_credentials() {
    need_sandbox!("home_visible_masks_deploy_cli_credentials");
    let w = world();
    let files = [
        ".netlify/config.json",
        ".config/netlify/config.json",
        ".config/configstore/firebase-tools.json",
        ".wrangler/config/default.toml",
        ".config/.wrangler/config/default.toml",
        ".config/helm/repositories.yaml",
        ".config/helm/registry/config.json",
        ".oci/config",
        ".config/heroku/config.json",
        ".claude.json",
        ".viminfo",
        ".lesshst",
        ".env",
    ];
    for (i, f) in files.iter().enumerate() {
        w.put(&w.home, f, &format!("SECRET-V{i}\n"));
    }
    let abs: Vec<String> = files
        .iter()
        .map(|f| w.home.join(f).display().to_string())
        .collect();
    let o = w.probe(&["--home", "visible"], &cat_all(&abs));
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(&o, "--home visible");
}

/// F18: a `read-only` run cannot write the developer caches, so nothing it tried to
/// plant there is read back by the next (workspace-write) run.
#[test]
fn read_only_runs_leave_nothing_in_the_caches() {
    need_sandbox!("read_only_runs_leave_nothing_in_the_caches");
    let w = world();
    for c in [".npm/_cacache", ".cache/pip/wheels", ".cargo/registry"] {
        std::fs::create_dir_all(w.home.join(c)).unwrap();
    }
    let plant = "for d in ~/.cache/pip/wheels/ab ~/.npm/_cacache ~/.cargo/registry; do \
                 mkdir -p $d 2>/dev/null; echo SECRET-PLANTED > $d/x 2>/dev/null && echo wrote $d; done; echo end";
    for view in ["hidden", "visible"] {
        let o = w.probe(&["--sandbox", "read-only", "--home", view], plant);
        assert!(o.status.success(), "{view}: {}", text(&o));
        assert!(
            !String::from_utf8_lossy(&o.stdout).contains("wrote"),
            "{view}: a read-only run wrote a cache\n{}",
            text(&o)
        );
    }
    let o = w.probe(
        &[],
        "cat ~/.cache/pip/wheels/ab/x ~/.npm/_cacache/x ~/.cargo/registry/x 2>/dev/null; echo end",
    );
    assert_no_secret(&o, "the next run");
    for c in [".npm/_cacache/x", ".cargo/registry/x"] {
        assert!(!w.home.join(c).exists(), "{c} on the host");
    }
}
