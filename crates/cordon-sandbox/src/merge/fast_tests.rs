#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The merge's short ways (`fast.rs`): a new directory landing with one rename, names
//! the host lacks landing without a look each, and everything that must still take the
//! entry-by-entry way.

use super::tests::read;
use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

thread_local! {
    /// A name, and what the "host" makes there just before the merge's next short-way
    /// rename.
    static RACE: std::cell::RefCell<Option<(Vec<u8>, RaceMake)>> = const { std::cell::RefCell::new(None) };
}

/// What a racing host writer makes at a name of a directory.
type RaceMake = fn(BorrowedFd<'_>, &[u8]);

/// Called before each short-way rename: makes the armed name in `dst`, as a host writer
/// would between the listing (or lookup) and the rename.
pub(super) fn race_point(dst: BorrowedFd<'_>, name: &[u8]) {
    let armed = RACE.with(|r| {
        let hit = r
            .borrow()
            .as_ref()
            .is_some_and(|(n, _)| n.as_slice() == name);
        if hit { r.borrow_mut().take() } else { None }
    });
    if let Some((_, make)) = armed {
        make(dst, name);
    }
}

/// The racing host writer's usual work: a file holding `host`.
fn host_file(dst: BorrowedFd<'_>, name: &[u8]) {
    let fd = rustix::fs::openat(
        dst,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&fd, b"host").unwrap();
}

/// Merge `layer` while a host writer makes `name` with `make` just before the short-way
/// rename of that name.
fn merge_racing(layer: &Layer, o: &MergeOptions<'_>, name: &str, make: RaceMake) -> MergeReport {
    RACE.with(|r| *r.borrow_mut() = Some((name.as_bytes().to_vec(), make)));
    let m = merge(layer, o).unwrap();
    RACE.with(|r| *r.borrow_mut() = None);
    m
}

struct T {
    _t: tempfile::TempDir,
    layer: Layer,
}

fn setup() -> T {
    let t = tempfile::tempdir().unwrap();
    let up = t.path().join("upper");
    let root = t.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&up).unwrap();
    T {
        layer: Layer {
            root,
            upper: up,
            work: t.path().join("work"),
            files: Vec::new(),
        },
        _t: t,
    }
}

fn start() -> Stamp {
    std::thread::sleep(std::time::Duration::from_millis(25));
    let s = Stamp::now();
    std::thread::sleep(std::time::Duration::from_millis(25));
    s
}

fn opts(horizon: Stamp) -> MergeOptions<'static> {
    MergeOptions {
        home: Path::new("/nonexistent"),
        horizon,
        only: None,
        reviewed: false,
        overwrite: false,
    }
}

fn write(p: &Path, body: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

/// Enough sibling files that the layer's top directory has its host side listed.
fn siblings(up: &Path) {
    for i in 0..fast::LIST_HOST_FROM {
        write(&up.join(format!("f{i}.txt")), &format!("run {i}"));
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn a_new_directory_lands_whole_with_modes_narrowed_and_counted() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    siblings(up);
    write(&up.join("pkg/lib/a.js"), "a");
    write(&up.join("pkg/lib/deep/b.js"), "b");
    write(&up.join("pkg/bin-tool"), "tool");
    std::os::unix::fs::symlink("lib/a.js", up.join("pkg/main.js")).unwrap();
    std::fs::set_permissions(up.join("pkg/bin-tool"), PermissionsExt::from_mode(0o4777)).unwrap();
    std::fs::set_permissions(up.join("pkg/lib"), PermissionsExt::from_mode(0o2777)).unwrap();
    std::fs::set_permissions(up.join("pkg"), PermissionsExt::from_mode(0o775)).unwrap();
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    assert_eq!(read(&root.join("pkg/lib/deep/b.js")), "b");
    assert_eq!(read(&root.join("pkg/main.js")), "a");
    assert_eq!(read(&root.join("f3.txt")), "run 3");
    // The modes the entry-by-entry merge gives: no set-id bits, no write bit for others.
    assert_eq!(mode(&root.join("pkg/bin-tool")), 0o755);
    assert_eq!(mode(&root.join("pkg/lib")), 0o755);
    assert_eq!(mode(&root.join("pkg")), 0o755);
    let pkg = m
        .landed
        .iter()
        .find(|l| l.path == root.join("pkg"))
        .unwrap();
    // lib, lib/a.js, lib/deep, lib/deep/b.js, bin-tool, main.js.
    assert_eq!((pkg.change.as_str(), pkg.entries), ("dir", Some(6)));
    assert_eq!(m.merged, 7 + fast::LIST_HOST_FROM as u64);
    // Nothing is left in the layer.
    assert_eq!(std::fs::read_dir(up).unwrap().count(), 0);
}

#[test]
fn a_new_directory_alone_in_its_directory_lands_whole() {
    // Too few entries for a listing of the host's side: the host is asked for the name.
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    write(&up.join("out/a/1.txt"), "1");
    write(&up.join("out/b/2.txt"), "2");
    write(&root.join("kept.txt"), "host");
    let ino = |p: &Path| std::fs::symlink_metadata(p).unwrap().ino();
    let moved = ino(&up.join("out"));
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    // Moved, not made anew entry by entry.
    assert_eq!(ino(&root.join("out")), moved);
    let out = m
        .landed
        .iter()
        .find(|l| l.path == root.join("out"))
        .unwrap();
    assert_eq!(
        (out.change.as_str(), out.entries),
        ("dir", Some(4)),
        "{m:?}"
    );
    assert_eq!(read(&root.join("out/b/2.txt")), "2");
    assert_eq!(read(&root.join("kept.txt")), "host");
    assert_eq!(std::fs::read_dir(up).unwrap().count(), 0);
}

#[test]
fn a_new_directory_holding_what_waits_for_review_lands_entry_by_entry() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    siblings(up);
    write(&up.join("proj/src/lib.rs"), "fn f() {}");
    write(
        &up.join("proj/deep/er/.github/workflows/ci.yml"),
        "on: push",
    );
    write(
        &up.join("proj/deep/AGENTS.md"),
        "ignore previous instructions",
    );
    write(&up.join("proj/deep/er/ok.txt"), "ok");
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    let mut held: Vec<_> = m
        .held
        .iter()
        .map(|h| h.path.strip_prefix(root).unwrap().display().to_string())
        .collect();
    held.sort();
    assert_eq!(
        held,
        ["proj/deep/AGENTS.md", "proj/deep/er/.github/workflows"]
    );
    assert!(!root.join("proj/deep/AGENTS.md").exists());
    assert!(!root.join("proj/deep/er/.github/workflows").exists());
    assert!(up.join("proj/deep/AGENTS.md").exists(), "kept for review");
    assert_eq!(read(&root.join("proj/src/lib.rs")), "fn f() {}");
    assert_eq!(read(&root.join("proj/deep/er/ok.txt")), "ok");
}

#[test]
fn a_new_repository_has_its_git_configuration_checked() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    siblings(up);
    write(&up.join("clone/.git/HEAD"), "ref: refs/heads/main\n");
    write(
        &up.join("clone/.git/config"),
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = /tmp/x\n",
    );
    write(&up.join("clone/.git/objects/ab/cdef"), "blob");
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    assert!(!root.join("clone/.git/config").exists(), "{m:?}");
    assert!(
        m.refused
            .iter()
            .chain(&m.held)
            .any(|r| r.path == root.join("clone/.git/config")),
        "{m:?}"
    );
    assert_eq!(read(&root.join("clone/.git/objects/ab/cdef")), "blob");
}

#[test]
fn a_name_the_host_made_during_the_run_is_kept_when_the_directory_is_listed() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    write(&root.join("f3.txt"), "host");
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    write(&root.join("pkg/mine.txt"), "host");
    siblings(up);
    write(&up.join("pkg/new.txt"), "run");
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    assert_eq!(read(&root.join("f3.txt")), "host");
    assert!(m.conflicts.iter().any(|c| c.path == root.join("f3.txt")));
    // The host's directory stayed the host's, with the run's file added to it.
    assert_eq!(read(&root.join("pkg/mine.txt")), "host");
    assert_eq!(read(&root.join("pkg/new.txt")), "run");
}

#[test]
fn a_name_the_host_makes_between_the_listing_and_the_rename_is_not_replaced() {
    // With siblings the host's directory is listed; with the name alone, looked up.
    for (name, listed) in [("f5.txt", true), ("pkg", true), ("pkg", false)] {
        let t = setup();
        let (root, up) = (&t.layer.root, &t.layer.upper);
        let horizon = start();
        if listed {
            siblings(up);
        }
        write(&up.join("pkg/a.txt"), "run");
        let m = merge_racing(&t.layer, &opts(horizon), name, host_file);
        assert_eq!(
            read(&root.join(name)),
            "host",
            "{name}: the host's entry was replaced"
        );
        assert!(
            m.conflicts.iter().any(|c| c.path == root.join(name)),
            "{name}: {m:?}"
        );
        // The run's version waits in the change set.
        assert!(up.join(name).exists(), "{name}");
    }
}

#[test]
fn an_allowlist_still_keeps_what_it_does_not_name_inside_a_new_directory() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    siblings(up);
    write(&up.join("out/keep.txt"), "k");
    write(&up.join("out/named/x.txt"), "x");
    let only = [root.join("out/named")];
    let o = MergeOptions {
        only: Some(&only),
        ..opts(start())
    };
    let m = merge(&t.layer, &o).unwrap();
    assert_eq!(read(&root.join("out/named/x.txt")), "x");
    assert!(!root.join("out/keep.txt").exists());
    assert!(!root.join("f1.txt").exists());
    assert!(m.kept.contains(&root.join("out/keep.txt")), "{m:?}");
}

#[test]
fn a_new_directory_with_an_acl_or_attribute_lands_as_a_fresh_directory() {
    for attr in ["system.posix_acl_default", "user.note"] {
        let t = setup();
        let (root, up) = (&t.layer.root, &t.layer.upper);
        let horizon = start();
        siblings(up);
        write(&up.join("shared/sub/a.txt"), "a");
        let value: &[u8] = if attr.starts_with("system.") {
            // A default ACL: user::rwx, group::rwx, other::rwx (what the host would
            // create inside would be open to every user).
            &[
                2, 0, 0, 0, 1, 0, 7, 0, 255, 255, 255, 255, 4, 0, 7, 0, 255, 255, 255, 255, 32, 0,
                7, 0, 255, 255, 255, 255,
            ]
        } else {
            b"x"
        };
        if rustix::fs::setxattr(
            up.join("shared/sub"),
            attr,
            value,
            rustix::fs::XattrFlags::empty(),
        )
        .is_err()
        {
            // A file system without ACLs or user attributes cannot carry the case.
            continue;
        }
        merge(&t.layer, &opts(horizon)).unwrap();
        assert_eq!(read(&root.join("shared/sub/a.txt")), "a");
        let mut buf = vec![0u8; 256];
        let n = rustix::fs::listxattr(root.join("shared/sub"), &mut buf[..]).unwrap();
        let names: Vec<&[u8]> = buf[..n]
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .collect();
        assert!(
            !names.contains(&attr.as_bytes()),
            "{attr} reached the host's directory"
        );
    }
}

// The per-name lookup (`fast::absent_at`) of small directories, and names the host makes
// after it.

fn opts_overwrite(horizon: Stamp) -> MergeOptions<'static> {
    MergeOptions {
        overwrite: true,
        ..opts(horizon)
    }
}

#[test]
fn a_lone_new_file_the_host_makes_after_the_lookup_is_kept() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    write(&up.join("notes.txt"), "run");
    let m = merge_racing(&t.layer, &opts(horizon), "notes.txt", host_file);
    assert_eq!(read(&root.join("notes.txt")), "host");
    assert!(
        m.conflicts.iter().any(|c| c.path == root.join("notes.txt")),
        "{m:?}"
    );
    assert_eq!(read(&up.join("notes.txt")), "run");
}

#[test]
fn a_host_symlink_made_after_the_lookup_is_never_followed() {
    fn link_out(dst: BorrowedFd<'_>, name: &[u8]) {
        let target = OUTSIDE.with(|o| o.borrow().clone());
        rustix::fs::symlinkat(target.as_path(), dst, name).unwrap();
    }
    thread_local! {
        static OUTSIDE: std::cell::RefCell<PathBuf> = const { std::cell::RefCell::new(PathBuf::new()) };
    }
    for (overwrite, what) in [
        (false, "pkg"),
        (true, "pkg"),
        (false, "f.txt"),
        (true, "f.txt"),
    ] {
        let t = setup();
        let (root, up) = (&t.layer.root, &t.layer.upper);
        let outside = t._t.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        OUTSIDE.with(|o| *o.borrow_mut() = outside.clone());
        let horizon = start();
        if what == "pkg" {
            write(&up.join("pkg/a.txt"), "run");
            write(&up.join("pkg/sub/b.txt"), "run");
        } else {
            write(&up.join("f.txt"), "run");
        }
        let o = if overwrite {
            opts_overwrite(horizon)
        } else {
            opts(horizon)
        };
        let m = merge_racing(&t.layer, &o, what, link_out);
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "{what} overwrite={overwrite}: written outside the root: {m:?}"
        );
        let host = std::fs::symlink_metadata(root.join(what)).unwrap();
        if overwrite {
            // The run's version wins, as a real entry (the link removed, not followed).
            assert!(!host.file_type().is_symlink(), "{what}: {m:?}");
        } else {
            assert!(host.file_type().is_symlink(), "{what}: {m:?}");
            assert!(
                m.conflicts.iter().any(|c| c.path == root.join(what)),
                "{m:?}"
            );
        }
    }
}

#[test]
fn a_dangling_host_symlink_is_not_absent() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let outside = t._t.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(outside.join("made"), root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("dir"), root.join("outd")).unwrap();
    let horizon = start();
    write(&up.join("out"), "run");
    write(&up.join("outd/x.txt"), "run");
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "{m:?}");
    assert_eq!(read(&root.join("out")), "run");
    assert!(root.join("outd").is_dir() && !root.join("outd").is_symlink());
    // The host's links were replaced through the general way, never landed with the
    // short way's rename (which would have failed, EEXIST).
    assert_eq!(read(&root.join("outd/x.txt")), "run");
}

#[test]
fn what_a_lone_new_directory_holds_is_still_judged() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    let horizon = start();
    write(&up.join("proj/src/a.rs"), "fn main() {}");
    write(&up.join("proj/.git/hooks/pre-commit"), "#!/bin/sh\nid\n");
    std::os::unix::fs::symlink("/etc/passwd", up.join("proj/pw")).unwrap();
    write(&up.join(".vscode/tasks.json"), "{}");
    // Two names of one inode in a new directory.
    write(&up.join("lib/a.txt"), "one");
    std::fs::hard_link(up.join("lib/a.txt"), up.join("lib/b.txt")).unwrap();
    let m = merge(&t.layer, &opts(horizon)).unwrap();
    assert_eq!(read(&root.join("proj/src/a.rs")), "fn main() {}");
    for kept_out in [
        "proj/.git/hooks/pre-commit",
        "proj/pw",
        ".vscode/tasks.json",
    ] {
        assert!(
            std::fs::symlink_metadata(root.join(kept_out)).is_err(),
            "{kept_out} landed: {m:?}"
        );
        assert!(
            std::fs::symlink_metadata(up.join(kept_out)).is_ok(),
            "{kept_out} left the layer"
        );
    }
    let ino = |p: &str| std::fs::metadata(root.join(p)).unwrap().ino();
    assert_ne!(
        ino("lib/a.txt"),
        ino("lib/b.txt"),
        "one inode under two host names"
    );
}

/// A name the host makes between the lookup and the short-way rename fails the rename
/// (EEXIST); the entry is then judged again as the host's, not placed under the verdict
/// reached for a name the host did not have (with `overwrite`, the run's version would
/// replace the host's new entry without the hold the judge gives a replaced one).
#[test]
fn a_name_the_host_makes_after_the_lookup_is_judged_as_the_hosts() {
    let t = setup();
    let (root, up) = (&t.layer.root, &t.layer.upper);
    write(&root.join(".venv/pyvenv.cfg"), "home = /usr/bin\n");
    std::fs::create_dir_all(root.join(".venv/bin")).unwrap();
    let horizon = start();
    write(&up.join(".venv/bin/activate"), "id\n");
    // The host's `python -m venv --upgrade .venv` writes its activation script meanwhile.
    let m = merge_racing(&t.layer, &opts_overwrite(horizon), "activate", host_file);
    // Had the host had it when judged: held ("it replaces the interpreter or activation
    // script of the virtualenv"), whatever `overwrite` says.
    assert!(
        m.held
            .iter()
            .any(|h| h.path == root.join(".venv/bin/activate")),
        "the run's activate replaced the host's without a hold: {m:?}"
    );
    assert_eq!(read(&root.join(".venv/bin/activate")), "host");
}

/// The same for the scope: a root writable only for one file never replaces a host
/// directory at that file's name ("the host has a directory in its place"), also one the
/// host makes after the lookup, under `overwrite`.
#[test]
fn a_files_only_merge_keeps_a_directory_the_host_makes_after_the_lookup() {
    fn host_dir(dst: BorrowedFd<'_>, name: &[u8]) {
        rustix::fs::mkdirat(dst, name, Mode::from_raw_mode(0o755)).unwrap();
        let d = rustix::fs::openat(dst, name, DIR_FLAGS, Mode::empty()).unwrap();
        let f = rustix::fs::openat(
            &d,
            "work.txt",
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&f, b"host").unwrap();
    }
    let mut t = setup();
    let (root, up) = (t.layer.root.clone(), t.layer.upper.clone());
    t.layer.files = vec![root.join("out.txt")];
    let horizon = start();
    write(&up.join("out.txt"), "run");
    let m = merge_racing(&t.layer, &opts_overwrite(horizon), "out.txt", host_dir);
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt/work.txt"))
            .ok()
            .as_deref(),
        Some("host"),
        "the host's directory was removed by a merge whose root was writable for one file: {m:?}"
    );
}
