//! `std::fs::canonicalize` for many paths that share their parents (the masks under
//! HOME, the system's secrets): each parent directory is resolved once, and a path whose
//! last component is no symlink costs one `lstat` more. Canonicalizing each path whole
//! walks every component with a `readlink` of its own (glibc's `realpath`): about 500
//! system calls per `cordon exec` for the same few directories.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Canonical paths, with the canonical form of each parent directory remembered.
#[derive(Default)]
pub(crate) struct Canonical {
    parents: HashMap<PathBuf, Option<PathBuf>>,
}

impl Canonical {
    /// `std::fs::canonicalize(p)`: `p` with every symlink resolved, or an error when a
    /// component is missing (or not searchable).
    pub(crate) fn resolve(&mut self, p: &Path) -> std::io::Result<PathBuf> {
        let bytes = p.as_os_str().as_bytes();
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return std::fs::canonicalize(p);
        };
        // A trailing `/` or `/.` makes the last component's `lstat` follow a symlink (and
        // `file_name` skips the `.`): whole.
        if parent.as_os_str().is_empty() || bytes.ends_with(b"/") || bytes.ends_with(b"/.") {
            return std::fs::canonicalize(p);
        }
        // What the last component is, through the parent as named: a symlink is resolved
        // whole, a missing name is the error canonicalize gives.
        if std::fs::symlink_metadata(p)?.file_type().is_symlink() {
            return std::fs::canonicalize(p);
        }
        let dir = match self.parents.get(parent) {
            Some(known) => known.clone(),
            None => {
                let found = std::fs::canonicalize(parent).ok();
                self.parents.insert(parent.to_path_buf(), found.clone());
                found
            }
        };
        match dir {
            Some(dir) => Ok(dir.join(name)),
            // The name exists but its directory could not be resolved now: as a whole.
            None => std::fs::canonicalize(p),
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolves_as_canonicalize_does() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path();
        std::fs::create_dir_all(top.join("real/sub")).unwrap();
        std::fs::write(top.join("real/file"), b"x").unwrap();
        std::fs::write(top.join("real/sub/f"), b"x").unwrap();
        symlink(top.join("real"), top.join("link")).unwrap();
        symlink("sub/f", top.join("real/rel")).unwrap();
        symlink(top.join("real/file"), top.join("real/abs")).unwrap();
        symlink("missing", top.join("real/dangling")).unwrap();
        symlink("../real", top.join("real/sub/up")).unwrap();
        let names = [
            "real",
            "real/file",
            "real/sub/f",
            "link",
            "link/file",
            "link/sub/f",
            "real/rel",
            "link/rel",
            "real/abs",
            "link/abs",
            "real/dangling",
            "link/dangling",
            "missing",
            "real/missing",
            "link/missing/x",
            "real/file/x",
            "link/sub/up/file",
            "link/sub/.",
            "link/sub/",
            "link/sub/../file",
            "link/sub/up/",
            "real/./file",
            "link/sub/up/.",
        ];
        let mut c = Canonical::default();
        // Twice: the second time from what the first remembered.
        for _ in 0..2 {
            for n in names {
                let p = top.join(n);
                let want = std::fs::canonicalize(&p).ok();
                assert_eq!(c.resolve(&p).ok(), want, "{n}");
            }
        }
    }
}
