//! What this host offers, for `cordon doctor` and tier selection: user namespaces (and
//! the kernel settings that restrict them), Landlock, seccomp and cgroups, and whether
//! cordon runs as root.
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
    /// cordon runs with effective uid 0 (see [`ROOT_CAVEATS`]).
    pub running_as_root: bool,
    /// The kernel settings that decide whether unprivileged user namespaces may exist.
    pub userns_settings: UsernsSettings,
    /// The settings among them that keep this process from creating user namespaces.
    pub userns_restrictions: Vec<UsernsRestriction>,
}

/// What changes when cordon runs as root, one sentence each.
pub const ROOT_CAVEATS: &[&str] = &[
    "the kernel does not apply RLIMIT_NPROC to uid 0, so the process limit holds only through a pids cgroup (see resource limits below)",
    "the command runs as uid 0 (in its user namespace at the full tier, as real root at the fallback tier), so the owner bits let it read root-owned files: the full tier masks the known system secrets, the fallback tier lets it read only the system, the roots and HOME's toolchains, without the known secrets, so root-owned files there that are not known secrets stay readable",
    "run cordon as an ordinary user where you can",
];

/// The kernel settings that restrict unprivileged user namespaces, as read from
/// `/proc/sys` (`None`: the setting does not exist on this kernel or cannot be read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct UsernsSettings {
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10 and later; 1 by
    /// default since 24.04).
    pub apparmor_restrict_unprivileged_userns: Option<u64>,
    /// `kernel.unprivileged_userns_clone` (Debian's and Ubuntu's older kernels).
    pub unprivileged_userns_clone: Option<u64>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<u64>,
    /// This process runs under an AppArmor profile (its label is not `unconfined`), so
    /// AppArmor's restriction of unconfined programs does not apply to it.
    pub under_apparmor_profile: bool,
}

/// A kernel setting that keeps user namespaces from being created (or from being of
/// any use), so that only the fallback tier is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum UsernsRestriction {
    /// `kernel.apparmor_restrict_unprivileged_userns = 1`.
    AppArmor,
    /// `kernel.unprivileged_userns_clone = 0`.
    UnprivilegedClone,
    /// `user.max_user_namespaces = 0`.
    MaxUserNamespaces,
}

impl UsernsRestriction {
    /// The setting and its value, as `sysctl` shows it.
    pub fn setting(self) -> &'static str {
        match self {
            UsernsRestriction::AppArmor => "kernel.apparmor_restrict_unprivileged_userns = 1",
            UsernsRestriction::UnprivilegedClone => "kernel.unprivileged_userns_clone = 0",
            UsernsRestriction::MaxUserNamespaces => "user.max_user_namespaces = 0",
        }
    }

    /// What it does, what tier results, and how to change it.
    pub fn explanation(self) -> &'static str {
        match self {
            UsernsRestriction::AppArmor => {
                "AppArmor gives a user namespace made by an unconfined, unprivileged program no capabilities (the default on Ubuntu 24.04 and later), so cordon cannot build its mounts and only the fallback tier (Landlock and seccomp) is left, which cordon refuses unless `--require any` accepts it; an AppArmor profile for the cordon binary that allows `userns,` (or setting the value to 0) restores the full tier"
            }
            UsernsRestriction::UnprivilegedClone => {
                "the kernel lets only privileged users create user namespaces (Debian's switch on older kernels), so only the fallback tier (Landlock and seccomp) is left, which cordon refuses unless `--require any` accepts it; setting it to 1 restores the full tier"
            }
            UsernsRestriction::MaxUserNamespaces => {
                "no user namespace may be created at all, so only the fallback tier (Landlock and seccomp) is left, which cordon refuses unless `--require any` accepts it; a value above 0 restores the full tier"
            }
        }
    }
}

impl UsernsSettings {
    /// Read the settings from `/proc/sys`.
    #[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
    pub fn read() -> UsernsSettings {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse().ok())
        };
        UsernsSettings {
            apparmor_restrict_unprivileged_userns: read(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
            unprivileged_userns_clone: read("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: read("/proc/sys/user/max_user_namespaces"),
            under_apparmor_profile: crate::apparmor::under_profile(),
        }
    }

    /// The settings that restrict a process that is `privileged` (root, or holding
    /// `CAP_SYS_ADMIN`) or not. The AppArmor and Debian switches spare privileged
    /// processes; a maximum of 0 stops everyone.
    pub fn restrictions(&self, privileged: bool) -> Vec<UsernsRestriction> {
        let mut out = Vec::new();
        if !privileged
            && self.apparmor_restrict_unprivileged_userns == Some(1)
            && !self.under_apparmor_profile
        {
            out.push(UsernsRestriction::AppArmor);
        }
        if !privileged && self.unprivileged_userns_clone == Some(0) {
            out.push(UsernsRestriction::UnprivilegedClone);
        }
        if self.max_user_namespaces == Some(0) {
            out.push(UsernsRestriction::MaxUserNamespaces);
        }
        out
    }
}

/// Probe the host. The namespace test runs in a throwaway helper process.
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
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
    let running_as_root = nix::unistd::geteuid().is_root();
    let userns_settings = UsernsSettings::read();
    let userns_restrictions = userns_settings.restrictions(running_as_root);
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
                "user namespaces are unavailable ({e}), so only the fallback tier is left: Landlock (ABI {landlock_abi}) and seccomp, no mounts, no PID, IPC or network namespace of its own"
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
        running_as_root,
        userns_settings,
        userns_restrictions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use UsernsRestriction::*;

    fn settings(apparmor: Option<u64>, clone: Option<u64>, max: Option<u64>) -> UsernsSettings {
        UsernsSettings {
            apparmor_restrict_unprivileged_userns: apparmor,
            unprivileged_userns_clone: clone,
            max_user_namespaces: max,
            under_apparmor_profile: false,
        }
    }

    #[test]
    fn restrictions_follow_the_kernel_settings() {
        // (settings, unprivileged, privileged)
        let cases = [
            (settings(None, None, Some(15000)), vec![], vec![]),
            (settings(Some(0), Some(1), Some(15000)), vec![], vec![]),
            // Ubuntu 24.04's default.
            (settings(Some(1), None, Some(15000)), vec![AppArmor], vec![]),
            // ... lifted for a binary under a profile (`cordon setup apparmor`).
            (
                UsernsSettings {
                    under_apparmor_profile: true,
                    ..settings(Some(1), None, Some(15000))
                },
                vec![],
                vec![],
            ),
            // Debian's old switch.
            (
                settings(None, Some(0), Some(15000)),
                vec![UnprivilegedClone],
                vec![],
            ),
            // Nobody may create one.
            (
                settings(None, None, Some(0)),
                vec![MaxUserNamespaces],
                vec![MaxUserNamespaces],
            ),
            (
                settings(Some(1), Some(0), Some(0)),
                vec![AppArmor, UnprivilegedClone, MaxUserNamespaces],
                vec![MaxUserNamespaces],
            ),
        ];
        for (s, unprivileged, privileged) in cases {
            assert_eq!(s.restrictions(false), unprivileged, "{s:?}");
            assert_eq!(s.restrictions(true), privileged, "{s:?}");
        }
    }

    #[test]
    fn every_restriction_names_its_setting_and_the_fallback_tier() {
        for r in [AppArmor, UnprivilegedClone, MaxUserNamespaces] {
            assert!(r.setting().contains(" = "), "{r:?}");
            assert!(r.explanation().contains("fallback tier"), "{r:?}");
        }
        assert_eq!(
            serde_json::to_string(&UnprivilegedClone).unwrap(),
            "\"unprivileged-clone\""
        );
    }
}
