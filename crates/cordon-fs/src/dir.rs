//! [`Dir`]: an open directory, and every operation cordon does beneath it.

use crate::error::{FsError, FsErrorKind};
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, ResolveFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// How deep [`Dir::remove_tree`] goes. Each level holds one descriptor while it is
/// emptied; a tree deeper than this is refused, not removed in part.
pub const MAX_TREE_DEPTH: usize = 512;

/// An open directory. Every path given to its methods is *relative* and is resolved
/// beneath it one component at a time, refusing any symlink on the way (the kernel does
/// the walk with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS)` where it can). The directory itself stays the one that was
/// opened, whatever is renamed or replaced at its path afterwards.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The components of a relative path: `.` skipped, `..` and absolute paths refused.
fn components<'a>(op: &'static str, at: &Path, rel: &'a Path) -> Result<Vec<&'a OsStr>, FsError> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(FsError::new(op, &at.join(rel), FsErrorKind::Escapes));
            }
        }
    }
    Ok(out)
}

/// Whether the kernel lacks `openat2` (or a filter refuses it): the walk is then done
/// one component at a time.
fn no_openat2(e: Errno) -> bool {
    matches!(e, Errno::NOSYS | Errno::PERM)
}

/// Tests force the one-component walk that kernels without `openat2` get.
#[cfg(test)]
pub(crate) static FORCE_WALK: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

fn force_walk() -> bool {
    #[cfg(test)]
    {
        FORCE_WALK.load(Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        false
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name beside `name`: hidden, unique to this process, never reused.
fn temp_name(name: &OsStr) -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let b = name.as_bytes();
    let mut t = b".".to_vec();
    t.extend_from_slice(&b[..b.len().min(100)]);
    t.extend_from_slice(format!(".cordon-{}-{n}", std::process::id()).as_bytes());
    OsString::from_vec(t)
}

use std::os::unix::ffi::OsStringExt;

impl Dir {
    /// Open the directory at `path`, resolving its parents as they are now (symlinks
    /// among them are followed) but refusing a symlink as its last component.
    ///
    /// This is ambient authority: use it for a directory no run could have reached
    /// (cordon's state directory), or to anchor a directory *before* a run, so that
    /// what the run does to the path afterwards does not move what is written.
    pub fn open_ambient(path: &Path) -> Result<Dir, FsError> {
        let fd = open_path_dir(path, DIR_FLAGS).map_err(|e| FsError::io("open", path, e))?;
        Ok(Dir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// [`Dir::open_ambient`], creating `path` and its missing parents with `mode` first.
    /// The parents that exist are taken as they are now; every directory created is
    /// created beneath the last one that existed, never through a symlink.
    pub fn create_ambient(path: &Path, mode: u32) -> Result<Dir, FsError> {
        let mut existing = path;
        let mut missing: Vec<&OsStr> = Vec::new();
        loop {
            // `path` itself must not be a symlink; an ancestor that exists is one of the
            // parents taken as they are now (`~/.local` may be a link of the user's).
            let flags = if missing.is_empty() {
                DIR_FLAGS
            } else {
                DIR_FLAGS - OFlags::NOFOLLOW
            };
            match open_path_dir(existing, flags) {
                Ok(fd) => {
                    let base = Dir {
                        fd,
                        path: existing.to_path_buf(),
                    };
                    missing.reverse();
                    let rest: PathBuf = missing.iter().collect();
                    return base.create_dir_all(&rest, mode);
                }
                Err(Errno::NOENT) => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name())
                    else {
                        return Err(FsError::io("create", path, Errno::NOENT));
                    };
                    missing.push(name);
                    existing = if parent.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        parent
                    };
                }
                Err(e) => return Err(FsError::io("create", path, e)),
            }
        }
    }

    /// [`Dir::create_ambient`] with mode `0700`, then checked: a directory this user owns
    /// that nobody else may write. A directory prepared by someone else (in `/var/tmp`)
    /// could be swapped under cordon.
    pub fn private_ambient(path: &Path) -> Result<Dir, FsError> {
        let dir = Dir::create_ambient(path, 0o700)?;
        let st = rustix::fs::fstat(&dir.fd).map_err(|e| FsError::io("inspect", path, e))?;
        if st.st_uid != rustix::process::geteuid().as_raw() {
            return Err(FsError::new(
                "use",
                path,
                FsErrorKind::NotPrivate("it belongs to another user"),
            ));
        }
        if st.st_mode & 0o022 != 0 {
            return Err(FsError::new(
                "use",
                path,
                FsErrorKind::NotPrivate("others may write it"),
            ));
        }
        Ok(dir)
    }

    /// Another handle on the same directory.
    pub fn try_clone(&self) -> Result<Dir, FsError> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| FsError::std("open", &self.path, e))?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// The path this directory was opened at (for messages: it may have moved since).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `rel` joined to [`Dir::path`], for messages.
    pub fn display_path(&self, rel: &Path) -> PathBuf {
        self.path.join(rel)
    }

    /// Open `rel` beneath this directory with `flags`, no symlink anywhere on the way.
    fn resolve(&self, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
        let comps: Vec<&OsStr> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s),
                _ => None,
            })
            .collect();
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if comps.is_empty() {
            return rustix::fs::openat(&self.fd, ".", flags, mode);
        }
        let joined: PathBuf = comps.iter().collect();
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        for _ in 0..if force_walk() { 0 } else { 8 } {
            match rustix::fs::openat2(&self.fd, &joined, flags, mode, how) {
                // A rename raced the walk: try again.
                Err(Errno::AGAIN) => continue,
                Err(e) if no_openat2(e) => break,
                // Which component was a link or not a directory: the walk below says
                // precisely (a link is `ELOOP` there, whatever the flags).
                Err(Errno::NOTDIR) => break,
                other => return other,
            }
        }
        // One component at a time, each a real directory opened without following.
        let (last, parents) = comps.split_last().ok_or(Errno::INVAL)?;
        let mut cur: Option<OwnedFd> = None;
        for c in parents {
            let at = cur.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
            cur = Some(open_no_follow(at, c, DIR_FLAGS, Mode::empty())?);
        }
        let at = cur.as_ref().map_or(self.fd.as_fd(), |f| f.as_fd());
        open_no_follow(at, last, flags, mode)
    }

    /// The directory holding `rel`'s last component, and that component.
    fn parent_of<'a>(
        &self,
        op: &'static str,
        rel: &'a Path,
    ) -> Result<(Parent<'_>, &'a OsStr), FsError> {
        let comps = components(op, &self.path, rel)?;
        let Some((name, parents)) = comps.split_last() else {
            return Err(FsError::new(
                op,
                &self.path,
                FsErrorKind::WrongType("a name inside the directory"),
            ));
        };
        if parents.is_empty() {
            return Ok((Parent::This(self), name));
        }
        let sub: PathBuf = parents.iter().collect();
        Ok((Parent::Owned(self.open_dir_for(op, &sub)?), name))
    }

    fn open_dir_for(&self, op: &'static str, rel: &Path) -> Result<Dir, FsError> {
        components(op, &self.path, rel)?;
        let fd = self
            .resolve(rel, DIR_FLAGS, Mode::empty())
            .map_err(|e| FsError::io(op, &self.path.join(rel), e))?;
        Ok(Dir {
            fd,
            path: self.path.join(rel),
        })
    }

    /// Open the directory `rel` beneath this one (no symlink on the way).
    pub fn open_dir(&self, rel: &Path) -> Result<Dir, FsError> {
        self.open_dir_for("open", rel)
    }

    /// Create the directory `rel` (its parent must exist) with `mode`. Fails if
    /// anything is already there.
    pub fn create_dir(&self, rel: &Path, mode: u32) -> Result<(), FsError> {
        let (parent, name) = self.parent_of("create", rel)?;
        rustix::fs::mkdirat(parent.fd(), name, Mode::from_raw_mode(mode))
            .map_err(|e| FsError::io("create", &self.path.join(rel), e))
    }

    /// Create `rel` and its missing parents beneath this directory with `mode`, and
    /// open it. A component that exists must be a directory, not a symlink to one.
    pub fn create_dir_all(&self, rel: &Path, mode: u32) -> Result<Dir, FsError> {
        let comps = components("create", &self.path, rel)?;
        let mut cur = self.try_clone()?;
        for c in comps {
            let path = cur.path.join(c);
            match rustix::fs::mkdirat(&cur.fd, c, Mode::from_raw_mode(mode)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(FsError::io("create", &path, e)),
            }
            let fd =
                open_no_follow(cur.fd.as_fd(), c, DIR_FLAGS, Mode::empty()).map_err(
                    |e| match e {
                        Errno::NOTDIR => {
                            FsError::new("create", &path, FsErrorKind::WrongType("a directory"))
                        }
                        e => FsError::io("create", &path, e),
                    },
                )?;
            cur = Dir { fd, path };
        }
        Ok(cur)
    }

    /// Write `data` as the whole content of `rel`, with `mode`: written under a new
    /// temporary name (`O_EXCL`) beside it and renamed over it, so that a reader never
    /// sees half of it and a symlink planted at `rel` is replaced, not written through.
    /// The temporary file is removed on every error.
    pub fn write(&self, rel: &Path, data: &[u8], mode: u32) -> Result<(), FsError> {
        self.write_with(rel, mode, RenameFlags::empty(), &mut |f| f.write_all(data))
    }

    /// [`Dir::write`] that fails when anything is already at `rel`.
    pub fn write_new(&self, rel: &Path, data: &[u8], mode: u32) -> Result<(), FsError> {
        self.write_with(rel, mode, RenameFlags::NOREPLACE, &mut |f| {
            f.write_all(data)
        })
    }

    /// [`Dir::write`] with the content produced by `fill` into the temporary file.
    pub fn write_from(
        &self,
        rel: &Path,
        mode: u32,
        fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
    ) -> Result<(), FsError> {
        self.write_with(rel, mode, RenameFlags::empty(), fill)
    }

    fn write_with(
        &self,
        rel: &Path,
        mode: u32,
        rename: RenameFlags,
        fill: &mut dyn FnMut(&mut File) -> std::io::Result<()>,
    ) -> Result<(), FsError> {
        let target = self.path.join(rel);
        let (parent, name) = self.parent_of("write", rel)?;
        let pfd = parent.fd();
        let (tmp, fd) = create_temp(pfd, name).map_err(|e| FsError::io("write", &target, e))?;
        let mut file = File::from(fd);
        let written = fill(&mut file)
            .and_then(|()| file.flush())
            .map_err(|e| FsError::std("write", &target, e))
            .and_then(|()| {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                    .map_err(|e| FsError::io("write", &target, e))
            })
            .and_then(|()| {
                rustix::fs::renameat_with(pfd, &tmp, pfd, name, rename)
                    .map_err(|e| FsError::io("write", &target, e))
            });
        if written.is_err() {
            let _ = rustix::fs::unlinkat(pfd, &tmp, AtFlags::empty());
        }
        written
    }

    /// Create the new file `rel` (`O_EXCL`: nothing may be there, a symlink included)
    /// with `mode`, open for writing.
    pub fn create_new(&self, rel: &Path, mode: u32) -> Result<File, FsError> {
        let (parent, name) = self.parent_of("create", rel)?;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(parent.fd(), name, flags, Mode::from_raw_mode(mode))
            .map(File::from)
            .map_err(|e| FsError::io("create", &self.path.join(rel), e))
    }

    /// Open the regular file `rel` for appending, creating it with `mode` when missing.
    /// A symlink, a fifo or a device there is refused.
    pub fn open_append(&self, rel: &Path, mode: u32) -> Result<File, FsError> {
        self.open_regular(
            "open",
            rel,
            OFlags::RDWR | OFlags::APPEND | OFlags::CREATE,
            mode,
        )
    }

    /// Open the regular file `rel` for reading and writing, creating it with `mode`
    /// when missing (a lock file, a database). Never truncated.
    pub fn open_rw(&self, rel: &Path, mode: u32) -> Result<File, FsError> {
        self.open_regular("open", rel, OFlags::RDWR | OFlags::CREATE, mode)
    }

    /// Open the regular file `rel` for reading (no symlink on the way or at its end).
    pub fn open_read(&self, rel: &Path) -> Result<File, FsError> {
        self.open_regular("read", rel, OFlags::RDONLY, 0)
    }

    fn open_regular(
        &self,
        op: &'static str,
        rel: &Path,
        flags: OFlags,
        mode: u32,
    ) -> Result<File, FsError> {
        components(op, &self.path, rel)?;
        let path = self.path.join(rel);
        // Non-blocking, so that a fifo planted at the name cannot hang the open; cleared
        // once the file is known to be a regular one.
        let fd = self
            .resolve(rel, flags | OFlags::NONBLOCK, Mode::from_raw_mode(mode))
            .map_err(|e| FsError::io(op, &path, e))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| FsError::io(op, &path, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FsError::new(
                op,
                &path,
                FsErrorKind::WrongType("a regular file"),
            ));
        }
        let fl = rustix::fs::fcntl_getfl(&fd).map_err(|e| FsError::io(op, &path, e))?;
        rustix::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK)
            .map_err(|e| FsError::io(op, &path, e))?;
        Ok(File::from(fd))
    }

    /// The content of the regular file `rel`, refused when it holds more than `limit`
    /// bytes.
    pub fn read(&self, rel: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
        let f = self.open_read(rel)?;
        let mut out = Vec::new();
        f.take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| FsError::std("read", &self.path.join(rel), e))?;
        if out.len() as u64 > limit {
            return Err(FsError::new(
                "read",
                &self.path.join(rel),
                FsErrorKind::WrongType("small enough to read"),
            ));
        }
        Ok(out)
    }

    /// `lstat` of `rel` (a symlink is described, not followed; the walk to it follows
    /// none either).
    pub fn stat(&self, rel: &Path) -> Result<Stat, FsError> {
        let (parent, name) = self.parent_of("inspect", rel)?;
        rustix::fs::statat(parent.fd(), name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| FsError::io("inspect", &self.path.join(rel), e))
    }

    /// Whether anything (a symlink included) is at `rel`.
    pub fn exists(&self, rel: &Path) -> bool {
        self.stat(rel).is_ok()
    }

    /// The names in this directory (without `.` and `..`), in no particular order.
    pub fn names(&self) -> Result<Vec<OsString>, FsError> {
        let mut out = Vec::new();
        let rd =
            rustix::fs::Dir::read_from(&self.fd).map_err(|e| FsError::io("read", &self.path, e))?;
        for e in rd {
            let e = e.map_err(|e| FsError::io("read", &self.path, e))?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                out.push(OsStr::from_bytes(n).to_os_string());
            }
        }
        Ok(out)
    }

    /// Remove the file, symlink or empty directory `rel`. Nothing there is success.
    pub fn remove(&self, rel: &Path) -> Result<(), FsError> {
        let (parent, name) = self.parent_of("remove", rel)?;
        match rustix::fs::unlinkat(parent.fd(), name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(Errno::ISDIR) => {
                match rustix::fs::unlinkat(parent.fd(), name, AtFlags::REMOVEDIR) {
                    Ok(()) | Err(Errno::NOENT) => Ok(()),
                    Err(e) => Err(FsError::io("remove", &self.path.join(rel), e)),
                }
            }
            Err(e) => Err(FsError::io("remove", &self.path.join(rel), e)),
        }
    }

    /// Remove `rel` and everything in it without following any symlink, after giving
    /// the owner access to every directory in it (a `chmod 000` directory must not keep
    /// its contents around). Nothing there is success; a tree deeper than
    /// [`MAX_TREE_DEPTH`] is refused.
    pub fn remove_tree(&self, rel: &Path) -> Result<(), FsError> {
        let path = self.path.join(rel);
        let (parent, name) = self.parent_of("remove", rel)?;
        remove_at(parent.fd(), name, &path, 0)
    }

    /// Rename `from` (beneath this directory) to `to` beneath `to_dir`, replacing what
    /// is there (a symlink is replaced, never followed).
    pub fn rename(&self, from: &Path, to_dir: &Dir, to: &Path) -> Result<(), FsError> {
        self.rename_with(from, to_dir, to, RenameFlags::empty())
    }

    /// [`Dir::rename`] that fails when anything is at `to`.
    pub fn rename_noreplace(&self, from: &Path, to_dir: &Dir, to: &Path) -> Result<(), FsError> {
        self.rename_with(from, to_dir, to, RenameFlags::NOREPLACE)
    }

    /// Swap `from` (beneath this directory) and `to` beneath `to_dir` in one step
    /// (`RENAME_EXCHANGE`): both must exist; neither is followed if it is a symlink.
    pub fn rename_exchange(&self, from: &Path, to_dir: &Dir, to: &Path) -> Result<(), FsError> {
        self.rename_with(from, to_dir, to, RenameFlags::EXCHANGE)
    }

    /// Create a new directory with a unique name beginning with `prefix` (hidden when
    /// the prefix starts with a dot) beneath this one, with `mode`, and open it. Nothing
    /// that was already there is used: the name is created with `mkdirat`, which fails
    /// on anything (a planted symlink included), and another name is tried. The caller
    /// removes it ([`Dir::remove_tree`]) when done.
    pub fn create_unique_dir(&self, prefix: &str, mode: u32) -> Result<(PathBuf, Dir), FsError> {
        if prefix.contains('/') || prefix == ".." {
            return Err(FsError::new(
                "create",
                &self.path.join(prefix),
                FsErrorKind::Escapes,
            ));
        }
        let mut last = Errno::EXIST;
        for _ in 0..16 {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let name = PathBuf::from(format!("{prefix}{}-{n}-{nanos:08x}", std::process::id()));
            match rustix::fs::mkdirat(&self.fd, &name, Mode::from_raw_mode(mode)) {
                Ok(()) => {
                    let dir = self.open_dir_for("create", &name)?;
                    return Ok((name, dir));
                }
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => return Err(FsError::io("create", &self.path.join(&name), e)),
            }
        }
        Err(FsError::io("create", &self.path.join(prefix), last))
    }

    fn rename_with(
        &self,
        from: &Path,
        to_dir: &Dir,
        to: &Path,
        flags: RenameFlags,
    ) -> Result<(), FsError> {
        let (fp, fname) = self.parent_of("rename", from)?;
        let (tp, tname) = to_dir.parent_of("rename", to)?;
        rustix::fs::renameat_with(fp.fd(), fname, tp.fd(), tname, flags)
            .map_err(|e| FsError::io("rename", &self.path.join(from), e))
    }

    /// Make the symlink `rel` pointing at `target`. Fails if anything is there.
    pub fn symlink(&self, target: &Path, rel: &Path) -> Result<(), FsError> {
        let (parent, name) = self.parent_of("create", rel)?;
        rustix::fs::symlinkat(target, parent.fd(), name)
            .map_err(|e| FsError::io("create", &self.path.join(rel), e))
    }

    /// Set the mode of the file or directory `rel` (a symlink there is refused, never
    /// followed).
    pub fn set_mode(&self, rel: &Path, mode: u32) -> Result<(), FsError> {
        let (parent, name) = self.parent_of("change the mode of", rel)?;
        set_mode_at(parent.fd(), name, mode)
            .map_err(|e| FsError::io("change the mode of", &self.path.join(rel), e))
    }

    /// Set the mode of this directory itself.
    pub fn set_own_mode(&self, mode: u32) -> Result<(), FsError> {
        rustix::fs::fchmod(&self.fd, Mode::from_raw_mode(mode))
            .map_err(|e| FsError::io("change the mode of", &self.path, e))
    }

    /// `fstat` of this directory itself.
    pub fn own_stat(&self) -> Result<Stat, FsError> {
        rustix::fs::fstat(&self.fd).map_err(|e| FsError::io("inspect", &self.path, e))
    }
}

impl From<Dir> for OwnedFd {
    /// The descriptor, for code that walks a tree with `*at` calls of its own (reads,
    /// `fstat`); writes still go through a [`Dir`].
    fn from(d: Dir) -> OwnedFd {
        d.fd
    }
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A parent directory: this one, or one opened beneath it.
enum Parent<'a> {
    This(&'a Dir),
    Owned(Dir),
}

impl Parent<'_> {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Parent::This(d) => d.fd.as_fd(),
            Parent::Owned(d) => d.fd.as_fd(),
        }
    }
}

/// Open the directory at `path` (by path: the ambient authority of
/// [`Dir::open_ambient`]), reporting a symlink at its last component as `ELOOP` (with
/// `O_DIRECTORY` the kernel says `ENOTDIR`).
#[allow(clippy::disallowed_methods)] // the one path-based open of this crate; a directory, read-only
fn open_path_dir(path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    match rustix::fs::open(path, flags, Mode::empty()) {
        Err(Errno::NOTDIR)
            if flags.contains(OFlags::NOFOLLOW)
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            Err(Errno::LOOP)
        }
        other => other,
    }
}

/// `openat` with `O_NOFOLLOW`, reporting a symlink as `ELOOP` whatever the kernel says
/// (with `O_DIRECTORY` it says `ENOTDIR`).
fn open_no_follow(
    at: BorrowedFd<'_>,
    name: &OsStr,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(at, name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode) {
        Err(Errno::NOTDIR) => match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => Err(Errno::LOOP),
            _ => Err(Errno::NOTDIR),
        },
        other => other,
    }
}

/// Create a new temporary file beside `name` in `dir`.
fn create_temp(dir: BorrowedFd<'_>, name: &OsStr) -> Result<(OsString, OwnedFd), Errno> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut last = Errno::EXIST;
    for _ in 0..16 {
        let tmp = temp_name(name);
        match rustix::fs::openat(dir, &tmp, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => return Ok((tmp, fd)),
            Err(Errno::EXIST) => last = Errno::EXIST,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// Set the mode of `name` in the open directory `dir` without following a symlink
/// there (one is refused): for code that walks a tree by descriptors of its own and
/// must open up a directory a run locked (`chmod 000`) before it can descend.
pub fn set_mode_beneath(
    dir: BorrowedFd<'_>,
    shown: &Path,
    name: &OsStr,
    mode: u32,
) -> Result<(), FsError> {
    if name.is_empty() || name.as_bytes().contains(&b'/') || name == ".." || name == "." {
        return Err(FsError::new(
            "change the mode of",
            &shown.join(name),
            FsErrorKind::Escapes,
        ));
    }
    set_mode_at(dir, name, mode)
        .map_err(|e| FsError::io("change the mode of", &shown.join(name), e))
}

/// `chmod` of `name` in `dir` through a descriptor that refuses to be a symlink
/// (`fchmodat` would follow one): an `O_PATH` descriptor, changed through its
/// `/proc/self/fd` entry, which names that inode and nothing else.
#[allow(clippy::disallowed_methods)] // `chmod` of a magic link: names the inode opened here.
pub(crate) fn set_mode_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
        return Err(Errno::LOOP);
    }
    let magic = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::chmod(magic.as_str(), Mode::from_raw_mode(mode))
}

/// Remove `name` in `dir`, a tree included (see [`Dir::remove_tree`]).
fn remove_at(dir: BorrowedFd<'_>, name: &OsStr, path: &Path, depth: usize) -> Result<(), FsError> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return Ok(()),
        Err(Errno::ISDIR) => {}
        Err(e) => return Err(FsError::io("remove", path, e)),
    }
    if depth >= MAX_TREE_DEPTH {
        return Err(FsError::new(
            "remove",
            path,
            FsErrorKind::WrongType("a tree shallow enough to remove"),
        ));
    }
    let child = match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ACCESS) => {
            set_mode_at(dir, name, 0o700).map_err(|e| FsError::io("remove", path, e))?;
            rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())
                .map_err(|e| FsError::io("remove", path, e))?
        }
        Err(Errno::NOENT) => return Ok(()),
        Err(e) => return Err(FsError::io("remove", path, e)),
    };
    let st = rustix::fs::fstat(&child).map_err(|e| FsError::io("remove", path, e))?;
    if st.st_mode & 0o700 != 0o700 {
        rustix::fs::fchmod(&child, Mode::from_raw_mode(0o700))
            .map_err(|e| FsError::io("remove", path, e))?;
    }
    let sub = Dir {
        fd: child,
        path: path.to_path_buf(),
    };
    for n in sub.names()? {
        remove_at(sub.fd.as_fd(), &n, &path.join(&n), depth + 1)?;
    }
    drop(sub);
    match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(FsError::io("remove", path, e)),
    }
}
