//! What the `cordon hook` process tests share: a workspace and HOME with a key in
//! `~/.ssh`, a policy that asks before `git push`, the recorded harness payloads of
//! `cordon-hook/tests/fixtures` filled in for them, and the shape of a blocked call.

use std::path::{Path, PathBuf};
use std::process::Output;

/// A temporary workspace, HOME, state directory and policy file.
pub struct HookEnv {
    _tmp: tempfile::TempDir,
    /// The temporary directory (canonical).
    pub root: PathBuf,
    /// The workspace (`src/main.rs` inside).
    pub ws: PathBuf,
    /// HOME (`.ssh/id_rsa` inside).
    pub home: PathBuf,
    /// The state directory.
    pub state: PathBuf,
    /// A policy file: `ask = ["Bash(git push:*)"]`.
    pub config: PathBuf,
}

impl HookEnv {
    pub fn new() -> HookEnv {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (ws, home, state) = (root.join("ws"), root.join("home"), root.join("state"));
        for d in [&ws, &home, &state, &ws.join("src"), &home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "key\n").unwrap();
        let config = root.join("policy.toml");
        std::fs::write(&config, "[permissions]\nask = [\"Bash(git push:*)\"]\n").unwrap();
        HookEnv {
            _tmp: tmp,
            root,
            ws,
            home,
            state,
            config,
        }
    }

    /// The recorded payload `NAME.json` of `harness`, with this workspace and HOME.
    pub fn fixture(&self, harness: &str, name: &str) -> String {
        let file = Path::new(name).with_extension("json");
        std::fs::read_to_string(fixtures(harness).join(file))
            .unwrap()
            .replace("@WS@", &self.ws.to_string_lossy())
            .replace("@HOME@", &self.home.to_string_lossy())
    }
}

/// The directory of `harness`'s recorded payloads.
pub fn fixtures(harness: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cordon-hook/tests/fixtures")
        .join(harness)
}

/// The call was blocked: exit 2, nothing on stdout, one sentence on stderr holding `needle`.
pub fn blocks(o: &Output, needle: &str) {
    let (out, err) = super::text(o);
    assert_eq!(o.status.code(), Some(2), "stdout {out} stderr {err}");
    assert_eq!(out, "");
    assert!(err.starts_with("cordon: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
    assert!(err.contains(needle), "`{needle}` not in {err}");
}
