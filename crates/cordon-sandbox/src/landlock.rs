//! Landlock: a second filesystem and TCP-port layer, independent of the mount plan.
//!
//! In the full tier the mount plan already hides and freezes what it must; Landlock
//! repeats it (read everywhere visible, write only the writable roots, the private
//! `/tmp` and a few device files) so that one layer's mistake is not an escape. In the
//! fallback tier, where no mount exists, Landlock is the filesystem containment, and
//! with no network namespace either, it also refuses every TCP bind and connect (the
//! proxy's forwarder is reached through `connect_guard.rs`).
//! The ABI is detected at run time and the ruleset is applied best-effort; what the
//! kernel enforced is recorded, never assumed.

use crate::error::SandboxError;
use ::landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The ABI whose rights cordon asks for; newer kernels enforce all of them, older ones
/// what they can (recorded in [`LandlockOutcome`]).
const TARGET: ABI = ABI::V6;

/// Device files the command may read and write.
pub(crate) const DEVICE_FILES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// What Landlock enforced for this run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandlockOutcome {
    /// The running kernel's Landlock ABI (0: unavailable).
    pub abi: i32,
    /// `fully-enforced`, `partially-enforced` or `not-enforced`.
    pub status: String,
    /// Filesystem rules were enforced.
    pub filesystem: bool,
    /// TCP bind/connect rules were enforced (ABI ≥ 4).
    pub tcp: bool,
    /// Abstract Unix sockets and signals are scoped to the sandbox (ABI ≥ 6).
    pub scopes: bool,
}

/// What the ruleset allows.
pub(crate) struct Rules<'a> {
    /// Read and execute beneath these.
    pub read: &'a [PathBuf],
    /// List these directories (and directories beneath), but read no file through them.
    pub list: &'a [PathBuf],
    /// Read, write, create and remove beneath these.
    pub write: &'a [PathBuf],
    /// Handle TCP at all, allowing no port to bind or connect to (false with full
    /// network, and at the full tier, where the network namespace contains it). In the
    /// fallback tier with a proxy, the one connection to the forwarder is made for the
    /// command by its supervisor (`connect_guard.rs`).
    pub restrict_tcp: bool,
}

/// The rule granting `access` beneath `p` (file rights only, when it is not a
/// directory). `Ok(None)` when `p` does not exist or cannot be reached by this user:
/// there is nothing to grant. Any other failure (out of descriptors, say) is an error,
/// not a silently missing rule.
#[allow(clippy::disallowed_methods)] // an O_PATH handle for a rule: nothing is written.
fn path_rule(
    p: &Path,
    access: BitFlags<AccessFs>,
) -> Result<Option<PathBeneath<std::fs::File>>, SandboxError> {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(p)
        .and_then(|f| f.metadata().map(|m| (f, m.is_dir())));
    let (fd, is_dir) = match opened {
        Ok(x) => x,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) =>
        {
            return Ok(None);
        }
        Err(e) => {
            return Err(SandboxError::io(
                format!("landlock: cannot open {}", p.display()),
                e,
            ));
        }
    };
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(TARGET)
    };
    Ok(Some(PathBeneath::new(fd, access)))
}

/// Restrict the calling process. Paths that do not exist (or that this user cannot
/// reach) are skipped.
pub(crate) fn apply(rules: &Rules<'_>) -> Result<LandlockOutcome, SandboxError> {
    let abi = crate::sys::landlock_abi();
    let err = |e: ::landlock::RulesetError| SandboxError::setup(format!("landlock: {e}"));
    // Device ioctls stay allowed: TIOCSTI and TIOCLINUX are refused by seccomp, and
    // terminal programs need the rest.
    let handled = AccessFs::from_all(TARGET) & !AccessFs::IoctlDev;
    let read = AccessFs::from_read(TARGET);
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::ReadDir;
    let mut ruleset = ::landlock::Ruleset::default()
        .handle_access(handled)
        .map_err(err)?;
    if rules.restrict_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?;
    }
    if abi >= 6 {
        ruleset = ruleset.scope(Scope::from_all(TARGET)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    // One descriptor at a time: the fallback tier can have a few hundred rules, more
    // than a low open-files limit allows at once.
    let fs_rules = rules
        .read
        .iter()
        .map(|p| (p.as_path(), read))
        .chain(
            rules
                .list
                .iter()
                .map(|p| (p.as_path(), AccessFs::ReadDir.into())),
        )
        .chain(rules.write.iter().map(|p| (p.as_path(), handled)))
        .chain(DEVICE_FILES.iter().map(|d| (Path::new(*d), device)));
    for (p, access) in fs_rules {
        if let Some(rule) = path_rule(p, access)? {
            created = created.add_rule(rule).map_err(err)?;
        }
    }
    let status = created.restrict_self().map_err(err)?;
    let enforced = !matches!(status.ruleset, RulesetStatus::NotEnforced);
    Ok(LandlockOutcome {
        abi,
        status: match status.ruleset {
            RulesetStatus::FullyEnforced => "fully-enforced",
            RulesetStatus::PartiallyEnforced => "partially-enforced",
            RulesetStatus::NotEnforced => "not-enforced",
        }
        .to_string(),
        filesystem: enforced,
        tcp: enforced && rules.restrict_tcp && abi >= 4,
        scopes: enforced && abi >= 6,
    })
}
