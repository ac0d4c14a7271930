#![allow(clippy::disallowed_methods)]
//! Writable developer caches that never write the real ones.
//!
//! Builds write their package caches under HOME (`~/.cargo/registry` and cargo's lock
//! `~/.cargo/.package-cache`, `~/.npm`, `~/.cache/pip`, Go's module and build caches,
//! Gradle's and Maven's repositories). HOME is hidden or read-only in the sandbox, so
//! without help `cargo test` of a new crate fails on its lock. Each run therefore takes a
//! *slot*: a directory under cordon's state directory (`caches/slot-N`) that no other
//! running cordon holds (a `flock` on its `lock` file). In it, each cache that exists on
//! the host gets an overlayfs upper layer over the real cache (read from, never written),
//! and each cache that does not exist gets a plain directory bound in its place. Slots
//! persist, so the next run on the same slot finds what this one downloaded; deleting
//! `caches/` is always safe.
//!
//! What a run writes to a slot stays in the sandbox's world: it is never merged into the
//! host's HOME. A later run on the same slot does see it (a planted `~/.cargo/config.toml`
//! there affects only sandboxed runs, which are contained anyway).

use crate::error::SandboxError;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

/// Cache directories under HOME that each run gets writable (relative to HOME).
pub const DEV_CACHES: &[&str] = &[
    ".cargo",
    ".npm",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    "go/pkg/mod",
    ".cache/yarn",
    ".local/share/pnpm",
    ".gradle",
    ".m2",
];

/// The programs that write each cache of [`DEV_CACHES`] (same order). A cache the host
/// does not have is made only when one of them is installed (on `PATH`), since each costs
/// a mount at every start; an empty list means always (`gradlew` and `mvnw` wrappers live
/// in projects and download their tool into these caches).
pub const CACHE_WRITERS: &[&[&str]] = &[
    &["cargo"],
    &["npm", "npx"],
    &["pip", "pip3"],
    &["uv"],
    &["go"],
    &["go"],
    &["yarn"],
    &["pnpm"],
    &[],
    &[],
];

/// Whether any of `programs` is an executable file in a directory of `path` (a
/// `PATH`-style list).
pub fn installed(programs: &[&str], path: &std::ffi::OsStr) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).any(|dir| {
        programs.iter().any(|p| {
            std::fs::metadata(dir.join(p))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// How a cache appears in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLayer {
    /// The cache's path (under HOME).
    pub path: PathBuf,
    /// The slot's directory for it: overlayfs's upper layer when the host has the cache,
    /// else the directory bound in its place.
    pub upper: PathBuf,
    /// overlayfs's work directory, when the host has the cache.
    pub work: Option<PathBuf>,
}

/// A slot held for one run.
#[derive(Debug)]
pub struct CacheSlot {
    layers: Vec<CacheLayer>,
    // Held (flock) for as long as the run uses the slot.
    _lock: File,
}

fn mkdir(p: &Path) -> Result<(), SandboxError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(p)
        .map_err(|e| SandboxError::io(format!("cannot create {}", p.display()), e))
}

impl CacheSlot {
    /// Take the first slot under `base` that no running cordon holds, and prepare it for
    /// `caches` (absolute paths under HOME).
    pub fn take(base: &Path, caches: &[PathBuf]) -> Result<CacheSlot, SandboxError> {
        mkdir(base)?;
        for n in 0..1024u32 {
            let dir = base.join(format!("slot-{n}"));
            mkdir(&dir)?;
            let lock = File::create(dir.join("lock"))
                .map_err(|e| SandboxError::io(format!("cannot lock {}", dir.display()), e))?;
            if lock.try_lock().is_err() {
                continue;
            }
            if !crate::changes::keeps_user_xattrs(&dir) {
                return Err(SandboxError::setup(format!(
                    "the file system of {} does not keep user extended attributes",
                    base.display()
                )));
            }
            let mut layers = Vec::with_capacity(caches.len());
            for (i, path) in caches.iter().enumerate() {
                let d = dir.join(i.to_string());
                let exists = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
                let (upper, work) = if exists {
                    (d.join("upper"), Some(d.join("work")))
                } else {
                    (d.join("dir"), None)
                };
                mkdir(&upper)?;
                if let Some(w) = &work {
                    mkdir(w)?;
                }
                layers.push(CacheLayer {
                    path: path.clone(),
                    upper,
                    work,
                });
            }
            return Ok(CacheSlot {
                layers,
                _lock: lock,
            });
        }
        Err(SandboxError::setup(format!(
            "every cache slot under {} is in use",
            base.display()
        )))
    }

    /// The caches, in the order given to [`CacheSlot::take`].
    pub fn layers(&self) -> &[CacheLayer] {
        &self.layers
    }
}

/// Where cache slots live: `caches/` in cordon's state directory, or under
/// `/var/tmp/cordon-caches-<uid>` when that lies inside one of `roots` (whose writes are
/// merged) or under one of `caches` (overlayfs refuses an upper layer inside its lower).
pub fn caches_base(roots: &[PathBuf], caches: &[PathBuf]) -> PathBuf {
    let clash = |p: &Path| {
        roots
            .iter()
            .chain(caches)
            .any(|r| p.starts_with(r) || r.starts_with(p))
    };
    if let Ok(state) = cordon_store::state_dir() {
        let state = std::fs::canonicalize(&state)
            .unwrap_or(state)
            .join("caches");
        if !clash(&state) {
            return state;
        }
    }
    caches_fallback()
}

/// The base of cache slots when the state directory cannot hold them.
pub(crate) fn caches_fallback() -> PathBuf {
    PathBuf::from(format!(
        "/var/tmp/cordon-caches-{}",
        nix::unistd::geteuid().as_raw()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn every_cache_names_its_writers_and_programs_are_found_on_path() {
        assert_eq!(CACHE_WRITERS.len(), DEV_CACHES.len());
        let t = tempfile::tempdir().unwrap();
        let tool = t.path().join("npm");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::ffi::OsString::from(format!("/nonexistent:{}", t.path().display()));
        assert!(installed(&["npm", "npx"], &path));
        assert!(!installed(&["go"], &path));
    }

    #[test]
    fn slots_are_exclusive_and_reused() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(home.join(".cargo")).unwrap();
        let caches = vec![home.join(".cargo"), home.join(".npm")];
        let base = t.path().join("caches");
        let a = CacheSlot::take(&base, &caches).unwrap();
        let b = CacheSlot::take(&base, &caches).unwrap();
        assert!(a.layers()[0].upper.starts_with(base.join("slot-0")));
        assert!(b.layers()[0].upper.starts_with(base.join("slot-1")));
        // The host has ~/.cargo (an upper layer over it) but no ~/.npm (a plain dir).
        assert!(a.layers()[0].work.is_some());
        assert!(a.layers()[1].work.is_none());
        std::fs::write(a.layers()[1].upper.join("kept"), "x").unwrap();
        drop(a);
        let c = CacheSlot::take(&base, &caches).unwrap();
        assert!(
            c.layers()[1].upper.join("kept").exists(),
            "slot-0 is reused"
        );
    }
}
