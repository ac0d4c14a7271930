//! What merging a layer would do, without doing it: `cordon changes show`, and the
//! console's view of a held change set. Every added, modified and deleted path, what the
//! merge would refuse or hold and why, conflicts with host changes made since the run
//! started, flags for what a host tool may run, and a unified diff for text.
//!
//! Walked like the merge itself, relative to directory descriptors opened without
//! following links, in the layer and in the host's tree side by side.

use super::scope::{Allowed, Outcome, Scope};
use super::{DIR_FLAGS, MAX_DEPTH, MergeOptions, changed_since, kind_of, names, xattr};
use crate::changes::Layer;
use crate::error::SandboxError;
use cordon_policy::planted::{Leave, LeftKind};
use rustix::fs::{AtFlags, FileType, Mode, Stat};
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Text files larger than this are not diffed.
const MAX_DIFF_BYTES: u64 = 1 << 20;

/// One entry of a layer, as [`preview_layer`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pending {
    /// Where it would go on the host.
    pub path: PathBuf,
    /// `add`, `modify`, `delete`, `dir` (a directory added or replaced), or `write` for
    /// an entry whose host side cannot be read.
    pub change: &'static str,
    /// Why the merge would refuse it (it never lands).
    pub refused: Option<String>,
    /// Why the merge holds it for review (it lands only through `cordon changes apply`).
    pub held: Option<String>,
    /// The host changed this entry after the run started; its version would be kept.
    pub conflict: bool,
    /// What a host tool may run or obey in it.
    pub flags: Vec<String>,
    /// A unified diff of the host's version against the run's, for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// What merging `layer` with `opts` would do, without doing it. With `diffs`, text files
/// carry a unified diff.
pub fn preview_layer(
    layer: &Layer,
    opts: &MergeOptions<'_>,
    diffs: bool,
) -> Result<Vec<Pending>, SandboxError> {
    let open = |p: &Path| {
        cordon_fs::Dir::open_ambient(p)
            .map(OwnedFd::from)
            .map_err(|e| SandboxError::io(format!("cannot open {}", p.display()), e.into()))
    };
    let up = open(&layer.upper)?;
    let host = open(&layer.root).ok();
    let mut w = Walk {
        opts,
        judge: super::judge::Judge::new(&layer.root, &layer.upper, opts.home, opts.horizon),
        scope: Scope::new(layer, opts.only),
        root: &layer.root,
        diffs,
        out: Vec::new(),
    };
    w.dir(
        up.as_fd(),
        host.as_ref().map(|h| h.as_fd()),
        &layer.root,
        0,
        false,
    )?;
    Ok(w.out)
}

struct Walk<'a> {
    opts: &'a MergeOptions<'a>,
    judge: super::judge::Judge<'a>,
    scope: Scope,
    root: &'a Path,
    diffs: bool,
    out: Vec<Pending>,
}

/// The regular file `name` in `dir`, when it holds at most `limit` bytes.
fn read_at(dir: BorrowedFd<'_>, name: &[u8], limit: u64) -> Option<Vec<u8>> {
    super::judge::read_regular(dir, name, limit.saturating_add(1))
        .filter(|b| b.len() as u64 <= limit)
}

impl Walk<'_> {
    /// `replaced`: the directory `at` replaced the host's (marked opaque, or inside one
    /// that did): every directory in it replaces the host's too, as the merge carries the
    /// mark down.
    fn dir(
        &mut self,
        up: BorrowedFd<'_>,
        host: Option<BorrowedFd<'_>>,
        at: &Path,
        depth: usize,
        replaced: bool,
    ) -> Result<(), SandboxError> {
        let mut entries = names(up)?;
        entries.sort();
        for name in entries {
            self.entry(up, host, at, &name, depth, replaced)?;
        }
        Ok(())
    }

    fn entry(
        &mut self,
        up: BorrowedFd<'_>,
        host: Option<BorrowedFd<'_>>,
        at: &Path,
        name: &[u8],
        depth: usize,
        in_replaced: bool,
    ) -> Result<(), SandboxError> {
        let path = at.join(OsStr::from_bytes(name));
        let Ok(st) = rustix::fs::statat(up, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW)
        else {
            return Ok(());
        };
        let host_st: Option<Stat> = host.and_then(|h| {
            rustix::fs::statat(h, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW).ok()
        });
        let conflict = !self.opts.overwrite
            && host_st
                .as_ref()
                .is_some_and(|s| changed_since(s, self.opts.horizon));
        let (kind, ft) = kind_of(st.st_mode);
        if ft == FileType::Socket {
            return Ok(());
        }
        let whiteout = ft == FileType::CharacterDevice && st.st_rdev == 0;
        let host_type = || host_st.as_ref().map(|s| FileType::from_raw_mode(s.st_mode));
        let mut passage = false;
        let outside = match self.scope.outcome(&path, kind, whiteout, host_type) {
            Outcome::Merge(allowed) => {
                passage = allowed == Allowed::Passage;
                None
            }
            Outcome::Keep => Some(
                "outside the paths this merge may write: it stays in the change set".to_string(),
            ),
            Outcome::Refuse(reason) => Some(reason),
        };
        if let Some(reason) = outside {
            self.out.push(Pending {
                path,
                change: if whiteout {
                    "delete"
                } else {
                    change_of(host_st.as_ref(), kind)
                },
                refused: Some(reason),
                held: None,
                conflict,
                flags: Vec::new(),
                diff: None,
            });
            return Ok(());
        }
        if whiteout {
            if let Some(h) = &host_st {
                let (refused, held) = match self.judge.removal(&path, kind_of(h.st_mode).0) {
                    Leave::Refuse(r) => (Some(r), None),
                    Leave::Hold(r) => (None, Some(r)),
                    Leave::Keep | Leave::CheckGitConfig => (None, None),
                };
                let inside = refused.is_none()
                    && held.is_none()
                    && FileType::from_raw_mode(h.st_mode) == FileType::Directory;
                self.out.push(Pending {
                    path: path.clone(),
                    change: "delete",
                    refused,
                    held,
                    conflict,
                    flags: Vec::new(),
                    diff: None,
                });
                if inside && let Some(sub) = host.and_then(|d| open_sub(d, name)) {
                    self.removed_inside(sub.as_fd(), &path, &[], depth + 1)?;
                }
            }
            return Ok(());
        }
        let mut pending = Pending {
            path: path.clone(),
            change: change_of(host_st.as_ref(), kind),
            refused: None,
            held: None,
            conflict,
            flags: Vec::new(),
            diff: None,
        };
        match self.judge.entry(up, host, &path, name, kind) {
            Leave::Refuse(r) => pending.refused = Some(r),
            Leave::Hold(r) => pending.held = Some(r),
            Leave::CheckGitConfig | Leave::Keep => {}
        }
        if kind == LeftKind::Symlink
            && let Ok(target) = rustix::fs::readlinkat(up, OsStr::from_bytes(name), Vec::new())
        {
            pending.flags.push(format!(
                "symlink to {}",
                String::from_utf8_lossy(target.as_bytes())
            ));
        }
        if kind == LeftKind::Other {
            pending.refused = Some("only files, directories and symlinks are merged".into());
        }
        if kind == LeftKind::File {
            pending.flags.extend(flags(&path, &st, host_st.as_ref()));
            if self.diffs {
                pending.diff = diff(up, host, name, &path, self.root);
            }
        }
        let descend = kind == LeftKind::Dir && pending.refused.is_none();
        // A directory replaces the host's when the layer marked it opaque or it lies in one
        // that replaced the host's (the merge carries the mark down); never a passage of
        // the allowlist, which removes nothing beside the allowed path.
        let replaces = kind == LeftKind::Dir
            && !passage
            && (in_replaced
                || open_sub(up, name).is_some_and(|dir| {
                    xattr(dir.as_fd(), "user.overlay.opaque").is_some_and(|v| v == b"y")
                }));
        if replaces && let Some(dir) = open_sub(up, name) {
            pending.flags.push("replaces the host's directory".into());
            // The host's entries it no longer has are deleted, each judged.
            if let Some(sub_host) = host.and_then(|h| open_sub(h, name)) {
                let mine = names(dir.as_fd())?;
                self.removed_inside(sub_host.as_fd(), &path, &mine, depth + 1)?;
            }
        }
        // A file or symlink where the host has a directory deletes that directory.
        if kind != LeftKind::Dir
            && host_st
                .as_ref()
                .is_some_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory)
        {
            match self.judge.removal(&path, LeftKind::Dir) {
                Leave::Refuse(r) => pending.refused = pending.refused.take().or(Some(r)),
                Leave::Hold(r) => pending.held = pending.held.take().or(Some(r)),
                Leave::Keep | Leave::CheckGitConfig => {
                    if let Some(sub_host) = host.and_then(|h| open_sub(h, name)) {
                        self.removed_inside(sub_host.as_fd(), &path, &[], depth + 1)?;
                    }
                }
            }
        }
        // A directory that only leads to changes is not a change of its own.
        let lone_dir = kind == LeftKind::Dir
            && host_st
                .as_ref()
                .is_some_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory)
            && pending.flags.is_empty()
            && pending.refused.is_none()
            && pending.held.is_none();
        if !lone_dir {
            self.out.push(pending);
        }
        if descend {
            if depth >= MAX_DEPTH {
                return Ok(());
            }
            let Some(sub_up) = open_sub(up, name) else {
                return Ok(());
            };
            let sub_host = host.and_then(|h| open_sub(h, name));
            self.dir(
                sub_up.as_fd(),
                sub_host.as_ref().map(|h| h.as_fd()),
                &path,
                depth + 1,
                replaces,
            )?;
        }
        Ok(())
    }
}

/// The change an entry of kind `kind` makes where the host has `host`.
impl Walk<'_> {
    /// The host's entries of `dir` (at `at`, but those named in `skip`) that a merge
    /// deleting them would refuse or hold, as the merge judges each one it removes.
    fn removed_inside(
        &mut self,
        dir: BorrowedFd<'_>,
        at: &Path,
        skip: &[Vec<u8>],
        depth: usize,
    ) -> Result<(), SandboxError> {
        if depth >= MAX_DEPTH * 4 {
            return Ok(());
        }
        for n in names(dir)? {
            if skip.contains(&n) {
                continue;
            }
            let Ok(st) = rustix::fs::statat(dir, OsStr::from_bytes(&n), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            let p = at.join(OsStr::from_bytes(&n));
            let (kind, ft) = kind_of(st.st_mode);
            let (refused, held) = match self.judge.removal(&p, kind) {
                Leave::Refuse(r) => (Some(r), None),
                Leave::Hold(r) => (None, Some(r)),
                Leave::Keep | Leave::CheckGitConfig => {
                    if ft == FileType::Directory
                        && let Some(sub) = open_sub(dir, &n)
                    {
                        self.removed_inside(sub.as_fd(), &p, &[], depth + 1)?;
                    }
                    continue;
                }
            };
            self.out.push(Pending {
                path: p,
                change: "delete",
                refused,
                held,
                conflict: false,
                flags: Vec::new(),
                diff: None,
            });
        }
        Ok(())
    }
}

fn change_of(host: Option<&Stat>, kind: LeftKind) -> &'static str {
    match (host, kind) {
        (_, LeftKind::Dir) => "dir",
        (None, _) => "add",
        (Some(_), _) => "modify",
    }
}

fn open_sub(dir: BorrowedFd<'_>, name: &[u8]) -> Option<OwnedFd> {
    rustix::fs::openat(dir, OsStr::from_bytes(name), DIR_FLAGS, Mode::empty()).ok()
}

/// What a host tool may run in the file the run left at `path`.
fn flags(path: &Path, st: &Stat, host: Option<&Stat>) -> Vec<String> {
    let mut out = Vec::new();
    let exec = |m: u32| m & 0o111 != 0;
    if exec(st.st_mode) && !host.is_some_and(|h| exec(h.st_mode)) {
        out.push("new executable".to_string());
    }
    let comps: Vec<&OsStr> = path.iter().collect();
    let name = comps.last().copied().unwrap_or_default();
    let parent = comps.len().checked_sub(2).map(|i| comps[i]);
    let grand = comps.len().checked_sub(3).map(|i| comps[i]);
    if parent == Some(OsStr::new(".bin")) && grand == Some(OsStr::new("node_modules")) {
        out.push("a node_modules/.bin entry: package scripts run it by name".into());
    }
    let n = name.as_bytes();
    if n == b"package.json" {
        out.push("package.json: its scripts and install hooks run on npm install / npm run".into());
    } else if matches!(n, b"setup.py" | b"pyproject.toml" | b"setup.cfg") {
        out.push("a Python build definition: pip runs its build backend on install".into());
    } else if matches!(n, b"Makefile" | b"makefile" | b"GNUmakefile") {
        out.push("a Makefile: make runs its recipes".into());
    } else if n == b"build.rs" {
        out.push("a Cargo build script: cargo build runs it".into());
    }
    out
}

/// A unified diff of the host's version of `name` against the run's, when both are
/// text; a line saying what the file is otherwise.
fn diff(
    up: BorrowedFd<'_>,
    host: Option<BorrowedFd<'_>>,
    name: &[u8],
    path: &Path,
    root: &Path,
) -> Option<String> {
    let new = read_at(up, name, MAX_DIFF_BYTES)?;
    let old = match host {
        Some(h) => {
            match rustix::fs::statat(h, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(_) => read_at(h, name, MAX_DIFF_BYTES)?,
                Err(_) => Vec::new(),
            }
        }
        None => Vec::new(),
    };
    let (Ok(old), Ok(new)) = (std::str::from_utf8(&old), std::str::from_utf8(&new)) else {
        return Some(format!("binary file, {} bytes\n", new.len()));
    };
    if old == new {
        return None;
    }
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string();
    Some(
        similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{rel}"), &format!("b/{rel}"))
            .to_string(),
    )
}
