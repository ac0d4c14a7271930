#![allow(clippy::unwrap_used)] // test code
#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The egress directories a contained run is given.

use super::*;
use std::path::Path;

#[test]
fn egress_directories_never_follow_a_planted_link() {
    let t = tempfile::tempdir().unwrap();
    let victim_dir = t.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    for f in ["egress.sock", CA_BUNDLE, "keep"] {
        std::fs::write(victim_dir.join(f), "precious").unwrap();
    }
    let count = || std::fs::read_dir(&victim_dir).unwrap().count();
    // A link where the per-user parent goes: refused.
    let base = t.path().join("cordon-egress-1000");
    std::os::unix::fs::symlink(&victim_dir, &base).unwrap();
    assert!(private_parent(&base).is_err());
    std::fs::remove_file(&base).unwrap();
    // A dead run's directory moved aside and replaced by a link: the sweep removes
    // the link, nothing it leads to.
    let d = private_parent(&base).unwrap();
    std::fs::create_dir(base.join("999999999-0")).unwrap();
    std::fs::rename(base.join("999999999-0"), base.join("moved")).unwrap();
    std::os::unix::fs::symlink(&victim_dir, base.join("999999999-0")).unwrap();
    // A link at a run file's name inside another dead run's directory.
    std::fs::create_dir(base.join("999999998-0")).unwrap();
    std::os::unix::fs::symlink(
        victim_dir.join("keep"),
        base.join("999999998-0/egress.sock"),
    )
    .unwrap();
    sweep_stale(&d);
    assert!(!base.join("999999999-0").exists());
    assert!(!base.join("999999998-0").exists());
    assert_eq!(count(), 3);
    assert_eq!(
        std::fs::read_to_string(victim_dir.join("keep")).unwrap(),
        "precious"
    );
    // A run directory's CA bundle is never written through a link at its name.
    std::fs::create_dir(base.join("run")).unwrap();
    std::os::unix::fs::symlink(victim_dir.join("keep"), base.join("run").join(CA_BUNDLE)).unwrap();
    let run = d.open_dir(Path::new("run")).unwrap();
    assert!(run.write_new(Path::new(CA_BUNDLE), b"pem", 0o644).is_err());
    remove_run_dir(&d, Path::new("run"));
    assert!(!base.join("run").exists());
    assert_eq!(
        std::fs::read_to_string(victim_dir.join("keep")).unwrap(),
        "precious"
    );
}
