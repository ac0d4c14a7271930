//! Which paths the command's Landlock rules and the write observer cover, in each tier:
//! the writable trees of the full tier, and in the fallback tier, where no mount hides
//! anything, the plan's reads and writes split around what the full tier would mask.
//!
//! It only computes paths: it must never apply a rule (`landlock.rs` does, in the
//! command's process) nor decide what the sandbox may see (`plan.rs` and
//! `system_secrets.rs` do).

use crate::error::SandboxError;
use crate::plan::MountOp;
use crate::spec::SandboxSpec;
use cordon_policy::settings::SandboxMode;
use std::path::{Path, PathBuf};

/// The trees Landlock lets the command write at the full tier (in the sandbox's view):
/// the writable roots and the scratch space. The device files get their own, narrower
/// rule in `landlock::apply`.
pub(super) fn landlock_write_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut write: Vec<PathBuf> = spec.plan.write_paths.clone();
    write.extend(spec.plan.ops.iter().filter_map(|op| match op {
        MountOp::Scratch { path } => Some(path.clone()),
        _ => None,
    }));
    write
}

/// The trees Landlock lets the command write in the fallback tier, where nothing is
/// private: the writable roots and the run's own scratch directory (`scratch.rs`), never
/// the host's `/tmp`, `/var/tmp` or `/dev/shm`, which every process of the host shares.
fn fallback_write_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut write: Vec<PathBuf> = spec.plan.write_paths.clone();
    write.extend(spec.plan.fallback_scratch.iter().cloned());
    write
}

/// The full tier's writable trees: those of both tiers, and the developer caches, which
/// only the full tier mounts from a slot (in the fallback tier they are the host's own,
/// and stay read-only).
pub(super) fn full_tier_write_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut write = landlock_write_paths(spec);
    write.extend(spec.plan.cache_paths());
    write
}

/// Landlock's rules in the fallback tier, where no mount hides anything: the plan's
/// reads (an allowlist) and the writable trees, split so that no rule covers what the
/// full tier would mask (the system secrets this user could read, HOME's secrets,
/// cordon's state directory, `--mask` paths) wherever that is possible (reads, and
/// writes under `full-access`, which writes beneath `/`). A secret inside a writable
/// root stays covered: splitting the root would refuse every new file at its top (a
/// rule lets the command create beneath it, or not at all), and the printed list of
/// what this tier does not protect says so. Made only when the fallback tier is used:
/// splitting `/etc` costs about a millisecond.
pub(super) struct FallbackRules {
    pub(super) read: Vec<PathBuf>,
    pub(super) write: Vec<PathBuf>,
    pub(super) list: Vec<PathBuf>,
    /// The host loopback port of the fallback forwarder to the egress proxy: the one
    /// destination the supervisor connects the command to (`connect_guard.rs`), and the
    /// one the proxy variables name.
    pub(super) proxy_port: Option<u16>,
}

impl FallbackRules {
    /// The rules of `spec`; refused when cordon's own state directory lies inside a
    /// writable root, where no rule could keep the command from reading the audit log
    /// and the approval store, or from rewriting them.
    pub(super) fn new(spec: &SandboxSpec) -> Result<FallbackRules, SandboxError> {
        use crate::system_secrets::{readable_system_secrets, without_secrets};
        let full_access = matches!(spec.mode, SandboxMode::FullAccess);
        let in_root = |p: &Path| {
            spec.plan
                .write_paths
                .iter()
                .find(|r| !full_access && p.starts_with(r))
                .cloned()
        };
        if let Some((state, root)) = spec
            .plan
            .state_masks
            .iter()
            .find_map(|s| in_root(s).map(|r| (s, r)))
        {
            return Err(SandboxError::setup(format!(
                "cordon's state directory ({}) lies inside the writable root {}, and the fallback tier (no mounts) cannot hide it from the command, which could read and rewrite the audit log and the approval store; set CORDON_STATE_DIR to a directory outside the writable roots",
                state.display(),
                root.display()
            )));
        }
        let mut hidden = readable_system_secrets();
        hidden.extend(
            spec.plan
                .fallback_unreadable
                .iter()
                .filter(|p| in_root(p).is_none())
                .filter_map(|p| std::fs::canonicalize(p).ok()),
        );
        hidden.sort();
        hidden.dedup();
        let (read, mut list) = without_secrets(spec.plan.fallback_read_paths.clone(), &hidden);
        // Nor may a rule let the command write the cgroup files (under `full-access`,
        // which writes beneath `/`): it could move itself out of its process limit.
        let mut unwritable = hidden;
        unwritable.extend(crate::cgroup::mount_points());
        let (write, write_list) = without_secrets(fallback_write_paths(spec), &unwritable);
        list.extend(write_list);
        list.sort();
        list.dedup();
        Ok(FallbackRules {
            read,
            write,
            list,
            proxy_port: None,
        })
    }
}

/// Where a write is expected to succeed, for the write observer: the writable trees
/// (the fallback tier's split ones, when given) and the device files.
pub(super) fn observed_write_paths(
    spec: &SandboxSpec,
    fallback: Option<&FallbackRules>,
) -> Vec<PathBuf> {
    let mut write = match fallback {
        Some(rules) => rules.write.clone(),
        None => full_tier_write_paths(spec),
    };
    write.extend(crate::landlock::DEVICE_FILES.iter().map(PathBuf::from));
    write
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use crate::plan::HomeView;
    use crate::spec::SandboxBuilder;
    use std::fs;

    /// With HOME visible, every entry of HOME is granted but its secrets and cordon's
    /// state; writes reach the roots and the scratch directory, never the host's `/tmp`
    /// or `/dev/shm`; a state directory inside a writable root refuses the fallback.
    #[test]
    fn secrets_and_state_are_left_out_and_only_the_roots_and_scratch_are_written() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let home = base.join("home");
        let ws = home.join("proj");
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::write(home.join(".ssh/id_ed25519"), "key").unwrap();
        fs::create_dir_all(home.join(".aws")).unwrap();
        fs::write(home.join(".aws/credentials"), "key").unwrap();
        fs::write(home.join(".netrc"), "key").unwrap();
        fs::write(home.join(".bashrc"), "").unwrap();
        let state = home.join(".local/state/cordon");
        fs::create_dir_all(&state).unwrap();
        fs::create_dir_all(home.join(".local/bin")).unwrap();
        let scratch = base.join("scratch");
        fs::create_dir_all(&scratch).unwrap();
        let mut spec = SandboxBuilder::new(["true"])
            .workspace(&ws)
            .home(&home)
            .home_view(HomeView::Visible)
            .build()
            .unwrap();
        spec.plan.fallback_unreadable.push(state.clone());
        spec.plan.state_masks.push(state.clone());
        spec.plan.fallback_scratch = Some(scratch.clone());
        let rules = FallbackRules::new(&spec).unwrap();
        let covers = |rules: &[PathBuf], p: &Path| rules.iter().any(|r| p.starts_with(r));
        for secret in [
            home.join(".ssh/id_ed25519"),
            home.join(".aws/credentials"),
            home.join(".netrc"),
            state.join("audit.jsonl"),
        ] {
            assert!(
                !covers(&rules.read, &secret),
                "{secret:?}: {:?}",
                rules.read
            );
            assert!(!covers(&rules.write, &secret), "{secret:?}");
        }
        assert!(covers(&rules.read, &home.join(".bashrc")));
        assert!(covers(&rules.read, &home.join(".local/bin")));
        assert!(rules.list.contains(&home) && rules.list.contains(&home.join(".local")));
        assert_eq!(rules.write, vec![ws.clone(), scratch]);
        for shared in ["/tmp", "/var/tmp", "/dev/shm"] {
            assert!(!covers(&rules.write, Path::new(shared)), "{shared}");
            assert!(!covers(&rules.read, Path::new(shared)), "{shared}");
        }

        // cordon's state inside the workspace: no rule could hide it.
        spec.plan.state_masks = vec![ws.join(".state")];
        let e = FallbackRules::new(&spec).err().unwrap();
        assert!(e.message.contains("CORDON_STATE_DIR"), "{e}");
    }
}
