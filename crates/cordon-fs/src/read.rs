//! Reading a configuration or credential file: the one reader every config file,
//! `[store]` file (password, CA, client certificate and key) and harness settings file
//! goes through.
//!
//! Opening a FIFO for reading waits for a writer, for ever, before any deadline cordon
//! keeps; a device may do anything. So the file is opened with `O_NONBLOCK` (a FIFO then
//! opens at once, and nothing is read from it), its type checked with `fstat` on what was
//! opened (no window between a check and the open), and only a regular file is read.
//! Symlinks are followed (dotfile managers link config files); callers that must know
//! the file's owner, mode or link count read them from the metadata returned.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{FsError, FsErrorKind};

/// Open `path` for reading without blocking on what it is, and return it with its
/// metadata when it is a regular file; anything else (a FIFO, a socket, a device, a
/// directory) is [`FsErrorKind::WrongType`], never read.
pub fn open_regular(path: &Path) -> Result<(File, Metadata), FsError> {
    // Read-only, and the user's own path to their config: following its links is meant.
    #[allow(clippy::disallowed_methods)]
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| FsError::std("open", path, e))?;
    let meta = file.metadata().map_err(|e| FsError::std("stat", path, e))?;
    if !meta.is_file() {
        return Err(FsError::new(
            "open",
            path,
            FsErrorKind::WrongType("a regular file"),
        ));
    }
    Ok((file, meta))
}

/// The whole of the regular file at `path`, refused when it is larger than `limit`
/// bytes (read through [`open_regular`]).
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, FsError> {
    let (file, meta) = open_regular(path)?;
    read_opened(file, &meta, path, limit)
}

/// [`read_regular`] of a text file: refused, too, when it is not UTF-8.
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, FsError> {
    String::from_utf8(read_regular(path, limit)?)
        .map_err(|_| FsError::new("read", path, FsErrorKind::WrongType("UTF-8 text")))
}

/// The whole of `file` (opened by [`open_regular`] as `path`), refused when it is larger
/// than `limit` bytes.
pub fn read_opened(
    file: File,
    meta: &Metadata,
    path: &Path,
    limit: u64,
) -> Result<Vec<u8>, FsError> {
    let too_big = || FsError::new("read", path, FsErrorKind::WrongType("a file this small"));
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut buf = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| FsError::std("read", path, e))?;
    if buf.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::disallowed_methods)] // fixtures are built with std::fs
    use super::*;
    use std::time::{Duration, Instant};

    /// A FIFO, a directory and a socket are refused at once (a FIFO without a writer
    /// would block a plain open for ever); a regular file and a link to one are read.
    #[test]
    fn only_regular_files_are_read_and_nothing_blocks() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let sock = t.path().join("sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        let start = Instant::now();
        for p in [&fifo, &t.path().to_path_buf()] {
            let e = read_regular(p, 100).unwrap_err();
            assert!(matches!(e.kind(), FsErrorKind::WrongType(_)), "{e}");
        }
        assert!(read_regular(&sock, 100).is_err());
        assert!(start.elapsed() < Duration::from_secs(2));
        let file = t.path().join("f");
        std::fs::write(&file, "abc").unwrap();
        std::os::unix::fs::symlink(&file, t.path().join("link")).unwrap();
        assert_eq!(read_regular(&file, 3).unwrap(), b"abc");
        assert_eq!(read_regular(&t.path().join("link"), 3).unwrap(), b"abc");
        assert!(read_regular(&file, 2).is_err());
    }
}
