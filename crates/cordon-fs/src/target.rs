//! [`OutputFile`]: a file cordon writes at a path the user chose (`--report FILE`,
//! `--to FILE`), anchored before anything else can touch the path.

use crate::dir::Dir;
use crate::error::{FsError, FsErrorKind};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A file to be written later at a path chosen now. [`OutputFile::prepare`] opens the
/// directory that will hold it *now* (before a run that could rename or replace parts
/// of the path); [`OutputFile::write`] later writes into that same directory, under a
/// new temporary name renamed over the file's name, so a symlink or a renamed parent
/// left meanwhile does not send the content anywhere else.
#[derive(Debug)]
pub struct OutputFile {
    dir: Dir,
    name: OsString,
    path: PathBuf,
}

impl OutputFile {
    /// Anchor `path`: its directory must exist; its name must be a plain file name.
    pub fn prepare(path: &Path) -> Result<OutputFile, FsError> {
        let Some(name) = path.file_name() else {
            return Err(FsError::new(
                "write",
                path,
                FsErrorKind::WrongType("a file name"),
            ));
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = Dir::open_ambient(parent)?;
        Ok(OutputFile {
            dir,
            name: name.to_os_string(),
            path: path.to_path_buf(),
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The anchored directory the file is written in.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Write the whole file with `mode`, its content produced by `fill` into the
    /// temporary file (see [`Dir::write_from`]); nothing is left behind if `fill` fails.
    pub fn write_from(
        &self,
        mode: u32,
        fill: &mut dyn FnMut(&mut std::fs::File) -> std::io::Result<()>,
    ) -> Result<(), FsError> {
        self.dir
            .write_from(Path::new(&self.name), mode, fill)
            .map_err(|e| e.at(&self.path))
    }

    /// Write `data` as the whole file, with `mode` (see [`Dir::write`]).
    pub fn write(&self, data: &[u8], mode: u32) -> Result<(), FsError> {
        self.dir
            .write(Path::new(&self.name), data, mode)
            .map_err(|e| e.at(&self.path))
    }
}
