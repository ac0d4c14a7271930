#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Benign packages install; upgrades show their difference with changed scripts first and
//! need a yes; a failure at any point before the final rename leaves the target untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use cordon_skill::{
    Change, Check, InspectOptions, InstallOptions, Limits, Severity, SourceInfo, install,
    read_manifest,
};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn opts(into: &Path, upgrade: bool, yes: bool) -> InstallOptions {
    InstallOptions {
        inspect: InspectOptions::default(),
        into: into.to_path_buf(),
        source: SourceInfo {
            location: "https://example.com/demo.tgz".into(),
            revision: Some("v1".into()),
        },
        upgrade,
        yes,
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn leftovers(into: &Path) -> Vec<String> {
    std::fs::read_dir(into)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".cordon-stage"))
        .collect()
}

#[test]
fn a_directory_package_installs_with_a_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let src = dir_pkg(&tmp.path().join("src"), SKILL, RUN);
    std::fs::set_permissions(
        src.join("notes.txt"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let into = tmp.path().join("skills");
    let done = install(&src, &opts(&into, false, false)).unwrap();
    assert_eq!(
        done.verdict(),
        Severity::Pass,
        "{:#?}",
        done.inspection.findings
    );
    assert!(done.installed);
    let root = into.join("demo");
    assert_eq!(
        std::fs::read_to_string(root.join("scripts/run.sh")).unwrap(),
        RUN
    );
    assert_eq!(
        mode(&root.join("scripts/run.sh")),
        0o755,
        "a declared script keeps its executable bit"
    );
    assert_eq!(
        mode(&root.join("notes.txt")),
        0o644,
        "an undeclared file loses its executable bit"
    );
    let m = read_manifest(&root).unwrap();
    assert_eq!(m.name, "demo");
    assert_eq!(m.source.revision.as_deref(), Some("v1"));
    assert_eq!(m.files.len(), 3);
    let run = m.files.iter().find(|f| f.path == "scripts/run.sh").unwrap();
    assert!(run.script);
    // sha256("#!/bin/sh\nls -la\n")
    assert_eq!(run.sha256.len(), 64);
    assert!(leftovers(&into).is_empty());
}

#[test]
fn zip_and_wrapped_tgz_packages_install() {
    let tmp = tempfile::tempdir().unwrap();
    let z = zip_bytes(&[
        ("SKILL.md", SKILL.as_bytes(), 0o644),
        ("scripts/run.sh", RUN.as_bytes(), 0o755),
    ]);
    let src = write(tmp.path(), "demo.zip", &z);
    let done = install(&src, &opts(&tmp.path().join("a"), false, false)).unwrap();
    assert!(done.installed, "{:#?}", done.inspection.findings);
    assert_eq!(mode(&tmp.path().join("a/demo/scripts/run.sh")), 0o755);
    // A single top directory is the package root.
    let t = gz(&tar_bytes(&[
        f("demo-1.0/SKILL.md", SKILL),
        T {
            mode: 0o755,
            ..f("demo-1.0/scripts/run.sh", RUN)
        },
    ]));
    let src = write(tmp.path(), "demo.tgz", &t);
    let done = install(&src, &opts(&tmp.path().join("b"), false, false)).unwrap();
    assert!(done.installed, "{:#?}", done.inspection.findings);
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("b/demo/SKILL.md")).unwrap(),
        SKILL
    );
}

#[test]
fn review_findings_need_a_yes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = "#!/bin/sh\ncurl -o /tmp/x https://example.com/x.sh\npip install requests\n";
    let src = dir_pkg(&tmp.path().join("src"), SKILL, run);
    let into = tmp.path().join("skills");
    let done = install(&src, &opts(&into, false, false)).unwrap();
    assert_eq!(
        done.verdict(),
        Severity::Review,
        "{:#?}",
        done.inspection.findings
    );
    assert!(!done.installed);
    assert!(!into.join("demo").exists());
    assert!(install(&src, &opts(&into, false, true)).unwrap().installed);
}

#[test]
fn an_existing_install_needs_upgrade_and_changed_scripts_need_yes() {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join("skills");
    let v1 = dir_pkg(&tmp.path().join("v1"), SKILL, RUN);
    assert!(install(&v1, &opts(&into, false, false)).unwrap().installed);
    let v2 = dir_pkg(&tmp.path().join("v2"), SKILL, "#!/bin/sh\nls -la /\n");
    std::fs::remove_file(v2.join("notes.txt")).unwrap();
    std::fs::write(v2.join("new.txt"), "new\n").unwrap();

    // Not without --upgrade.
    let done = install(&v2, &opts(&into, false, false)).unwrap();
    assert!(!done.installed);
    assert!(
        done.inspection
            .findings
            .iter()
            .any(|f| f.check == Check::Upgrade && f.verdict == Severity::Refuse)
    );

    // With --upgrade but no --yes: the diff is shown, scripts first, and nothing changes.
    let done = install(&v2, &opts(&into, true, false)).unwrap();
    assert!(!done.installed);
    assert_eq!(done.verdict(), Severity::Review);
    let diff = done.diff.unwrap();
    let got: Vec<_> = diff
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.change))
        .collect();
    assert_eq!(
        got,
        vec![
            ("scripts/run.sh", Change::Changed),
            ("new.txt", Change::Added),
            ("notes.txt", Change::Removed)
        ]
    );
    assert_eq!(
        std::fs::read_to_string(into.join("demo/scripts/run.sh")).unwrap(),
        RUN
    );
    assert!(into.join("demo/notes.txt").exists());

    // With --yes it replaces the installation as a whole.
    let done = install(&v2, &opts(&into, true, true)).unwrap();
    assert!(done.installed, "{:#?}", done.inspection.findings);
    assert_eq!(
        std::fs::read_to_string(into.join("demo/scripts/run.sh")).unwrap(),
        "#!/bin/sh\nls -la /\n"
    );
    assert!(!into.join("demo/notes.txt").exists());
    assert!(into.join("demo/new.txt").exists());
    assert!(leftovers(&into).is_empty());
}

#[test]
fn an_unchanged_script_upgrade_needs_no_yes() {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join("skills");
    let v1 = dir_pkg(&tmp.path().join("v1"), SKILL, RUN);
    assert!(install(&v1, &opts(&into, false, false)).unwrap().installed);
    std::fs::write(v1.join("notes.txt"), "changed notes\n").unwrap();
    let done = install(&v1, &opts(&into, true, false)).unwrap();
    assert!(done.installed, "{:#?}", done.inspection.findings);
}

#[test]
fn a_late_failure_leaves_the_target_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join("skills");
    let v1 = dir_pkg(&tmp.path().join("v1"), SKILL, RUN);
    assert!(install(&v1, &opts(&into, false, false)).unwrap().installed);
    let before = read_manifest(&into.join("demo")).unwrap();
    // v2 changes the script first, then holds a file past the limit at the end of the
    // archive: the limit is hit after the script was already staged.
    let big = "x".repeat(200_000);
    let t = tar_bytes(&[
        f("SKILL.md", SKILL),
        T {
            mode: 0o755,
            ..f("scripts/run.sh", "#!/bin/sh\nrm -rf ~/x\n")
        },
        f("zz-late.bin", &big),
    ]);
    let src = write(tmp.path(), "v2.tar", &t);
    let mut o = opts(&into, true, true);
    o.inspect.limits = Limits {
        max_file_bytes: 100_000,
        ..Limits::default()
    };
    let done = install(&src, &o).unwrap();
    assert!(!done.installed);
    assert!(
        done.inspection
            .findings
            .iter()
            .any(|f| f.check == Check::Limit),
        "{:#?}",
        done.inspection.findings
    );
    assert_eq!(read_manifest(&into.join("demo")).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(into.join("demo/scripts/run.sh")).unwrap(),
        RUN
    );
    assert!(
        leftovers(&into).is_empty(),
        "the staging directory is removed"
    );
}

#[test]
fn a_non_cordon_directory_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let into = tmp.path().join("skills");
    std::fs::create_dir_all(into.join("demo")).unwrap();
    std::fs::write(into.join("demo/mine.txt"), "user data").unwrap();
    let v1 = dir_pkg(&tmp.path().join("v1"), SKILL, RUN);
    let done = install(&v1, &opts(&into, true, true)).unwrap();
    assert!(!done.installed);
    assert_eq!(done.verdict(), Severity::Refuse);
    assert_eq!(
        std::fs::read_to_string(into.join("demo/mine.txt")).unwrap(),
        "user data"
    );
}

#[test]
fn a_link_planted_at_the_package_name_or_the_install_directory_is_never_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let src = dir_pkg(&tmp.path().join("src"), SKILL, RUN);
    let victim_dir = tmp.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    std::fs::write(victim_dir.join("keep"), "precious").unwrap();
    let unchanged = || {
        let names: Vec<_> = std::fs::read_dir(&victim_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["keep"]);
        assert_eq!(
            std::fs::read_to_string(victim_dir.join("keep")).unwrap(),
            "precious"
        );
    };
    // A run left a link where the package goes: not installed through it.
    let into = tmp.path().join("ws/.claude/skills");
    std::fs::create_dir_all(&into).unwrap();
    std::os::unix::fs::symlink(&victim_dir, into.join("demo")).unwrap();
    let done = install(&src, &opts(&into, true, true)).unwrap();
    assert!(!done.installed);
    assert!(
        std::fs::symlink_metadata(into.join("demo"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(leftovers(&into).is_empty());
    unchanged();
    // A run moved the install directory aside and left a link in its place: refused.
    std::fs::remove_file(into.join("demo")).unwrap();
    std::fs::rename(&into, tmp.path().join("ws/.claude/moved")).unwrap();
    std::os::unix::fs::symlink(&victim_dir, &into).unwrap();
    assert!(install(&src, &opts(&into, false, false)).is_err());
    unchanged();
    // Put back as a real directory, the package installs.
    std::fs::remove_file(&into).unwrap();
    std::fs::rename(tmp.path().join("ws/.claude/moved"), &into).unwrap();
    assert!(install(&src, &opts(&into, false, false)).unwrap().installed);
    assert!(read_manifest(&into.join("demo")).is_ok());
    unchanged();
}

#[test]
fn a_manifest_that_is_missing_or_not_valid_is_refused_with_its_reason() {
    use cordon_skill::{MANIFEST_NAME, ManifestError};
    let t = tempfile::tempdir().unwrap();
    let err = read_manifest(t.path()).unwrap_err();
    assert!(matches!(err, ManifestError::Missing(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("has no readable {MANIFEST_NAME} ("))
            && text.ends_with("), so cordon did not install it"),
        "{text}"
    );
    std::fs::write(t.path().join(MANIFEST_NAME), "{").unwrap();
    let err = read_manifest(t.path()).unwrap_err();
    assert!(matches!(err, ManifestError::Invalid(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("its {MANIFEST_NAME} is not valid (")),
        "{err}"
    );
}
