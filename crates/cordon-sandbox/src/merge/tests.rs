#![allow(clippy::disallowed_methods)]
//! Merges of hand-made layers: whiteouts, opaque directories, host symlinks, modes,
//! copies across file systems, and git configuration checked by git.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

struct T {
    _t: tempfile::TempDir,
    layer: Layer,
}

fn setup(upper_in: Option<&Path>) -> T {
    let t = tempfile::tempdir().unwrap();
    let base = upper_in.unwrap_or(t.path());
    let up = tempfile::tempdir_in(base).unwrap().keep();
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    T {
        layer: Layer {
            root,
            upper: up,
            work: t.path().join("work"),
        },
        _t: t,
    }
}

fn whiteout(dir: &Path, name: &str) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        dir.join(name),
        FileType::CharacterDevice,
        Mode::empty(),
        0,
    )
    .unwrap();
}

#[test]
fn files_whiteouts_and_opaque_directories() {
    let t = setup(None);
    let (root, up) = (&t.layer.root, &t.layer.upper);
    std::fs::write(root.join("gone.txt"), "old").unwrap();
    std::fs::create_dir_all(root.join("dir/keep")).unwrap();
    std::fs::write(root.join("dir/old.txt"), "old").unwrap();
    std::fs::write(root.join("same.txt"), "old").unwrap();
    std::fs::write(up.join("same.txt"), "new").unwrap();
    std::fs::write(up.join("added.txt"), "added").unwrap();
    whiteout(up, "gone.txt");
    std::fs::create_dir(up.join("dir")).unwrap();
    rustix::fs::setxattr(
        up.join("dir"),
        "user.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    std::fs::write(up.join("dir/fresh.txt"), "fresh").unwrap();
    let m = merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("same.txt")).unwrap(),
        "new"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("added.txt")).unwrap(),
        "added"
    );
    assert!(!root.join("gone.txt").exists());
    // The run replaced `dir`: what it no longer had is gone.
    assert!(!root.join("dir/old.txt").exists());
    assert!(!root.join("dir/keep").exists());
    assert!(root.join("dir/fresh.txt").exists());
    assert!(m.refused.is_empty(), "{m:?}");
    assert_eq!(m.removed, 3);
}

#[test]
fn a_symlink_on_the_host_is_replaced_never_followed() {
    let t = setup(None);
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("f"), root.join("file-link")).unwrap();
    std::fs::create_dir(up.join("link")).unwrap();
    std::fs::write(up.join("link/planted"), "x").unwrap();
    std::fs::write(up.join("file-link"), "x").unwrap();
    merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
    assert!(root.join("link").symlink_metadata().unwrap().is_dir());
    assert!(root.join("file-link").symlink_metadata().unwrap().is_file());
}

#[test]
fn set_id_bits_are_dropped_and_modes_kept() {
    let t = setup(None);
    let up = &t.layer.upper;
    std::fs::write(up.join("tool"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(up.join("tool"), std::fs::Permissions::from_mode(0o6755)).unwrap();
    std::fs::write(up.join("open"), "x").unwrap();
    std::fs::set_permissions(up.join("open"), std::fs::Permissions::from_mode(0o666)).unwrap();
    std::fs::create_dir(up.join("ro")).unwrap();
    std::fs::write(up.join("ro/f"), "x").unwrap();
    std::fs::set_permissions(up.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    let mode = std::fs::metadata(t.layer.root.join("tool")).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o755);
    let mode = std::fs::metadata(t.layer.root.join("open")).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o664, "no write bit for every user");
    let mode = std::fs::metadata(t.layer.root.join("ro")).unwrap().mode() & 0o7777;
    assert_eq!(mode, 0o555);
    std::fs::set_permissions(
        t.layer.root.join("ro"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
}

#[test]
fn a_layer_on_another_file_system_is_copied() {
    // /dev/shm is a tmpfs; the root is on the temporary directory's file system.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        return;
    }
    let t = setup(Some(shm));
    let same_fs = std::fs::metadata(&t.layer.upper).unwrap().dev()
        == std::fs::metadata(&t.layer.root).unwrap().dev();
    std::fs::write(t.layer.upper.join("f"), "copied").unwrap();
    std::os::unix::fs::symlink("target", t.layer.upper.join("l")).unwrap();
    let m = merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert_eq!(
        std::fs::read_to_string(t.layer.root.join("f")).unwrap(),
        "copied"
    );
    assert_eq!(
        std::fs::read_link(t.layer.root.join("l")).unwrap(),
        Path::new("target")
    );
    if !same_fs {
        assert_eq!(m.copied_bytes, 6);
    }
    let _ = std::fs::remove_dir_all(&t.layer.upper);
}

#[test]
fn git_configuration_is_checked_by_git() {
    assert_eq!(
        git_config_refusal(b"[user]\n\temail = a@b\n[remote \"o\"]\n\turl = x\n"),
        None
    );
    let r = git_config_refusal(b"[core]\n\tfsmonitor = \"touch /x; false\"\n").unwrap();
    assert!(r.contains("core.fsmonitor"), "{r}");
    // Spellings git accepts: a key on the section line, odd case, a continuation.
    let r = git_config_refusal(b"[CORE] HooksPath = /x\n").unwrap();
    assert!(r.contains("hookspath"), "{r}");
    let r = git_config_refusal(b"[alias]\n\tx = \\\n!sh\n").unwrap();
    assert!(r.contains("alias.x"), "{r}");
    let r = git_config_refusal(b"not a config\n").unwrap();
    assert!(r.contains("not valid"), "{r}");
}

#[test]
fn an_allowlist_merges_only_the_named_paths_and_keeps_the_rest() {
    let t = setup(None);
    let (root, up) = (&t.layer.root, &t.layer.upper);
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(root.join("out/beside.txt"), "host").unwrap();
    std::fs::write(root.join("top.txt"), "host").unwrap();
    std::fs::set_permissions(root.join("out"), std::fs::Permissions::from_mode(0o755)).unwrap();
    // The run wrote its declared file, a sibling, a file elsewhere, and replaced the
    // directory on the way (opaque, other mode): only the declared file goes through.
    std::fs::create_dir(up.join("out")).unwrap();
    std::fs::write(up.join("out/a.txt"), "made").unwrap();
    std::fs::write(up.join("out/beside.txt"), "evil").unwrap();
    std::fs::write(up.join("out/new.txt"), "evil").unwrap();
    std::fs::write(up.join("top.txt"), "evil").unwrap();
    std::fs::set_permissions(up.join("out"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let _ = rustix::fs::setxattr(
        up.join("out"),
        "user.overlay.opaque",
        b"y",
        rustix::fs::XattrFlags::empty(),
    );
    let only = [root.join("out/a.txt")];
    let m = merge_layer_only(&t.layer, Path::new("/nonexistent"), &only).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("out/a.txt")).unwrap(),
        "made"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("out/beside.txt")).unwrap(),
        "host"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("top.txt")).unwrap(),
        "host"
    );
    assert!(!root.join("out/new.txt").exists());
    let mode = std::fs::metadata(root.join("out")).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o755, "a passage keeps the host's mode");
    let mut kept = m.kept.clone();
    kept.sort();
    assert_eq!(
        kept,
        [
            root.join("out/beside.txt"),
            root.join("out/new.txt"),
            root.join("top.txt")
        ]
    );
    // What was kept is still in the layer for a human.
    assert_eq!(
        std::fs::read_to_string(up.join("out/new.txt")).unwrap(),
        "evil"
    );
    assert!(!up.join("out/a.txt").exists());
    // A human who merges the rest later gets what was kept, and loses nothing merged.
    merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("out/a.txt")).unwrap(),
        "made"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("out/new.txt")).unwrap(),
        "evil"
    );
}
