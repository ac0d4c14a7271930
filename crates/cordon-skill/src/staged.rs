//! What is done on the staged tree itself, relative to its directory descriptor: the
//! kernel's check that every installed link stays beneath the package, and the
//! manifest's creation, which never follows or replaces an entry of that name.

use crate::error::SkillError;
use crate::manifest::{MANIFEST_NAME, Manifest};
use std::path::Path;

/// Open every link of the staged tree with `openat2(RESOLVE_BENEATH)` from the tree's
/// root: the kernel refuses (`EXDEV`) any resolution that leaves it. Returns the links
/// that do not resolve beneath the root, with why.
#[cfg(test)]
pub(crate) fn recheck_links(root: &Path, links: &[(String, String)]) -> Vec<(String, String)> {
    if links.is_empty() {
        return Vec::new();
    }
    match cordon_fs::Dir::open_ambient(root) {
        Ok(dir) => recheck_links_in(&dir, links),
        Err(e) => links
            .iter()
            .map(|(p, _)| {
                (
                    p.clone(),
                    format!("the staged package cannot be opened ({e})"),
                )
            })
            .collect(),
    }
}

/// [`recheck_links`] beneath the staged tree's open directory `dir`.
pub(crate) fn recheck_links_in(
    dir: &cordon_fs::Dir,
    links: &[(String, String)],
) -> Vec<(String, String)> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let mut out = Vec::new();
    for (path, _) in links {
        let opened = rustix::fs::openat2(
            dir,
            path.as_str(),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        );
        match opened {
            Ok(_) => {}
            Err(rustix::io::Errno::XDEV) => {
                out.push((path.clone(), "the kernel resolves it outside the package".into()));
            }
            Err(rustix::io::Errno::NOSYS) => out.push((
                path.clone(),
                "this kernel has no openat2 (Linux 5.6 or later) to verify links; install without --allow-internal-symlinks".into(),
            )),
            Err(e) => out.push((path.clone(), format!("it does not resolve ({e})"))),
        }
    }
    out
}

/// Write `m` as the manifest of the staged package at `root`: created new
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`) relative to the package directory's descriptor, so
/// an entry already there (a link planted under that name) fails the install instead
/// of redirecting the write.
#[cfg(test)]
pub(crate) fn write_manifest(root: &Path, m: &Manifest) -> Result<(), SkillError> {
    let dir = cordon_fs::Dir::open_ambient(root).map_err(|e| {
        SkillError::io(
            format!("write {}", root.join(MANIFEST_NAME).display()),
            e.into(),
        )
    })?;
    write_manifest_in(&dir, m)
}

/// [`write_manifest`] in the staged package's open directory `dir`.
pub(crate) fn write_manifest_in(dir: &cordon_fs::Dir, m: &Manifest) -> Result<(), SkillError> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(m)
        .map_err(|e| SkillError::io("write the manifest", std::io::Error::other(e)))?;
    let what = || {
        format!(
            "write {}",
            dir.display_path(Path::new(MANIFEST_NAME)).display()
        )
    };
    let mut f = dir
        .create_new(Path::new(MANIFEST_NAME), 0o644)
        .map_err(|e| SkillError::io(what(), e.into()))?;
    f.write_all((text + "\n").as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| SkillError::io(what(), e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    #![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
    use super::*;
    use crate::manifest::SourceInfo;

    #[test]
    fn the_kernel_refuses_a_link_that_climbs_out_through_another() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("pkg");
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::create_dir_all(root.join("a/b/b")).unwrap();
        std::fs::create_dir_all(t.path().join("b")).unwrap();
        std::os::unix::fs::symlink("../..", root.join("a/b/c/up")).unwrap();
        std::os::unix::fs::symlink("a/b/c/up/../../b", root.join("x")).unwrap();
        std::os::unix::fs::symlink("a/b/b", root.join("fine")).unwrap();
        let links = vec![
            ("a/b/c/up".to_string(), "../..".to_string()),
            ("x".to_string(), "a/b/c/up/../../b".to_string()),
            ("fine".to_string(), "a/b/b".to_string()),
        ];
        let bad = recheck_links(&root, &links);
        let names: Vec<&str> = bad.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, ["x"], "{bad:?}");
    }

    #[test]
    fn the_manifest_is_never_written_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("pkg");
        std::fs::create_dir(&root).unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, root.join(MANIFEST_NAME)).unwrap();
        let m = Manifest {
            format: 1,
            name: "demo".into(),
            source: SourceInfo {
                location: "x".into(),
                revision: None,
            },
            files: Vec::new(),
            symlinks: Vec::new(),
        };
        assert!(write_manifest(&root, &m).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_file(root.join(MANIFEST_NAME)).unwrap();
        write_manifest(&root, &m).unwrap();
        assert!(
            std::fs::read_to_string(root.join(MANIFEST_NAME))
                .unwrap()
                .contains("demo")
        );
    }
}
