//! The merge of a run's copy-on-write layer into the host's tree
//! (`cordon_sandbox::merge`).
//!
//! The bytes build, in a fresh scratch directory, a host tree and an upper layer (the
//! run's changes) out of fixed-size records, then merge the layer with the options the
//! first byte picks. The merge needs no privilege and no namespace: it runs on plain
//! directories after the run. Only making the layer's whiteouts and device nodes needs
//! `CAP_MKNOD` (absent: those records are skipped), and opaque directories need a file
//! system with `user.` extended attributes (the scratch base is never tmpfs by choice).
//!
//! Properties, whatever the merge returns:
//! - nothing outside the workspace changes: the sibling `outside/` tree and the rest of
//!   HOME (when the workspace is below it) are unchanged to the inode, link count,
//!   content, mode and change time, and nothing appears beside them;
//! - no special file (fifo, socket, device) is in the root afterwards, and no entry has
//!   a set-id, sticky or group/other write bit (the host's fixtures have none);
//! - what landed from the layer (an inode of the layer now in the root) is at the path
//!   it had in the layer, is a file, directory or symlink, is not what
//!   `cordon_policy::planted::judge_left` refuses (nor holds, unless `reviewed`), carries
//!   no overlayfs redirect or metacopy mark, is (unless `reviewed`) no symlink leading
//!   out of the root and no git configuration `git_config_refusal` refuses, and lies in
//!   the allowlist; with a files-only root it is a regular file at a listed path;
//! - a directory the merge made is at the path of a directory of the layer;
//! - a host file still at its path is unchanged (nothing is written through); a host
//!   entry removed or replaced is explained by the layer (an entry at its path or a
//!   non-directory or opaque directory above it), lies in the allowlist, and is never
//!   one the host changed during the run (unless `overwrite`); a files-only root loses
//!   nothing but listed files replaced by the run's;
//! - a merge that succeeded, run again on what it left in the layer, changes nothing.

use cordon_policy::gitallow::GitConfigVerdict;
use cordon_policy::planted::{Leave, LeftKind, judge_left};
use cordon_sandbox::{
    Layer, MergeOptions, Stamp, git_config_refusal, gitmodules_judgement, merge, preview_layer,
};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

mod properties;

use properties::*;

/// Names the records pick from: ordinary, protected, odd.
const NAMES: &[&[u8]] = &[
    b"a",
    b"b",
    b"src",
    b".git",
    b"hooks",
    b"config",
    b".bashrc",
    b"bin",
    b".envrc",
    b"pre-commit",
    b"node_modules",
    b".cargo",
    b"Makefile",
    b"x\ny",
    b"\xff\xfe",
    b"-rf",
    b".cordon-merge-a.1-0",
    b" ",
    b"...",
    b".ssh",
    b"authorized_keys",
    b".profile",
    b"HEAD",
    b"objects",
    b"link",
    b"d",
    "\u{e9}t\u{e9}".as_bytes(),
    b".gitmodules",
    b".vscode",
    b"settings.json",
    b"package.json",
    b"__init__.py",
    b"os.py",
    b"ls",
    b".local",
    b"info",
    &[b'n'; 255],
];

/// Symlink targets (`@root`, `@outside`: those absolute paths).
const TARGETS: &[&str] = &[
    "a",
    "../outside",
    "../../outside/secret",
    "@outside/secret",
    "@outside",
    ".",
    "..",
    "src/../..",
    "/etc/passwd",
    "@root/a",
    "sub/../../x",
    "./b/c",
    "../ws/a",
    "@root",
    "../..",
    "hooks",
];

/// Contents of a file record (each follows a line naming its record).
const CONTENTS: &[&str] = &[
    "",
    "text\n",
    "[core]\n\thooksPath = /tmp/h\n",
    "[user]\n\temail = a@b.c\n",
    "[core]\n\tfsmonitor = touch /tmp/p\n",
    "[submodule \"s\"]\n\tpath = s\n\turl = https://example.com/s\n",
    "#!/bin/sh\nid\n",
    "[alias]\n\tx = !sh\n",
    "[core]\nbare",
    "export PATH=/tmp:$PATH\n",
];

const RUN_MODES: &[u32] = &[
    0o644, 0o755, 0o4755, 0o2755, 0o666, 0o777, 0o1777, 0o600, 0o000, 0o700, 0o6777, 0o444,
];
const HOST_MODES: &[u32] = &[0o644, 0o755, 0o600, 0o700, 0o444, 0o555];

/// The most records read from one input.
const MAX_RECORDS: usize = 64;

fn pick<T: Copy>(list: &[T], b: u8) -> T {
    list[usize::from(b) % list.len()]
}

/// The scratch layout of one input.
struct World {
    top: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    upper: PathBuf,
    outside: PathBuf,
}

impl World {
    fn new(root_is_home: bool) -> World {
        let top = crate::scratch::input_dir("cordon-fuzz-merge");
        let t = top.path().to_path_buf();
        let home = t.join("home");
        let root = if root_is_home {
            home.clone()
        } else {
            home.join("ws")
        };
        let outside = t.join("outside");
        for d in [
            root.as_path(),
            &home.join(".ssh"),
            &t.join("upper"),
            &t.join("work"),
            &outside.join("dir"),
        ] {
            mkdir_p(d);
        }
        write(&home.join(".bashrc"), b"host: bashrc\n", 0o644);
        write(&home.join(".ssh/authorized_keys"), b"host: key\n", 0o600);
        write(&outside.join("secret"), b"host: secret\n", 0o600);
        write(&outside.join("dir/file"), b"host: file\n", 0o644);
        write(&outside.join("setuid"), b"host: setuid\n", 0o4755);
        World {
            home,
            root,
            upper: t.join("upper"),
            outside,
            top,
        }
    }
}

#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
fn mkdir_p(p: &Path) {
    std::fs::create_dir_all(p).expect("a fixture directory");
}

#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
fn write(p: &Path, data: &[u8], mode: u32) {
    std::fs::write(p, data).expect("a fixture file");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("its mode");
}

/// Make the directories leading to `rel` below `base` (mode 0755), never through a
/// symlink or a non-directory: `false` when one is in the way.
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
fn parents(base: &Path, rel: &Path) -> bool {
    let mut at = base.to_path_buf();
    let Some(parent) = rel.parent() else {
        return true;
    };
    for c in parent.components() {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            Ok(_) => return false,
            Err(_) => {
                if std::fs::create_dir(&at).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

/// One record: `[side and kind, name, name, name, argument]`.
struct Record {
    upper: bool,
    kind: u8,
    rel: PathBuf,
    arg: u8,
}

fn records(data: &[u8]) -> Vec<Record> {
    data.chunks_exact(5)
        .take(MAX_RECORDS)
        .map(|r| {
            let depth = 1 + usize::from((r[0] >> 5) & 3).min(2);
            let mut rel = PathBuf::new();
            for &b in &r[1..=depth] {
                rel.push(OsStr::from_bytes(pick(NAMES, b)));
            }
            Record {
                upper: r[0] & 0x80 != 0,
                kind: r[0] & 0x1f,
                rel,
                arg: r[4],
            }
        })
        .collect()
}

fn target_text(w: &World, b: u8) -> String {
    pick(TARGETS, b)
        .replace("@root", &w.root.to_string_lossy())
        .replace("@outside", &w.outside.to_string_lossy())
}

#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
fn make_host(w: &World, r: &Record, i: usize) {
    let p = w.root.join(&r.rel);
    if !parents(&w.root, &r.rel) || std::fs::symlink_metadata(&p).is_ok() {
        return;
    }
    match r.kind % 4 {
        0 | 3 => write(
            &p,
            format!("host:{i}\n{}", pick(CONTENTS, r.arg >> 4)).as_bytes(),
            pick(HOST_MODES, r.arg),
        ),
        1 => {
            let _ = std::fs::create_dir(&p);
            let _ = std::fs::set_permissions(
                &p,
                std::fs::Permissions::from_mode(pick(HOST_MODES, r.arg) | 0o700),
            );
        }
        _ => {
            let _ = std::os::unix::fs::symlink(target_text(w, r.arg), &p);
        }
    }
}

/// Make one layer record (nothing when it cannot be made: a privilege missing, a
/// non-directory in the way).
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
fn make_upper(w: &World, r: &Record, i: usize, files: &[PathBuf]) {
    use rustix::fs::{FileType, Mode, mknodat};
    let p = w.upper.join(&r.rel);
    if !parents(&w.upper, &r.rel) || std::fs::symlink_metadata(&p).is_ok() {
        return;
    }
    let node = |ft: FileType, dev: u64| {
        let _ = mknodat(rustix::fs::CWD, &p, ft, Mode::from_raw_mode(0o644), dev);
    };
    let xattr = |name: &str, value: &[u8]| {
        let _ = rustix::fs::lsetxattr(&p, name, value, rustix::fs::XattrFlags::empty());
    };
    match r.kind % 14 {
        0..=2 => write(
            &p,
            format!("# run:{i}\n{}", pick(CONTENTS, r.arg >> 4)).as_bytes(),
            pick(RUN_MODES, r.arg),
        ),
        3 | 4 => {
            if std::fs::create_dir(&p).is_ok() {
                let _ = std::fs::set_permissions(
                    &p,
                    std::fs::Permissions::from_mode(pick(RUN_MODES, r.arg)),
                );
                if r.kind % 14 == 4 {
                    xattr("user.overlay.opaque", b"y");
                }
            }
        }
        5 => {
            let _ = std::os::unix::fs::symlink(target_text(w, r.arg), &p);
        }
        6 => node(FileType::CharacterDevice, 0),
        7 => node(FileType::Fifo, 0),
        8 => node(FileType::Socket, 0),
        9 => node(FileType::CharacterDevice, rustix::fs::makedev(1, 3)),
        10 => {
            if let Some(f) = files.get(usize::from(r.arg) % files.len().max(1)) {
                let _ = std::fs::hard_link(f, &p);
            }
        }
        11 => {
            if std::fs::create_dir(&p).is_ok() {
                xattr("user.overlay.redirect", b"/elsewhere");
            }
        }
        12 => {
            write(&p, format!("# run:{i}\n").as_bytes(), 0o644);
            xattr("user.overlay.metacopy", b"");
        }
        _ => {
            write(
                &p,
                format!("# run:{i}\n{}", pick(CONTENTS, r.arg)).as_bytes(),
                0o644,
            );
        }
    }
}

/// What one entry of a tree is, for comparing before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Node {
    ino: u64,
    nlink: u64,
    mode: u32,
    ctime: (i64, i64),
    /// The content of a file, the target of a symlink.
    data: Vec<u8>,
}

fn kind_of(mode: u32) -> LeftKind {
    match mode & 0o170000 {
        0o100000 => LeftKind::File,
        0o040000 => LeftKind::Dir,
        0o120000 => LeftKind::Symlink,
        _ => LeftKind::Other,
    }
}

/// Every entry below `dir` by its path relative to `dir`, never following a symlink
/// (`dir` itself included, as the empty path).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Node> {
    #[allow(clippy::disallowed_methods)] // the target's own scratch trees
    fn go(base: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Node>) {
        let p = base.join(rel);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            return;
        };
        let data = match kind_of(m.mode()) {
            LeftKind::File => std::fs::read(&p).unwrap_or_default(),
            LeftKind::Symlink => std::fs::read_link(&p)
                .map(|t| t.as_os_str().as_bytes().to_vec())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        out.insert(
            rel.to_path_buf(),
            Node {
                ino: m.ino(),
                nlink: m.nlink(),
                mode: m.mode(),
                ctime: (m.ctime(), m.ctime_nsec()),
                data,
            },
        );
        if m.is_dir()
            && let Ok(rd) = std::fs::read_dir(&p)
        {
            let mut names: Vec<_> = rd.flatten().map(|e| e.file_name()).collect();
            names.sort();
            for n in names {
                go(base, &rel.join(n), out);
            }
        }
    }
    let mut out = BTreeMap::new();
    go(dir, Path::new(""), &mut out);
    out
}

/// Whether the symlink at `path` with `target` stays inside `root`, judged on the text
/// alone (a `..` after a named component goes wherever that component leads: out).
fn contained(path: &Path, target: &[u8], root: &Path) -> bool {
    let target = Path::new(OsStr::from_bytes(target));
    let mut named = false;
    for c in target.components() {
        match c {
            Component::Normal(_) => named = true,
            Component::ParentDir if named => return false,
            _ => {}
        }
    }
    let joined = path.parent().unwrap_or(root).join(target);
    let mut clean = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !clean.pop() {
                    return false;
                }
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean.starts_with(root)
}

fn has_xattr(p: &Path, name: &str) -> bool {
    let mut buf = [0u8; 64];
    rustix::fs::lgetxattr(p, name, &mut buf[..]).is_ok()
}

/// The options the first byte picks, and the allowlist.
struct Choice {
    reviewed: bool,
    overwrite: bool,
    host_changed_all: bool,
    only: Option<Vec<PathBuf>>,
    files: Vec<PathBuf>,
}

/// The property.
pub fn check(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (list, rest) = rest.split_at(rest.len().min(2));
    let w = World::new(flags & 8 != 0);
    let listed: Vec<PathBuf> = list
        .iter()
        .map(|&b| {
            let mut rel = PathBuf::from(OsStr::from_bytes(pick(NAMES, b & 0x7f)));
            if b & 0x80 != 0 {
                rel.push(OsStr::from_bytes(pick(NAMES, b.rotate_left(3))));
            }
            w.root.join(rel)
        })
        .collect();
    let c = Choice {
        reviewed: flags & 1 != 0,
        overwrite: flags & 2 != 0,
        host_changed_all: flags & 4 != 0,
        only: (flags >> 4 & 3 == 1).then(|| listed.clone()),
        files: if flags >> 4 & 3 == 2 {
            listed
        } else {
            Vec::new()
        },
    };
    let recs = records(rest);
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| !r.upper) {
        make_host(&w, r, i);
    }
    let mut upper_files = Vec::new();
    for (i, r) in recs.iter().enumerate().filter(|(_, r)| r.upper) {
        make_upper(&w, r, i, &upper_files);
        let p = w.upper.join(&r.rel);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            upper_files.push(p);
        }
    }
    let top_before = snapshot(w.top.path());
    let layer_before = snapshot(&w.upper);
    let opaque: Vec<PathBuf> = layer_before
        .iter()
        .filter(|(p, n)| {
            kind_of(n.mode) == LeftKind::Dir && has_xattr(&w.upper.join(p), "user.overlay.opaque")
        })
        .map(|(p, _)| p.clone())
        .collect();
    let root_before = snapshot(&w.root);
    let layer = Layer {
        root: w.root.clone(),
        upper: w.upper.clone(),
        work: w.top.path().join("work"),
        files: c.files.clone(),
    };
    let horizon = if c.host_changed_all {
        Stamp { secs: 0, nanos: 0 }
    } else {
        Stamp {
            secs: i64::MAX,
            nanos: 0,
        }
    };
    let opts = MergeOptions {
        home: &w.home,
        horizon,
        only: c.only.as_deref(),
        reviewed: c.reviewed,
        overwrite: c.overwrite,
    };
    // What `cordon changes show` would show of this layer, taken before the merge.
    let shown = preview_layer(&layer, &opts, false);
    let result = merge(&layer, &opts);
    let root_after = snapshot(&w.root);
    previewed(&shown, &result);
    outside_unchanged(&w, &top_before);
    landed(&w, &c, &layer_before, &root_before, &root_after, &result);
    host_kept(
        &w,
        &c,
        (&layer_before, &opaque),
        &root_before,
        &root_after,
        &result,
    );
    if result.is_ok() {
        let again = merge(&layer, &opts);
        // Change times aside: the merge sets a directory's mode again, to the same.
        let strip = |t: BTreeMap<PathBuf, Node>| -> BTreeMap<PathBuf, Node> {
            t.into_iter()
                .map(|(p, n)| (p, Node { ctime: (0, 0), ..n }))
                .collect()
        };
        let first = strip(root_after);
        let second = strip(snapshot(&w.root));
        if first != second {
            let changed: Vec<_> = second
                .iter()
                .filter(|(p, n)| first.get(*p) != Some(n))
                .map(|(p, _)| p)
                .chain(first.keys().filter(|p| !second.contains_key(*p)))
                .collect();
            panic!(
                "merging what the first merge left changed the root again: {changed:?} ({again:?})"
            );
        }
    }
    crate::scratch::remove_tree(w.top.path());
}
