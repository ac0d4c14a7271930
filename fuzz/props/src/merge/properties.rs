//! The properties checked after a merge: the preview agreed, nothing outside changed,
//! what landed is allowed and where it was, and what the host kept is unchanged.

use super::*;

/// Every entry the merge refused was shown refused by the preview beforehand (itself or
/// the directory it is in): a human is never told that something will land which then
/// does not, nor the other way round for what the preview says never lands.
pub(super) fn previewed(
    shown: &Result<Vec<cordon_sandbox::Pending>, cordon_sandbox::SandboxError>,
    result: &Result<cordon_sandbox::MergeReport, cordon_sandbox::SandboxError>,
) {
    let (Ok(shown), Ok(report)) = (shown, result) else {
        return;
    };
    // Compiled caches are counted by the merge, not listed (`MergeReport::caches`).
    let refused: Vec<&Path> = shown
        .iter()
        .filter(|p| {
            p.refused
                .as_deref()
                .is_some_and(|r| r != cordon_policy::planted::COMPILED_CACHE)
        })
        .map(|p| p.path.as_path())
        .collect();
    for r in &report.refused {
        assert!(
            refused.iter().any(|s| r.path.starts_with(s)),
            "the merge refused {} ({}) but the preview did not show it refused: {shown:?}",
            r.path.display(),
            r.reason
        );
    }
    // What a held directory holds does not land either (the preview still shows what is
    // refused inside it, for when the hold is lifted), nor what a conflict kept out, nor
    // anything of the run's in a host entry the host changed during the run (spared: the
    // host's entry stays, with everything in it).
    let not_landed: Vec<&Path> = report
        .refused
        .iter()
        .chain(&report.held)
        .chain(&report.conflicts)
        .chain(&report.spared)
        .map(|r| r.path.as_path())
        .chain(report.kept.iter().map(PathBuf::as_path))
        .collect();
    for s in refused {
        assert!(
            not_landed.iter().any(|n| s.starts_with(n)),
            "the preview showed {} refused but the merge landed it: {report:?}",
            s.display()
        );
    }
}

pub(super) fn outside_unchanged(w: &World, top_before: &BTreeMap<PathBuf, Node>) {
    let top_after = snapshot(w.top.path());
    let rel_root = w
        .root
        .strip_prefix(w.top.path())
        .expect("the root is below");
    let outside_the_workspace =
        |p: &Path| !p.starts_with(rel_root) && !p.starts_with("upper") && !p.starts_with("work");
    for (p, n) in top_before.iter().filter(|(p, _)| outside_the_workspace(p)) {
        if p.as_os_str().is_empty() {
            continue;
        }
        assert_eq!(
            top_after.get(p),
            Some(n),
            "{} outside the workspace changed",
            p.display()
        );
    }
    for p in top_after.keys().filter(|p| outside_the_workspace(p)) {
        assert!(
            top_before.contains_key(p),
            "{} appeared outside the workspace",
            p.display()
        );
    }
}

/// Every inode of the layer, with the paths it had there.
pub(super) fn layer_inodes(layer: &BTreeMap<PathBuf, Node>) -> HashMap<u64, Vec<&PathBuf>> {
    let mut m: HashMap<u64, Vec<&PathBuf>> = HashMap::new();
    for (p, n) in layer.iter().filter(|(p, _)| !p.as_os_str().is_empty()) {
        m.entry(n.ino).or_default().push(p);
    }
    m
}

pub(super) fn landed(
    w: &World,
    c: &Choice,
    layer: &BTreeMap<PathBuf, Node>,
    before: &BTreeMap<PathBuf, Node>,
    after: &BTreeMap<PathBuf, Node>,
    result: &Result<cordon_sandbox::MergeReport, cordon_sandbox::SandboxError>,
) {
    let from_layer = layer_inodes(layer);
    let host_inodes: HashMap<u64, &PathBuf> = before
        .iter()
        .filter(|(_, n)| kind_of(n.mode) != LeftKind::Dir)
        .map(|(p, n)| (n.ino, p))
        .collect();
    for (rel, n) in after.iter().filter(|(p, _)| !p.as_os_str().is_empty()) {
        let path = w.root.join(rel);
        let kind = kind_of(n.mode);
        assert!(
            kind != LeftKind::Other,
            "a special file is in the root: {} ({result:?})",
            rel.display()
        );
        assert!(
            kind == LeftKind::Symlink || n.mode & 0o7022 == 0,
            "{} has mode {:o} ({result:?})",
            rel.display(),
            n.mode & 0o7777
        );
        if kind == LeftKind::Dir {
            // A directory is the host's, or one of the layer's moved or made anew (its
            // inode may be one the merge freed: directories go by path).
            if before
                .get(rel)
                .is_some_and(|b| b.ino == n.ino && kind_of(b.mode) == kind)
            {
                continue;
            }
            assert!(
                layer.get(rel).is_some_and(|l| kind_of(l.mode) == kind),
                "{} is new in the root but no directory of the layer ({result:?})",
                rel.display()
            );
        } else {
            // A host inode's number at another path: the host's entry moved or was linked,
            // unless the merge removed that entry and a file it copied from the layer got
            // the freed number (then it must pass the layer's checks below).
            if let Some(was) = host_inodes.get(&n.ino) {
                if *was == rel {
                    continue;
                }
                assert!(
                    after.get(*was).is_none_or(|m| m.ino != n.ino),
                    "a host entry moved: {} is also at {} ({result:?})",
                    was.display(),
                    rel.display()
                );
            }
            // Files and symlinks arrive by rename: the layer's inodes; a file with
            // several names in the layer is copied, so that no two names land as one
            // inode (it has one name on the host then, and the layer's content).
            let paths = from_layer
                .get(&n.ino)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let copied = kind == LeftKind::File
                && n.nlink == 1
                && layer
                    .get(rel)
                    .is_some_and(|l| l.nlink > 1 && kind_of(l.mode) == kind && l.data == n.data);
            assert!(
                paths.contains(&rel) || copied,
                "{} landed from the layer's {paths:?} ({result:?})",
                rel.display()
            );
        }
        let why = |what: &str| format!("{} landed, but {what} ({result:?})", rel.display());
        match judge_left(&path, kind, &w.home) {
            Leave::Refuse(r) => panic!("{}", why(&format!("the rules refuse it: {r}"))),
            // A `.gitmodules` the host's git reads as harmless (against the host's
            // own) is not held.
            Leave::Hold(r) if kind == LeftKind::File && rel.ends_with(".gitmodules") => {
                // The host's side is read only when it is a regular file.
                let host = before
                    .get(rel)
                    .filter(|b| kind_of(b.mode) == LeftKind::File)
                    .map(|b| b.data.as_slice());
                match gitmodules_judgement(&n.data, host) {
                    GitConfigVerdict::Merge => {}
                    GitConfigVerdict::Hold(_) if c.reviewed => {}
                    v => panic!("{}", why(&format!("{r}, and git's reading is {v:?}"))),
                }
            }
            Leave::Hold(r) if !c.reviewed => panic!("{}", why(&format!("the rules hold it: {r}"))),
            Leave::CheckGitConfig if !c.reviewed => {
                if let Some(r) = git_config_refusal(&n.data) {
                    panic!("{}", why(&format!("git refuses it: {r}")));
                }
            }
            _ => {}
        }
        for mark in ["user.overlay.redirect", "user.overlay.metacopy"] {
            assert!(
                !has_xattr(&path, mark),
                "{}",
                why(&format!("it carries {mark}"))
            );
        }
        if kind == LeftKind::Symlink && !c.reviewed {
            assert!(
                contained(&path, &n.data, &w.root),
                "{}",
                why("it is a symlink leading out of the root")
            );
        }
        if let Some(only) = &c.only {
            // A directory may be made on the way to a named path.
            assert!(
                only.iter()
                    .any(|a| path.starts_with(a) || (kind == LeftKind::Dir && a.starts_with(&path))),
                "{}",
                why("the allowlist does not name it")
            );
        }
        if !c.files.is_empty() {
            assert!(
                kind == LeftKind::File && c.files.contains(&path),
                "{}",
                why("the root is writable only for other files")
            );
        }
    }
}

/// Whether the layer explains the removal or replacement of the host's `rel` (`host`
/// is a directory): a non-directory or an opaque directory of the layer at its path or
/// above it, or a directory of the layer at its path when the host's is none.
pub(super) fn explained(
    layer: &BTreeMap<PathBuf, Node>,
    opaque: &[PathBuf],
    rel: &Path,
    host_dir: bool,
) -> bool {
    rel.ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .any(|a| match layer.get(a) {
            Some(n) if kind_of(n.mode) != LeftKind::Dir => true,
            Some(_) => opaque.iter().any(|o| o == a) || (a == rel && !host_dir),
            None => false,
        })
}

pub(super) fn host_kept(
    w: &World,
    c: &Choice,
    layer: (&BTreeMap<PathBuf, Node>, &[PathBuf]),
    before: &BTreeMap<PathBuf, Node>,
    after: &BTreeMap<PathBuf, Node>,
    result: &Result<cordon_sandbox::MergeReport, cordon_sandbox::SandboxError>,
) {
    for (rel, n) in before.iter().filter(|(p, _)| !p.as_os_str().is_empty()) {
        let now = after.get(rel);
        // The same inode of the same kind (a removed entry's inode may be reused by a
        // directory the merge makes).
        if let Some(a) = now
            && a.ino == n.ino
            && kind_of(a.mode) == kind_of(n.mode)
        {
            assert_eq!(
                a.data,
                n.data,
                "the host's {} was written in place ({result:?})",
                rel.display()
            );
            continue;
        }
        let path = w.root.join(rel);
        let why = |what: &str| {
            format!(
                "the host's {} was removed or replaced, but {what} ({result:?})",
                rel.display()
            )
        };
        assert!(
            c.overwrite || !c.host_changed_all,
            "{}",
            why("the host changed it during the run")
        );
        if !c.files.is_empty() {
            assert!(
                c.files.contains(&path) && now.is_some_and(|a| kind_of(a.mode) == LeftKind::File),
                "{}",
                why("the root is writable only for some files")
            );
        }
        if let Some(only) = &c.only {
            assert!(
                only.iter().any(|a| path.starts_with(a)),
                "{}",
                why("the allowlist does not name it")
            );
        }
        assert!(
            explained(layer.0, layer.1, rel, kind_of(n.mode) == LeftKind::Dir),
            "{}",
            why("the layer holds nothing there")
        );
    }
}
