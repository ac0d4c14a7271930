//! The protected-write guard: persistence and agent configuration under `HOME`, system
//! files, raw devices, cordon's own state, agent and git configuration anywhere, and
//! every credential.

use super::{
    GuardHit, PROTECTED_ANYWHERE_COMPONENTS, PROTECTED_ANYWHERE_FILES,
    PROTECTED_ANYWHERE_SEQUENCES, PROTECTED_HOME_PATHS, PROTECTED_SYSTEM_PATHS, name_eq,
    normal_components, rel_matches, rest_after, sensitive_read_comps,
};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Is writing `path` denied outright (persistence, agent or git configuration)?
///
/// cordon's state directories are resolved for each call; a caller that checks many
/// paths (a walk of a tree) resolves them once with [`StateDirs::for_home`] and calls
/// [`protected_write_in`].
pub fn protected_write(path: &Path, home: &Path) -> Option<GuardHit> {
    protected_write_in(path, home, &StateDirs::for_home(home))
}

/// [`protected_write`] with cordon's state directories resolved once by the caller.
pub fn protected_write_in(path: &Path, home: &Path, state: &StateDirs) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "protected-write",
            pattern,
        })
    };
    let comps = normal_components(path);
    if let Some(rest) = rest_after(&comps, home)
        && let Some(rel) = PROTECTED_HOME_PATHS.iter().find(|r| rel_matches(rest, r))
    {
        return hit(format!("~/{rel}"));
    }
    if let Some(abs) = PROTECTED_SYSTEM_PATHS
        .iter()
        .find(|a| rel_matches(&comps, a.trim_start_matches('/')))
    {
        return hit((*abs).to_string());
    }
    if raw_device(&comps) {
        return hit(format!("{} (a raw disk or memory device)", path.display()));
    }
    if let Some(state) = state.0.iter().find(|d| rest_after(&comps, d).is_some()) {
        return hit(format!(
            "{} (cordon's own state: store, audit log, key)",
            state.display()
        ));
    }
    for c in &comps {
        if let Some(p) = PROTECTED_ANYWHERE_COMPONENTS.iter().find(|p| name_eq(c, p)) {
            return hit(format!("{p} (agent or IDE configuration)"));
        }
    }
    if let Some(last) = comps.last()
        && let Some(p) = PROTECTED_ANYWHERE_FILES.iter().find(|p| name_eq(last, p))
    {
        return hit((*p).to_string());
    }
    for seq in PROTECTED_ANYWHERE_SEQUENCES {
        if comps
            .windows(seq.len())
            .any(|w| w.iter().zip(seq.iter()).all(|(a, b)| name_eq(a, b)))
        {
            return hit(seq.join("/"));
        }
    }
    // Writing a credential file is as bad as reading one: it can plant a key.
    if let Some(hit) = sensitive_read_comps(&comps, home) {
        return Some(GuardHit {
            guard: "protected-write",
            pattern: hit.pattern,
        });
    }
    None
}

/// cordon's state directory (its store, audit log, signing key and export queue), as
/// [`crate::state_dir::state_dir`] finds it for the store, and the default under `home`
/// whatever the environment says; each also resolved through symlinks. No agent writes
/// cordon's own records, whatever the mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDirs(Vec<PathBuf>);

impl StateDirs {
    /// The directories as the environment names them now, for the home `home`.
    pub fn for_home(home: &Path) -> StateDirs {
        StateDirs::with(home, crate::state_dir::state_dir())
    }

    /// The directories for the home `home` and the state directory `resolved` (as
    /// [`crate::state_dir::state_dir`] found it).
    pub(crate) fn with(home: &Path, resolved: Option<PathBuf>) -> StateDirs {
        let mut dirs = vec![home.join(".local/state/cordon")];
        // Usually the same directory (HOME's default): resolved once.
        dirs.extend(resolved.filter(|r| *r != dirs[0]));
        let canonical: Vec<_> = dirs
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect();
        for c in canonical {
            if !dirs.contains(&c) {
                dirs.push(c);
            }
        }
        dirs.retain(|d| d.components().count() > 2);
        StateDirs(dirs)
    }
}

/// Block devices and memory under `/dev`: writing one bypasses every file permission
/// (`dd of=/dev/sda`, `/dev/mem`).
fn raw_device(comps: &[&OsStr]) -> bool {
    const DISK_PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "sr",
    ];
    const EXACT: &[&str] = &["mem", "kmem", "port"];
    match comps {
        [dev, sub, ..]
            if name_eq(dev, "dev") && (name_eq(sub, "mapper") || name_eq(sub, "disk")) =>
        {
            true
        }
        [dev, name] if name_eq(dev, "dev") => {
            let n = name.to_string_lossy();
            EXACT.contains(&n.as_ref())
                || DISK_PREFIXES.iter().any(|p| {
                    n.strip_prefix(p).is_some_and(|r| {
                        r.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_lowercase())
                    })
                })
        }
        _ => false,
    }
}

/// Paths inside a writable `root` that the sandbox must keep read-only (bound read-only
/// when they exist, masked so they cannot be created when they do not).
pub fn protected_paths_in_root(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_ANYWHERE_COMPONENTS
        .iter()
        .chain(PROTECTED_ANYWHERE_FILES)
        .map(|n| root.join(n))
        .collect();
    out.extend(
        PROTECTED_ANYWHERE_SEQUENCES
            .iter()
            .map(|seq| root.join(seq.join("/"))),
    );
    out
}
