//! What the `cordon hook` process tests share: a workspace and HOME with a key in
//! `~/.ssh`, a policy that asks before `git push`, the recorded harness payloads of
//! `cordon-hook/tests/fixtures` filled in for them, and the shape of a blocked call.

use super::World;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A temporary [`World`] with `src/main.rs` in the workspace, `.ssh/id_rsa` in HOME,
/// the state directory made, and a policy that asks before `git push`.
pub struct HookEnv(World);

impl std::ops::Deref for HookEnv {
    type Target = World;
    fn deref(&self) -> &World {
        &self.0
    }
}

impl HookEnv {
    pub fn new() -> HookEnv {
        let w = World::made(
            "cordon-hook-",
            None,
            Some("[permissions]\nask = [\"Bash(git push:*)\"]\n"),
        );
        std::fs::create_dir_all(&w.state).unwrap();
        w.put(&w.ws, "src/main.rs", "fn main() {}\n");
        w.put(&w.home, ".ssh/id_rsa", "key\n");
        HookEnv(w)
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
