//! A structured action's approval is bound to the content of its inputs.
//!
//! The inputs are every declared path and every argument that names an existing file
//! (the script `python3 pub.py` runs). They are read when the request is reviewed (their
//! digest is folded into the approval fingerprint, so a human approves these files) and
//! again right before launch: a change in between is a new question. Small regular
//! files (at most [`PIN_FILE_MAX`] each, [`PIN_TOTAL_MAX`] together) are pinned: the
//! bytes that were hashed are written to a private directory and shown read-only at
//! their path inside the sandbox, so what runs is what was hashed. A declared read path
//! under the sandbox's private scratch space (`/tmp`, `/var/tmp`, `/dev/shm`) is bound
//! back in (pinned, or the host path read-only), so it is readable inside.
//!
//! Residual window: directories, files past the pin limits and runs in the fallback tier
//! (no mounts) are read from the host during the run.

use crate::bound::{CONTENT_BUDGET, inspect};
use cordon_action::{Access, ActionRequest};
use std::path::{Path, PathBuf};

/// Largest input pinned into the sandbox from memory.
pub const PIN_FILE_MAX: u64 = 1024 * 1024;
/// Most bytes pinned per run, all inputs together.
pub const PIN_TOTAL_MAX: u64 = 4 * 1024 * 1024;

/// The scratch directories the sandbox replaces with its own.
const SCRATCH: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// One input as it was read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Input {
    /// The path as the request names it (absolute).
    pub(crate) path: PathBuf,
    /// What was found there.
    pub(crate) state: String,
    /// Whether the run only reads it (a declared read path, or an argument naming a
    /// file): only those are pinned or bound in; a path the run changes is not.
    #[serde(skip)]
    pub(crate) read: bool,
    /// The bytes to pin, for a small regular file.
    #[serde(skip)]
    pub(crate) pinned: Option<Vec<u8>>,
}

/// The inputs of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Inputs {
    pub(crate) files: Vec<Input>,
}

impl Inputs {
    /// Read the inputs of `req` now.
    pub(crate) fn read(req: &ActionRequest) -> Inputs {
        let mut paths: Vec<(PathBuf, bool)> = Vec::new();
        let mut add = |p: PathBuf, read: bool| {
            if let Some(seen) = paths.iter_mut().find(|(q, _)| *q == p) {
                seen.1 |= read;
            } else {
                paths.push((p, read));
            }
        };
        for u in &req.paths {
            add(req.cwd.join(&u.path), u.access == Access::Read);
        }
        for (i, a) in req.argv.iter().enumerate() {
            // Every argument naming a file; the program itself only when it lies beneath
            // the working directory (a script), not an installed program.
            let p = req.cwd.join(a);
            if a.is_empty() || (i == 0 && !p.starts_with(&req.cwd)) {
                continue;
            }
            if std::fs::symlink_metadata(&p).is_ok_and(|m| !m.is_dir()) {
                add(p, true);
            }
        }
        let mut budget = CONTENT_BUDGET;
        let mut pin_left = PIN_TOTAL_MAX;
        let files = paths
            .into_iter()
            .map(|(path, read)| {
                let found = inspect(&path, &mut budget);
                let pinned = found.content.filter(|c| {
                    if !read {
                        return false;
                    }
                    let n = c.len() as u64;
                    let fits = n <= PIN_FILE_MAX && n <= pin_left;
                    if fits {
                        pin_left -= n;
                    }
                    fits
                });
                Input {
                    path,
                    state: found.state,
                    read,
                    pinned,
                }
            })
            .collect();
        Inputs { files }
    }

    /// The digest folded into the approval fingerprint; `None` without inputs.
    pub(crate) fn digest(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let mut h = blake3::Hasher::new();
        h.update(b"cordon-action-inputs-v1\0");
        for f in &self.files {
            h.update(f.path.as_os_str().as_encoded_bytes());
            h.update(b"\0");
            h.update(f.state.as_bytes());
            h.update(b"\0");
        }
        Some(h.finalize().to_hex().to_string())
    }

    /// The first input whose state differs in `now`, as a sentence.
    pub(crate) fn changed(&self, now: &Inputs) -> Option<String> {
        for (a, b) in self.files.iter().zip(&now.files) {
            if a != b {
                return Some(format!(
                    "{} changed since the request was reviewed ({} → {})",
                    a.path.display(),
                    a.state,
                    b.state
                ));
            }
        }
        (self.files.len() != now.files.len())
            .then(|| "the request's inputs changed since it was reviewed".to_string())
    }

    /// The inputs to show read-only inside the sandbox: (pinned bytes or `None` for the
    /// host path, the path inside). Pinned files are all of those small enough; other
    /// declared reads only under the scratch space, which the sandbox replaces, and not
    /// beneath `visible` (the roots the sandbox shows anyway).
    pub(crate) fn binds(&self, visible: &[PathBuf]) -> Vec<(Option<&[u8]>, PathBuf)> {
        let mut out = Vec::new();
        for f in &self.files {
            let Ok(real) = std::fs::canonicalize(&f.path) else {
                continue;
            };
            if !f.read {
                continue;
            }
            if let Some(bytes) = &f.pinned {
                out.push((Some(bytes.as_slice()), real));
                continue;
            }
            let scratch = SCRATCH.iter().any(|s| real.starts_with(s));
            let shown = visible.iter().any(|v| real.starts_with(v));
            if scratch && !shown {
                out.push((None, real));
            }
        }
        out
    }

    /// The JSON shown with a pending approval.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.files).unwrap_or(serde_json::Value::Null)
    }
}

/// Where pinned inputs are written for one run: a fresh private directory, removed when
/// dropped.
pub(crate) struct Pins {
    parent: cordon_fs::Dir,
    name: PathBuf,
    dir: cordon_fs::Dir,
    path: PathBuf,
    count: usize,
}

impl Pins {
    /// A fresh directory beneath `state` (cordon's state directory, private).
    pub(crate) fn new(state: &Path) -> Result<Pins, cordon_fs::FsError> {
        let parent = cordon_fs::Dir::create_ambient(&state.join("action-pins"), 0o700)?;
        let (rel, dir) = parent.create_unique_dir("run-", 0o700)?;
        let name = PathBuf::from(rel.file_name().unwrap_or_default());
        let path = parent.path().join(&name);
        Ok(Pins {
            parent,
            name,
            dir,
            path,
            count: 0,
        })
    }

    /// Write `bytes` as a read-only file; its host path.
    pub(crate) fn pin(&mut self, bytes: &[u8]) -> Result<PathBuf, cordon_fs::FsError> {
        self.count += 1;
        let name = PathBuf::from(format!("input-{}", self.count));
        self.dir.write_new(&name, bytes, 0o500)?;
        Ok(self.path.join(name))
    }
}

impl Drop for Pins {
    fn drop(&mut self) {
        let _ = self.parent.remove_tree(&self.name);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    fn req(cwd: &Path, argv: &[&str], paths: serde_json::Value) -> ActionRequest {
        serde_json::from_value(serde_json::json!({
            "actor": "a", "capability": "c", "argv": argv, "cwd": cwd,
            "paths": paths, "side_effect": "none", "reason": "r"
        }))
        .unwrap()
    }

    #[test]
    fn a_script_named_in_argv_is_an_input_and_its_change_is_seen() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pub.py"), "print(1)\n").unwrap();
        let r = req(d.path(), &["python3", "pub.py"], serde_json::json!([]));
        let first = Inputs::read(&r);
        assert_eq!(first.files.len(), 1);
        assert!(first.files[0].pinned.is_some());
        assert_eq!(first.changed(&Inputs::read(&r)), None);
        std::fs::write(d.path().join("pub.py"), "import os; os.system('x')\n").unwrap();
        let now = Inputs::read(&r);
        assert_ne!(first.digest(), now.digest());
        assert!(first.changed(&now).unwrap().contains("pub.py changed"));
    }

    #[test]
    fn large_inputs_are_bound_but_not_pinned() {
        let d = tempfile::tempdir().unwrap();
        let big = vec![b'x'; (PIN_FILE_MAX + 1) as usize];
        std::fs::write(d.path().join("big"), &big).unwrap();
        let r = req(
            d.path(),
            &["/bin/cat"],
            serde_json::json!([{"path": "big", "access": "read"}]),
        );
        let i = Inputs::read(&r);
        assert!(i.files[0].pinned.is_none());
        assert!(i.files[0].state.starts_with("blake3 "), "{i:?}");
    }
}
