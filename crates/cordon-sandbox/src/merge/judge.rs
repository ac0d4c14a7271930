//! What the merge does with one entry a run left, in one place for the merge and for
//! its preview (`cordon changes show`): the planted-code rules
//! ([`cordon_policy::planted::judge_left`]), then the files host tools obey without being
//! asked ([`cordon_policy::obeyed`]), programs and modules that would take the place of
//! the host's, symlinks leading out of the root, and git's own files judged against the
//! host's current ones (a git configuration by allowlist, `.gitmodules`, the exclude list
//! and the index's hiding bits). What the host's tree says beyond the path
//! (`hostfacts.rs`) joins in: the hooks directory each repository's `core.hooksPath`
//! names, the scripts its hooks run, the rules anchored at each nested repository's root,
//! what instruction files import, and a virtualenv's start-up code. A deletion is judged
//! too ([`Judge::removal`]).

use super::hostfacts::HostFacts;
use super::{MAX_GIT_CONFIG, changed_since, leads_out};
use crate::changes::Stamp;
use cordon_policy::gitallow::GitConfigVerdict;
use cordon_policy::guards::StateDirs;
use cordon_policy::obeyed::{HostNames, host_obeyed, python_module_name, shadows};
use cordon_policy::planted::{Leave, LeftKind, judge_left_in};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::cell::OnceCell;
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the judgement needs to know beyond the entry: the root it lies in, the host's
/// HOME, when the run started, and (gathered once, on first need) the names of the
/// host's programs and Python modules.
pub(crate) struct Judge<'a> {
    pub(crate) root: &'a Path,
    pub(crate) home: &'a Path,
    pub(crate) horizon: Stamp,
    /// cordon's state directories under `home`, resolved once for every entry.
    state: StateDirs,
    names: OnceCell<HostNames>,
    /// Repositories, their hooks and what instruction files import.
    facts: HostFacts<'a>,
}

impl<'a> Judge<'a> {
    /// The judge of the layer whose upper directory is `upper`, merged into `root`.
    pub(crate) fn new(
        root: &'a Path,
        upper: &'a Path,
        home: &'a Path,
        horizon: Stamp,
    ) -> Judge<'a> {
        Judge {
            root,
            home,
            horizon,
            state: StateDirs::for_home(home),
            names: OnceCell::new(),
            facts: HostFacts::new(root, upper, home),
        }
    }

    /// Why the deletion of the host's `path` (of `kind`) by the run does not land without
    /// review (F14): removing a protected file or a hook the rules refuse to let a run
    /// write is judged like rewriting it. Removing a compiled cache is harmless.
    pub(crate) fn removal(&self, path: &Path, kind: LeftKind) -> Leave {
        if cordon_policy::planted::is_compiled_cache(path, kind) {
            return Leave::Keep;
        }
        let leave = match judge_left_in(path, kind, self.home, &self.state) {
            Leave::CheckGitConfig => Leave::Hold("it removes a git configuration file".into()),
            Leave::Keep => match self.hook_refusal(path, kind) {
                Some(why) => Leave::Refuse(why),
                None => match host_obeyed(path, self.root, self.home) {
                    Some(o) => Leave::Hold(o.reason()),
                    None => self.nested_obeyed(path).unwrap_or(Leave::Keep),
                },
            },
            // In a git directory only hooks and the configuration protect anything: a
            // finished rebase, a removed lock or exclude list is git's own business.
            Leave::Hold(_)
                if path
                    .iter()
                    .any(|c| c.as_bytes().eq_ignore_ascii_case(b".git")) =>
            {
                Leave::Keep
            }
            other => other,
        };
        match leave {
            Leave::Refuse(why) => Leave::Refuse(format!("the run deleted it, but {why}")),
            Leave::Hold(why) => Leave::Hold(format!("the run deleted it: {why}")),
            other => other,
        }
    }

    /// Why `path` is a git hook by the host repository's `core.hooksPath` (F7): every
    /// file or symlink below the directory it names, and that directory replaced by
    /// anything but a directory.
    fn hook_refusal(&self, path: &Path, kind: LeftKind) -> Option<String> {
        self.facts.repos_of(path).iter().find_map(|repo| {
            let hooks = repo.hooks.as_ref()?;
            let inside = if repo.top.starts_with(hooks) {
                // Hooks run from the work tree itself (`core.hooksPath = .`): only the
                // names git runs there are hooks.
                path.parent() == Some(hooks.as_path())
                    && path.file_name().is_some_and(|n| {
                        cordon_policy::planted::GIT_HOOK_NAMES
                            .iter()
                            .any(|h| n.as_bytes().eq_ignore_ascii_case(h.as_bytes()))
                    })
            } else {
                path.starts_with(hooks) && (path != hooks || kind != LeftKind::Dir)
            };
            inside.then(|| {
                format!(
                    "a git hook: the repository at {} runs hooks from {} (core.hooksPath) on the host's next git command",
                    repo.top.display(),
                    hooks.display()
                )
            })
        })
    }

    /// The rules anchored at a repository's root, for each repository nested below the
    /// writable root (F13), and the scripts its hooks run by path (F7b).
    fn nested_obeyed(&self, path: &Path) -> Option<Leave> {
        for repo in self.facts.repos_of(path) {
            if repo.called.contains(path) {
                return Some(Leave::Hold(format!(
                    "a script the git hooks of the repository at {} run on the next commit",
                    repo.top.display()
                )));
            }
            if repo.top != self.root
                && let Some(o) = host_obeyed(path, &repo.top, self.home)
            {
                return Some(Leave::Hold(o.reason()));
            }
        }
        None
    }

    fn names(&self) -> &HostNames {
        self.names.get_or_init(|| {
            let mut names = crate::hostnames::gather_host_names(
                &std::env::var_os("PATH").unwrap_or_default(),
                self.home,
            );
            // The project's own virtualenvs, whatever their names (F12).
            for venv in self.facts.root_venvs() {
                crate::hostnames::add_venv_modules(&mut names, &venv);
            }
            names
        })
    }

    /// The verdict on `name` of the layer directory `up` (at `path` on the host), of
    /// `kind`, whose host side is `name` of `host` when the host has that directory.
    pub(crate) fn entry(
        &self,
        up: BorrowedFd<'_>,
        host: Option<BorrowedFd<'_>>,
        path: &Path,
        name: &[u8],
        kind: LeftKind,
    ) -> Leave {
        self.entry_known(up, host, None, path, name, kind)
    }

    /// [`Judge::entry`], when whether the host has `name` is already known (`host_has`;
    /// `None`: look).
    pub(crate) fn entry_known(
        &self,
        up: BorrowedFd<'_>,
        host: Option<BorrowedFd<'_>>,
        host_has: Option<bool>,
        path: &Path,
        name: &[u8],
        kind: LeftKind,
    ) -> Leave {
        // A directory carries `redirect` when the run renamed it: its entries are then
        // in the lower layer, under another name.
        if matches!(kind, LeftKind::File | LeftKind::Dir) && overlay_marked(up, name) {
            return Leave::Refuse(
                "the copy-on-write layer recorded it as a metadata-only copy or a move, which cordon does not merge".into(),
            );
        }
        let leave = judge_left_in(path, kind, self.home, &self.state);
        let host_has = host_has.unwrap_or_else(|| {
            host.is_some_and(|h| {
                rustix::fs::statat(h, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW).is_ok()
            })
        });
        if let Leave::Refuse(_) = leave {
            return leave;
        }
        if let Some(why) = self.hook_refusal(path, kind) {
            return Leave::Refuse(why);
        }
        match leave {
            Leave::Refuse(_) => leave,
            Leave::CheckGitConfig => self.git_config(up, host, name),
            Leave::Hold(_) if name == b".gitmodules" && kind == LeftKind::File => {
                self.gitmodules(up, host, name)
            }
            Leave::Hold(_) => leave,
            Leave::Keep => {
                if let Some(o) = host_obeyed(path, self.root, self.home) {
                    return Leave::Hold(o.reason());
                }
                if let Some(held) = self.nested_obeyed(path) {
                    return held;
                }
                if let Some(why) = self.facts.venv_hold(path, host_has) {
                    return Leave::Hold(why);
                }
                if let Some(by) = self.facts.imported_by(path) {
                    return Leave::Hold(format!(
                        "{} imports it (`@path`): the next agent session reads it as instructions",
                        by.display()
                    ));
                }
                if kind == LeftKind::File
                    && let Some(why) = self.git_state(up, host, path, name)
                {
                    return Leave::Hold(why);
                }
                // Only what the host does not have yet can newly take the place of one
                // of its programs or modules.
                if !host_has
                    && might_shadow(path, self.root, kind)
                    && let Some(o) = shadows(path, self.root, kind, self.names())
                {
                    return Leave::Hold(o.reason());
                }
                // A virtualenv of any name (found by its `pyvenv.cfg`) puts its `bin`
                // first on `PATH` as `.venv/bin` does (F12).
                if !host_has && let Some(name) = self.facts.venv_bin_entry(path) {
                    let as_venv = self.root.join(".venv/bin").join(name);
                    if let Some(o) = shadows(&as_venv, self.root, kind, self.names()) {
                        return Leave::Hold(o.reason());
                    }
                }
                // A link named like a directory the table lists (`.cargo -> cc`) would
                // bring what lies behind it past the table: `cc/config.toml` lands as an
                // ordinary file, and the host's tools read it as `.cargo/config.toml`.
                if kind == LeftKind::Symlink
                    && let Some(why) = on_the_way(path, self.root, self.home)
                {
                    return Leave::Hold(why);
                }
                if kind == LeftKind::Symlink
                    && let Ok(target) =
                        rustix::fs::readlinkat(up, OsStr::from_bytes(name), Vec::new())
                    && leads_out(path, target.as_bytes(), self.root)
                {
                    return Leave::Hold(format!(
                        "a symlink that leads out of {} (to {}): a later writer on the host would follow it",
                        self.root.display(),
                        String::from_utf8_lossy(target.as_bytes())
                    ));
                }
                Leave::Keep
            }
        }
    }

    /// The local exclude list and the index, which can hide changes from `git status`
    /// (F3), judged against the host's.
    fn git_state(
        &self,
        up: BorrowedFd<'_>,
        host: Option<BorrowedFd<'_>>,
        path: &Path,
        name: &[u8],
    ) -> Option<String> {
        let comps: Vec<&OsStr> = path.iter().collect();
        let in_git = comps
            .iter()
            .any(|c| c.as_bytes().eq_ignore_ascii_case(b".git"));
        if !in_git {
            return None;
        }
        let parent = comps.len().checked_sub(2).map(|i| comps[i].as_bytes());
        let read = |dir: BorrowedFd<'_>, cap: u64| read_regular(dir, name, cap);
        if name.eq_ignore_ascii_case(b"exclude")
            && parent.is_some_and(|p| p.eq_ignore_ascii_case(b"info"))
        {
            let run = read(up, MAX_GIT_CONFIG)?;
            let host = host.and_then(|h| read(h, MAX_GIT_CONFIG));
            return super::gitstate::exclude_hold(&run, host.as_deref());
        }
        if name == b"index" {
            const CAP: u64 = 256 << 20;
            let Some(run) = read(up, CAP + 1) else {
                return Some(
                    "the index cannot be read to check what it hides from `git status`".into(),
                );
            };
            let host = host.and_then(|h| read(h, CAP + 1));
            return super::gitstate::index_hold(&run, host.as_deref());
        }
        None
    }

    /// A git configuration file, judged by allowlist against the host's current one.
    fn git_config(&self, up: BorrowedFd<'_>, host: Option<BorrowedFd<'_>>, name: &[u8]) -> Leave {
        let Some(run) = read_small(up, name) else {
            return Leave::Refuse("it cannot be read to be checked as git configuration".into());
        };
        let host_bytes = host.and_then(|h| read_small(h, name));
        // No file on the host: the repository is the run's own when its git directory
        // did not exist before the run either (its HEAD is the run's, or missing).
        let existed = host.is_some_and(|h| {
            rustix::fs::statat(h, "HEAD", AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| !changed_since(&st, self.horizon))
        });
        let host_view: Option<&[u8]> = match &host_bytes {
            Some(b) => Some(b),
            None if existed => Some(b""),
            None => None,
        };
        verdict(super::git_config_judgement(&run, host_view))
    }

    fn gitmodules(&self, up: BorrowedFd<'_>, host: Option<BorrowedFd<'_>>, name: &[u8]) -> Leave {
        let Some(run) = read_small(up, name) else {
            return Leave::Refuse("it cannot be read to be checked".into());
        };
        let host_bytes = host.and_then(|h| read_small(h, name));
        verdict(super::gitmodules_judgement(&run, host_bytes.as_deref()))
    }
}

fn verdict(v: GitConfigVerdict) -> Leave {
    match v {
        GitConfigVerdict::Merge => Leave::Keep,
        GitConfigVerdict::Hold(r) => Leave::Hold(r),
        GitConfigVerdict::Refuse(r) => Leave::Refuse(r),
    }
}

/// Whether `path` is shaped like something that could take the place of a host program
/// (an entry of a `bin` directory) or a Python module (an importable name): the host's
/// names are gathered only then.
fn might_shadow(path: &Path, root: &Path, kind: LeftKind) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let comps: Vec<&OsStr> = rel.iter().collect();
    let Some(last) = comps.last() else {
        return false;
    };
    let in_bin = comps.len() >= 3 && matches!(comps[comps.len() - 2].as_bytes(), b"bin" | b".bin");
    let importable =
        python_module_name(last, kind == LeftKind::Dir).is_some() || kind == LeftKind::Symlink;
    in_bin || (importable && kind != LeftKind::Dir)
}

/// The marks of overlayfs's that the merge does not merge.
const OVERLAY_MARKS: [&str; 2] = ["user.overlay.metacopy", "user.overlay.redirect"];

/// Whether the file or directory `name` of the layer directory `dir` carries overlayfs metadata the
/// merge does not merge (`user.overlay.metacopy`: its data is in the lower layer;
/// `user.overlay.redirect`), or cannot be checked for it. The names of its extended
/// attributes are listed in one call (`listxattrat`, Linux 6.13), which needs no
/// permission on the file itself; an older kernel, or a list longer than the buffer,
/// reads each mark through a path-only descriptor instead, so a file of mode 000 is
/// checked too.
fn overlay_marked(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    let mut list = [0u8; 1024];
    match list_xattrs_at(dir, name, &mut list) {
        Ok(n) => list[..n]
            .split(|b| *b == 0)
            .any(|attr| OVERLAY_MARKS.iter().any(|m| attr == m.as_bytes())),
        Err(rustix::io::Errno::NOTSUP) => false,
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM | rustix::io::Errno::RANGE) => {
            overlay_marked_each(dir, name)
        }
        // Gone, or another failure: unchecked is not merged.
        Err(_) => true,
    }
}

/// Whether `listxattrat` was refused as unknown (or by a seccomp profile) once: not asked
/// again.
static NO_LISTXATTRAT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The names of the extended attributes of `name` in `dir` (not following a symlink),
/// NUL-separated in `buf`: their length.
#[allow(unsafe_code)]
fn list_xattrs_at(
    dir: BorrowedFd<'_>,
    name: &[u8],
    buf: &mut [u8],
) -> Result<usize, rustix::io::Errno> {
    use std::sync::atomic::Ordering;
    /// `listxattrat(2)`'s number, the same on every architecture (Linux 6.13).
    const SYS_LISTXATTRAT: libc::c_long = 465;
    if NO_LISTXATTRAT.load(Ordering::Relaxed) {
        return Err(rustix::io::Errno::NOSYS);
    }
    let Ok(c_name) = std::ffi::CString::new(name) else {
        return Err(rustix::io::Errno::INVAL);
    };
    // SAFETY: `c_name` is NUL-terminated and outlives the call; `buf` is writable for
    // `buf.len()` bytes, the size passed; the descriptor is borrowed for the call.
    let n = unsafe {
        libc::syscall(
            SYS_LISTXATTRAT,
            std::os::fd::AsRawFd::as_raw_fd(&dir),
            c_name.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            buf.as_mut_ptr(),
            buf.len(),
        )
    };
    match usize::try_from(n) {
        Ok(n) if n <= buf.len() => Ok(n),
        Ok(_) => Err(rustix::io::Errno::RANGE),
        Err(_) => {
            let e = rustix::io::Errno::from_raw_os_error(
                std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            );
            // Unknown to the kernel, or refused by a seccomp profile of the host's (which
            // answers calls it does not know with EPERM): not asked again.
            if matches!(e, rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) {
                NO_LISTXATTRAT.store(true, Ordering::Relaxed);
            }
            Err(e)
        }
    }
}

/// [`overlay_marked`], one mark at a time through a path-only descriptor.
fn overlay_marked_each(dir: BorrowedFd<'_>, name: &[u8]) -> bool {
    let Ok(fd) = rustix::fs::openat(
        dir,
        OsStr::from_bytes(name),
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return true;
    };
    let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    let mut buf = [0u8; 8];
    OVERLAY_MARKS.iter().any(|mark| {
        match rustix::fs::getxattr(proc_path.as_str(), *mark, &mut buf[..]) {
            Ok(_) | Err(rustix::io::Errno::RANGE) => true,
            Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP) => false,
            // No /proc, or another failure: unchecked is not merged.
            Err(_) => true,
        }
    })
}

/// At most `cap` bytes of the regular file `name` in `dir` (a link, a fifo or a device is
/// not read); the caller tells a file that filled `cap` from one that fits.
pub(super) fn read_regular(dir: BorrowedFd<'_>, name: &[u8], cap: u64) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        dir,
        OsStr::from_bytes(name),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut out = Vec::new();
    std::fs::File::from(fd)
        .take(cap)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// The content of the regular file `name` in `dir`, cut one byte past the largest git
/// configuration judged (so that a larger one is refused as too large).
fn read_small(dir: BorrowedFd<'_>, name: &[u8]) -> Option<Vec<u8>> {
    read_regular(dir, name, MAX_GIT_CONFIG + 1)
}

/// Whether `path` (a symlink) is named like a directory on the way to an entry of the
/// table of files host tools obey: the entry's pattern, cut before its last component,
/// matches `path`'s last components (anywhere), its components below the root (at the
/// root), or below HOME.
fn on_the_way(path: &Path, root: &Path, home: &Path) -> Option<String> {
    use cordon_policy::obeyed::{CLASSES, Where};
    let comps = |base: &Path| -> Option<Vec<&OsStr>> {
        path.strip_prefix(base).ok().map(|r| r.iter().collect())
    };
    let below_root = comps(root).unwrap_or_default();
    let below_home = comps(home);
    for class in CLASSES {
        for e in class.entries {
            let pat: Vec<&str> = e.pattern.split('/').collect();
            // Directories on the way: every proper prefix, up to the first `**`.
            let stop = pat.iter().position(|p| *p == "**").unwrap_or(pat.len() - 1);
            for k in 1..=stop.min(pat.len() - 1) {
                let prefix = &pat[..k];
                // A prefix that is only a wildcard (`*/pip.conf`) names no directory.
                if prefix.last().is_some_and(|p| p.bytes().all(|b| b == b'*')) {
                    continue;
                }
                let hit = match e.at {
                    Where::Root => tail_matches(&below_root, prefix, true),
                    Where::Home => below_home
                        .as_deref()
                        .is_some_and(|h| tail_matches(h, prefix, true)),
                    _ => tail_matches(&below_root, prefix, false),
                };
                if hit {
                    return Some(format!(
                        "a symlink named like a directory of {} ({}): what it leads to would be read there",
                        class.name, e.pattern
                    ));
                }
            }
        }
    }
    None
}

/// Whether `comps` ends with `prefix` (or is exactly it, when `whole`), component by
/// component, ASCII case-insensitively, `*` standing for any run of characters.
fn tail_matches(comps: &[&OsStr], prefix: &[&str], whole: bool) -> bool {
    if comps.len() < prefix.len() || (whole && comps.len() != prefix.len()) {
        return false;
    }
    let tail = &comps[comps.len() - prefix.len()..];
    tail.iter()
        .zip(prefix)
        .all(|(c, p)| glob_eq(c.as_bytes(), p.as_bytes()))
}

fn glob_eq(name: &[u8], pat: &[u8]) -> bool {
    match pat.iter().position(|b| *b == b'*') {
        None => name.eq_ignore_ascii_case(pat),
        Some(i) => {
            let (head, tail) = (&pat[..i], &pat[i + 1..]);
            let tail_has_star = tail.contains(&b'*');
            name.len() >= head.len() + tail.len()
                && name[..head.len()].eq_ignore_ascii_case(head)
                && (tail_has_star || name[name.len() - tail.len()..].eq_ignore_ascii_case(tail))
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod overlay_mark_tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::os::unix::fs::PermissionsExt;

    fn mark(p: &Path, name: &str) {
        rustix::fs::setxattr(p, name, b"", rustix::fs::XattrFlags::empty()).unwrap();
    }

    #[test]
    fn marks_are_found_by_the_list_and_one_by_one_alike() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        for n in ["plain", "other", "meta", "redirect", "closed", "crowded"] {
            std::fs::write(d.join(n), "x").unwrap();
        }
        mark(&d.join("other"), "user.overlay.origin");
        mark(&d.join("meta"), "user.overlay.metacopy");
        mark(&d.join("redirect"), "user.overlay.redirect");
        mark(&d.join("closed"), "user.overlay.redirect");
        std::fs::set_permissions(d.join("closed"), std::fs::Permissions::from_mode(0o000)).unwrap();
        // More names than the list's buffer holds: read one mark at a time.
        for i in 0..40 {
            mark(
                &d.join("crowded"),
                &format!("user.padding-{i:02}-{}", "x".repeat(24)),
            );
        }
        mark(&d.join("crowded"), "user.overlay.metacopy");
        let dir = std::fs::File::open(d).unwrap();
        let fd = dir.as_fd();
        let want = [
            ("plain", false),
            ("other", false),
            ("meta", true),
            ("redirect", true),
            ("closed", true),
            ("crowded", true),
            ("missing", true),
        ];
        for (n, marked) in want {
            assert_eq!(overlay_marked(fd, n.as_bytes()), marked, "{n}");
            assert_eq!(
                overlay_marked_each(fd, n.as_bytes()),
                marked,
                "{n} one by one"
            );
        }
        let mut small = [0u8; 64];
        assert_eq!(
            list_xattrs_at(fd, b"crowded", &mut small),
            Err(rustix::io::Errno::RANGE)
        );
    }
}
