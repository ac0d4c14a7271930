//! cordon-fs: cordon's own file operations on the host, at paths a sandbox could have
//! touched.
//!
//! A contained run may leave symlinks, renamed directories, fifos and hard links
//! anywhere it could write, and cordon itself writes on the host after a run: the
//! report, the merge of the run's changes, change sets, slots, caches, copies of its own
//! binary. A write by path string follows whatever the run left there. This crate is
//! the one place where cordon creates, replaces, appends to, renames or removes a host
//! file, and every operation it offers is:
//!
//! - **directory-relative**: a [`Dir`] is an open descriptor, and names are resolved
//!   beneath it, refusing every symlink on the way (`openat2(RESOLVE_BENEATH |
//!   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, or one component at a time with
//!   `O_NOFOLLOW` where the kernel has no `openat2`);
//! - **no-follow**: a symlink at the name of a directory is an error, at the name of a
//!   file being written it is replaced, never written through;
//! - **create-exclusive then rename**: new content goes to a temporary name created with
//!   `O_EXCL` beside the target and is renamed over it, and the temporary file is
//!   removed on every error (a full disk included);
//! - **anchored early** where the path is the user's ([`OutputFile`]): the directory is
//!   opened before the run, so renaming it or planting a link in its place afterwards
//!   moves nothing cordon writes.
//!
//! The rule holds by construction: `clippy.toml` lists `std::fs`'s path-based writers
//! (and rustix's) as disallowed methods, so any other module that writes a host file by
//! path fails `cargo clippy -D warnings`. Code that writes somewhere no run can reach
//! (the kernel's cgroup and `/proc` files, the sandbox's own tmpfs) says so in an
//! `#[allow(clippy::disallowed_methods)]` with its reason.
//!
//! What this crate must never do: follow a symlink it did not resolve itself, or leave a
//! temporary file behind.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod dir;
mod error;
mod read;
mod target;

pub use dir::{Dir, MAX_TREE_DEPTH, set_mode_beneath};
pub use error::{FsError, FsErrorKind};
pub use read::{open_regular, read_opened, read_regular, read_regular_text};
pub use target::OutputFile;

/// Write `data` as the whole file at `path` with `mode`: its directory opened as it is
/// now, the content written under a temporary name and renamed over the file's name (a
/// symlink at `path` is replaced, never followed). For a path that a run could change
/// before cordon writes it, prepare an [`OutputFile`] before the run instead.
pub fn write_at(path: &std::path::Path, data: &[u8], mode: u32) -> Result<(), FsError> {
    OutputFile::prepare(path)?.write(data, mode)
}

/// Remove the file or the whole tree at `path` without following any symlink in it;
/// its parent is opened as it is now. Nothing there is success.
pub fn remove_tree_at(path: &std::path::Path) -> Result<(), FsError> {
    let Some(name) = path.file_name() else {
        return Err(FsError::new(
            "remove",
            path,
            FsErrorKind::WrongType("a removable path"),
        ));
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match Dir::open_ambient(parent) {
        Ok(d) => d.remove_tree(std::path::Path::new(name)),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests;
