//! Installation: inspect while staging beside the target, compare with what is installed,
//! then make the new package visible with one rename. Until that rename nothing under the
//! target changes; a refusal or an error at any point before it leaves the target as it
//! was and removes the staging directory.

use crate::error::SkillError;
use crate::inspect::{InspectOptions, Inspection, inspect_into};
use crate::manifest::{Diff, MANIFEST_NAME, Manifest, SourceInfo};
use crate::report::{Check, Finding, Verdict};
use crate::staged::write_manifest;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use std::path::{Path, PathBuf};

/// Largest installed manifest cordon reads back.
const MANIFEST_MAX: u64 = 64 << 20;

/// How to install.
#[derive(Debug, Clone)]
pub struct InstallOptions {
    /// How to inspect.
    pub inspect: InspectOptions,
    /// The directory the package's own folder is created in.
    pub into: PathBuf,
    /// What to record as the source.
    pub source: SourceInfo,
    /// Replace an existing installation of the same name.
    pub upgrade: bool,
    /// The human has reviewed: install despite review findings and changed scripts.
    pub yes: bool,
}

/// What an installation did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installation {
    /// The inspection, with the installation's own findings appended.
    pub inspection: Inspection,
    /// Where the package goes (`INTO/NAME`), once its name is known.
    pub target: Option<PathBuf>,
    /// The difference with the installed package, on upgrade.
    pub diff: Option<Diff>,
    /// Whether the package is now installed.
    pub installed: bool,
}

impl Installation {
    /// The verdict: the inspection's, with the installation's findings.
    pub fn verdict(&self) -> Verdict {
        self.inspection.verdict()
    }
}

/// Inspect `src` and install it under `opts.into` when nothing refuses it and a human
/// has said yes to whatever needs review.
pub fn install(src: &Path, opts: &InstallOptions) -> Result<Installation, SkillError> {
    std::fs::create_dir_all(&opts.into)
        .map_err(|e| SkillError::io(format!("create {}", opts.into.display()), e))?;
    let stage = tempfile::Builder::new()
        .prefix(".cordon-stage-")
        .tempdir_in(&opts.into)
        .map_err(|e| {
            SkillError::io(
                format!("create a staging directory in {}", opts.into.display()),
                e,
            )
        })?;
    // Files go one level down, so that the staged root can be renamed away while the
    // staging directory itself stays to be removed.
    let staging = stage.path().join("pkg");
    std::fs::create_dir(&staging)
        .map_err(|e| SkillError::io(format!("create {}", staging.display()), e))?;
    let mut inspection = inspect_into(src, &opts.inspect, Some(&staging))?;
    let mut done = Installation {
        target: None,
        diff: None,
        installed: false,
        inspection: inspection.clone(),
    };
    let (Some(name), Some(staged)) = (
        inspection.name().map(str::to_string),
        inspection.staged_root.clone(),
    ) else {
        return Ok(done);
    };
    let target = opts.into.join(&name);
    done.target = Some(target.clone());
    let manifest = Manifest {
        format: 1,
        name: name.clone(),
        source: opts.source.clone(),
        files: inspection.files.clone(),
        symlinks: inspection.symlinks.clone(),
    };
    let mut find = |v: Verdict, msg: String| {
        inspection
            .findings
            .push(Finding::new(Check::Upgrade, v, None, msg))
    };
    let existing = match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => Some(read_manifest(&target)),
        Ok(_) => {
            find(
                Verdict::Refuse,
                format!(
                    "{} exists and is not a directory; move it away first",
                    target.display()
                ),
            );
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(SkillError::io(format!("read {}", target.display()), e)),
    };
    let mut diff = None;
    match existing {
        None => {}
        Some(Err(why)) => find(
            Verdict::Refuse,
            format!("{} exists but {why}; move it away first", target.display()),
        ),
        Some(Ok(_)) if !opts.upgrade => find(
            Verdict::Refuse,
            format!(
                "{name} is already installed at {}; pass --upgrade to replace it",
                target.display()
            ),
        ),
        Some(Ok(old)) => {
            let d = Diff::between(&old, &manifest);
            for e in &d.entries {
                find(
                    Verdict::Pass,
                    format!(
                        "{:?} {}{}",
                        e.change,
                        e.path,
                        if e.script { " (script)" } else { "" }
                    )
                    .to_lowercase(),
                );
            }
            let changed: Vec<_> = d.scripts_changed().map(|e| e.path.clone()).collect();
            if !changed.is_empty() {
                let v = if opts.yes {
                    Verdict::Pass
                } else {
                    Verdict::Review
                };
                find(
                    v,
                    format!(
                        "the upgrade adds or changes scripts: {}; review them and pass --yes",
                        changed.join(", ")
                    ),
                );
            }
            diff = Some(d);
        }
    }
    done.diff = diff;
    let verdict = inspection.verdict();
    let go = verdict == Verdict::Pass || (verdict == Verdict::Review && opts.yes);
    if go {
        write_manifest(&staged, &manifest)?;
        let flags = if done.diff.is_some() {
            RenameFlags::EXCHANGE
        } else {
            RenameFlags::NOREPLACE
        };
        renameat_with(CWD, &staged, CWD, &target, flags).map_err(|e| {
            SkillError::io(
                format!("move the staged package to {}", target.display()),
                e.into(),
            )
        })?;
        done.installed = true;
    }
    done.inspection = inspection;
    // The staging directory (now holding the replaced installation, if any) goes here.
    stage
        .close()
        .map_err(|e| SkillError::io("remove the staging directory", e))?;
    Ok(done)
}

/// Read the manifest of an installed package.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    use std::io::Read;
    let p = dir.join(MANIFEST_NAME);
    let f = std::fs::File::open(&p).map_err(|e| {
        format!("has no readable {MANIFEST_NAME} ({e}), so cordon did not install it")
    })?;
    let mut text = String::new();
    f.take(MANIFEST_MAX)
        .read_to_string(&mut text)
        .map_err(|e| format!("its {MANIFEST_NAME} cannot be read ({e})"))?;
    serde_json::from_str(&text).map_err(|e| format!("its {MANIFEST_NAME} is not valid ({e})"))
}
