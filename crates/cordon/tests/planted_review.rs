#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The outside review's planted code, end to end with the real binary: a hook written
//! into the repository's own `core.hooksPath` directory, a forged `__pycache__` for an
//! unchanged module, a hard link between `.git/config` and an ordinary file, and a
//! forged rebase with an `exec` line. The *host* is asked afterwards (a `git commit`, a
//! `python3` import, a write to the linked name) whether anything ran.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;
use common::bin;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const PERMISSIVE: &str = r#"
mode = "bypass"
[defaults]
read_inside = "allow"
read_outside = "allow"
write_inside = "allow"
write_outside = "allow"
exec = "allow"
network = "allow"
[permissions]
allow = ["Bash(./t.sh)"]
"#;

fn git(dir: &Path, home: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out
}

fn sandbox_available() -> bool {
    let out = Command::new(bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ok = v["user_namespaces"].as_bool().unwrap_or(false);
    assert!(
        ok || std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "sandbox tests are required but user namespaces are unavailable"
    );
    ok
}

#[test]
fn the_reviews_planted_code_does_not_run_on_the_host() {
    if !sandbox_available() || Command::new("python3").arg("-V").output().is_err() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (ws, home) = (root.join("ws"), root.join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\temail = t@example.com\n\tname = T\n[init]\n\tdefaultBranch = main\n",
    )
    .unwrap();
    std::fs::write(root.join("policy.toml"), PERMISSIVE).unwrap();
    git(&ws, &home, &["init", "-q"]);
    std::fs::write(ws.join("mod.py"), "def hello():\n    return 'legit'\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "__pycache__/\n").unwrap();
    git(&ws, &home, &["add", "-A"]);
    git(&ws, &home, &["commit", "-qm", "first"]);
    git(
        &ws,
        &home,
        &["config", "core.hooksPath", "scripts/git-hooks"],
    );
    let config = std::fs::read(ws.join(".git/config")).unwrap();
    let marker = root.join("PWNED");
    let script = format!(
        r#"#!/bin/sh
set -e
mkdir -p scripts/git-hooks
printf '#!/bin/sh\ntouch {m}\n' > scripts/git-hooks/pre-commit
chmod +x scripts/git-hooks/pre-commit
python3 - <<'PY'
import importlib.util, marshal, os
st = os.stat("mod.py")
code = compile("open('{m}', 'w')\ndef hello():\n    return 'legit'\n", "mod.py", "exec")
os.makedirs("__pycache__", exist_ok=True)
with open(importlib.util.cache_from_source("mod.py"), "wb") as f:
    f.write(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
            + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
            + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))
PY
ln .git/config notes.txt
mkdir -p .git/rebase-merge
printf 'exec touch {m}\n' > .git/rebase-merge/git-rebase-todo
"#,
        m = marker.display()
    );
    std::fs::write(ws.join("t.sh"), script).unwrap();
    std::fs::set_permissions(ws.join("t.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(bin())
        .args(["exec", "--isolated", "--config"])
        .arg(root.join("policy.toml"))
        .args(["--", "./t.sh"])
        .current_dir(&ws)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("1 compiled cache file (__pycache__, *.pyc) not merged"),
        "{err}"
    );
    assert!(!ws.join("scripts/git-hooks/pre-commit").exists(), "{err}");
    assert!(!ws.join(".git/rebase-merge").exists(), "{err}");
    assert!(!marker.exists(), "the payload ran inside and landed: {err}");
    // The host imports the module, commits, and writes to the linked name.
    let py = Command::new("python3")
        .args(["-c", "import mod; print(mod.hello())"])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(py.status.success(), "{py:?}");
    std::fs::write(ws.join("README"), "x\n").unwrap();
    git(&ws, &home, &["add", "README"]);
    git(&ws, &home, &["commit", "-qm", "host"]);
    assert_ne!(
        std::fs::metadata(ws.join("notes.txt")).unwrap().ino(),
        std::fs::metadata(ws.join(".git/config")).unwrap().ino()
    );
    std::fs::write(ws.join("notes.txt"), "[core]\n\tfsmonitor = touch-me\n").unwrap();
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), config);
    assert!(
        !marker.exists(),
        "a host command ran a planted payload: {err}"
    );
}
