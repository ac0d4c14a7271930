//! The caller's side: start the helper, hand it the spec, wait, collect the report.
//!
//! The helper is `/proc/self/exe` re-executed with [`crate::HELPER_ARG`] and an empty
//! environment. The spec travels over an inherited pipe (not argv, not the
//! environment, so nothing in it shows up in `/proc/*/cmdline` or `environ`); the result
//! comes back over another. The binary that links this crate must call
//! [`crate::helper_main`] when `argv[1]` is `HELPER_ARG`, before anything else.

use crate::error::{SandboxError, SandboxErrorKind};
use crate::helper::{HelperRequest, HelperResult};
use crate::report::{Blocked, BlockedKind, DenialReport, Enforced, Tier};
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};

/// Proof that the policy (or a human approval) allowed this run. `cordon-sandbox` never
/// decides whether a command may run; it only contains one that was allowed, and its
/// [`run`] cannot be called without this value.
///
/// It can only be made from a verdict: an `allow` (from the policy, or from an approval that
/// turned an ask into an allow), or an `ask` that the `on-failure` approval policy runs
/// contained first. A deny never yields one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    reason: String,
}

impl Permit {
    /// A permit for a call whose verdict is `allow`; `None` for any other verdict.
    pub fn from_verdict(verdict: &cordon_policy::Verdict) -> Option<Self> {
        (verdict.decision == cordon_policy::Decision::Allow).then(|| Permit {
            reason: verdict.reason.clone(),
        })
    }

    /// A permit to run an `ask` inside the sandbox before asking anyone, which only the
    /// `on-failure` approval policy grants; `None` for any other verdict or policy.
    pub fn on_failure_trial(
        verdict: &cordon_policy::Verdict,
        approval: cordon_policy::ApprovalPolicy,
    ) -> Option<Self> {
        (verdict.decision == cordon_policy::Decision::Ask
            && approval == cordon_policy::ApprovalPolicy::OnFailure)
            .then(|| Permit {
                reason: format!("contained trial (on-failure): {}", verdict.reason),
            })
    }

    /// Why the run was allowed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// How a sandboxed run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The command's exit status (128 + signal when killed; 124 on timeout).
    pub status: u8,
    /// The wall-clock timeout fired and the whole tree was killed.
    pub timed_out: bool,
    /// What containment blocked and enforced.
    pub report: DenialReport,
    /// The output limit cut stdout or stderr short.
    pub output_truncated: bool,
}

/// Copy `from` to `to` up to `limit` bytes, then drain and drop the rest so the command
/// never blocks on a full pipe. Returns whether anything was dropped.
fn capped_copy(mut from: impl Read, mut to: impl Write, limit: u64) -> bool {
    let mut buf = [0u8; 8192];
    let mut left = limit;
    let mut dropped = false;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let keep = usize::try_from(left).unwrap_or(usize::MAX).min(n);
        if keep > 0 {
            let _ = to.write_all(&buf[..keep]);
            let _ = to.flush();
            left -= keep as u64;
        }
        if keep < n {
            dropped = true;
        }
    }
    dropped
}

fn sys_err(what: &'static str) -> impl FnOnce(nix::Error) -> SandboxError {
    move |e| SandboxError::sys(what, e)
}

/// Run the command described by `spec` in the sandbox and wait for it.
///
/// Errors mean the command did not run as asked: the sandbox could not be built, the
/// required tier is unavailable, the command was not found. Signals SIGINT, SIGTERM and
/// SIGHUP received meanwhile are forwarded to the command. Must not be called while
/// other threads of this process spawn processes (the helper's pipe ends are briefly
/// inheritable).
pub fn run(spec: &SandboxSpec, permit: Permit) -> Result<Outcome, SandboxError> {
    let _ = permit;
    let (spec_r, spec_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(sys_err("cannot create a pipe"))?;
    let (res_r, res_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(sys_err("cannot create a pipe"))?;
    sys::set_cloexec(spec_r.as_raw_fd(), false).map_err(sys_err("cannot pass a pipe"))?;
    sys::set_cloexec(res_w.as_raw_fd(), false).map_err(sys_err("cannot pass a pipe"))?;

    let mut set = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ] {
        set.add(s);
    }
    let mut old = SigSet::empty();
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old))
        .map_err(sys_err("cannot block signals"))?;
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg(crate::HELPER_ARG)
        .arg("run")
        .arg(spec_r.as_raw_fd().to_string())
        .arg(res_w.as_raw_fd().to_string())
        .env_clear();
    if spec.output_limit.is_some() {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let spawned = cmd.spawn();
    drop(spec_r);
    drop(res_w);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
            return Err(SandboxError::io("cannot start the sandbox helper", e));
        }
    };
    let request = HelperRequest {
        spec: spec.clone(),
        parent: std::process::id() as i32,
    };
    let payload = serde_json::to_vec(&request)
        .map_err(|e| SandboxError::setup(format!("cannot encode the sandbox spec: {e}")))?;
    // A helper that died early closes its end; its status tells why.
    let _ = std::fs::File::from(spec_w).write_all(&payload);

    // Copier threads start with every signal above blocked (inherited), so only the
    // loop below receives them.
    let copiers: Vec<std::thread::JoinHandle<bool>> = match spec.output_limit {
        Some(limit) => {
            let mut v = Vec::new();
            if let Some(out) = child.stdout.take() {
                v.push(std::thread::spawn(move || {
                    capped_copy(out, std::io::stdout(), limit)
                }));
            }
            if let Some(err) = child.stderr.take() {
                v.push(std::thread::spawn(move || {
                    capped_copy(err, std::io::stderr(), limit)
                }));
            }
            v
        }
        None => Vec::new(),
    };
    let helper = Pid::from_raw(child.id() as i32);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) => {}
            Err(e) => {
                let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
                return Err(SandboxError::io("cannot wait for the sandbox helper", e));
            }
        }
        match set.wait() {
            Ok(Signal::SIGCHLD) | Err(_) => {}
            Ok(sig) => {
                let _ = kill(helper, sig);
            }
        }
    };
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    // Every writer of the output pipes is gone once the helper is (the sandbox's
    // processes die with it).
    let output_truncated = copiers
        .into_iter()
        .map(|c| c.join().unwrap_or(false))
        .fold(false, |a, b| a | b);

    let mut raw = Vec::new();
    let _ = std::fs::File::from(res_r).read_to_end(&mut raw);
    let result: HelperResult = serde_json::from_slice(&raw).map_err(|_| {
        SandboxError::setup(match status.code() {
            Some(c) => format!("the sandbox helper exited with status {c} without a report"),
            None => "the sandbox helper was killed before it reported".to_string(),
        })
    })?;

    let mut report = DenialReport {
        tier: result.tier,
        landlock_abi: sys::landlock_abi(),
        unobservable: crate::report::unobservable(),
        ..Default::default()
    };
    report.enforced = Enforced {
        namespaces: result.namespaces.clone(),
        mounts: result.tier == Tier::Full,
        network: match spec.network {
            Network::None => "none",
            Network::Proxy { .. } => "proxy",
            _ => "full",
        }
        .into(),
        masked: if result.tier == Tier::Full {
            spec.plan.masked()
        } else {
            0
        },
        walk: spec.plan.walk.clone(),
        ..Default::default()
    };
    if let Some(info) = &result.info {
        report.enforced.landlock = info.landlock.clone();
        report.enforced.seccomp = info.seccomp;
        report.enforced.no_new_privs = info.no_new_privs;
        report.enforced.capabilities_dropped = info.capabilities_dropped;
    }
    report.blocked.extend(result.blocked.iter().cloned());
    // Every process of the sandbox is gone now: undo protected paths it created.
    for p in &spec.plan.missing_protected {
        if let Some(detail) = remove_created(p) {
            report.blocked.push(Blocked {
                kind: BlockedKind::Write,
                target: p.display().to_string(),
                detail,
            });
        }
    }
    if let Some(err) = result.error {
        let err = err.into_error();
        // A timeout or a normal exit after the command ran is not an error of cordon's.
        if !(result.timed_out && err.kind == SandboxErrorKind::Setup) {
            return Err(err);
        }
    }
    Ok(Outcome {
        status: u8::try_from(result.status).unwrap_or(125),
        timed_out: result.timed_out,
        report,
        output_truncated,
    })
}

/// A protected path that did not exist before the run and exists now was created by
/// the sandbox (or, rarely, by a host process at the same time). Remove it without
/// following symlinks and say what happened; `None` when there was nothing to undo.
fn remove_created(p: &Path) -> Option<String> {
    // The common case: still absent.
    let meta = std::fs::symlink_metadata(p).ok()?;
    // Refuse to act through a parent that became a symlink: the path would resolve
    // elsewhere.
    let mut cur = std::path::PathBuf::new();
    for c in p.parent()?.components() {
        cur.push(c);
        if std::fs::symlink_metadata(&cur)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return Some(format!(
                "created a protected path whose parent {} is now a symlink; left in place for review",
                cur.display()
            ));
        }
    }
    let removed = if meta.is_dir() {
        std::fs::remove_dir_all(p)
    } else {
        std::fs::remove_file(p)
    };
    Some(match removed {
        Ok(()) => "the sandbox created this protected path; it was removed after the run".into(),
        Err(e) => format!("the sandbox created this protected path and removing it failed: {e}"),
    })
}

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

#[cfg(test)]
mod permit_tests {
    use super::Permit;
    use cordon_policy::{ApprovalPolicy, Decision, Source, Step, Verdict};

    fn verdict(d: Decision) -> Verdict {
        Verdict::simple(d, Source::new(Step::Default, "x"), "because")
    }

    #[test]
    fn only_allow_or_an_on_failure_trial_yields_a_permit() {
        assert!(Permit::from_verdict(&verdict(Decision::Allow)).is_some());
        assert!(Permit::from_verdict(&verdict(Decision::Ask)).is_none());
        assert!(Permit::from_verdict(&verdict(Decision::Deny)).is_none());
        let ask = verdict(Decision::Ask);
        assert!(Permit::on_failure_trial(&ask, ApprovalPolicy::OnFailure).is_some());
        assert!(Permit::on_failure_trial(&ask, ApprovalPolicy::OnRequest).is_none());
        assert!(
            Permit::on_failure_trial(&verdict(Decision::Deny), ApprovalPolicy::OnFailure).is_none()
        );
    }
}
