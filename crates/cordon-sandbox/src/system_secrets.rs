//! The system secrets (`/etc/shadow`, TLS and SSH host keys…): where they are, for the
//! full tier's plan to mask; and for the fallback tier, where no mount hides them, which
//! of them this user could read and how to split Landlock's rules so that none covers
//! one (computed in the helper, with the command's own permissions).
//!
//! It only computes paths: it must never mask or grant anything itself (`plan.rs`, the
//! helper's `fs_rules` and `landlock.rs` do), and never open what a secret holds: it
//! only tests access to it and lists the directories around it.

use cordon_policy::guards;
use std::path::{Path, PathBuf};

/// The policy's system secrets ([`guards::SENSITIVE_SYSTEM_PATHS`]) and the SSH host
/// keys present in [`guards::SSH_HOST_KEY_DIR`].
pub(crate) fn system_secret_paths() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = guards::SENSITIVE_SYSTEM_PATHS
        .iter()
        .map(PathBuf::from)
        .collect();
    if let Ok(dir) = std::fs::read_dir(guards::SSH_HOST_KEY_DIR) {
        out.extend(
            dir.flatten()
                .filter(|e| guards::is_ssh_host_key(&e.file_name()))
                .map(|e| e.path()),
        );
    }
    out
}

/// The system secrets this user could read without a mount in the way (the fallback
/// tier has no user namespace, so this user's permissions are exactly the command's):
/// a file it may read, or a directory it may search (keys are read by name through a
/// directory a group member cannot list). Canonical paths.
pub(crate) fn readable_system_secrets() -> Vec<PathBuf> {
    use nix::unistd::{AccessFlags, faccessat};
    let can = |p: &Path, how: AccessFlags| {
        faccessat(
            nix::fcntl::AT_FDCWD,
            p,
            how,
            nix::fcntl::AtFlags::AT_EACCESS,
        )
        .is_ok()
    };
    system_secret_paths()
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(&p).ok())
        .filter(|p| can(p, AccessFlags::R_OK) || (p.is_dir() && can(p, AccessFlags::X_OK)))
        .collect()
}

/// Split `paths` (to be granted beneath) so that no rule covers a `secret` (canonical
/// paths): a path that holds a secret becomes list-only, and its entries other than the
/// secret are granted one by one (recursively). A given path is resolved first, since
/// opening it for a rule follows symlinks: one that leads to a secret, or to a directory
/// holding one, is dropped or split like the secret's own path. An *entry* that is a
/// symlink gets no rule at all: under the single rule it replaces, its target was
/// readable only if another rule covered it, and that stays so (Landlock checks where a
/// path really is). Returns (granted, list-only).
pub(crate) fn without_secrets(
    paths: Vec<PathBuf>,
    secrets: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut granted = Vec::new();
    let mut list = Vec::new();
    // (path, whether it is an entry of a split directory)
    let mut todo: Vec<(PathBuf, bool)> = paths.into_iter().map(|p| (p, false)).collect();
    while let Some((p, entry)) = todo.pop() {
        if entry && std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        // What the rule would really cover; a path that does not resolve grants nothing.
        let Ok(real) = std::fs::canonicalize(&p) else {
            continue;
        };
        if secrets.iter().any(|s| real.starts_with(s)) {
            continue;
        }
        if !secrets.iter().any(|s| s.starts_with(&real)) {
            granted.push(real);
            continue;
        }
        if list.contains(&real) {
            continue;
        }
        // A secret lies beneath: list this directory, grant its entries one by one.
        if let Ok(rd) = std::fs::read_dir(&real) {
            todo.extend(rd.flatten().map(|e| (e.path(), true)));
        }
        list.push(real);
    }
    granted.sort();
    granted.dedup();
    list.sort();
    (granted, list)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn fallback_reads_stop_short_of_system_secrets() {
        let t = tempfile::tempdir().unwrap();
        let t = t.path().canonicalize().unwrap();
        let etc = t.join("etc");
        fs::create_dir_all(etc.join("ssl/private")).unwrap();
        fs::create_dir_all(etc.join("ssl/certs")).unwrap();
        fs::write(etc.join("shadow"), "x").unwrap();
        fs::write(etc.join("passwd"), "x").unwrap();
        // Entries that lead to a secret, or to a directory holding one.
        std::os::unix::fs::symlink("ssl", etc.join("zz")).unwrap();
        std::os::unix::fs::symlink("shadow", etc.join("shadow.link")).unwrap();
        let usr = t.join("usr");
        fs::create_dir_all(&usr).unwrap();
        // A granted path that is itself a symlink to the directory holding the secrets.
        let alias = t.join("alias");
        std::os::unix::fs::symlink(&etc, &alias).unwrap();
        let secrets = [etc.join("shadow"), etc.join("ssl/private")];
        // An entry leading out of the split directory, into a hidden one.
        let hidden = t.join("root");
        fs::create_dir_all(&hidden).unwrap();
        std::os::unix::fs::symlink(&hidden, etc.join("out")).unwrap();
        let (read, list) = without_secrets(vec![etc.clone(), usr.clone(), alias], &secrets);
        assert_eq!(list, vec![etc.clone(), etc.join("ssl")]);
        assert_eq!(read, vec![etc.join("passwd"), etc.join("ssl/certs"), usr]);
        assert!(
            !read
                .iter()
                .any(|r| secrets.iter().any(|s| s.starts_with(r) || r.starts_with(s)))
        );
    }
}
