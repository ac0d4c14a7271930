//! What this host offers, for `cordon doctor` and tier selection: user namespaces,
//! Landlock, seccomp and cgroups.
//!
//! It only looks: it must never change the caller's own process. The namespace test
//! runs in a throwaway helper (`helper::namespaces`), which exits after it.

use crate::report::Tier;
use crate::sys;
use std::process::Command;

/// What this host offers, for `cordon doctor` and tier selection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostReport {
    /// User (and mount, PID, IPC, UTS, network) namespaces can be created.
    pub user_namespaces: bool,
    /// Why not, when they cannot.
    pub user_namespaces_error: Option<String>,
    /// The kernel's Landlock ABI (0: unavailable).
    pub landlock_abi: i32,
    /// seccomp filters are supported.
    pub seccomp: bool,
    /// Mounted cgroup hierarchies (`v1`, `v2`).
    pub cgroups: Vec<String>,
    /// The tier `cordon exec` will use.
    pub tier: Tier,
    /// Why that tier.
    pub why: String,
}

/// Probe the host. The namespace test runs in a throwaway helper process.
pub fn probe_host() -> HostReport {
    let userns = match Command::new("/proc/self/exe")
        .arg(crate::HELPER_ARG)
        .arg("probe")
        .env_clear()
        .output()
    {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Err(format!("cannot start the probe: {e}")),
    };
    let landlock_abi = sys::landlock_abi();
    let seccomp = std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        .unwrap_or(false);
    let mut cgroups = Vec::new();
    if let Ok(m) = std::fs::read_to_string("/proc/self/mounts") {
        for line in m.lines() {
            match line.split_whitespace().nth(2) {
                Some("cgroup") if !cgroups.contains(&"v1".to_string()) => cgroups.push("v1".into()),
                Some("cgroup2") if !cgroups.contains(&"v2".to_string()) => {
                    cgroups.push("v2".into())
                }
                _ => {}
            }
        }
    }
    let (tier, why) = match &userns {
        Ok(()) => (
            Tier::Full,
            format!(
                "user namespaces work, so commands get their own mount, PID, IPC, UTS and network namespaces; Landlock ABI {landlock_abi} and seccomp add a second layer"
            ),
        ),
        Err(e) => (
            Tier::Fallback,
            format!(
                "user namespaces are unavailable ({e}), so containment is Landlock (ABI {landlock_abi}) and seccomp only: no private /tmp, no masking of secrets, no PID isolation; `--require full` refuses to run"
            ),
        ),
    };
    HostReport {
        user_namespaces: userns.is_ok(),
        user_namespaces_error: userns.err(),
        landlock_abi,
        seccomp,
        cgroups,
        tier,
        why,
    }
}
