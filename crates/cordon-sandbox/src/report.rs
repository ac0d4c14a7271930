//! The denial report: what containment blocked, as far as cordon can observe it, and
//! what this run enforced. This JSON is a contract: the `on-failure` approval flow reads
//! it to decide whether to ask a human. Fields may be added, none removed.
//!
//! What is observable: writes the command attempted where the mount plan or Landlock
//! refuses them (a seccomp listener reports each write-intent system call to the
//! supervisor, which predicts the refusal from the plan; see `observe.rs`), protected
//! paths the command created inside a writable root (removed after the run), and the
//! run's own failures. What is not: a system call refused by seccomp with an errno, a
//! connection refused by the empty network namespace, writes through `openat2` or
//! through descriptors opened before the sandbox — the kernel reports those to the
//! command only. `unobservable` lists them so that a reader never mistakes an empty
//! `blocked` for "nothing was blocked".

use crate::landlock::LandlockOutcome;
use crate::plan::WalkSummary;
use serde::{Deserialize, Serialize};

/// The kind of a blocked action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum BlockedKind {
    /// A filesystem write.
    Write,
    /// A network connection.
    Connect,
    /// A system call.
    Syscall,
    /// A host name the command looked up inside a sandbox whose network namespace is its
    /// own, where no name resolves (the stub answered "no such name").
    Lookup,
    /// A change the run made in a copy-on-write root that the merge kept out of the
    /// host's tree (it would run on the host later). Not something a re-run with more
    /// permission could fix.
    NotMerged,
    /// A change the merge left in the change set for a human to review (a host tool would
    /// obey or run it): `cordon changes show ID`, then `apply` or `discard`.
    Held,
    /// A change the merge left in the change set because the host changed the same entry
    /// while the run went on; the host's version was kept.
    Conflict,
    /// A host entry the run deleted or replaced that the host made or changed while the
    /// run went on: kept (nothing of the run's waits for it).
    HostKept,
}

impl BlockedKind {
    /// Stable short name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            BlockedKind::Write => "write",
            BlockedKind::Connect => "connect",
            BlockedKind::Syscall => "syscall",
            BlockedKind::Lookup => "lookup",
            BlockedKind::NotMerged => "not-merged",
            BlockedKind::Held => "held",
            BlockedKind::Conflict => "conflict",
            BlockedKind::HostKept => "host-kept",
        }
    }
}

/// One blocked action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// What kind of action.
    pub kind: BlockedKind,
    /// The path, address or system call.
    pub target: String,
    /// One sentence.
    pub detail: String,
}

/// The containment tier a run used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
// Not `non_exhaustive`: the gate names each tier in its audit record (`RunTier`), so a
// new one is a compile error there.
pub enum Tier {
    /// Namespaces, the mount plan, Landlock and seccomp.
    #[default]
    Full,
    /// Landlock and seccomp only (user namespaces unavailable).
    Fallback,
}

impl Tier {
    /// `full` or `fallback`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Full => "full",
            Tier::Fallback => "fallback",
        }
    }
}

/// What the run enforced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enforced {
    /// Namespaces created (`user`, `mount`, `pid`, `ipc`, `uts`, `net`).
    pub namespaces: Vec<String>,
    /// The mount plan was applied.
    pub mounts: bool,
    /// Landlock's result.
    pub landlock: LandlockOutcome,
    /// seccomp filters installed.
    pub seccomp: bool,
    /// `PR_SET_NO_NEW_PRIVS` set.
    pub no_new_privs: bool,
    /// Every capability dropped.
    pub capabilities_dropped: bool,
    /// `none`, `proxy` or `full`.
    pub network: String,
    /// Secrets masked by the plan.
    pub masked: usize,
    /// The bounded walk of the writable roots.
    pub walk: WalkSummary,
    /// How the number of processes was bounded.
    pub processes: ProcessLimit,
    /// Bytes of the scratch space shared by `/tmp`, `/var/tmp` and `/dev/shm` (full
    /// tier; 0 in the fallback tier, which has none of its own).
    pub scratch_bytes: u64,
    /// The most bytes the run's changes to its writable roots could take (full tier).
    #[serde(default)]
    pub changes_limit: Option<u64>,
}

/// How a run's number of processes was bounded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessLimit {
    /// Processes and threads the command could have at once (cordon's own not
    /// counted); `None` when nothing held a limit.
    pub max: Option<u64>,
    /// `cgroup-v1`, `cgroup-v2`, `rlimit` or `none`.
    pub by: String,
    /// The pids cgroup of the run (removed after it).
    pub cgroup: Option<String>,
    /// What the mechanism counts, or why no limit held.
    pub note: Option<String>,
}

/// The report of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialReport {
    /// Actions containment blocked, as far as observable.
    pub blocked: Vec<Blocked>,
    /// The tier used.
    pub tier: Tier,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: i32,
    /// What was enforced.
    pub enforced: Enforced,
    /// Kinds of denial this run cannot observe.
    pub unobservable: Vec<String>,
    /// What the merge of the copy-on-write roots did (refusals are in `blocked`).
    #[serde(default)]
    pub merged: MergeCounts,
    /// What this run's tier does not protect, one sentence each: empty at the full
    /// tier; at the fallback tier, what cordon printed before the command ran (see
    /// [`fallback_gaps`](crate::fallback_gaps)).
    #[serde(default)]
    pub unprotected: Vec<String>,
    /// What reached the host's tree, path by path, and the change set that still holds
    /// what did not.
    #[serde(default)]
    pub changes: ChangesReport,
}

/// The paths a run's merge wrote and removed, and where the rest waits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangesReport {
    /// Each change that reached the host (`write`, `symlink`, `dir` with its entry count,
    /// `delete`), at most 10,000.
    pub landed: Vec<crate::merge::Landed>,
    /// Changes that landed beyond those listed.
    pub unlisted: u64,
    /// The change set kept for review or completion (`cordon changes show ID`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_set: Option<String>,
    /// The whole set was held for review (`--hold`): nothing was merged.
    pub held: bool,
    /// Compiled caches the run left that were not merged (Python bytecode, a bundler's
    /// cache: `cordon_policy::planted::COMPILED_CACHE`), counted rather than listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub caches: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Entries the merge wrote into or removed from the host's writable roots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeCounts {
    /// Files, symlinks and directories written.
    pub merged: u64,
    /// Entries the run deleted, removed from the host's tree.
    pub removed: u64,
    /// How long the merge took, in microseconds.
    pub micros: u64,
}

/// The standing list of denials the kernel reports only to the command.
pub(crate) fn unobservable() -> Vec<String> {
    [
        "writes through openat2 or through descriptors opened before the sandbox",
        "system calls refused by seccomp (the command sees EPERM or ENOSYS)",
        "connections refused by the empty network namespace or Landlock (the command sees ENETUNREACH or EACCES)",
        "reads of masked secrets (they read as empty)",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect()
}
