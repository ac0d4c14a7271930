//! Which paths the command's Landlock rules and the write observer cover, in each tier:
//! the writable trees of the full tier, and in the fallback tier, where no mount hides
//! the system secrets, the plan's reads and writes split around them.
//!
//! It only computes paths: it must never apply a rule (`landlock.rs` does, in the
//! command's process) nor decide what the sandbox may see (`plan.rs` and
//! `system_secrets.rs` do).

use crate::plan::MountOp;
use crate::spec::SandboxSpec;
use std::path::PathBuf;

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
/// private: the writable roots and the host's own `/tmp` and `/dev/shm`.
fn fallback_write_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut write: Vec<PathBuf> = spec.plan.write_paths.clone();
    write.push(PathBuf::from("/tmp"));
    write.push(PathBuf::from("/dev/shm"));
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

/// Landlock's rules in the fallback tier, where no mount hides the system secrets: the
/// plan's reads and the writable trees, split so that no rule covers a secret this user
/// could read (reads, and writes under `full-access`, which writes beneath `/`). Made
/// only when the fallback tier is used: splitting `/etc` costs about a millisecond.
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
    pub(super) fn new(spec: &SandboxSpec) -> FallbackRules {
        use crate::system_secrets::{readable_system_secrets, without_secrets};
        let secrets = readable_system_secrets();
        let (read, mut list) = without_secrets(spec.plan.fallback_read_paths.clone(), &secrets);
        // Nor may a rule let the command write the cgroup files (under `full-access`,
        // which writes beneath `/`): it could move itself out of its process limit.
        let mut unwritable = secrets.clone();
        unwritable.extend(crate::cgroup::mount_points());
        let (write, write_list) = without_secrets(fallback_write_paths(spec), &unwritable);
        list.extend(write_list);
        list.sort();
        list.dedup();
        FallbackRules {
            read,
            write,
            list,
            proxy_port: None,
        }
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
