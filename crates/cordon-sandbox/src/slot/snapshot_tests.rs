//! Tests of snapshots: round trips, damaged and hostile archives, and the caps.

use super::*;
use crate::slot::SlotScope;

fn slot(base: &Path, key: &str) -> (SlotName, SlotPaths) {
    let n = SlotName::new(SlotScope::Global, key, None, None).unwrap();
    let p = SlotPaths::new(base, &n);
    p.create().unwrap();
    (n, p)
}

#[test]
fn links_that_leave_are_told_apart() {
    assert!(link_stays_inside(Path::new("home/a/l"), Path::new("../b")));
    assert!(link_stays_inside(
        Path::new("home/a/l"),
        Path::new("b/../c")
    ));
    assert!(!link_stays_inside(Path::new("home/l"), Path::new("../x")));
    assert!(!link_stays_inside(
        Path::new("home/a/l"),
        Path::new("../../x")
    ));
    assert!(!link_stays_inside(
        Path::new("home/l"),
        Path::new("/etc/passwd")
    ));
    assert_eq!(
        checked_path(Path::new("home/./a")),
        Some(PathBuf::from("home/a"))
    );
    assert_eq!(checked_path(Path::new("/home/a")), None);
    assert_eq!(checked_path(Path::new("home/../x")), None);
    assert_eq!(checked_path(Path::new("caches/x")), None);
}

#[test]
fn round_trip_and_damaged_archives_change_nothing() {
    let t = tempfile::tempdir().unwrap();
    let (n, p) = slot(t.path(), "k");
    std::fs::create_dir_all(p.home().join(".local/bin")).unwrap();
    std::fs::write(p.home().join(".local/bin/tool"), "#!/bin/sh\necho hi\n").unwrap();
    std::os::unix::fs::symlink("bin/tool", p.home().join(".local/t")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", p.home().join("out")).unwrap();
    let snap = t.path().join("k.snap");
    let r = snapshot(&p, &n, &snap).unwrap();
    assert_eq!(r.left_out_links, 1);
    std::fs::write(p.home().join("later"), "x").unwrap();
    restore(&p, &snap).unwrap();
    assert!(!p.home().join("later").exists());
    assert_eq!(
        std::fs::read_to_string(p.home().join(".local/t")).unwrap(),
        "#!/bin/sh\necho hi\n"
    );
    // One flipped byte in the archive: refused before anything is unpacked.
    let mut bytes = std::fs::read(&snap).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let broken = t.path().join("broken.snap");
    std::fs::write(&broken, &bytes).unwrap();
    std::fs::write(p.home().join("kept"), "x").unwrap();
    let e = restore(&p, &broken).unwrap_err();
    assert_eq!(e.kind, SlotErrorKind::BadSnapshot, "{e}");
    assert!(p.home().join("kept").exists(), "nothing changed");
}

/// One raw tar entry: name, type, mode, data, link target.
type Raw<'a> = (&'a [u8], tar::EntryType, u32, &'a [u8], &'a [u8]);

/// A snapshot file holding the raw tar entries given (name bytes written as they
/// are, so that names the tar crate would refuse to build are possible), with a
/// manifest and hash that match: only the entries themselves are wrong.
fn crafted(dir: &Path, entries: &[Raw<'_>]) -> PathBuf {
    crafted_with(dir, entries, |_| {})
}

/// [`crafted`], with the manifest changed by `edit` before it is written.
fn crafted_with(dir: &Path, entries: &[Raw<'_>], edit: impl Fn(&mut Manifest)) -> PathBuf {
    let mut tar = tar::Builder::new(Vec::new());
    let mut bytes = 0u64;
    // Every case has its tree's top, so that each is refused for its own entry.
    let top: Raw<'_> = (b"home", tar::EntryType::Directory, 0o700, b"", b"");
    let entries: Vec<_> = std::iter::once(&top).chain(entries).collect();
    for (name, kind, mode, data, link) in &entries {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link);
        h.set_entry_type(*kind);
        h.set_mode(*mode);
        h.set_size(data.len() as u64);
        h.set_cksum();
        tar.append(&h, &data[..]).unwrap();
        bytes += data.len() as u64;
    }
    let archive = zstd::encode_all(&tar.into_inner().unwrap()[..], 3).unwrap();
    let mut m = Manifest {
        key: "k".into(),
        scope: "global".into(),
        created: 0,
        entries: entries.len() as u64,
        bytes,
        archive_bytes: archive.len() as u64,
        archive_blake3: blake3::hash(&archive).to_hex().to_string(),
    };
    edit(&mut m);
    let mut head =
        format!("{SNAPSHOT_MAGIC}\n{}\n", serde_json::to_string(&m).unwrap()).into_bytes();
    head.resize(HEADER_LEN, b' ');
    head.extend(archive);
    let p = dir.join("crafted.snap");
    std::fs::write(&p, head).unwrap();
    p
}

#[test]
fn hostile_archives_are_refused_and_change_nothing() {
    use tar::EntryType as T;
    let t = tempfile::tempdir().unwrap();
    let (_, p) = slot(t.path(), "k");
    std::fs::write(p.home().join("mine"), "kept").unwrap();
    let cases: &[(&str, &[Raw<'_>])] = &[
        (
            "dot-dot",
            &[(b"home/../../escaped", T::Regular, 0o644, b"x", b"")],
        ),
        (
            "absolute",
            &[(b"/tmp/escaped", T::Regular, 0o644, b"x", b"")],
        ),
        (
            "outside the trees",
            &[(b"caches/x", T::Regular, 0o644, b"x", b"")],
        ),
        ("device", &[(b"home/dev", T::Char, 0o644, b"", b"")]),
        ("fifo", &[(b"home/fifo", T::Fifo, 0o644, b"", b"")]),
        (
            "hard link",
            &[(b"home/h", T::Link, 0o644, b"", b"/etc/passwd")],
        ),
        ("setuid", &[(b"home/suid", T::Regular, 0o4755, b"x", b"")]),
        (
            "link out",
            &[(b"home/l", T::Symlink, 0o777, b"", b"../../x")],
        ),
        (
            "absolute link",
            &[(b"home/l", T::Symlink, 0o777, b"", b"/etc/shadow")],
        ),
        (
            "write through a link",
            &[
                (b"home/d", T::Symlink, 0o777, b"", b"sub"),
                (b"home/d/f", T::Regular, 0o644, b"x", b""),
            ],
        ),
        (
            "twice",
            &[
                (b"home/f", T::Regular, 0o644, b"x", b""),
                (b"home/f", T::Regular, 0o644, b"y", b""),
            ],
        ),
    ];
    for (what, entries) in cases {
        let snap = crafted(t.path(), entries);
        let e = restore(&p, &snap).unwrap_err();
        assert_eq!(e.kind, SlotErrorKind::BadSnapshot, "{what}: {e}");
        assert!(e.message.contains("nothing was changed"), "{what}: {e}");
        assert_eq!(
            std::fs::read_to_string(p.home().join("mine")).unwrap(),
            "kept",
            "{what}"
        );
        assert!(!t.path().join("escaped").exists(), "{what}");
        let left: Vec<_> = std::fs::read_dir(p.parent())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["k"], "{what}: no staging left behind");
    }
    // More than the manifest declares (a bomb behind an honest-looking manifest).
    let snap = crafted(
        t.path(),
        &[(b"home/big", T::Regular, 0o644, &[0u8; 4096], b"")],
    );
    let mut text = std::fs::read(&snap).unwrap();
    let head =
        String::from_utf8_lossy(&text[..HEADER_LEN]).replace("\"bytes\":4096", "\"bytes\":1000");
    text[..HEADER_LEN].copy_from_slice(head.as_bytes());
    std::fs::write(&snap, text).unwrap();
    let e = restore(&p, &snap).unwrap_err();
    assert!(
        e.message.contains("larger than its manifest declares"),
        "{e}"
    );
    // And a well-formed one goes through.
    let snap = crafted(
        t.path(),
        &[
            (b"home", T::Directory, 0o755, b"", b""),
            (b"home/ok", T::Regular, 0o644, b"fine", b""),
            (b"home/l", T::Symlink, 0o777, b"", b"ok"),
        ],
    );
    restore(&p, &snap).unwrap();
    assert_eq!(std::fs::read_to_string(p.home().join("l")).unwrap(), "fine");
    assert!(!p.home().join("mine").exists());
}

/// The caps are cordon's, not the archive's: a manifest that declares a bomb's worth is
/// refused before anything is unpacked, and an archive that stays within what it
/// declares is still cut off at cordon's caps (entries, bytes, depth).
#[test]
fn restore_caps_come_from_cordon_not_from_the_archive() {
    use tar::EntryType as T;
    let t = tempfile::tempdir().unwrap();
    let (_, p) = slot(t.path(), "k");
    std::fs::write(p.home().join("mine"), "kept").unwrap();
    let files: &[Raw<'_>] = &[
        (b"home/a", T::Regular, 0o644, b"aaaa", b""),
        (b"home/b", T::Regular, 0o644, b"bbbb", b""),
    ];
    for (what, edit) in [
        (
            "bytes",
            (|m: &mut Manifest| m.bytes = u64::MAX) as fn(&mut Manifest),
        ),
        ("entries", |m: &mut Manifest| m.entries = u64::MAX),
    ] {
        let snap = crafted_with(t.path(), files, edit);
        let e = restore(&p, &snap).unwrap_err();
        assert_eq!(e.kind, SlotErrorKind::BadSnapshot, "{what}: {e}");
        assert!(
            e.message.contains("more than cordon restores"),
            "{what}: {e}"
        );
    }
    // Honest manifests, over smaller caps.
    let snap = crafted(t.path(), files);
    let small = |bytes, entries, depth| RestoreLimits {
        bytes,
        entries,
        depth,
    };
    let e = restore_within(&p, &snap, &small(6, 100, 8)).unwrap_err();
    assert!(e.message.contains("more than cordon restores"), "{e}");
    let snap = crafted_with(t.path(), files, |m| m.bytes = 4);
    let e = restore_within(&p, &snap, &small(100, 100, 8)).unwrap_err();
    assert!(
        e.message
            .contains("larger than its manifest declares or cordon restores (4 bytes)"),
        "{e}"
    );
    let deep: &[Raw<'_>] = &[
        (b"home/d", T::Directory, 0o755, b"", b""),
        (b"home/d/e", T::Directory, 0o755, b"", b""),
        (b"home/d/e/f", T::Regular, 0o644, b"x", b""),
    ];
    let snap = crafted(t.path(), deep);
    let e = restore_within(&p, &snap, &small(100, 100, 3)).unwrap_err();
    assert!(
        e.message
            .contains("nested deeper than cordon restores (3 levels)"),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(p.home().join("mine")).unwrap(),
        "kept"
    );
    restore_within(&p, &snap, &small(100, 100, 4)).unwrap();
    assert!(p.home().join("d/e/f").is_file());
}

#[test]
fn snapshot_to_a_planted_link_or_a_renamed_directory_writes_where_it_was_anchored() {
    let t = tempfile::tempdir().unwrap();
    let (n, p) = slot(t.path(), "k");
    std::fs::write(p.home().join("f"), "x").unwrap();
    let victim = t.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let victim_dir = t.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    let ws = t.path().join("ws");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    // `--to ws/out/k.snap`, anchored before the slot's guard is taken...
    let out = cordon_fs::OutputFile::prepare(&ws.join("out/k.snap")).unwrap();
    // ...while a run still in the slot plants a link at the name, then moves the
    // directory aside and leaves a link in its place.
    std::os::unix::fs::symlink(&victim, ws.join("out/k.snap")).unwrap();
    std::fs::rename(ws.join("out"), ws.join("moved")).unwrap();
    std::os::unix::fs::symlink(&victim_dir, ws.join("out")).unwrap();
    snapshot_to(&p, &n, &out).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
    let made = ws.join("moved/k.snap");
    assert!(std::fs::symlink_metadata(&made).unwrap().is_file());
    restore(&p, &made).unwrap();
    // A link at the name given by path is replaced too, never written through.
    std::fs::remove_file(ws.join("out")).unwrap();
    std::fs::rename(ws.join("moved"), ws.join("out")).unwrap();
    std::fs::remove_file(ws.join("out/k.snap")).unwrap();
    std::os::unix::fs::symlink(&victim, ws.join("out/k.snap")).unwrap();
    snapshot(&p, &n, &ws.join("out/k.snap")).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_dir(ws.join("out")).unwrap().count(), 1);
}
