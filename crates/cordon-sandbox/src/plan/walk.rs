//! The inspection of the writable roots: protected paths checked component by
//! component, and the walk that finds secrets and protected names deeper in (bounded:
//! past its limits it refuses the run instead of leaving part of the tree unseen).

use super::{WALK_MAX_DEPTH, WALK_MAX_ENTRIES, WalkSummary};
use crate::error::{SandboxError, SandboxErrorKind};
use cordon_fs::Dir;
use cordon_policy::{guards, secret_files};
use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

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

/// The most bytes the walk reads to test files' content for private keys, over all
/// roots; a tree that holds more refuses the run like one with too many entries.
pub(super) const SNIFF_BUDGET: u64 = 256 * 1024 * 1024;

/// The walk's budgets (the constants, smaller in tests).
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) entries: usize,
    pub(crate) depth: usize,
    pub(crate) sniff_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            entries: WALK_MAX_ENTRIES,
            depth: WALK_MAX_DEPTH,
            sniff_bytes: SNIFF_BUDGET,
        }
    }
}

/// The walk cannot finish: the run is refused rather than started with secrets it did
/// not look at (a run could otherwise plant files that push the user's secrets past a
/// limit, and every later run would expose them). One sentence names the way out: the
/// directory to hide with `--mask`.
fn refuse_unfinished(root: &Path, big: &Path, what: &str) -> SandboxError {
    SandboxError::invalid(format!(
        "refusing to start: {} holds {what} to look through for secrets to mask, and a secret cordon did not look at would be readable; most of it is under {}: hide that directory with `--mask {}` (or `[sandbox] mask`), remove what is not needed, or run in a smaller workspace",
        root.display(),
        big.display(),
        big.display()
    ))
}

/// One directory of the walk: where, how deep, which root and which directory at the
/// top of that root it lies under (for the refusal's sentence).
struct Pending {
    path: PathBuf,
    depth: usize,
    root: usize,
    top: Option<usize>,
}

/// Breadth-first walk of the roots: secret file names (and HOME's credential paths in
/// their relative form, and files whose content is a private key) are masked, protected
/// names re-bound read-only, `.git` is looked into only for `hooks` and `config`.
/// Directories in `hidden` (masked whole) are not entered. A walk that would pass its
/// limits refuses the run: it never skips what it has not seen.
pub(super) fn walk(
    roots: &[&Path],
    home: &Path,
    hidden: &[PathBuf],
    limits: Limits,
    found: &mut Found,
) -> Result<WalkSummary, SandboxError> {
    let mut summary = WalkSummary::default();
    let mut sniffed: u64 = 0;
    // cordon's state directories, resolved once for the walk, not once per entry.
    let state = guards::StateDirs::for_home(home);
    // Entries counted under each top-level directory of a root.
    let mut tops: Vec<(PathBuf, usize)> = Vec::new();
    let mut queue: VecDeque<Pending> = roots
        .iter()
        .enumerate()
        .filter(|(_, r)| !hidden.iter().any(|h| h == *r))
        .map(|(i, r)| Pending {
            path: r.to_path_buf(),
            depth: 0,
            root: i,
            top: None,
        })
        .collect();
    let biggest = |tops: &[(PathBuf, usize)], root: &Path| {
        tops.iter()
            .filter(|(p, _)| p.starts_with(root))
            .max_by_key(|(_, n)| *n)
            .map_or_else(|| root.to_path_buf(), |(p, _)| p.clone())
    };
    while let Some(dir) = queue.pop_front() {
        let root = roots[dir.root];
        let Ok(rd) = std::fs::read_dir(&dir.path) else {
            // Unreadable to this user, and so to the command, which has no more rights.
            continue;
        };
        // The directory, opened for the first file whose content is tested.
        let mut opened: Option<Option<Dir>> = None;
        for entry in rd.flatten() {
            if summary.entries >= limits.entries {
                let what = format!(
                    "more than {} files and directories, too many",
                    limits.entries
                );
                return Err(refuse_unfinished(root, &biggest(&tops, root), &what));
            }
            summary.entries += 1;
            if let Some(t) = dir.top {
                tops[t].1 += 1;
            }
            let name = entry.file_name();
            let path = entry.path();
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            if secret_by_name(&path, &name) {
                // A secret that is also protected by its own name (`.envrc`): masked, and
                // still kept (or put back, in the fallback tier) as a protected path.
                if protected_name(&name) {
                    if ft.is_symlink() {
                        return Err(refuse_symlink(&path));
                    }
                    found.protected.push(path.clone());
                }
                found.secrets.push(path);
                continue;
            }
            if guards::protected_write_in(&path, home, &state).is_some() {
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
            // An empty file or one past the size cap holds no key to find: one `statx`
            // spares opening it.
            let len = entry.metadata().map_or(0, |m| m.len());
            if ft.is_file()
                && secret_files::sniff_candidate(&name)
                && len > 0
                && len <= secret_files::SNIFF_MAX_BYTES
            {
                if opened.is_none() {
                    opened = Some(Dir::open_ambient(&dir.path).ok());
                }
                let budget = limits.sniff_bytes.saturating_sub(sniffed);
                match opened.as_ref().and_then(Option::as_ref) {
                    // Unopenable: unreadable to this user, and so to the command.
                    None => {}
                    Some(d) => match sniff(d, &name, len, budget) {
                        Sniff::Key => found.secrets.push(path),
                        Sniff::Read(n) => sniffed += n,
                        Sniff::OverBudget => {
                            let what = format!(
                                "more than {} MiB of small files to test for private keys, too much",
                                limits.sniff_bytes / (1024 * 1024)
                            );
                            return Err(refuse_unfinished(root, &biggest(&tops, root), &what));
                        }
                    },
                }
                continue;
            }
            if !ft.is_dir() || WALK_SKIP.iter().any(|s| name == *s) || hidden.contains(&path) {
                continue;
            }
            if dir.depth + 1 >= limits.depth {
                let top = dir.top.map_or(path.clone(), |t| tops[t].0.clone());
                let what = format!(
                    "directories more than {} levels deep, too deep",
                    limits.depth
                );
                return Err(refuse_unfinished(root, &top, &what));
            }
            let top = dir.top.or_else(|| {
                tops.push((path.clone(), 0));
                Some(tops.len() - 1)
            });
            queue.push_back(Pending {
                path,
                depth: dir.depth + 1,
                root: dir.root,
                top,
            });
        }
    }
    Ok(summary)
}

/// Is the entry at `path` a secret by its name: a secret file name, or the end of one
/// of HOME's credential paths (`.aws`, `.kube/config`, a backup copy of `.netrc`)?
fn secret_by_name(path: &Path, name: &OsStr) -> bool {
    if guards::is_secret_file_name(name) {
        return true;
    }
    // The longest HOME credential path has six names.
    let mut comps: Vec<&OsStr> = path
        .components()
        .rev()
        .take(8)
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    comps.reverse();
    secret_files::credential_ending(&comps, true).is_some()
}

/// Is `name` protected from writes wherever it appears, by itself (not because it is a
/// secret)?
fn protected_name(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    guards::PROTECTED_ANYWHERE_FILES
        .iter()
        .chain(guards::PROTECTED_ANYWHERE_COMPONENTS)
        .any(|p| n.eq_ignore_ascii_case(p.as_bytes()))
}

enum Sniff {
    /// The file holds a private key.
    Key,
    /// It does not; this many bytes were read.
    Read(u64),
    /// Testing it would pass the budget.
    OverBudget,
}

/// Test the content of the regular file `name` in `dir` (`len` bytes when listed; not
/// followed if it became a link, not waited on if it became a FIFO) for a private key,
/// reading at most [`secret_files::SNIFF_MAX_BYTES`] and nothing past `budget`.
fn sniff(dir: &Dir, name: &OsStr, len: u64, budget: u64) -> Sniff {
    if len > budget {
        return Sniff::OverBudget;
    }
    match dir.read(Path::new(name), secret_files::SNIFF_MAX_BYTES) {
        Ok(buf) if secret_files::holds_private_key(&buf) => Sniff::Key,
        // Grown past the cap since it was listed: what the command reads is not a
        // small key file either way, but it is counted.
        Ok(_) | Err(_) => Sniff::Read(len),
    }
}
