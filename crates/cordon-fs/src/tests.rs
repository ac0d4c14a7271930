//! Attacks on every operation: links planted at names and on the way, renamed parents,
//! fifos, `..`, unreadable directories, failures part way.

use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::Ordering;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Both ways of walking: the kernel's `openat2` and the one-component walk.
fn both(f: impl Fn()) {
    dir::FORCE_WALK.store(false, Ordering::Relaxed);
    f();
    dir::FORCE_WALK.store(true, Ordering::Relaxed);
    f();
    dir::FORCE_WALK.store(false, Ordering::Relaxed);
}

#[test]
fn a_write_replaces_a_planted_symlink_and_never_writes_through_it() {
    let t = tmp();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::os::unix::fs::symlink(&victim, ws.join("report.json")).unwrap();
    write_at(&ws.join("report.json"), b"{}\n", 0o644).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(ws.join("report.json")).unwrap();
    assert!(meta.is_file(), "the link itself was replaced");
    assert_eq!(meta.mode() & 0o777, 0o644);
    assert_eq!(std::fs::read(ws.join("report.json")).unwrap(), b"{}\n");
}

#[test]
fn a_symlink_on_the_way_is_refused_not_followed() {
    both(|| {
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
        let d = Dir::open_ambient(&ws).unwrap();
        for attempt in [
            d.write(Path::new("out/f"), b"x", 0o600).err(),
            d.create_dir_all(Path::new("out/sub"), 0o700).err(),
            d.open_append(Path::new("out/log"), 0o600).err(),
            d.open_dir(Path::new("out")).err(),
            d.create_new(Path::new("out/n"), 0o600).err(),
        ] {
            let e = attempt.expect("refused");
            assert!(matches!(e.kind(), FsErrorKind::Symlink), "{e}");
        }
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    });
}

#[test]
fn names_that_leave_the_directory_are_refused() {
    let t = tmp();
    let d = Dir::open_ambient(t.path()).unwrap();
    for rel in ["../x", "a/../../x", "/etc/passwd"] {
        let e = d.write(Path::new(rel), b"x", 0o600).unwrap_err();
        assert!(matches!(e.kind(), FsErrorKind::Escapes), "{rel}: {e}");
    }
}

#[test]
fn an_output_file_anchored_before_a_rename_writes_where_it_was_anchored() {
    let t = tmp();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    let victim = t.path().join("elsewhere");
    std::fs::create_dir(&victim).unwrap();
    let out = OutputFile::prepare(&ws.join("out/report.json")).unwrap();
    // What a run does meanwhile: the directory renamed, a link in its place.
    std::fs::rename(ws.join("out"), ws.join("moved")).unwrap();
    std::os::unix::fs::symlink(&victim, ws.join("out")).unwrap();
    out.write(b"r", 0o600).unwrap();
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    assert_eq!(std::fs::read(ws.join("moved/report.json")).unwrap(), b"r");
}

#[test]
fn a_failed_write_leaves_no_temporary_file_and_the_old_content() {
    let t = tmp();
    let d = Dir::open_ambient(t.path()).unwrap();
    d.write(Path::new("f"), b"old", 0o600).unwrap();
    let e = d
        .write_from(Path::new("f"), 0o600, &mut |f| {
            use std::io::Write;
            f.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
    let names: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f"]);
    assert_eq!(std::fs::read(t.path().join("f")).unwrap(), b"old");
}

#[test]
fn write_new_does_not_replace() {
    let t = tmp();
    let d = Dir::open_ambient(t.path()).unwrap();
    d.write_new(Path::new("f"), b"1", 0o600).unwrap();
    assert!(d.write_new(Path::new("f"), b"2", 0o600).is_err());
    assert_eq!(std::fs::read(t.path().join("f")).unwrap(), b"1");
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 1);
}

#[test]
fn appends_and_reads_refuse_links_and_fifos_without_hanging() {
    let t = tmp();
    let d = Dir::open_ambient(t.path()).unwrap();
    rustix::fs::mkfifoat(&d, "fifo", rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", t.path().join("link")).unwrap();
    for rel in ["fifo", "link"] {
        assert!(d.open_append(Path::new(rel), 0o600).is_err(), "{rel}");
        assert!(d.open_read(Path::new(rel)).is_err(), "{rel}");
        assert!(d.open_rw(Path::new(rel), 0o600).is_err(), "{rel}");
    }
    let mut f = d.open_append(Path::new("log"), 0o600).unwrap();
    use std::io::Write;
    f.write_all(b"a\n").unwrap();
    assert_eq!(d.read(Path::new("log"), 10).unwrap(), b"a\n");
    assert!(d.read(Path::new("log"), 1).is_err(), "over the limit");
}

#[test]
fn remove_tree_gets_through_locked_directories_and_never_follows_links() {
    both(|| {
        let t = tmp();
        let outside = t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "k").unwrap();
        let tree = t.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("a/link")).unwrap();
        std::fs::set_permissions(tree.join("a/b"), std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(tree.join("a"), std::fs::Permissions::from_mode(0o000)).unwrap();
        remove_tree_at(&tree).unwrap();
        assert!(!tree.exists());
        assert!(outside.join("keep").exists());
        remove_tree_at(&tree).unwrap();
    });
}

#[test]
fn set_mode_refuses_a_symlink() {
    let t = tmp();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "v").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&victim, t.path().join("l")).unwrap();
    let d = Dir::open_ambient(t.path()).unwrap();
    assert!(d.set_mode(Path::new("l"), 0o777).is_err());
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o600);
    d.set_mode(Path::new("victim"), 0o640).unwrap();
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o640);
}

#[test]
fn a_private_directory_is_made_and_checked() {
    let t = tmp();
    let p = t.path().join("a/b/state");
    let d = Dir::private_ambient(&p).unwrap();
    assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o700);
    drop(d);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(Dir::private_ambient(&p).is_err(), "others may write it");
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    assert!(
        Dir::open_ambient(&link).is_err(),
        "a link as the last component"
    );
}

#[test]
fn the_opened_directory_stays_the_same_after_its_path_is_replaced() {
    let t = tmp();
    let a = t.path().join("a");
    std::fs::create_dir(&a).unwrap();
    let d = Dir::open_ambient(&a).unwrap();
    std::fs::rename(&a, t.path().join("b")).unwrap();
    std::fs::create_dir(&a).unwrap();
    d.write(Path::new("f"), b"1", 0o600).unwrap();
    assert!(t.path().join("b/f").exists());
    assert!(!a.join("f").exists());
}

#[test]
fn an_output_file_filled_later_replaces_a_planted_link_and_ignores_a_renamed_parent() {
    let t = tmp();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let victim_dir = t.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    let out = OutputFile::prepare(&ws.join("out/snap")).unwrap();
    std::os::unix::fs::symlink(&victim, ws.join("out/snap")).unwrap();
    std::fs::rename(ws.join("out"), ws.join("moved")).unwrap();
    std::os::unix::fs::symlink(&victim_dir, ws.join("out")).unwrap();
    out.write_from(0o600, &mut |f| {
        use std::io::Write;
        f.write_all(b"snapshot")
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
    assert_eq!(std::fs::read(ws.join("moved/snap")).unwrap(), b"snapshot");
    // A failed fill leaves the old file and nothing else.
    assert!(
        out.write_from(0o600, &mut |_| Err(std::io::Error::other("no")))
            .is_err()
    );
    assert_eq!(std::fs::read_dir(ws.join("moved")).unwrap().count(), 1);
}

#[test]
fn rename_exchange_swaps_a_planted_link_itself_never_its_target() {
    let t = tmp();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep"), "k").unwrap();
    let into = t.path().join("into");
    std::fs::create_dir_all(into.join("stage/pkg")).unwrap();
    std::fs::write(into.join("stage/pkg/new"), "n").unwrap();
    std::os::unix::fs::symlink(&victim, into.join("skill")).unwrap();
    let d = Dir::open_ambient(&into).unwrap();
    d.rename_exchange(Path::new("stage/pkg"), &d, Path::new("skill"))
        .unwrap();
    assert!(
        std::fs::symlink_metadata(into.join("skill"))
            .unwrap()
            .is_dir()
    );
    assert!(
        std::fs::symlink_metadata(into.join("stage/pkg"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
    // A link on the way to either side is refused.
    std::os::unix::fs::symlink(&victim, into.join("via")).unwrap();
    let e = d
        .rename_exchange(Path::new("skill"), &d, Path::new("via/x"))
        .unwrap_err();
    assert!(matches!(e.kind(), FsErrorKind::Symlink), "{e}");
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
}

#[test]
fn a_unique_directory_is_new_and_never_a_planted_one() {
    let t = tmp();
    let d = Dir::open_ambient(t.path()).unwrap();
    let (a, da) = d.create_unique_dir(".stage-", 0o700).unwrap();
    let (b, _) = d.create_unique_dir(".stage-", 0o700).unwrap();
    assert_ne!(a, b);
    da.write(Path::new("f"), b"x", 0o600).unwrap();
    assert!(t.path().join(&a).join("f").exists());
    assert_eq!(
        std::fs::metadata(t.path().join(&a)).unwrap().mode() & 0o777,
        0o700
    );
    assert!(d.create_unique_dir("a/b", 0o700).is_err());
    d.remove_tree(&a).unwrap();
    assert!(!t.path().join(&a).exists());
}

#[test]
fn set_mode_beneath_refuses_a_link_and_a_path() {
    let t = tmp();
    let victim = t.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o500)).unwrap();
    std::os::unix::fs::symlink(&victim, t.path().join("l")).unwrap();
    let d = Dir::open_ambient(t.path()).unwrap();
    use rustix::fd::AsFd;
    let at = |n: &str| set_mode_beneath(d.as_fd(), t.path(), std::ffi::OsStr::new(n), 0o700);
    assert!(at("l").is_err());
    assert!(at("../x").is_err());
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o500);
    at("victim").unwrap();
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o700);
}

#[test]
fn create_ambient_takes_an_existing_ancestor_as_it_is_but_never_a_link_at_the_path() {
    let t = tmp();
    let real = t.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, t.path().join("home")).unwrap();
    // `home` is a link the user made; what is created beneath it is created for real.
    let d = Dir::create_ambient(&t.path().join("home/a/b"), 0o700).unwrap();
    d.write(Path::new("f"), b"x", 0o600).unwrap();
    assert!(real.join("a/b/f").is_file());
    // A link at the path itself is refused, whether its target exists or not.
    std::os::unix::fs::symlink(&real, t.path().join("state")).unwrap();
    let e = Dir::create_ambient(&t.path().join("state"), 0o700).unwrap_err();
    assert!(matches!(e.kind(), FsErrorKind::Symlink), "{e}");
    std::os::unix::fs::symlink(t.path().join("nowhere"), t.path().join("dangling")).unwrap();
    assert!(Dir::create_ambient(&t.path().join("dangling"), 0o700).is_err());
    assert!(!t.path().join("nowhere").exists());
}
