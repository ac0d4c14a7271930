//! cordon's own state directory is hidden in every sandbox, whatever HOME looks like.
//!
//! The state directory (`cordon_policy::state_dir::state_dir`: `CORDON_STATE_DIR`, else
//! `$XDG_STATE_HOME/cordon`, else `~/.local/state/cordon`) holds the approval store, the
//! audit log, the CA keys of the egress proxy, the change sets and caches of other runs,
//! and the slots with their locks. A sandboxed command has no business reading any of it,
//! and a command that could open a slot's lock file could hold that slot's turn (a
//! `flock` needs only a read descriptor). With `--home visible` the default location is
//! in plain view, and `CORDON_STATE_DIR` may point anywhere, so the plan masks it like a
//! secret. The mask is a mount: the fallback tier (Landlock only) masks nothing.
//!
//! When the state directory holds the workspace, a writable root or HOME (an odd but
//! possible setting), masking it would hide those too; then each entry of it that holds
//! none of them is masked instead.

use std::path::{Path, PathBuf};

/// The paths to mask so that the state directory `state` (canonical) is hidden without
/// hiding any of `keep` (canonical): the directory itself, or its entries that hold none
/// of `keep`. Symlinks among the entries are left alone (cordon makes none there, and
/// masking one would mask where it leads).
pub(crate) fn state_masks(state: &Path, keep: &[&Path]) -> Vec<PathBuf> {
    if !keep.iter().any(|k| k.starts_with(state)) {
        return vec![state.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(state) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .filter(|p| !keep.iter().any(|k| k.starts_with(p)))
        .collect();
    out.sort();
    out
}

/// cordon's state directory, canonical, when it exists.
pub(crate) fn state_dir() -> Option<PathBuf> {
    let dir = cordon_policy::state_dir::state_dir()?;
    std::fs::canonicalize(dir).ok()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn the_directory_or_its_entries_that_hold_nothing_kept() {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        for d in ["slots", "caches", "ws"] {
            std::fs::create_dir_all(state.join(d)).unwrap();
        }
        std::fs::write(state.join("store.sqlite3"), "").unwrap();
        std::os::unix::fs::symlink("/etc", state.join("link")).unwrap();
        let elsewhere = t.path().join("ws");
        assert_eq!(state_masks(&state, &[&elsewhere]), vec![state.clone()]);
        let inside = state.join("ws/project");
        assert_eq!(
            state_masks(&state, &[&inside, &elsewhere]),
            vec![
                state.join("caches"),
                state.join("slots"),
                state.join("store.sqlite3")
            ]
        );
        // The state directory as HOME itself: its entries (not the symlink), not HOME.
        assert_eq!(state_masks(&state, &[&state]).len(), 4);
    }
}
