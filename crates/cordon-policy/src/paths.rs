//! Path facts: expansion of `~` and `$HOME`, lexical cleaning, symlink resolution one
//! component at a time, and workspace containment by components.
//!
//! Every path a request names is judged twice: as written (after `~` expansion and lexical
//! `..` removal) and as the kernel would resolve it (symlinks followed in every component,
//! `..` applied after the link it follows). Containment compares components, never string
//! prefixes, so `/w/proj_evil` is not inside `/w/proj`.

use crate::facts::{FileFacts, FileKind, FileMeta};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it gives up (the kernel's limit).
const MAX_LINKS: usize = 40;

/// Where an operation's target lies relative to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Location {
    /// Inside the workspace (or a configured writable root), literally and resolved.
    Inside,
    /// Outside every root.
    Outside,
    /// Cannot be placed: a hard-linked file, a symlink loop, a path that could not be
    /// examined. Treated at least as strictly as `Outside`.
    Unknown,
}

/// Everything the policy knows about one path named by a request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PathFacts {
    /// The path as written, after `~` expansion, joined to the cwd, `..` removed lexically.
    pub literal: PathBuf,
    /// The path as the kernel would resolve it (symlinks followed; missing tail appended).
    pub resolved: PathBuf,
    /// Whether the final path exists.
    pub exists: bool,
    /// Whether any component of the literal path was a symlink.
    pub via_symlink: bool,
    /// Hard-link count of an existing regular file (1 otherwise).
    pub nlink: u64,
    /// Why the path could not be fully examined, if it could not.
    pub problem: Option<String>,
    /// For a file with more than one hard link: the guarded file it is (same device
    /// and inode), judged by the guards as that file.
    pub same_file: Option<PathBuf>,
}

/// Expand a leading `~`, `$HOME` or `${HOME}` against `home`. Other `~user` forms and
/// other variables are left as written (the caller treats them as unknown).
pub fn expand_home(path: &str, home: &Path) -> PathBuf {
    for prefix in ["${HOME}", "$HOME", "~"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            if rest.is_empty() {
                return home.to_path_buf();
            }
            if let Some(rest) = rest.strip_prefix('/') {
                return home.join(rest);
            }
        }
    }
    PathBuf::from(path)
}

/// Remove `.` and resolve `..` lexically on an absolute path (`/..` stays `/`).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
        }
    }
    out
}

/// Make `path` absolute against `cwd` (which must be absolute) without cleaning it.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// Is `path` equal to `root` or beneath it, by whole components?
pub fn is_within(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// Resolve `path` (absolute, not necessarily clean) the way the kernel would, following
/// symlinks in every component through `fs`. A missing component ends the walk; the rest
/// is appended lexically. Returns the resolved path, whether it exists, whether a symlink
/// was followed, and a problem if the walk had to stop early.
pub fn resolve(path: &Path, fs: &dyn FileFacts) -> (PathBuf, bool, bool, Option<String>) {
    let r = walk(path, fs);
    (r.resolved, r.exists, r.via_symlink, r.problem)
}

/// What [`resolve`] found, with the facts of the file it ended on when it had them.
struct Walked {
    resolved: PathBuf,
    exists: bool,
    via_symlink: bool,
    problem: Option<String>,
    /// The last component's facts (it is not a link), when the walk ended by looking at it.
    last: Option<FileMeta>,
}

fn walk(path: &Path, fs: &dyn FileFacts) -> Walked {
    // No link anywhere on the way: the kernel says so in one step, and the resolved path
    // is the lexical one.
    if path.is_absolute()
        && let Some(meta) = fs.plain_metadata(path)
    {
        return Walked {
            resolved: clean(path),
            exists: true,
            via_symlink: false,
            problem: None,
            last: Some(meta),
        };
    }
    let stopped = |problem: String| Walked {
        resolved: clean(path),
        exists: false,
        via_symlink: true,
        problem: Some(problem),
        last: None,
    };
    let mut last = None;
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, path);
    pending.reverse(); // a stack: last element is the next component
    let mut cur = PathBuf::from("/");
    let mut links = 0usize;
    let mut via_symlink = false;
    let mut missing = false;
    while let Some(c) = pending.pop() {
        last = None;
        if c == ".." {
            cur.pop();
            continue;
        }
        if c == "." {
            continue;
        }
        let next = cur.join(&c);
        if missing {
            cur = next;
            continue;
        }
        match fs.metadata(&next) {
            None => {
                missing = true;
                cur = next;
            }
            Some(m) if m.kind == FileKind::Symlink => {
                links += 1;
                via_symlink = true;
                if links > MAX_LINKS {
                    return stopped("too many levels of symbolic links".into());
                }
                let Some(target) = fs.read_link(&next) else {
                    return stopped(format!("cannot read the symlink {}", next.display()));
                };
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                }
                let mut t = Vec::new();
                push_components(&mut t, &target);
                for comp in t.into_iter().rev() {
                    pending.push(comp);
                }
            }
            Some(m) => {
                last = Some(m);
                cur = next;
            }
        }
    }
    Walked {
        resolved: cur,
        exists: !missing,
        via_symlink,
        problem: None,
        last,
    }
}

fn push_components(out: &mut Vec<OsString>, path: &Path) {
    for c in path.components() {
        match c {
            Component::Normal(s) => out.push(s.to_os_string()),
            Component::ParentDir => out.push("..".into()),
            Component::CurDir => out.push(".".into()),
            Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

/// Gather the facts of a path written in a request.
pub fn facts_for(written: &str, cwd: &Path, home: &Path, fs: &dyn FileFacts) -> PathFacts {
    let raw = absolute(&expand_home(written, home), cwd);
    let literal = clean(&raw);
    let Walked {
        resolved,
        exists,
        via_symlink,
        problem,
        last,
    } = walk(&raw, fs);
    let nlink = if exists {
        last.or_else(|| fs.metadata(&resolved))
            .filter(|m| m.kind == FileKind::File)
            .map_or(1, |m| m.nlink)
    } else {
        1
    };
    PathFacts {
        literal,
        resolved,
        exists,
        via_symlink,
        nlink,
        problem,
        same_file: None,
    }
}

/// The location of a path: inside only when both its literal and resolved forms lie within
/// one of `roots`, and nothing about it is unknown.
pub fn locate(facts: &PathFacts, roots: &[PathBuf]) -> Location {
    if facts.problem.is_some() || facts.nlink > 1 {
        return Location::Unknown;
    }
    let inside = |p: &Path| roots.iter().any(|r| is_within(p, r));
    if inside(&facts.literal) && inside(&facts.resolved) {
        Location::Inside
    } else {
        Location::Outside
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use crate::facts::{FakeFs, RealFs};

    fn ws() -> Vec<PathBuf> {
        vec![PathBuf::from("/w/proj")]
    }

    #[test]
    fn clean_removes_dots() {
        assert_eq!(clean(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(clean(Path::new("/../../etc")), PathBuf::from("/etc"));
    }

    #[test]
    fn home_expansion() {
        let h = Path::new("/home/u");
        assert_eq!(expand_home("~", h), PathBuf::from("/home/u"));
        assert_eq!(expand_home("~/.ssh", h), PathBuf::from("/home/u/.ssh"));
        assert_eq!(expand_home("$HOME/.ssh", h), PathBuf::from("/home/u/.ssh"));
        assert_eq!(expand_home("${HOME}/x", h), PathBuf::from("/home/u/x"));
        assert_eq!(expand_home("~root/x", h), PathBuf::from("~root/x"));
        assert_eq!(expand_home("$HOMEX/x", h), PathBuf::from("$HOMEX/x"));
    }

    #[test]
    fn prefix_is_not_containment() {
        let fs = FakeFs::new().dir("/w/proj").dir("/w/proj_evil");
        let f = facts_for("/w/proj_evil/x", Path::new("/w/proj"), Path::new("/h"), &fs);
        assert_eq!(locate(&f, &ws()), Location::Outside);
    }

    #[test]
    fn dotdot_escape_is_outside() {
        let fs = FakeFs::new().dir("/w/proj");
        let f = facts_for(
            "../../etc/passwd",
            Path::new("/w/proj"),
            Path::new("/h"),
            &fs,
        );
        assert_eq!(f.literal, PathBuf::from("/etc/passwd"));
        assert_eq!(locate(&f, &ws()), Location::Outside);
    }

    #[test]
    fn symlinked_dir_pointing_out_is_outside() {
        let fs = FakeFs::new()
            .dir("/w/proj")
            .symlink("/w/proj/link", "/home/u/.ssh")
            .file("/home/u/.ssh/id_rsa");
        let f = facts_for(
            "link/id_rsa",
            Path::new("/w/proj"),
            Path::new("/home/u"),
            &fs,
        );
        assert_eq!(f.resolved, PathBuf::from("/home/u/.ssh/id_rsa"));
        assert!(f.via_symlink);
        assert_eq!(locate(&f, &ws()), Location::Outside);
    }

    #[test]
    fn relative_symlink_and_dotdot_after_link() {
        // /w/proj/a -> ../other/deep ; a/../x resolves to /w/other/x, not /w/proj/x.
        let fs = FakeFs::new()
            .dir("/w/proj")
            .dir("/w/other/deep")
            .symlink("/w/proj/a", "../other/deep");
        let f = facts_for("a/../x", Path::new("/w/proj"), Path::new("/h"), &fs);
        assert_eq!(f.literal, PathBuf::from("/w/proj/x"));
        assert_eq!(f.resolved, PathBuf::from("/w/other/x"));
        assert_eq!(locate(&f, &ws()), Location::Outside);
    }

    #[test]
    fn symlink_loop_is_unknown() {
        let fs = FakeFs::new()
            .dir("/w/proj")
            .symlink("/w/proj/a", "/w/proj/b")
            .symlink("/w/proj/b", "/w/proj/a");
        let f = facts_for("a", Path::new("/w/proj"), Path::new("/h"), &fs);
        assert!(f.problem.is_some());
        assert_eq!(locate(&f, &ws()), Location::Unknown);
    }

    #[test]
    fn hard_link_is_unknown() {
        let fs = FakeFs::new().file_with("/w/proj/h", 2, b"");
        let f = facts_for("h", Path::new("/w/proj"), Path::new("/h"), &fs);
        assert_eq!(locate(&f, &ws()), Location::Unknown);
    }

    #[test]
    fn missing_tail_is_appended() {
        let fs = FakeFs::new().dir("/w/proj").symlink("/w/proj/out", "/tmp");
        let f = facts_for("out/new/file", Path::new("/w/proj"), Path::new("/h"), &fs);
        assert_eq!(f.resolved, PathBuf::from("/tmp/new/file"));
        assert!(!f.exists);
    }

    /// The same file system with the one-step lookup taken away: every path walked.
    struct WalkOnly<F>(F);

    impl<F: FileFacts> FileFacts for WalkOnly<F> {
        fn metadata(&self, path: &Path) -> Option<crate::facts::FileMeta> {
            self.0.metadata(path)
        }
        fn read_link(&self, path: &Path) -> Option<PathBuf> {
            self.0.read_link(path)
        }
        fn read_small_file(&self, path: &Path, limit: u64) -> Option<Vec<u8>> {
            self.0.read_small_file(path, limit)
        }
    }

    /// Paths of every shape over a real tree: plain files and directories, links to
    /// files and directories (relative, absolute, dangling, looping), `..` after a link
    /// and after a file, a missing middle, a trailing slash, a hard link, a FIFO, and
    /// the kernel's magic links.
    fn real_tree() -> (tempfile::TempDir, Vec<String>) {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("ws/src/deep")).unwrap();
        std::fs::create_dir_all(r.join("out/d")).unwrap();
        std::fs::write(r.join("ws/src/main.rs"), "x").unwrap();
        std::fs::write(r.join("out/secret"), "s").unwrap();
        std::fs::write(r.join("ws/linked"), "l").unwrap();
        std::fs::hard_link(r.join("ws/linked"), r.join("ws/linked2")).unwrap();
        symlink(r.join("out"), r.join("ws/abs-dir")).unwrap();
        symlink("../out/secret", r.join("ws/rel-file")).unwrap();
        symlink("src", r.join("ws/same")).unwrap();
        symlink("nowhere", r.join("ws/dangling")).unwrap();
        symlink("loop-b", r.join("ws/loop-a")).unwrap();
        symlink("loop-a", r.join("ws/loop-b")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            r.join("ws/fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let base = r.display().to_string();
        let cwd = std::env::current_dir().unwrap().display().to_string();
        let mut paths: Vec<String> = [
            "",
            "/ws",
            "/ws/",
            "/ws/src/main.rs",
            "/ws/src/main.rs/",
            "/ws/src/./deep/..",
            "/ws/src/main.rs/../deep",
            "/ws/src/missing",
            "/ws/missing/x/../y",
            "/ws/abs-dir/secret",
            "/ws/abs-dir/../ws/src",
            "/ws/abs-dir/d/../secret",
            "/ws/rel-file",
            "/ws/same/main.rs",
            "/ws/same/../out",
            "/ws/dangling",
            "/ws/dangling/x",
            "/ws/loop-a",
            "/ws/linked",
            "/ws/linked2",
            "/ws/fifo",
            "/../../ws/src",
        ]
        .iter()
        .map(|p| format!("{base}{p}"))
        .collect();
        paths.extend([
            "/".to_string(),
            "/proc/self/cwd".to_string(),
            format!("/proc/self/root{base}/ws/src/main.rs"),
            format!("/proc/self/cwd/../{}", cwd.rsplit('/').next().unwrap_or("")),
            "/dev/null".to_string(),
            "/etc/../etc/hostname".to_string(),
        ]);
        (t, paths)
    }

    #[test]
    fn the_one_step_lookup_finds_what_the_walk_finds() {
        let (_t, paths) = real_tree();
        let (cwd, home) = (Path::new("/"), Path::new("/root"));
        let mut stepped = 0;
        for p in &paths {
            let fast = facts_for(p, cwd, home, &RealFs);
            let walked = facts_for(p, cwd, home, &WalkOnly(RealFs));
            assert_eq!(fast, walked, "{p}");
            stepped += usize::from(RealFs.plain_metadata(Path::new(p)).is_some());
        }
        // The lookup took its one step for the paths without a link, and only for them.
        for p in &paths {
            let linked = facts_for(p, cwd, home, &WalkOnly(RealFs)).via_symlink;
            let missing = !facts_for(p, cwd, home, &RealFs).exists;
            if linked || missing {
                assert!(RealFs.plain_metadata(Path::new(p)).is_none(), "{p}");
            }
        }
        assert!(
            stepped >= 10,
            "only {stepped} paths took the one-step lookup"
        );
    }

    #[test]
    fn the_fake_one_step_lookup_finds_what_its_walk_finds() {
        let fs = FakeFs::new()
            .file("/w/proj/src/main.rs")
            .file_with("/w/proj/h", 2, b"")
            .symlink("/w/proj/out", "/home/u/.ssh")
            .symlink("/w/proj/same", "src")
            .file("/home/u/.ssh/id_rsa");
        for p in [
            "/w/proj/src/main.rs",
            "/w/proj/src/main.rs/../x",
            "/w/proj/out/id_rsa",
            "/w/proj/same/main.rs",
            "/w/proj/same/../h",
            "/w/proj/h",
            "/w/proj/nope/..",
            "/../w/./proj",
            "/",
        ] {
            let (cwd, home) = (Path::new("/"), Path::new("/h"));
            assert_eq!(
                facts_for(p, cwd, home, &fs),
                facts_for(p, cwd, home, &WalkOnly(fs.clone())),
                "{p}"
            );
        }
        assert!(
            fs.plain_metadata(Path::new("/w/proj/src/main.rs"))
                .is_some()
        );
        assert!(
            fs.plain_metadata(Path::new("/w/proj/same/main.rs"))
                .is_none()
        );
    }
}
