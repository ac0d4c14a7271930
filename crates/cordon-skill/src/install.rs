//! Installation: inspect while staging beside the target, compare with what is installed,
//! then make the new package visible with one rename. Until that rename nothing under the
//! target changes; a refusal or an error at any point before it leaves the target as it
//! was and removes the staging directory.

use crate::error::SkillError;
use crate::inspect::{InspectOptions, Inspection, inspect_into};
use crate::manifest::{Diff, MANIFEST_NAME, Manifest, SourceInfo};
use crate::report::{Check, Finding, Severity};
use crate::staged::write_manifest_in;
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
    pub fn verdict(&self) -> Severity {
        self.inspection.verdict()
    }
}

/// Inspect `src` and install it under `opts.into` when nothing refuses it and a human
/// has said yes to whatever needs review.
pub fn install(src: &Path, opts: &InstallOptions) -> Result<Installation, SkillError> {
    // The install directory is opened once; the staging directory, the package and the
    // swap all happen beneath that handle, so a link or a renamed directory left by a
    // run (a workspace's `.claude/skills`) cannot move any of it (`cordon-fs`).
    let into = cordon_fs::Dir::create_ambient(&opts.into, 0o755)
        .map_err(|e| SkillError::io(format!("create {}", opts.into.display()), e.into()))?;
    let (stage_name, stage_dir) = into
        .create_unique_dir(".cordon-stage-", 0o700)
        .map_err(|e| {
            SkillError::io(
                format!("create a staging directory in {}", opts.into.display()),
                e.into(),
            )
        })?;
    let stage = Stage {
        into: &into,
        name: stage_name,
    };
    // Files go one level down, so that the staged root can be renamed away while the
    // staging directory itself stays to be removed.
    let staging = stage_dir
        .create_dir_all(Path::new("pkg"), 0o755)
        .map_err(|e| SkillError::io("create the staging directory", e.into()))?;
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
    let mut find = |v: Severity, msg: String| {
        inspection
            .findings
            .push(Finding::new(Check::Upgrade, v, None, msg))
    };
    let existing = match into.stat(Path::new(&name)) {
        Ok(m) if m.st_mode & 0o170000 == 0o040000 => Some(read_manifest_in(&into, &name)),
        Ok(_) => {
            find(
                Severity::Refuse,
                format!(
                    "{} exists and is not a directory; move it away first",
                    target.display()
                ),
            );
            None
        }
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            return Err(SkillError::io(
                format!("read {}", target.display()),
                e.into(),
            ));
        }
    };
    let mut diff = None;
    match existing {
        None => {}
        Some(Err(why)) => find(
            Severity::Refuse,
            format!("{} exists but {why}; move it away first", target.display()),
        ),
        Some(Ok(_)) if !opts.upgrade => find(
            Severity::Refuse,
            format!(
                "{name} is already installed at {}; pass --upgrade to replace it",
                target.display()
            ),
        ),
        Some(Ok(old)) => {
            let d = Diff::between(&old, &manifest);
            for e in &d.entries {
                find(
                    Severity::Pass,
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
                    Severity::Pass
                } else {
                    Severity::Review
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
    let go = verdict == Severity::Pass || (verdict == Severity::Review && opts.yes);
    if go {
        let root = staging
            .open_dir(&staged)
            .map_err(|e| SkillError::io("open the staged package", e.into()))?;
        write_manifest_in(&root, &manifest)?;
        // The package's root: a folder in `pkg`, or `pkg` itself when the package has
        // no top folder.
        let (from_dir, from) = if staged.as_os_str().is_empty() {
            (&stage_dir, Path::new("pkg"))
        } else {
            (&staging, staged.as_path())
        };
        let moved = if done.diff.is_some() {
            from_dir.rename_exchange(from, &into, Path::new(&name))
        } else {
            from_dir.rename_noreplace(from, &into, Path::new(&name))
        };
        moved.map_err(|e| {
            SkillError::io(
                format!("move the staged package to {}", target.display()),
                e.into(),
            )
        })?;
        done.installed = true;
    }
    done.inspection = inspection;
    // The staging directory (now holding the replaced installation, if any) goes here.
    stage.close()?;
    Ok(done)
}

/// The staging directory in the install directory: removed (without following any
/// link in it) when the installation ends, whichever way it ends.
struct Stage<'a> {
    into: &'a cordon_fs::Dir,
    name: PathBuf,
}

impl Stage<'_> {
    fn close(mut self) -> Result<(), SkillError> {
        let name = std::mem::take(&mut self.name);
        self.into
            .remove_tree(&name)
            .map_err(|e| SkillError::io("remove the staging directory", e.into()))
    }
}

impl Drop for Stage<'_> {
    fn drop(&mut self) {
        if !self.name.as_os_str().is_empty() {
            let _ = self.into.remove_tree(&self.name);
        }
    }
}

/// [`read_manifest`] of the package `name` in the open install directory `into`.
fn read_manifest_in(into: &cordon_fs::Dir, name: &str) -> Result<Manifest, ManifestError> {
    let bytes = into
        .open_dir(Path::new(name))
        .and_then(|d| d.read(Path::new(MANIFEST_NAME), MANIFEST_MAX))
        .map_err(|e| ManifestError::Missing(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| ManifestError::Unreadable(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| ManifestError::Invalid(e.to_string()))
}

/// Read the manifest of an installed package.
pub fn read_manifest(dir: &Path) -> Result<Manifest, ManifestError> {
    // Only a regular file is read (a FIFO there would block for ever).
    let p = dir.join(MANIFEST_NAME);
    let bytes = cordon_fs::read_regular(&p, MANIFEST_MAX).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::WrongType(_) => ManifestError::Unreadable(e.to_string()),
        _ => ManifestError::Missing(e.to_string()),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| ManifestError::Unreadable(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| ManifestError::Invalid(e.to_string()))
}

/// Why an installed package's manifest could not be read ([`read_manifest`]); each
/// holds the underlying error's text. Said of the package: "PACKAGE has no readable …".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest cannot be opened (it is missing, or the package is not a directory).
    Missing(String),
    /// The manifest cannot be read, or is not UTF-8.
    Unreadable(String),
    /// The manifest is not a valid manifest.
    Invalid(String),
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestError::Missing(e) => write!(
                f,
                "has no readable {MANIFEST_NAME} ({e}), so cordon did not install it"
            ),
            ManifestError::Unreadable(e) => write!(f, "its {MANIFEST_NAME} cannot be read ({e})"),
            ManifestError::Invalid(e) => write!(f, "its {MANIFEST_NAME} is not valid ({e})"),
        }
    }
}

impl std::error::Error for ManifestError {}
