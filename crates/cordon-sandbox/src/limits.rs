//! Resource limits that must hold whoever runs cordon: how the process limit is
//! enforced for one run, the size of the scratch space, and what this host can enforce
//! for the current user (for `cordon doctor`).
//!
//! # The process limit
//!
//! Every run has one: [`DEFAULT_PROCESS_LIMIT`] unless the caller sets another. It
//! counts processes and threads at once, and cordon adds its own few (the helper, PID 1,
//! the proxy's forwarder) so that the number is the command's. Enforced, in order of
//! preference:
//!
//! 1. a **pids cgroup** (`cgroup.rs`), which holds for every user, root included;
//! 2. **`RLIMIT_NPROC`**, which the kernel does not apply to a task whose real uid is the
//!    host's root (it exempts `INIT_USER`), but holds for anyone else. Since Linux 5.14 it
//!    is counted per user namespace, so at the full tier it counts the sandbox's own
//!    processes only (checked by `sandbox_limits.rs`); in the fallback tier, which has
//!    no user namespace, and on older kernels it counts every process of the user on the
//!    host, so there it stands in only for a limit the caller asked for.
//!
//! A limit the caller asked for that neither can hold refuses the run; the default is
//! applied where it can be, and the report says which mechanism held (or none).
//!
//! # The default of 4096
//!
//! A fork bomb must stop long before the host's `pid_max` (32768 by default) or its
//! memory runs out, while a parallel build on a large machine must not: `make -j64`
//! with compilers that start a dozen threads each is around a thousand tasks, a JVM
//! build a few hundred threads. 4096 leaves that room four times over and keeps a
//! runaway to an eighth of the default PID space.
//!
//! # The scratch space
//!
//! `/tmp`, `/var/tmp` and `/dev/shm` share one tmpfs (see `plan.rs`), whose pages are
//! the host's memory and are not counted by `RLIMIT_AS`. Its default size is a quarter
//! of the host's RAM, at most [`DEFAULT_TMP_SIZE_MAX`], and no more than the address
//! space limit when one is set.

use crate::cgroup::{self, Version};
use crate::report::{ProcessLimit, Tier};
use serde::Serialize;

/// Processes and threads the command may have at once when the caller sets no limit.
pub const DEFAULT_PROCESS_LIMIT: u64 = 4096;

/// The largest default size of the scratch space (`/tmp`, `/var/tmp`, `/dev/shm`).
pub const DEFAULT_TMP_SIZE_MAX: u64 = 4 << 30;

/// The smallest scratch space accepted (a tmpfs of size 0 would be unbounded).
pub const MIN_TMP_SIZE: u64 = 1 << 20;

/// cordon's own processes in the sandbox's cgroup and user namespace (the helper,
/// PID 1, the forwarder), added to the command's limit.
pub(crate) const OWN_PROCESSES: u64 = 3;

/// The host's RAM in bytes.
pub fn host_memory() -> Option<u64> {
    nix::sys::sysinfo::sysinfo().ok().map(|i| i.ram_total())
}

/// The default size of the scratch space: a quarter of the host's RAM, at most
/// [`DEFAULT_TMP_SIZE_MAX`], at most `memory_limit` (the address-space limit) when
/// given, and at least [`MIN_TMP_SIZE`].
pub fn default_tmp_size(memory_limit: Option<u64>) -> u64 {
    let quarter = host_memory().map_or(DEFAULT_TMP_SIZE_MAX, |m| m / 4);
    quarter
        .min(DEFAULT_TMP_SIZE_MAX)
        .min(memory_limit.unwrap_or(u64::MAX))
        .max(MIN_TMP_SIZE)
}

/// Whether this process's real uid is the host's root (to whom the kernel does not
/// apply `RLIMIT_NPROC`), read from the uid map rather than `getuid`: root in a
/// container's user namespace is somebody else on the host.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
pub(crate) fn host_root() -> bool {
    let uid = nix::unistd::getuid().as_raw();
    let map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    map.lines().any(|l| {
        let f: Vec<u64> = l
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        matches!(f[..], [inside, outside, count]
            if u64::from(uid) >= inside && u64::from(uid) - inside < count && outside + (u64::from(uid) - inside) == 0)
    })
}

/// Whether `RLIMIT_NPROC` is counted per user namespace (Linux 5.14 and later).
pub(crate) fn nproc_per_user_namespace() -> bool {
    let release = nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (5, 14)
}

/// What the host offers the process limit.
pub(crate) struct Means<'a> {
    /// The run's pids cgroup, or why there is none.
    pub cgroup: Result<(Version, &'a str), String>,
    pub host_root: bool,
    pub per_user_namespace: bool,
    pub tier: Tier,
}

/// How one run's process limit is held: what the report says, and the `RLIMIT_NPROC` to
/// set in the command's process (`None`: leave it). The caller has already written the
/// cgroup's `pids.max` (`cgroup_max`) when `means.cgroup` is `Ok`. `Err`: the caller
/// asked for a limit this host cannot enforce.
pub(crate) fn choose(
    asked: Option<u64>,
    means: Means<'_>,
) -> Result<(ProcessLimit, Option<u64>), String> {
    let n = asked.unwrap_or(DEFAULT_PROCESS_LIMIT);
    let total = n.saturating_add(OWN_PROCESSES);
    let why_not_cgroup = match means.cgroup {
        Ok((version, path)) => {
            return Ok((
                ProcessLimit {
                    max: Some(n),
                    by: version.as_str().into(),
                    cgroup: Some(path.to_string()),
                    note: None,
                },
                None,
            ));
        }
        Err(why) => why,
    };
    let counted_alone = means.tier == Tier::Full && means.per_user_namespace;
    if !means.host_root && (asked.is_some() || counted_alone) {
        let note = if counted_alone {
            "RLIMIT_NPROC, counted in the sandbox's user namespace: only its own processes"
        } else {
            "RLIMIT_NPROC, which here counts every process of this user on the host"
        };
        return Ok((
            ProcessLimit {
                max: Some(n),
                by: "rlimit".into(),
                cgroup: None,
                note: Some(format!("{note} (no pids cgroup: {why_not_cgroup})")),
            },
            Some(total),
        ));
    }
    let why_not_rlimit = if means.host_root {
        "cordon runs as root, to whom the kernel does not apply RLIMIT_NPROC"
    } else {
        "RLIMIT_NPROC would count every process of this user on the host"
    };
    if asked.is_some() {
        return Err(format!(
            "the process limit cannot be enforced here: {why_not_rlimit}, and no pids cgroup could be made ({why_not_cgroup}); run cordon as an ordinary user, or give it a writable pids cgroup"
        ));
    }
    Ok((
        ProcessLimit {
            max: None,
            by: "none".into(),
            cgroup: None,
            note: Some(format!(
                "no process limit: {why_not_rlimit}, and no pids cgroup could be made ({why_not_cgroup})"
            )),
        },
        None,
    ))
}

/// What this host can enforce for the current user, for `cordon doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LimitsReport {
    /// A pids cgroup can be made (tried for real: made empty and removed).
    pub pids_cgroup: bool,
    /// Which hierarchy (`cgroup-v1`, `cgroup-v2`) and where, or why not.
    pub pids_cgroup_detail: String,
    /// `RLIMIT_NPROC` limits this user's processes (it does not limit root's).
    pub rlimit_nproc_holds: bool,
    /// What `RLIMIT_NPROC` counts here.
    pub rlimit_nproc_detail: String,
    /// How a sandbox's processes are bounded: `cgroup-v1`, `cgroup-v2`, `rlimit` or
    /// `none` (at the full tier, with the default limit).
    pub processes: String,
    /// The process limit when none is asked for.
    pub default_process_limit: u64,
    /// The default size of the scratch space (`/tmp`, `/var/tmp`, `/dev/shm`).
    pub default_tmp_size: u64,
    /// What bounds memory.
    pub memory: String,
}

/// Probe what this host can enforce for the current user. Makes and removes an empty
/// cgroup; never moves this process.
pub fn probe_limits() -> LimitsReport {
    let cg = cgroup::probe();
    let root = host_root();
    let per_ns = nproc_per_user_namespace();
    let (pids_cgroup_detail, processes) = match &cg {
        Ok(p) => (
            format!("{} in {}", p.version.as_str(), p.dir.display()),
            p.version.as_str().to_string(),
        ),
        Err(why) => (
            why.clone(),
            if root { "none" } else { "rlimit" }.to_string(),
        ),
    };
    let rlimit_nproc_detail = match (root, per_ns) {
        (true, _) => "no: cordon runs as root, to whom the kernel does not apply RLIMIT_NPROC".into(),
        (false, true) => "yes: counted per user namespace, so at the full tier it counts only the sandbox's processes; in the fallback tier, every process of this user".into(),
        (false, false) => "yes, but this kernel (before 5.14) counts every process of this user on the host, so only an explicit limit uses it".into(),
    };
    LimitsReport {
        pids_cgroup: cg.is_ok(),
        pids_cgroup_detail,
        rlimit_nproc_holds: !root,
        rlimit_nproc_detail,
        processes,
        default_process_limit: DEFAULT_PROCESS_LIMIT,
        default_tmp_size: default_tmp_size(None),
        memory: format!(
            "RLIMIT_AS per process when a memory limit is given; no memory cgroup, so the sandbox's total is not capped; /tmp, /var/tmp and /dev/shm share one tmpfs of {} MiB by default (a quarter of RAM, at most {} MiB, at most the memory limit)",
            default_tmp_size(None) >> 20,
            DEFAULT_TMP_SIZE_MAX >> 20
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn means(cgroup: Result<(Version, &str), String>, root: bool, tier: Tier) -> Means<'_> {
        Means {
            cgroup,
            host_root: root,
            per_user_namespace: true,
            tier,
        }
    }

    #[test]
    fn a_cgroup_holds_for_everyone() {
        for root in [true, false] {
            let (r, rl) = choose(
                Some(50),
                means(
                    Ok((Version::V1, "/sys/fs/cgroup/pids/cordon-1")),
                    root,
                    Tier::Full,
                ),
            )
            .unwrap();
            assert_eq!((r.max, r.by.as_str(), rl), (Some(50), "cgroup-v1", None));
        }
    }

    #[test]
    fn root_without_a_cgroup_refuses_an_asked_limit_and_reports_none_by_default() {
        let err = choose(
            Some(50),
            means(Err("not writable".into()), true, Tier::Full),
        );
        assert!(err.unwrap_err().contains("root"));
        let (r, rl) = choose(None, means(Err("x".into()), true, Tier::Full)).unwrap();
        assert_eq!((r.max, r.by.as_str(), rl), (None, "none", None));
    }

    #[test]
    fn others_get_rlimit_nproc_with_cordons_own_processes_added() {
        let (r, rl) = choose(Some(50), means(Err("x".into()), false, Tier::Full)).unwrap();
        assert_eq!((r.max, r.by.as_str(), rl), (Some(50), "rlimit", Some(53)));
        let (_, rl) = choose(None, means(Err("x".into()), false, Tier::Full)).unwrap();
        assert_eq!(rl, Some(DEFAULT_PROCESS_LIMIT + OWN_PROCESSES));
        // Without a user namespace the default would count the user's host processes.
        let (r, rl) = choose(None, means(Err("x".into()), false, Tier::Fallback)).unwrap();
        assert_eq!((r.by.as_str(), rl), ("none", None));
        let (_, rl) = choose(Some(9), means(Err("x".into()), false, Tier::Fallback)).unwrap();
        assert_eq!(rl, Some(12));
    }

    #[test]
    fn the_scratch_space_is_bounded() {
        let d = default_tmp_size(None);
        assert!((MIN_TMP_SIZE..=DEFAULT_TMP_SIZE_MAX).contains(&d));
        assert_eq!(default_tmp_size(Some(64 << 20)), (64 << 20).min(d));
        assert_eq!(default_tmp_size(Some(1)), MIN_TMP_SIZE);
    }
}
