//! cordon-sandbox: Linux containment for a command that the policy already allowed.
//!
//! Policy decides what an agent may ask for; this crate decides what the process is
//! *able* to do, so that an approved command that turns hostile is still contained. It
//! never judges whether a command may run: [`run`] takes a [`Permit`] that only the
//! policy or approval path creates.
//!
//! What this crate owns: the helper and the layers below, the mount plan, the write
//! observer, change sets and their merge, cache slots and slots (their directories, their
//! guard, their turns). It knows where cordon's state lives only through
//! `cordon_policy::state_dir`, the resolver the store and the guards share, so that it
//! masks exactly the directory the store writes.
//!
//! What it must never do: decide whether a command may run, make a [`Permit`] from
//! anything but the proofs it names, or open cordon's store. An approval reaches it as a
//! `cordon_policy::ApprovalProof` (the store's `Grant`), and the record of a run on a slot
//! leaves through the [`slot::SlotRecorder`] its caller gives [`slot::Turn::end`]; this
//! crate does not depend on `cordon-store`.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use cordon_policy::{Containment, RealFs, Request};
//! use cordon_sandbox::{Permit, SandboxBuilder, run};
//! # let policy: cordon_policy::Policy = todo!();
//! let ops = policy.operations(&Request::shell("cargo test", None), &RealFs);
//! let judgement = policy.judge_with(&ops, Containment::Full, false);
//! let Ok(allowed) = judgement.allowed() else { return Ok(()) };
//! let permit = Permit::from_allowed(allowed);
//! let spec = SandboxBuilder::new(["cargo", "test"]).workspace("/src/proj").build()?;
//! let outcome = run(&spec, permit)?;
//! std::process::exit(outcome.status.into());
//! # }
//! ```
//!
//! [`run`] starts the helper, sends the spec and waits. A caller that wants the sandbox
//! ready sooner starts a [`Helper`] before it judges the call ([`HelperHints`] say what
//! it may prepare, such as its namespaces), sends the spec with [`Helper::start`], does
//! what must succeed before the command runs (record it), and lets it run with
//! [`Started::finish`]. The command's process waits for that last step; dropping the
//! helper at any point before runs nothing.
//!
//! # Layers
//!
//! 1. **Namespaces** (user, mount, PID, IPC, UTS, network unless full network): the
//!    helper is a fork of the caller when the caller has one thread (else
//!    `/proc/self/exe` executed again), single-threaded, with an empty environment and
//!    nothing of the caller's arguments or descriptors (`run/child.rs`), and is PID 1 of
//!    the sandbox (`helper/`).
//! 2. **Mount plan** (`plan.rs` decides, `mounts.rs` executes): read-only `/`, writable
//!    roots, private `/tmp`, minimal `/dev`, fresh `/proc`, HOME hidden, `/run` emptied,
//!    secrets masked, protected paths inside writable roots read-only.
//! 3. **Landlock** (`landlock.rs`): the filesystem plan again, abstract Unix sockets and
//!    signals scoped; in the fallback tier, which has no network namespace, TCP connect
//!    only to the proxy port. (At the full tier the network namespace holds only its own
//!    loopback: the command may bind and connect there, and reaches nothing of the host.)
//! 4. **seccomp** (`seccomp.rs`), installed last; `PR_SET_NO_NEW_PRIVS`; no
//!    capabilities; rlimits; a timeout; an environment from an allowlist (`env.rs`).
//! 5. **Limits** (`limits.rs`, `cgroup.rs`): a process limit on every run, held by a
//!    pids cgroup where cordon can make one (for root too, whom `RLIMIT_NPROC` does not
//!    limit), else by `RLIMIT_NPROC`; `/tmp`, `/var/tmp` and `/dev/shm` share one sized
//!    tmpfs.
//!
//! Where user namespaces are unavailable, only layers 3 and 4 are left: the fallback
//! tier. It runs only when the caller accepts it ([`Require::Any`]), and then prints at
//! every run what it does not protect ([`fallback_gaps`]); the default,
//! [`Require::Full`], refuses instead, with a sentence that names the cause and the fix.
//!
//! ssh inside reaches hosts only through the egress proxy (`ssh.rs`): the mount plan gives
//! it cordon's configuration, whose `ProxyCommand` is the caller's own binary in its relay
//! mode. A binary that embeds this crate calls [`ssh_relay_main`] first thing in `main`
//! when `argv[1]` is [`SSH_RELAY_ARG`], as it calls [`helper_main`] for [`HELPER_ARG`].
//!
//! # Threat notes
//!
//! - The helper is not dumpable and runs with an empty environment: `/proc/1/environ`
//!   holds nothing of the caller's.
//! - The command has no controlling terminal (`setsid`) and cannot `TIOCSTI`.
//! - A protected path that is a symlink refuses the run: binding it would follow it.
//! - Protected paths that do not exist yet cannot be masked without writing the host's
//!   workspace; what the sandbox creates there is removed after the run and reported
//!   (see `plan.rs`).
//! - The fallback tier reads by allowlist (the system, the roots, HOME's toolchains) and
//!   splits its rules around the secrets and cordon's state, writes only the roots and
//!   a private scratch directory, and puts back the protected paths a run changed; it
//!   cannot keep what the command plants in the workspace from the host's tools, nor
//!   isolate PIDs, IPC, host sockets or secrets inside the roots ([`fallback_gaps`]).
//!   `cordon doctor` says which tier a host gets.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod apparmor;
mod caches;
mod cgroup;
mod changes;
mod connect_guard;
mod dns;
mod env;
mod error;
mod fallback;
mod forward;
mod helper;
mod host;
mod hostnames;
mod landlock;
mod limits;
mod merge;
mod mounts;
mod observe;
mod peer;
mod permit;
mod plan;
mod relay_copy;
mod report;
mod review;
mod run;
mod scratch;
mod seccomp;
pub mod slot;
mod spec;
mod ssh;
mod state_mask;
pub mod supervise;
mod sys;
mod system_secrets;

pub use caches::{
    CACHE_DATA, CacheData, CacheLayer, CacheRequest, CacheSlot, DEV_CACHES, Persist, SLOT_INSTALLS,
    caches_base, workspace_key,
};
pub use changes::{
    ChangeMeta, ChangeSet, Layer, LeftChanges, Stamp, changes_base, changes_bases, changes_home,
    claim, list_left,
};
pub use env::{DEFAULT_ALLOW, EnvPolicy, SECRET_MARKERS, looks_secret};
pub use error::{SandboxError, SandboxErrorKind};
pub use fallback::fallback_gaps;
pub use helper::wire::{EXIT_CORDON_FAILED, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_TIMEOUT};
pub use host::{HostReport, ROOT_CAVEATS, UsernsRestriction, UsernsSettings, probe_host};
pub use hostnames::gather_host_names;
pub use landlock::LandlockOutcome;
pub use limits::{
    DEFAULT_PROCESS_LIMIT, DEFAULT_TMP_SIZE_MAX, LimitsReport, MIN_TMP_SIZE, default_tmp_size,
    host_memory, probe_limits,
};
pub use merge::{
    Landed, MergeOptions, MergeReport, Pending, Refused, git_config_judgement, git_config_refusal,
    gitmodules_judgement, merge, preview_layer,
};
pub use peer::peer_shares_user_namespace;
pub use permit::Permit;
pub use plan::{
    CA_BUNDLE_IN_SANDBOX, DEFAULT_HOME_READABLE, FALLBACK_SYSTEM_READ, HomeView, MountOp,
    PROXY_SOCKET_IN_SANDBOX, Plan, WALK_MAX_DEPTH, WALK_MAX_ENTRIES, WalkSummary,
};
pub use report::{
    Blocked, BlockedKind, ChangesReport, DenialReport, Enforced, MergeCounts, ProcessLimit, Tier,
};
pub use review::{Applied, apply, review};
pub use run::{Helper, HelperHints, Outcome, Started, run, with_forwarded_signals_blocked};
pub use slot::{SlotError, SlotErrorKind, SlotGuard, SlotMounts, SlotName, SlotPaths, SlotScope};
pub use spec::{DEFAULT_PROXY_PORT, Limits, Network, Require, SandboxBuilder, SandboxSpec};
pub use ssh::{
    AGENT_IN_SANDBOX, CONFIG_IN_SANDBOX, KNOWN_HOSTS_IN_SANDBOX, RELAY_IN_SANDBOX,
    SSH_DIR_IN_SANDBOX, SSH_RELAY_ARG, ssh_relay_main,
};
pub use sys::landlock_abi;

/// Every directory where this crate keeps runs' state on the host for this user,
/// wherever it may be: change sets and cache slots, in cordon's state directory or in
/// their fallbacks under `/var/tmp`. No run may be given write access to any of them.
pub fn state_places() -> Vec<std::path::PathBuf> {
    let mut out = changes::changes_bases(&[]);
    out.push(caches::caches_fallback());
    out
}

/// argv\[1\] that makes the `cordon` binary act as the sandbox helper.
pub const HELPER_ARG: &str = "__cordon-sandbox-helper";

/// Entry point of the re-executed sandbox helper. Call it first thing in `main` when
/// `argv[1]` is [`HELPER_ARG`], before any thread exists.
pub fn helper_main() -> ! {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
    let code = helper::main(&args);
    std::process::exit(code)
}

#[cfg(test)]
mod layering {
    /// The sandbox never opens cordon's store: it is not among this crate's
    /// dependencies, and no source file names it (issue 39).
    #[test]
    #[allow(clippy::unwrap_used, clippy::disallowed_methods)] // the crate's own sources
    fn the_sandbox_does_not_depend_on_the_store() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(!manifest.contains("cordon-store"), "{manifest}");
        let mut pending = vec![dir.join("src")];
        let mut files = 0;
        while let Some(d) = pending.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    pending.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files += 1;
                    let text = std::fs::read_to_string(&p).unwrap();
                    let code: String = text
                        .lines()
                        .filter(|l| !l.trim_start().starts_with("//"))
                        .collect();
                    // Spelled in two pieces so that this file does not name it.
                    assert!(
                        !code.contains(concat!("cordon", "_store")),
                        "{}",
                        p.display()
                    );
                }
            }
        }
        assert!(files > 50, "{files}");
    }
}
