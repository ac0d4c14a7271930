//! The inspection of the writable roots: protected paths checked component by
//! component, and the bounded walk that finds secrets and protected names deeper in.

use super::{WALK_MAX_DEPTH, WALK_MAX_ENTRIES, WalkSummary};
use crate::error::{SandboxError, SandboxErrorKind};
use cordon_policy::guards;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Directories the walk does not descend into (build output and dependency trees).
const WALK_SKIP: &[&str] = &["node_modules", "target", ".venv", "__pycache__"];

fn refuse_symlink(p: &Path) -> SandboxError {
    SandboxError::new(
        SandboxErrorKind::ProtectedSymlink,
        format!(
            "refusing to start: the protected path {} is a symlink, which could redirect writes",
            p.display()
        ),
    )
}

pub(super) enum Presence {
    Exists,
    /// The first component that does not exist.
    Missing(PathBuf),
    /// A component is a regular file: the path can never be created.
    Uncreatable,
}

/// Walk from `root` down to `path`: refuse symlinks on the way, find the first missing
/// component.
pub(super) fn first_missing(root: &Path, path: &Path) -> Result<Presence, SandboxError> {
    let Ok(rest) = path.strip_prefix(root) else {
        return Ok(Presence::Uncreatable);
    };
    let mut cur = root.to_path_buf();
    let comps: Vec<_> = rest.components().collect();
    for (i, c) in comps.iter().enumerate() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err(refuse_symlink(&cur)),
            Ok(m) if !m.is_dir() && i + 1 < comps.len() => return Ok(Presence::Uncreatable),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Presence::Missing(cur));
            }
            Err(e) => {
                return Err(SandboxError::io(
                    format!("cannot inspect the protected path {}", cur.display()),
                    e,
                ));
            }
        }
    }
    Ok(Presence::Exists)
}

#[derive(Default)]
pub(super) struct Found {
    pub(super) secrets: Vec<PathBuf>,
    pub(super) protected: Vec<PathBuf>,
}

/// Breadth-first walk of the roots, bounded in depth and entries: secret file names are
/// masked, protected names re-bound read-only, `.git` is looked into only for `hooks` and
/// `config`.
pub(super) fn walk(
    roots: &[&Path],
    home: &Path,
    found: &mut Found,
) -> Result<WalkSummary, SandboxError> {
    let mut summary = WalkSummary::default();
    let mut queue: VecDeque<(PathBuf, usize)> =
        roots.iter().map(|r| (r.to_path_buf(), 0)).collect();
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            if summary.entries >= WALK_MAX_ENTRIES {
                summary.truncated = true;
                return Ok(summary);
            }
            summary.entries += 1;
            let name = entry.file_name();
            let path = entry.path();
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            if guards::is_secret_file_name(&name) {
                found.secrets.push(path);
                continue;
            }
            if guards::protected_write(&path, home).is_some() {
                if ft.is_symlink() {
                    return Err(refuse_symlink(&path));
                }
                found.protected.push(path);
                continue;
            }
            if name == ".git" && ft.is_dir() {
                for sub in ["hooks", "config"] {
                    let p = path.join(sub);
                    match std::fs::symlink_metadata(&p) {
                        Ok(m) if m.file_type().is_symlink() => return Err(refuse_symlink(&p)),
                        Ok(_) => found.protected.push(p),
                        Err(_) => {}
                    }
                }
                continue;
            }
            if ft.is_dir() && depth + 1 < WALK_MAX_DEPTH && !WALK_SKIP.iter().any(|s| name == *s) {
                queue.push_back((path, depth + 1));
            }
        }
    }
    Ok(summary)
}
