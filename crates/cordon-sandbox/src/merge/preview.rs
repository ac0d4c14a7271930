//! What merging a layer would do, without doing it (`cordon changes show`).

use super::{MAX_DEPTH, git_config_refusal, kind_of};
use crate::changes::Layer;
use crate::error::SandboxError;
use cordon_policy::planted::{Leave, judge_left};
use std::path::{Path, PathBuf};

/// One entry of a layer, as [`preview_layer`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Pending {
    /// Where it would go on the host.
    pub path: PathBuf,
    /// `write` (a file or symlink), `dir`, or `delete`.
    pub change: &'static str,
    /// Why the merge would refuse it.
    pub refused: Option<String>,
}

/// What merging `layer` would do, without doing it (for `cordon changes show`).
pub fn preview_layer(layer: &Layer, home: &Path) -> Result<Vec<Pending>, SandboxError> {
    let mut out = Vec::new();
    let mut stack = vec![(layer.upper.clone(), layer.root.clone(), 0usize)];
    while let Some((dir, at, depth)) = stack.pop() {
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| SandboxError::io(format!("cannot read {}", dir.display()), e))?;
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            use std::os::unix::fs::{FileTypeExt, MetadataExt};
            let path = at.join(e.file_name());
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            let ft = meta.file_type();
            if ft.is_char_device() && meta.rdev() == 0 {
                out.push(Pending {
                    path,
                    change: "delete",
                    refused: None,
                });
                continue;
            }
            if ft.is_socket() {
                continue;
            }
            let (kind, _) = kind_of(meta.mode());
            let refused = match judge_left(&path, kind, home) {
                Leave::Refuse(r) | Leave::Hold(r) => Some(r),
                Leave::CheckGitConfig => std::fs::read(e.path()).map_or_else(
                    |_| Some("it cannot be read".into()),
                    |b| git_config_refusal(&b),
                ),
                Leave::Keep if depth >= MAX_DEPTH => Some("it is too deep".into()),
                Leave::Keep => None,
            };
            let is_dir = ft.is_dir();
            out.push(Pending {
                path: path.clone(),
                change: if is_dir { "dir" } else { "write" },
                refused: refused.clone(),
            });
            if is_dir && refused.is_none() {
                stack.push((e.path(), path, depth + 1));
            }
        }
    }
    Ok(out)
}
