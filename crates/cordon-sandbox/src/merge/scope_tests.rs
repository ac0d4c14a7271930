#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The preview (`cordon changes show`) says what the merge will do with entries outside
//! its scope: for a root writable only for some files and under an allowlist, every
//! entry the merge refuses is shown refused beforehand, and every entry it keeps is
//! shown as not landing.

use super::tests::{T, merge_layer, merge_layer_only, opaque, opts, read, setup, start, whiteout};
use super::*;
use std::collections::BTreeSet;

/// The paths the preview shows refused (never landing), taken before the merge.
fn previewed_refusals(t: &T, only: Option<&[PathBuf]>) -> BTreeSet<PathBuf> {
    let o = MergeOptions {
        only,
        reviewed: true,
        ..opts(Path::new("/nonexistent"), start())
    };
    preview_layer(&t.layer, &o, false)
        .unwrap()
        .into_iter()
        .filter(|p| p.refused.is_some())
        .map(|p| p.path)
        .collect()
}

#[test]
fn the_preview_refuses_what_a_files_only_merge_refuses() {
    let mut t = setup(None);
    let root = t.layer.root.clone();
    let up = t.layer.upper.clone();
    t.layer.files = vec![
        root.join("out.txt"),
        root.join("dir.txt"),
        root.join("gone.txt"),
    ];
    // The host has a directory where a listed file is; the run wrote a file there, a
    // symlink at another listed path, removed the third, and wrote a file not listed.
    std::fs::create_dir(root.join("out.txt")).unwrap();
    std::fs::write(root.join("out.txt/inside"), "host").unwrap();
    std::fs::write(root.join("dir.txt"), "host").unwrap();
    std::fs::write(root.join("gone.txt"), "host").unwrap();
    std::fs::write(up.join("out.txt"), "made").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", up.join("dir.txt")).unwrap();
    whiteout(&up, "gone.txt");
    std::fs::write(up.join("other.sh"), "evil").unwrap();

    let shown = previewed_refusals(&t, None);
    let m = merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    let refused: BTreeSet<PathBuf> = m.refused.iter().map(|r| r.path.clone()).collect();
    assert_eq!(refused.len(), 3, "{m:?}");
    assert!(refused.is_subset(&shown), "shown {shown:?}, merge {m:?}");
    assert!(shown.contains(&root.join("other.sh")), "{shown:?}");
    assert!(m.kept.contains(&root.join("other.sh")), "{m:?}");
    // And nothing of it landed.
    assert_eq!(read(&root.join("out.txt/inside")), "host");
    assert_eq!(read(&root.join("dir.txt")), "host");
    assert_eq!(read(&root.join("gone.txt")), "host");
    assert!(!root.join("other.sh").exists());
}

#[test]
fn the_preview_keeps_a_host_file_on_the_way_to_an_allowed_path() {
    let t = setup(None);
    let (root, up) = (&t.layer.root, &t.layer.upper);
    std::fs::write(root.join("lib.py"), "host").unwrap();
    std::fs::create_dir(up.join("lib.py")).unwrap();
    std::fs::write(up.join("lib.py/ok.txt"), "made").unwrap();
    let only = [root.join("lib.py/ok.txt")];
    let shown = previewed_refusals(&t, Some(&only));
    assert!(shown.contains(&root.join("lib.py")), "{shown:?}");
    let m = merge_layer_only(&t.layer, Path::new("/nonexistent"), &only).unwrap();
    assert!(m.kept.contains(&root.join("lib.py")), "{m:?}");
    assert_eq!(read(&root.join("lib.py")), "host");
}

#[test]
fn a_socket_at_a_listed_path_is_neither_merged_refused_nor_shown() {
    let mut t = setup(None);
    let root = t.layer.root.clone();
    let up = t.layer.upper.clone();
    t.layer.files = vec![root.join("a"), root.join("b")];
    std::fs::write(root.join("a"), "host").unwrap();
    // The run bound sockets at both listed paths (one over the host's file): a
    // rendezvous of processes that are gone, which the merge leaves alone as the
    // preview does, whatever the scope.
    let _a = std::os::unix::net::UnixListener::bind(up.join("a")).unwrap();
    let _b = std::os::unix::net::UnixListener::bind(up.join("b")).unwrap();

    let shown = previewed_refusals(&t, None);
    let m = merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert!(shown.is_empty(), "{shown:?}");
    assert!(m.refused.is_empty() && m.kept.is_empty(), "{m:?}");
    assert_eq!(read(&root.join("a")), "host");
    assert!(!root.join("b").exists());
}

#[test]
fn the_preview_shows_refused_removals_below_a_directory_inside_a_replaced_one() {
    let t = setup(None);
    let (root, up) = (&t.layer.root, &t.layer.upper);
    // The host has pkg/sub/.vscode and pkg/sub/.git/hooks/pre-commit; the run replaced
    // pkg (opaque) with one holding sub/ with a new file only: sub is the run's alone
    // (overlayfs shows nothing of the host's below an opaque directory), so the host's
    // .vscode and hooks are deleted by the run, which the merge refuses.
    std::fs::create_dir_all(root.join("pkg/sub/.vscode")).unwrap();
    std::fs::write(root.join("pkg/sub/.vscode/settings.json"), "{}").unwrap();
    std::fs::create_dir_all(root.join("pkg/sub/deeper/.git/hooks")).unwrap();
    std::fs::write(root.join("pkg/sub/deeper/.git/hooks/pre-commit"), "host").unwrap();
    std::fs::create_dir_all(up.join("pkg/sub/deeper")).unwrap();
    std::fs::write(up.join("pkg/sub/new.txt"), "run").unwrap();
    opaque(&up.join("pkg"));

    let shown = previewed_refusals(&t, None);
    let m = merge_layer(&t.layer, Path::new("/nonexistent")).unwrap();
    assert!(!m.refused.is_empty(), "{m:?}");
    for r in &m.refused {
        assert!(
            shown.iter().any(|s| r.path.starts_with(s)),
            "the merge refused {} but the preview did not show it: {shown:?}",
            r.path.display()
        );
    }
    assert!(root.join("pkg/sub/.vscode/settings.json").exists());
    assert_eq!(
        read(&root.join("pkg/sub/deeper/.git/hooks/pre-commit")),
        "host"
    );
}
