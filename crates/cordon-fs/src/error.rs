//! The one error of this crate: what was attempted, on which path, and why it failed.

use std::fmt;
use std::path::{Path, PathBuf};

/// A host file operation that failed (or was refused).
#[derive(Debug)]
pub struct FsError {
    op: &'static str,
    path: PathBuf,
    kind: FsErrorKind,
}

/// Why an operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FsErrorKind {
    /// A symlink stood where a file or directory was expected; it was not followed.
    Symlink,
    /// The name would leave the directory it is resolved in (`..`, an absolute path).
    Escapes,
    /// Something other than what the operation needs is there (a file where a
    /// directory is needed, a fifo where a regular file is needed).
    WrongType(&'static str),
    /// The file or directory belongs to another user, or others may write it.
    NotPrivate(&'static str),
    /// The system call failed.
    Io(std::io::Error),
}

impl FsError {
    pub(crate) fn new(op: &'static str, path: &Path, kind: FsErrorKind) -> FsError {
        FsError {
            op,
            path: path.to_path_buf(),
            kind,
        }
    }

    pub(crate) fn io(op: &'static str, path: &Path, e: rustix::io::Errno) -> FsError {
        let kind = match e {
            // O_NOFOLLOW on a link, or RESOLVE_NO_SYMLINKS meeting one on the way.
            rustix::io::Errno::LOOP => FsErrorKind::Symlink,
            // RESOLVE_BENEATH: the walk would leave the directory.
            rustix::io::Errno::XDEV => FsErrorKind::Escapes,
            e => FsErrorKind::Io(std::io::Error::from(e)),
        };
        FsError::new(op, path, kind)
    }

    /// An I/O error met by a caller on its way to an operation, in this crate's terms.
    pub fn from_io(op: &'static str, path: &Path, e: std::io::Error) -> FsError {
        FsError::std(op, path, e)
    }

    pub(crate) fn std(op: &'static str, path: &Path, e: std::io::Error) -> FsError {
        match e.raw_os_error() {
            Some(n) => FsError::io(op, path, rustix::io::Errno::from_raw_os_error(n)),
            None => FsError::new(op, path, FsErrorKind::Io(e)),
        }
    }

    /// The same error, reported at `path` (the path the caller knows the file by).
    pub fn at(mut self, path: &Path) -> FsError {
        self.path = path.to_path_buf();
        self
    }

    /// What was attempted (`create`, `write`, `remove`, …).
    pub fn op(&self) -> &'static str {
        self.op
    }

    /// The path it was attempted on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why it failed.
    pub fn kind(&self) -> &FsErrorKind {
        &self.kind
    }

    /// The system call's error number, when one failed.
    pub fn raw_os_error(&self) -> Option<i32> {
        match &self.kind {
            FsErrorKind::Io(e) => e.raw_os_error(),
            FsErrorKind::Symlink => Some(rustix::io::Errno::LOOP.raw_os_error()),
            _ => None,
        }
    }

    /// Nothing was there.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.kind, FsErrorKind::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

impl fmt::Display for FsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot {} {}: ", self.op, self.path.display())?;
        match &self.kind {
            FsErrorKind::Symlink => f.write_str(
                "a symbolic link is in the way, and cordon does not write through links; remove it or choose another path",
            ),
            FsErrorKind::Escapes => f.write_str("the path leaves the directory it must stay in"),
            FsErrorKind::WrongType(what) => write!(f, "it is not {what}"),
            FsErrorKind::NotPrivate(why) => f.write_str(why),
            FsErrorKind::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FsErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<FsError> for std::io::Error {
    fn from(e: FsError) -> std::io::Error {
        let kind = match &e.kind {
            FsErrorKind::Io(io) => io.kind(),
            FsErrorKind::Symlink | FsErrorKind::Escapes | FsErrorKind::NotPrivate(_) => {
                std::io::ErrorKind::PermissionDenied
            }
            FsErrorKind::WrongType(_) => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, e)
    }
}
