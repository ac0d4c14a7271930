//! The critical-delete guard: `/`, top-level directories, `HOME`, the workspace and
//! their ancestors.

use super::{GuardHit, normal_components};
use std::path::Path;

/// Is deleting `path` catastrophic: `/`, a top-level directory, `HOME`, the workspace or any
/// of their ancestors?
pub fn critical_delete(path: &Path, home: &Path, workspace: &Path) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "critical-delete",
            pattern,
        })
    };
    let depth = normal_components(path).len();
    if depth <= 1 {
        return hit(format!("{} is / or a top-level directory", path.display()));
    }
    if home.starts_with(path) {
        return hit(format!("{} is HOME or contains it", path.display()));
    }
    if workspace.starts_with(path) {
        return hit(format!(
            "{} is the workspace or contains it",
            path.display()
        ));
    }
    None
}
