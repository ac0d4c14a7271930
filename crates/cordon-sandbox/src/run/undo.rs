//! The fallback tier's undo of what a run did to the protected paths that existed before
//! it: `.git/hooks`, `.git/config`, `.vscode`, `.claude`, `.envrc` and the other names
//! the write guards protect, inside the writable roots.
//!
//! The full tier never lets a run write the host's roots: its changes sit in a
//! copy-on-write layer and the merge judges each entry before it reaches the host. The
//! fallback tier has no layer, and Landlock cannot leave `.git/hooks` out of a root the
//! command may write (a rule covers a whole tree). So before a run that may fall back,
//! cordon keeps a copy of those paths (bounded: [`MAX_BYTES`], [`MAX_ENTRIES`]); after
//! it, once every process of the sandbox is gone, it judges every entry the run created
//! or changed there with the merge's own rules (`cordon_policy::planted::judge_left_in`, git
//! configuration parsed by the host's git), removes what they refuse and puts back what
//! was there, and reports each as a blocked write. Deletions stay: they take code away
//! from the host, never add it.
//!
//! This is not a guarantee, and the list printed at every fallback run says so: a cordon
//! killed before this step skips it, what the run planted elsewhere (a CI file, a build
//! file, a new repository's hooks) is not checked, and a file too large to keep can only
//! be removed, not restored. Every operation goes through `cordon_fs::Dir`: resolved
//! beneath the root, never through a symlink the run left.

use crate::report::{Blocked, BlockedKind};
use crate::spec::SandboxSpec;
use cordon_fs::Dir;
use cordon_policy::guards::StateDirs;
use cordon_policy::planted::{Leave, LeftKind, judge_left_in};
use rustix::fs::FileType;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes of file content kept over all protected paths; beyond it only a hash is kept
/// (a change is still seen, and the file removed rather than put back).
const MAX_BYTES: u64 = 16 << 20;
/// Entries kept over all protected paths; beyond it the rest is not checked.
const MAX_ENTRIES: usize = 10_000;
/// How deep a protected directory is kept.
const MAX_DEPTH: usize = 32;
/// The largest git configuration file read to be checked.
const MAX_GIT_CONFIG: u64 = 1 << 20;

/// What one entry was before the run.
#[derive(Debug)]
enum Node {
    File {
        mode: u32,
        content: Content,
    },
    Dir {
        mode: u32,
        entries: BTreeMap<OsString, Node>,
    },
    Symlink(PathBuf),
    /// A fifo, socket or device: compared by kind only.
    Other,
    /// Past the limits: not kept, not checked.
    Unkept,
}

#[derive(Debug, PartialEq, Eq)]
enum Content {
    Bytes(Vec<u8>),
    /// Too much to keep: its size and BLAKE3 hash.
    Hash(u64, [u8; 32]),
}

/// One protected path, kept before the run.
#[derive(Debug)]
struct Kept {
    /// The writable root it lies in.
    root: PathBuf,
    /// Its path beneath the root.
    rel: PathBuf,
    node: Node,
}

/// The protected paths of a run that may fall back, as they were before it.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    kept: Vec<Kept>,
}

struct Budget {
    bytes: u64,
    entries: usize,
}

impl Snapshot {
    /// Keep the existing protected paths of `spec` (`Plan::existing_protected`).
    pub(crate) fn take(spec: &SandboxSpec) -> Snapshot {
        let mut budget = Budget {
            bytes: MAX_BYTES,
            entries: MAX_ENTRIES,
        };
        let mut kept = Vec::new();
        for p in &spec.plan.existing_protected {
            let Some(root) = spec.writable_roots.iter().find(|r| p.starts_with(r)) else {
                continue;
            };
            let Ok(rel) = p.strip_prefix(root) else {
                continue;
            };
            let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
                continue;
            };
            let node = match Dir::open_ambient(root).and_then(|r| r.open_dir(parent)) {
                Ok(dir) => keep(&dir, name, &mut budget, 0),
                Err(_) => Node::Unkept,
            };
            kept.push(Kept {
                root: root.clone(),
                rel: rel.to_path_buf(),
                node,
            });
        }
        Snapshot { kept }
    }

    /// Judge what the run did to the kept paths, undo what the rules refuse, and say
    /// what was undone. Call it only once every process of the sandbox is gone.
    pub(crate) fn settle(&self, home: &Path) -> Vec<Blocked> {
        let rules = Rules {
            home,
            state: StateDirs::for_home(home),
        };
        let mut out = Vec::new();
        for k in &self.kept {
            let (Some(parent), Some(name)) = (k.rel.parent(), k.rel.file_name()) else {
                continue;
            };
            let abs = k.root.join(&k.rel);
            let dir = Dir::open_ambient(&k.root).and_then(|r| r.open_dir(parent));
            match dir {
                Ok(dir) => settle(&dir, name, &k.node, &abs, &rules, &mut out),
                // A directory on the way is gone, or is now a symlink: what is beneath
                // it is not where the host's tools look for it any more, or is a link
                // cordon will not follow.
                Err(e) if e.is_not_found() => {}
                Err(e) => out.push(Blocked {
                    kind: BlockedKind::Write,
                    target: abs.display().to_string(),
                    detail: format!(
                        "the run changed the way to this protected path, which cordon could not check after the run ({e}); left as the run left it"
                    ),
                }),
            }
        }
        out
    }
}

/// `lstat` of `name` in `dir`: its kind, `None` when nothing is there.
fn kind_of(dir: &Dir, name: &OsStr) -> Option<FileType> {
    dir.stat(Path::new(name))
        .ok()
        .map(|st| FileType::from_raw_mode(st.st_mode))
}

fn left_kind(t: FileType) -> LeftKind {
    match t {
        FileType::RegularFile => LeftKind::File,
        FileType::Directory => LeftKind::Dir,
        FileType::Symlink => LeftKind::Symlink,
        _ => LeftKind::Other,
    }
}

fn read_link(dir: &Dir, name: &OsStr) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    rustix::fs::readlinkat(dir, name, Vec::new())
        .ok()
        .map(|t| PathBuf::from(OsString::from_vec(t.into_bytes())))
}

/// Keep `name` in `dir` as it is now, within `budget`.
fn keep(dir: &Dir, name: &OsStr, budget: &mut Budget, depth: usize) -> Node {
    if budget.entries == 0 || depth > MAX_DEPTH {
        return Node::Unkept;
    }
    budget.entries -= 1;
    let rel = Path::new(name);
    let Ok(st) = dir.stat(rel) else {
        return Node::Unkept;
    };
    let mode = st.st_mode & 0o7777;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => match content(dir, name, budget) {
            Some(content) => Node::File { mode, content },
            None => Node::Unkept,
        },
        FileType::Directory => {
            let Ok(sub) = dir.open_dir(rel) else {
                return Node::Unkept;
            };
            let Ok(names) = sub.names() else {
                return Node::Unkept;
            };
            let entries = names
                .into_iter()
                .map(|n| {
                    let node = keep(&sub, &n, budget, depth + 1);
                    (n, node)
                })
                .collect();
            Node::Dir { mode, entries }
        }
        FileType::Symlink => read_link(dir, name).map_or(Node::Unkept, Node::Symlink),
        _ => Node::Other,
    }
}

/// The content of the regular file `name` in `dir`: its bytes while the budget lasts,
/// else its size and hash.
fn content(dir: &Dir, name: &OsStr, budget: &mut Budget) -> Option<Content> {
    let mut f = dir.open_read(Path::new(name)).ok()?;
    let size = f.metadata().ok()?.len();
    if size <= budget.bytes {
        let mut bytes = Vec::new();
        (&mut f).take(size + 1).read_to_end(&mut bytes).ok()?;
        // Grew while read: keep its hash rather than half of it.
        if bytes.len() as u64 == size {
            budget.bytes -= size;
            return Some(Content::Bytes(bytes));
        }
        let mut f = dir.open_read(Path::new(name)).ok()?;
        return hash(&mut f).map(|(n, h)| Content::Hash(n, h));
    }
    hash(&mut f).map(|(n, h)| Content::Hash(n, h))
}

fn hash(f: &mut std::fs::File) -> Option<(u64, [u8; 32])> {
    let mut h = blake3::Hasher::new();
    let n = std::io::copy(f, &mut h).ok()?;
    Some((n, *h.finalize().as_bytes()))
}

/// Whether the file `name` in `dir` (a regular file now) still has `mode` and `was`.
fn same_file(dir: &Dir, name: &OsStr, mode: u32, was: &Content) -> bool {
    let Ok(st) = dir.stat(Path::new(name)) else {
        return false;
    };
    if st.st_mode & 0o7777 != mode {
        return false;
    }
    let Ok(mut f) = dir.open_read(Path::new(name)) else {
        return false;
    };
    match was {
        Content::Bytes(b) => {
            if st.st_size as u64 != b.len() as u64 {
                return false;
            }
            let mut now = Vec::new();
            f.take(b.len() as u64 + 1).read_to_end(&mut now).is_ok() && now == *b
        }
        Content::Hash(n, h) => hash(&mut f).is_some_and(|(m, g)| m == *n && g == *h),
    }
}

/// The merge's rules for one settling: the host user's home and cordon's state
/// directories, resolved once.
struct Rules<'a> {
    home: &'a Path,
    state: StateDirs,
}

/// What the merge's rules say of `abs`, now of `kind`: `None` when it may stay,
/// else why not (a git configuration file is parsed by the host's git).
fn refusal(dir: &Dir, name: &OsStr, abs: &Path, kind: LeftKind, rules: &Rules) -> Option<String> {
    match judge_left_in(abs, kind, rules.home, &rules.state) {
        Leave::Keep => None,
        Leave::CheckGitConfig => match dir.read(Path::new(name), MAX_GIT_CONFIG) {
            Ok(bytes) => crate::merge::git_config_refusal(&bytes),
            Err(e) => Some(format!("it cannot be read to be checked ({e})")),
        },
        Leave::Refuse(why) | Leave::Hold(why) => Some(why),
    }
}

/// Compare `name` in `dir` (at `abs`) with what was kept, and undo what the rules refuse.
fn settle(dir: &Dir, name: &OsStr, was: &Node, abs: &Path, rules: &Rules, out: &mut Vec<Blocked>) {
    let Some(now) = kind_of(dir, name) else {
        // Deleted by the run: nothing left for the host to run.
        return;
    };
    let unchanged = match (was, now) {
        (Node::Unkept, _) => return,
        (Node::Dir { entries, .. }, FileType::Directory) => {
            let Ok(sub) = dir.open_dir(Path::new(name)) else {
                return;
            };
            for n in sub.names().unwrap_or_default() {
                let child = abs.join(&n);
                match entries.get(&n) {
                    Some(kept) => settle(&sub, &n, kept, &child, rules, out),
                    None => settle_new(&sub, &n, &child, rules, out, 0),
                }
            }
            true
        }
        (Node::File { mode, content }, FileType::RegularFile) => {
            same_file(dir, name, *mode, content)
        }
        (Node::Symlink(t), FileType::Symlink) => read_link(dir, name).as_ref() == Some(t),
        (Node::Other, t) => !matches!(
            t,
            FileType::RegularFile | FileType::Directory | FileType::Symlink
        ),
        _ => false,
    };
    if unchanged {
        return;
    }
    let Some(why) = refusal(dir, name, abs, left_kind(now), rules) else {
        return;
    };
    let detail = match restore(dir, name, was) {
        Ok(true) => format!(
            "the run changed this protected path ({why}); it was put back as it was before the run (fallback tier: not a guarantee)"
        ),
        Ok(false) => format!(
            "the run changed this protected path ({why}); it was too large to keep, so it was removed after the run (fallback tier: not a guarantee)"
        ),
        Err(e) => {
            format!("the run changed this protected path ({why}), and putting it back failed: {e}")
        }
    };
    out.push(Blocked {
        kind: BlockedKind::Write,
        target: abs.display().to_string(),
        detail,
    });
}

/// An entry the run created inside a protected path: removed when the rules refuse it;
/// a directory they let stay is looked into.
fn settle_new(
    dir: &Dir,
    name: &OsStr,
    abs: &Path,
    rules: &Rules,
    out: &mut Vec<Blocked>,
    depth: usize,
) {
    let Some(now) = kind_of(dir, name) else {
        return;
    };
    match refusal(dir, name, abs, left_kind(now), rules) {
        Some(why) => {
            let detail = match dir.remove_tree(Path::new(name)) {
                Ok(()) => format!(
                    "the run created this in a protected path ({why}); it was removed after the run (fallback tier: not a guarantee)"
                ),
                Err(e) => format!(
                    "the run created this in a protected path ({why}), and removing it failed: {e}"
                ),
            };
            out.push(Blocked {
                kind: BlockedKind::Write,
                target: abs.display().to_string(),
                detail,
            });
        }
        None if now == FileType::Directory && depth < MAX_DEPTH => {
            if let Ok(sub) = dir.open_dir(Path::new(name)) {
                for n in sub.names().unwrap_or_default() {
                    settle_new(&sub, &n, &abs.join(&n), rules, out, depth + 1);
                }
            }
        }
        None => {}
    }
}

/// Put `name` in `dir` back as `was`: `Ok(true)` when restored, `Ok(false)` when it
/// could only be removed (its content was not kept).
fn restore(dir: &Dir, name: &OsStr, was: &Node) -> Result<bool, cordon_fs::FsError> {
    let rel = Path::new(name);
    dir.remove_tree(rel)?;
    recreate(dir, name, was)
}

fn recreate(dir: &Dir, name: &OsStr, was: &Node) -> Result<bool, cordon_fs::FsError> {
    let rel = Path::new(name);
    match was {
        Node::File {
            mode,
            content: Content::Bytes(b),
        } => dir.write(rel, b, *mode).map(|()| true),
        Node::Dir { mode, entries } => {
            dir.create_dir(rel, 0o700)?;
            let sub = dir.open_dir(rel)?;
            let mut all = true;
            for (n, node) in entries {
                all &= recreate(&sub, n, node)?;
            }
            dir.set_mode(rel, *mode)?;
            Ok(all)
        }
        Node::Symlink(t) => dir.symlink(t, rel).map(|()| true),
        Node::File {
            content: Content::Hash(..),
            ..
        }
        | Node::Other
        | Node::Unkept => Ok(false),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use crate::plan::Plan;
    use std::fs;

    fn spec(ws: &Path, protected: Vec<PathBuf>) -> SandboxSpec {
        let mut spec = crate::spec::SandboxBuilder::new(["true"])
            .workspace(ws)
            .home("/nonexistent")
            .build()
            .unwrap();
        spec.plan = Plan {
            existing_protected: protected,
            ..Plan::default()
        };
        spec
    }

    /// The reproduction of the fallback tier's review: a hook planted in an existing
    /// `.git/hooks`, `core.fsmonitor` set in an existing `.git/config`, an editor file
    /// changed; each undone and reported, while an everyday change (`user.email`, a
    /// sample) stays.
    #[test]
    fn planted_hooks_and_keys_are_undone_everyday_changes_stay() {
        let t = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(t.path()).unwrap();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        fs::write(ws.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n").unwrap();
        let config = "[core]\n\trepositoryformatversion = 0\n";
        fs::write(ws.join(".git/config"), config).unwrap();
        fs::create_dir_all(ws.join(".vscode")).unwrap();
        fs::write(ws.join(".vscode/settings.json"), "{}").unwrap();
        let s = spec(
            &ws,
            vec![
                ws.join(".git/hooks"),
                ws.join(".git/config"),
                ws.join(".vscode"),
            ],
        );
        let snap = Snapshot::take(&s);

        // What the run does.
        fs::write(
            ws.join(".git/hooks/pre-commit"),
            "#!/bin/sh\ntouch /tmp/x\n",
        )
        .unwrap();
        fs::write(
            ws.join(".git/hooks/pre-commit.sample"),
            "#!/bin/sh\n# more\n",
        )
        .unwrap();
        fs::write(
            ws.join(".git/config"),
            format!("{config}\tfsmonitor = touch /tmp/y\n"),
        )
        .unwrap();
        fs::write(ws.join(".vscode/settings.json"), "{\"x\": 1}").unwrap();
        fs::write(ws.join(".vscode/tasks.json"), "{}").unwrap();

        let blocked = snap.settle(Path::new("/nonexistent"));
        let targets: Vec<&str> = blocked.iter().map(|b| b.target.as_str()).collect();
        assert!(!ws.join(".git/hooks/pre-commit").exists(), "{blocked:?}");
        assert_eq!(fs::read_to_string(ws.join(".git/config")).unwrap(), config);
        assert_eq!(
            fs::read_to_string(ws.join(".vscode/settings.json")).unwrap(),
            "{}"
        );
        assert!(!ws.join(".vscode/tasks.json").exists());
        // A sample is never run by git: it stays as the run left it.
        assert!(
            fs::read_to_string(ws.join(".git/hooks/pre-commit.sample"))
                .unwrap()
                .contains("more")
        );
        for p in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".vscode/settings.json",
            ".vscode/tasks.json",
        ] {
            let p = ws.join(p);
            assert!(targets.contains(&p.to_str().unwrap()), "{p:?}: {blocked:?}");
        }
        assert!(
            blocked.iter().any(|b| b.detail.contains("core.fsmonitor")),
            "{blocked:?}"
        );

        // An everyday change to the config stays.
        let snap = Snapshot::take(&s);
        let everyday = format!("{config}[user]\n\temail = a@example.com\n");
        fs::write(ws.join(".git/config"), &everyday).unwrap();
        assert!(snap.settle(Path::new("/nonexistent")).is_empty());
        assert_eq!(
            fs::read_to_string(ws.join(".git/config")).unwrap(),
            everyday
        );
    }

    /// A protected directory the run replaced by a symlink is put back as a directory;
    /// the link's target is never written.
    #[test]
    fn a_protected_directory_turned_into_a_link_is_put_back() {
        let t = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(t.path()).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        fs::write(ws.join(".git/hooks/post-checkout.sample"), "x").unwrap();
        let s = spec(&ws, vec![ws.join(".git/hooks")]);
        let snap = Snapshot::take(&s);
        fs::remove_dir_all(ws.join(".git/hooks")).unwrap();
        fs::write(elsewhere.path().join("pre-commit"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), ws.join(".git/hooks")).unwrap();
        let blocked = snap.settle(Path::new("/nonexistent"));
        assert_eq!(blocked.len(), 1, "{blocked:?}");
        let meta = fs::symlink_metadata(ws.join(".git/hooks")).unwrap();
        assert!(meta.is_dir());
        assert!(ws.join(".git/hooks/post-checkout.sample").exists());
        assert!(elsewhere.path().join("pre-commit").exists());
    }
}
