//! Start-up files in a slot: reset before every run, so that no run leaves code that a
//! later run executes without naming it.
//!
//! A slot outlives the run that wrote it, and the next run on it may belong to another
//! session, with other credentials, network hosts or writable roots. What a run installs
//! on purpose (a package under `~/.local/lib/python3.X/site-packages`, a tool in
//! `~/.local/bin`, a toolchain) is what a slot is for, and a later command that uses it
//! names it. A start-up file is different: a shell reads `~/.bashrc`, cargo reads
//! `~/.cargo/config.toml` (a `rustc-wrapper`), npm `~/.npmrc` (a `script-shell`), git
//! `~/.gitconfig` (`core.hooksPath`, `core.fsmonitor`), Python every `*.pth` of the user
//! site whose lines begin with `import` (see the `site` module's documentation) and
//! `sitecustomize`/`usercustomize`, whatever the later command is. So before each run,
//! under the slot's guard and with no sandbox on it, cordon removes from the slot's HOME
//! (and from the slot's cache layers, which appear under HOME):
//!
//! - every path of `cordon_policy::guards::PROTECTED_HOME_PATHS`, the list that
//!   containment already keeps a contained run from writing in the host's HOME, except
//!   the install trees named in [`INSTALL_TREES`];
//! - in those install trees: Python's start-up hooks;
//! - in every directory of programs of the slot (its `bin` directories, and the
//!   directories of the host's `PATH` that lie inside HOME, such as pnpm's home) and of
//!   its cache layers: any entry named like a program in *any* directory of the host's
//!   `PATH`, HOME's own included. A `git` or `sh` planted in `~/.local/bin` would run in
//!   place of the real one, and so would a `cargo` planted in the `~/.cargo` cache layer,
//!   over rustup's `~/.cargo/bin/cargo` in the host's cache below it; a whiteout of that
//!   name would hide it, and an opaque mark on a cache layer's directory of programs
//!   would hide all of them (the mark is removed). What a slot installs under another
//!   name stays (`cargo install ripgrep` leaves `~/.cargo/bin/rg`).
//!
//! A symlink met on the way to one of these paths is removed rather than followed. A
//! user who wants start-up files kept opts in (`cordon exec --slot-keep-startup`).

use super::tree::open_root;
use super::{SlotError, SlotMounts, SlotPaths, remove_tree};
use crate::caches::{CacheLayer, program_dirs};
use cordon_policy::guards::PROTECTED_HOME_PATHS;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Trees of [`PROTECTED_HOME_PATHS`] that hold what a slot is for (installed packages,
/// programs, toolchains): kept, but for the start-up hooks inside them.
pub const INSTALL_TREES: &[&str] = &[
    ".local/bin",
    ".local/lib/python*",
    ".cargo/bin",
    ".rustup/toolchains",
    ".nvm/nvm.sh",
    ".nvm/versions",
    ".pyenv/bin",
    ".pyenv/shims",
    ".pyenv/versions",
    ".rbenv/bin",
    ".rbenv/shims",
    ".sdkman/bin",
    ".sdkman/candidates",
    ".deno/bin",
    ".bun/bin",
    "go/bin",
];

/// Parts of the developer caches that a later build uses without checking them again:
/// cargo's extracted crate sources (checked once, when the `.crate` was downloaded; the
/// archives in `registry/cache` stay and are extracted again) and the wheels pip built
/// itself (cached without a hash). Reset with the start-up files; what was downloaded stays.
pub const UNCHECKED_CACHE_PATHS: &[&str] = &[".cargo/registry/src", ".cache/pip/wheels"];

/// Directories of programs run by name, checked for names that shadow the host's; the
/// directories of the host's `PATH` inside HOME are checked too.
const BIN_DIRS: &[&str] = &[
    ".local/bin",
    ".cargo/bin",
    ".pyenv/bin",
    ".pyenv/shims",
    ".rbenv/bin",
    ".rbenv/shims",
    ".sdkman/bin",
    ".deno/bin",
    ".bun/bin",
    "go/bin",
];

/// Where the system's programs are, besides the directories of the host's `PATH`.
const SYSTEM_BIN: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The start-up paths reset in every slot, relative to HOME.
pub fn startup_paths() -> impl Iterator<Item = &'static str> {
    PROTECTED_HOME_PATHS
        .iter()
        .copied()
        .filter(|p| !INSTALL_TREES.contains(p))
        .chain(UNCHECKED_CACHE_PATHS.iter().copied())
}

/// The start-up files found in a tree that appears at `at` (relative to HOME: empty for
/// the slot's HOME, `.cargo` for that cache's layer), relative to HOME. With `remove`,
/// each is removed as it is found.
fn sweep(
    root: &Path,
    at: &Path,
    remove: bool,
    programs: &Programs,
) -> Result<Vec<PathBuf>, SlotError> {
    let Some(fd) = open_tree(root)? else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    let hit = |rel: &Path, found: &mut Vec<PathBuf>| found.push(at.join(rel));
    // One listing of the top spares a lookup per listed path that is not there.
    let top = names(&fd, root)?;
    let present = |rel: &Path| {
        rel.components()
            .next()
            .is_some_and(|c| top.iter().any(|n| n.as_slice() == c.as_os_str().as_bytes()))
    };
    for p in startup_paths() {
        if let Some(rel) = beneath(Path::new(p), at)
            && present(&rel)
            && let Some(hit_at) = reach(&fd, root, &rel, remove)?
        {
            hit(&hit_at, &mut found);
        }
    }
    for b in &programs.bins {
        // A directory of programs that is the cache layer itself (pnpm's home) or lies
        // beneath it.
        let rel = if b.as_path() == at {
            PathBuf::new()
        } else {
            match beneath(b, at).filter(|r| present(r)) {
                Some(rel) => rel,
                None => continue,
            }
        };
        let Some(dir) = open_dir(&fd, root, &rel)? else {
            continue;
        };
        // An overlayfs layer's opaque directory hides every program of the host's one
        // below it; the slot's HOME is no layer.
        if !at.as_os_str().is_empty()
            && opaque(&dir, remove).map_err(|e| unreadable(&root.join(&rel), e))?
        {
            hit(&rel, &mut found);
        }
        for name in names(&dir, &root.join(&rel))? {
            let name = OsStr::from_bytes(&name);
            if programs.shadows(name) {
                if remove {
                    remove_entry(&dir, name, &root.join(&rel))?;
                }
                hit(&rel.join(name), &mut found);
            }
        }
    }
    if let Some(lib) = beneath(Path::new(".local/lib"), at).filter(|r| present(r))
        && let Some(lib_fd) = open_dir(&fd, root, &lib)?
    {
        for v in names(&lib_fd, &root.join(&lib))?
            .into_iter()
            .filter(|n| n.starts_with(b"python"))
        {
            let site = lib.join(OsStr::from_bytes(&v)).join("site-packages");
            let Some(site_fd) = open_dir(&fd, root, &site)? else {
                continue;
            };
            for name in names(&site_fd, &root.join(&site))? {
                let name = OsStr::from_bytes(&name);
                if python_hook(&site_fd, name) {
                    if remove {
                        remove_entry(&site_fd, name, &root.join(&site))?;
                    }
                    hit(&site.join(name), &mut found);
                }
            }
        }
    }
    Ok(found)
}

/// Reset the start-up files of the slot a run is about to take as HOME (`home`): in its
/// HOME and in each of the run's cache `layers` that lies under HOME. Returns what was
/// removed, relative to HOME. The caller holds the slot's guard and no sandbox runs.
pub fn reset_startup(
    slot: &SlotMounts,
    layers: &[CacheLayer],
    home: &Path,
) -> Result<Vec<PathBuf>, SlotError> {
    let programs = Programs::of(std::env::var_os("PATH").as_deref(), home);
    let mut removed = sweep(&slot.home, Path::new(""), true, &programs)?;
    for layer in layers {
        if let Ok(at) = layer.path.strip_prefix(home) {
            removed.extend(sweep(&layer.upper, at, true, &programs)?);
        }
    }
    Ok(removed)
}

/// The start-up files in the slot at `paths` that the next run will reset (its HOME's;
/// those of its cache layers are reset too but not listed, since a layer does not say
/// which cache it was).
pub fn startup_files(paths: &SlotPaths) -> Result<Vec<PathBuf>, SlotError> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let programs = Programs::of(std::env::var_os("PATH").as_deref(), &home);
    sweep(&paths.home(), Path::new(""), false, &programs)
}

/// The host's programs, and where in a slot a program would shadow one of them.
struct Programs {
    /// The host's directories of programs: [`SYSTEM_BIN`] and every directory of its
    /// `PATH`, those inside HOME included (rustup's `~/.cargo/bin`).
    dirs: Vec<PathBuf>,
    /// The slot's directories of programs, relative to HOME: [`BIN_DIRS`] and the
    /// directories of the host's `PATH` that lie inside HOME (HOME itself is not one: its
    /// top holds the slot's whole tree).
    bins: Vec<PathBuf>,
}

impl Programs {
    /// The programs of the host whose `PATH` is `path` and whose HOME is `home`.
    fn of(path: Option<&OsStr>, home: &Path) -> Programs {
        let mut dirs: Vec<PathBuf> = SYSTEM_BIN.iter().map(PathBuf::from).collect();
        dirs.extend(program_dirs(path));
        dirs.sort();
        dirs.dedup();
        let home_canonical = std::fs::canonicalize(home).ok();
        let mut bins: Vec<PathBuf> = BIN_DIRS.iter().map(PathBuf::from).collect();
        for d in &dirs {
            let inside = d
                .strip_prefix(home)
                .ok()
                .or_else(|| d.strip_prefix(home_canonical.as_ref()?).ok());
            if let Some(rel) = inside.filter(|r| !r.as_os_str().is_empty()) {
                bins.push(rel.to_path_buf());
            }
        }
        bins.sort();
        bins.dedup();
        Programs { dirs, bins }
    }

    /// Whether anything named `name` is in one of the host's directories of programs
    /// (looked at without following a link at its name: a dangling one counts).
    fn shadows(&self, name: &OsStr) -> bool {
        self.dirs
            .iter()
            .any(|d| std::fs::symlink_metadata(d.join(name)).is_ok())
    }
}

/// overlayfs's mark of an opaque directory in a layer (cordon mounts with `userxattr`).
const OPAQUE: &str = "user.overlay.opaque";

/// Whether the directory `dir` of a cache layer carries overlayfs's opaque mark; with
/// `remove`, the mark is removed, so the host's directory below shows through again.
fn opaque(dir: &OwnedFd, remove: bool) -> Result<bool, rustix::io::Errno> {
    match rustix::fs::fgetxattr(dir, OPAQUE, &mut [0u8; 8]) {
        Ok(_) | Err(rustix::io::Errno::RANGE) => {}
        Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP) => return Ok(false),
        Err(e) => return Err(e),
    }
    if remove {
        rustix::fs::fremovexattr(dir, OPAQUE)?;
    }
    Ok(true)
}

/// `p` relative to `at` when it lies beneath it (`at` empty: `p` itself).
fn beneath(p: &Path, at: &Path) -> Option<PathBuf> {
    let rest = p.strip_prefix(at).ok()?;
    (!rest.as_os_str().is_empty()).then(|| rest.to_path_buf())
}

/// Follow `rel` from `fd` without following links; the path removed or found, if any:
/// `rel` itself, or the first symlink or non-directory met on the way (a symlink there
/// would lead the sandbox's reads elsewhere; it is removed too).
fn reach(
    fd: &OwnedFd,
    root: &Path,
    rel: &Path,
    remove: bool,
) -> Result<Option<PathBuf>, SlotError> {
    let comps: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    // The directory reached so far: `fd` itself until a component is opened.
    let mut opened: Option<OwnedFd> = None;
    let mut walked = PathBuf::new();
    for (i, name) in comps.iter().enumerate() {
        let dir = opened.as_ref().unwrap_or(fd);
        let here = root.join(&walked);
        walked.push(name);
        let st = match rustix::fs::statat(dir, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(unreadable(&here.join(name), e)),
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        let last = i + 1 == comps.len();
        if kind == FileType::Directory && !last {
            match open_sub(dir, name, &here)? {
                Some(next) => opened = Some(next),
                None => return Ok(None),
            }
            continue;
        }
        if kind != FileType::Symlink && !last {
            // A file where a directory would be: nothing beneath it can exist.
            return Ok(None);
        }
        if remove {
            let parent = walked.parent().unwrap_or(Path::new(""));
            remove_entry(dir, name, &root.join(parent))?;
        }
        return Ok(Some(walked));
    }
    Ok(None)
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn unreadable(path: &Path, e: rustix::io::Errno) -> SlotError {
    SlotError::io(
        format_args!(
            "cannot look for start-up files in {} (the run is refused rather than risk one)",
            path.display()
        ),
        e,
    )
}

fn dup(fd: &OwnedFd, shown: &Path) -> Result<OwnedFd, SlotError> {
    rustix::fs::openat(fd, ".", dir_flags(), Mode::empty()).map_err(|e| unreadable(shown, e))
}

/// The root of a tree to sweep, its owner given full access to it; `None` when it does
/// not exist. The root is a directory cordon made (the slot's HOME or a cache layer),
/// but a run may have changed its mode.
fn open_tree(root: &Path) -> Result<Option<OwnedFd>, SlotError> {
    match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Ok(m) if m.is_dir() => {}
        _ => return Err(unreadable(root, rustix::io::Errno::NOTDIR)),
    }
    let fd = match open_root(root) {
        Ok(fd) => fd,
        Err(_) => {
            // A run may have taken its own access away: given back without following a
            // link at the name.
            let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
                return Err(unreadable(root, rustix::io::Errno::INVAL));
            };
            cordon_fs::Dir::open_ambient(parent)
                .and_then(|d| d.set_mode(Path::new(name), 0o700))
                .map_err(|e| {
                    SlotError::io(
                        format_args!("cannot open {}", root.display()),
                        std::io::Error::from(e),
                    )
                })?;
            open_root(root)?
        }
    };
    owner_access(&fd).map_err(|e| unreadable(root, e))?;
    Ok(Some(fd))
}

/// Give a directory's owner read, write and search access to it, when it lacks any: a
/// run may take them away to hide what it planted from the reset (the sandbox, root of
/// its user namespace, would still read it).
fn owner_access(fd: &OwnedFd) -> Result<(), rustix::io::Errno> {
    let st = rustix::fs::fstat(fd)?;
    if st.st_mode & 0o700 != 0o700 {
        rustix::fs::fchmod(fd, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))?;
    }
    Ok(())
}

/// The directory `rel` beneath `fd` (shown as `root`), opened without following links;
/// `None` when a component is missing or is not a directory.
fn open_dir(fd: &OwnedFd, root: &Path, rel: &Path) -> Result<Option<OwnedFd>, SlotError> {
    let mut cur = dup(fd, root)?;
    let mut here = root.to_path_buf();
    for c in rel.components() {
        match open_sub(&cur, c.as_os_str(), &here)? {
            Some(next) => cur = next,
            None => return Ok(None),
        }
        here.push(c);
    }
    Ok(Some(cur))
}

/// The directory `name` in `dir` (shown as `shown`), opened without following a link,
/// its owner given full access (see [`owner_access`]); `None` when it is missing, a
/// symlink or not a directory. Any other failure refuses.
fn open_sub(dir: &OwnedFd, name: &OsStr, shown: &Path) -> Result<Option<OwnedFd>, SlotError> {
    let open = || rustix::fs::openat(dir, name, dir_flags(), Mode::empty());
    let fd = match open() {
        Ok(fd) => fd,
        Err(rustix::io::Errno::ACCESS) => {
            super::tree::open_up(dir, name).map_err(|e| unreadable(&shown.join(name), e))?;
            open().map_err(|e| unreadable(&shown.join(name), e))?
        }
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
            return Ok(None);
        }
        Err(e) => return Err(unreadable(&shown.join(name), e)),
    };
    owner_access(&fd).map_err(|e| unreadable(&shown.join(name), e))?;
    Ok(Some(fd))
}

/// Remove `name` from `dir`, whose path is `shown`: a directory with all it holds, anything
/// else by `unlink`. `dir` is made writable by its owner first (a run may have made it
/// read-only to keep what it planted). Every directory from the tree's root to `dir` was
/// opened without following a link and no run holds the slot, so `shown` names `dir`.
fn remove_entry(dir: &OwnedFd, name: &OsStr, shown: &Path) -> Result<(), SlotError> {
    let fail = |e| {
        SlotError::io(
            format_args!("cannot remove {}", shown.join(name).display()),
            e,
        )
    };
    let st = rustix::fs::fstat(dir).map_err(fail)?;
    if st.st_mode & 0o300 != 0o300 {
        rustix::fs::fchmod(dir, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))
            .map_err(fail)?;
    }
    let kind = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(fail)?;
    if FileType::from_raw_mode(kind.st_mode) == FileType::Directory {
        return remove_tree(&shown.join(name));
    }
    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(fail)
}

/// The names in a directory (shown as `shown`), `.` and `..` left out.
fn names(fd: &OwnedFd, shown: &Path) -> Result<Vec<Vec<u8>>, SlotError> {
    let dir = Dir::read_from(fd).map_err(|e| unreadable(shown, e))?;
    let mut out = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|e| unreadable(shown, e))?;
        let n = entry.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(n.to_vec());
        }
    }
    Ok(out)
}

/// Whether `name` in a site-packages directory runs when Python starts:
/// `sitecustomize.py`, `usercustomize.py` (or a package of that name), or a `.pth`
/// file with a line that begins with `import` and a space or tab (a symlink or a file
/// that cannot be read counts as one).
fn python_hook(dir: &OwnedFd, name: &OsStr) -> bool {
    let n = name.as_bytes();
    let module = |m: &[u8]| n == m || n.strip_suffix(b".py") == Some(m);
    if module(b"sitecustomize") || module(b"usercustomize") {
        return true;
    }
    if !n.ends_with(b".pth") {
        return false;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
        return true;
    };
    let mut text = Vec::new();
    if std::fs::File::from(fd)
        .take(1 << 20)
        .read_to_end(&mut text)
        .is_err()
    {
        return true;
    }
    text.split(|b| *b == b'\n')
        .any(|l| l.starts_with(b"import ") || l.starts_with(b"import\t"))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn every_pattern_of_the_protected_list_is_an_install_tree() {
        for p in PROTECTED_HOME_PATHS.iter().filter(|p| p.contains('*')) {
            assert!(INSTALL_TREES.contains(p), "{p} would not be reset");
        }
        for p in INSTALL_TREES {
            assert!(PROTECTED_HOME_PATHS.contains(p), "{p}");
        }
        assert!(startup_paths().any(|p| p == ".bashrc"));
        assert!(startup_paths().any(|p| p == ".cargo/config.toml"));
        assert!(!startup_paths().any(|p| p == ".local/bin"));
    }

    #[test]
    fn start_up_files_go_and_installs_stay() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let outside = t.path().join("outside");
        let site = home.join(".local/lib/python3.12/site-packages");
        for d in [
            &site.join("sitecustomize"),
            &home.join(".local/bin/python3"),
            &site.join("pkg"),
            &home.join(".local/bin"),
            &home.join(".config/git"),
            &outside.join("fish"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        let bins = t.path().join("sysbin");
        std::fs::create_dir_all(&bins).unwrap();
        std::fs::write(bins.join("git"), "").unwrap();
        std::fs::write(bins.join("python3"), "").unwrap();
        for (f, text) in [
            (".bashrc", "evil"),
            (".npmrc", "script-shell=/x"),
            (".config/git/config", "[core]\nhooksPath=/x"),
            (".local/bin/git", "evil"),
            (".local/bin/black", "tool"),
            (".local/lib/python3.12/site-packages/pkg/__init__.py", ""),
            (
                ".local/lib/python3.12/site-packages/paths.pth",
                "/some/dir\n",
            ),
            (
                ".local/lib/python3.12/site-packages/evil.pth",
                "/d\nimport os; os.system('x')\n",
            ),
            (
                ".local/lib/python3.12/site-packages/sitecustomize.py",
                "evil",
            ),
        ] {
            std::fs::write(home.join(f), text).unwrap();
        }
        std::fs::write(outside.join("fish/config.fish"), "host").unwrap();
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::os::unix::fs::symlink(outside.join("fish"), home.join(".config/fish")).unwrap();
        let programs = Programs {
            dirs: vec![bins],
            bins: BIN_DIRS.iter().map(PathBuf::from).collect(),
        };
        let listed = sweep(&home, Path::new(""), false, &programs).unwrap();
        let want = [
            ".bashrc",
            ".config/fish",
            ".config/git",
            ".npmrc",
            ".local/bin/git",
            ".local/lib/python3.12/site-packages/evil.pth",
            ".local/lib/python3.12/site-packages/sitecustomize.py",
            ".local/lib/python3.12/site-packages/sitecustomize",
            ".local/bin/python3",
        ];
        let mut got: Vec<String> = listed.iter().map(|p| p.display().to_string()).collect();
        got.sort();
        let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(got, want);
        assert!(home.join(".bashrc").exists(), "listing removes nothing");
        sweep(&home, Path::new(""), true, &programs).unwrap();
        for w in &want {
            assert!(
                std::fs::symlink_metadata(home.join(w)).is_err(),
                "{w} is left"
            );
        }
        for kept in [
            ".local/bin/black",
            ".local/lib/python3.12/site-packages/paths.pth",
            ".local/lib/python3.12/site-packages/pkg/__init__.py",
        ] {
            assert!(home.join(kept).exists(), "{kept}");
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("fish/config.fish")).unwrap(),
            "host"
        );
        assert!(
            sweep(&home, Path::new(""), false, &programs)
                .unwrap()
                .is_empty()
        );
        // A cache layer that appears at ~/.cargo.
        let layer = t.path().join("layer");
        std::fs::create_dir_all(layer.join("registry/cache/idx")).unwrap();
        std::fs::create_dir_all(layer.join("registry/src/idx/serde-1.0.0/src")).unwrap();
        std::fs::write(
            layer.join("registry/src/idx/serde-1.0.0/src/lib.rs"),
            "poisoned",
        )
        .unwrap();
        std::fs::write(
            layer.join("registry/cache/idx/serde-1.0.0.crate"),
            "archive",
        )
        .unwrap();
        std::fs::write(layer.join("config.toml"), "[build]\nrustc-wrapper='/x'").unwrap();
        let mut got = sweep(&layer, Path::new(".cargo"), true, &programs).unwrap();
        got.sort();
        assert_eq!(
            got,
            vec![
                PathBuf::from(".cargo/config.toml"),
                PathBuf::from(".cargo/registry/src")
            ]
        );
        assert!(layer.join("registry/cache/idx/serde-1.0.0.crate").is_file());
        assert!(!layer.join("registry/src").exists());
    }

    /// rustup's `cargo` lives in HOME (`~/.cargo/bin`, on the host's `PATH`): a program
    /// of that name left in the slot's `~/.cargo` layer, a whiteout hiding it, or an
    /// opaque mark hiding the whole directory is gone before the next run; `rg`, which
    /// the host lacks, stays. The same holds for every other directory of the host's
    /// `PATH` inside HOME, pnpm's home (a cache layer itself) included.
    #[test]
    fn programs_named_like_the_hosts_go_even_from_home_and_cache_layers() {
        let t = tempfile::tempdir().unwrap();
        let host = t.path().join("host");
        for d in [".cargo/bin", "tools", ".local/share/pnpm"] {
            std::fs::create_dir_all(host.join(d)).unwrap();
        }
        for p in [
            ".cargo/bin/cargo",
            ".cargo/bin/rustc",
            "tools/fmt",
            ".local/share/pnpm/pnpm",
        ] {
            std::fs::write(host.join(p), "host").unwrap();
        }
        let path = std::env::join_paths([
            host.join(".cargo/bin"),
            host.join("tools"),
            host.join(".local/share/pnpm"),
            PathBuf::from("/usr/bin"),
        ])
        .unwrap();
        let programs = Programs::of(Some(&path), &host);
        for b in ["tools", ".cargo/bin", ".local/share/pnpm", ".local/bin"] {
            assert!(
                programs.bins.contains(&PathBuf::from(b)),
                "{b}: {:?}",
                programs.bins
            );
        }
        assert!(!programs.bins.contains(&PathBuf::new()));

        let cargo = t.path().join("cargo-layer");
        std::fs::create_dir_all(cargo.join("bin")).unwrap();
        std::fs::write(cargo.join("bin/cargo"), "planted").unwrap();
        // Named like no program of any host (this test's PATH holds /usr/bin).
        std::fs::write(cargo.join("bin/cordon-test-tool"), "installed").unwrap();
        let whiteout = rustix::fs::mknodat(
            rustix::fs::CWD,
            cargo.join("bin/rustc"),
            FileType::CharacterDevice,
            Mode::empty(),
            0,
        )
        .is_ok();
        let marked = rustix::fs::setxattr(
            cargo.join("bin"),
            OPAQUE,
            b"y",
            rustix::fs::XattrFlags::empty(),
        )
        .is_ok();
        let mut got = sweep(&cargo, Path::new(".cargo"), true, &programs).unwrap();
        got.sort();
        let mut want = vec![PathBuf::from(".cargo/bin/cargo")];
        if whiteout {
            want.push(PathBuf::from(".cargo/bin/rustc"));
        }
        if marked {
            want.push(PathBuf::from(".cargo/bin"));
        }
        want.sort();
        assert_eq!(got, want);
        assert!(cargo.join("bin/cordon-test-tool").is_file());
        assert!(std::fs::symlink_metadata(cargo.join("bin/rustc")).is_err());
        assert!(rustix::fs::getxattr(cargo.join("bin"), OPAQUE, &mut [0u8; 8]).is_err());

        let pnpm = t.path().join("pnpm-layer");
        std::fs::create_dir_all(pnpm.join("store")).unwrap();
        std::fs::write(pnpm.join("pnpm"), "planted").unwrap();
        let got = sweep(&pnpm, Path::new(".local/share/pnpm"), true, &programs).unwrap();
        assert_eq!(got, vec![PathBuf::from(".local/share/pnpm/pnpm")]);
        assert!(pnpm.join("store").is_dir());

        let slot_home = t.path().join("slot-home");
        std::fs::create_dir_all(slot_home.join("tools")).unwrap();
        std::fs::write(slot_home.join("tools/fmt"), "planted").unwrap();
        std::fs::write(slot_home.join("tools/mine"), "mine").unwrap();
        let got = sweep(&slot_home, Path::new(""), true, &programs).unwrap();
        assert_eq!(got, vec![PathBuf::from("tools/fmt")]);
        assert!(slot_home.join("tools/mine").is_file());
    }
}
