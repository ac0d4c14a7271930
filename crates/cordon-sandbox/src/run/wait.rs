//! The run itself, once the go byte is sent: signals forwarded to the command, its
//! output capped, the helper's result read and the helper reaped, the report made.

use super::child::HelperChild;
use super::settle::remove_created;
use super::undo::Snapshot;
use super::{Outcome, stop};
use crate::cgroup::Made;
use crate::error::{SandboxError, SandboxErrorKind};
use crate::helper::wire::{GO, HelperResult};
use crate::report::{Blocked, BlockedKind, DenialReport, Enforced, Tier};
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::unistd::Pid;
use std::io::{Read, Write};

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

/// The signals [`Started::finish`](super::Started::finish) forwards to the command (and
/// SIGCHLD, which it waits on).
fn forwarded_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGCHLD,
    ] {
        set.add(s);
    }
    set
}

/// Run `f` with the forwarded signals blocked in the calling thread, so that every
/// thread `f` starts inherits the block. A process-directed signal goes to any thread
/// that does not block it: a thread started outside this (an egress proxy's runtime,
/// say) would take SIGTERM with its default action and end this process, and the
/// command would be killed instead of being told. Start long-lived threads in here.
pub fn with_forwarded_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    let mut old = SigSet::empty();
    let blocked = sigprocmask(
        SigmaskHow::SIG_BLOCK,
        Some(&forwarded_signals()),
        Some(&mut old),
    )
    .is_ok();
    let out = f();
    if blocked {
        let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    }
    out
}

/// What the caller's side of a run watches and undoes besides the helper itself.
pub(super) struct Aside<'a> {
    /// The helper's pids cgroup.
    pub(super) cgroup: Option<&'a Made>,
    /// The bound on the run's changes.
    pub(super) watch: Option<&'a mut super::limit::ChangesWatch>,
    /// What the fallback tier undoes after the run.
    pub(super) undo: Option<&'a Snapshot>,
    /// The command starts only after the file-time clock has passed this.
    pub(super) start_after: Option<crate::changes::Stamp>,
}

pub(super) fn finish(
    mut child: HelperChild,
    mut go_w: std::fs::File,
    res_r: std::fs::File,
    spec: &SandboxSpec,
    aside: Aside<'_>,
) -> Result<Outcome, SandboxError> {
    let Aside {
        cgroup,
        watch,
        undo,
        start_after,
    } = aside;
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    let set = forwarded_signals();
    let mut old = SigSet::empty();
    // Everything this side needs is set up before the go byte lets the command run; a
    // failure here stops the helper, and the command never starts.
    // A helper that died before this point closed the result pipe, which the wait
    // below sees; no signal is needed for it.
    if let Err(e) = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old)) {
        stop(Some(child));
        return Err(SandboxError::sys("cannot block signals", e));
    }
    let sfd = match SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC) {
        Ok(sfd) => sfd,
        Err(e) => {
            let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
            stop(Some(child));
            return Err(SandboxError::sys("cannot watch for signals", e));
        }
    };
    // Copier threads start with every signal above blocked (inherited), so only the
    // loop below receives them.
    let mut copiers: Vec<std::thread::JoinHandle<bool>> = Vec::new();
    if let Some(limit) = spec.output_limit {
        let spawn = |f: Box<dyn FnOnce() -> bool + Send>| {
            std::thread::Builder::new()
                .name("cordon-output".into())
                .spawn(f)
        };
        let mut spawned = Ok(());
        if let Some(out) = child.stdout.take() {
            match spawn(Box::new(move || capped_copy(out, std::io::stdout(), limit))) {
                Ok(h) => copiers.push(h),
                Err(e) => spawned = Err(e),
            }
        }
        if let Some(err) = child.stderr.take()
            && spawned.is_ok()
        {
            match spawn(Box::new(move || capped_copy(err, std::io::stderr(), limit))) {
                Ok(h) => copiers.push(h),
                Err(e) => spawned = Err(e),
            }
        }
        if let Err(e) = spawned {
            let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
            stop(Some(child));
            return Err(SandboxError::io(
                "cannot start a thread for the output limit",
                e,
            ));
        }
    }
    // A helper that died early closed its end; its status tells why.
    // The command may start only once even the coarse clock file change times come from
    // has passed the run's recorded (fine) start: every host change the command could
    // miss is then stamped after it, and every change made before it is stamped before
    // it, coarsely or finely (the merge counts only later ones as the host's). Usually
    // long past by now (building the sandbox takes longer than a clock tick).
    if let Some(h) = start_after {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(50);
        while crate::changes::Stamp::coarse_now() <= h && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let _ = go_w.write_all(&[GO]);
    drop(go_w);

    let helper = Pid::from_raw(child.id() as i32);
    let received = receive_result(helper, &res_r, &sfd, watch);
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    let parsed = received.map(|raw| serde_json::from_slice::<HelperResult>(&raw));
    let result = match parsed {
        Ok(Ok(r)) => r,
        Ok(Err(_)) => {
            let status = child.wait().ok();
            return Err(SandboxError::setup(match status.and_then(|s| s.code()) {
                Some(c) => format!("the sandbox helper exited with status {c} without a report"),
                None => "the sandbox helper was killed before it reported".to_string(),
            }));
        }
        Err(e) => {
            stop(Some(child));
            return Err(e);
        }
    };
    // The helper writes its result only after every process of the sandbox is gone;
    // what is left is its own exit (the namespaces' teardown). The output pipes stay
    // open until then, so with an output limit wait for it; otherwise reap it on the
    // side, so that the caller's bookkeeping runs while the kernel tears down.
    // The helper removed its cgroup before it answered; should that have failed, the
    // reaper tries again once the helper is gone.
    let output_truncated = if copiers.is_empty() {
        reap_later(child, cgroup.cloned());
        false
    } else {
        let _ = child.wait();
        if let Some(made) = cgroup {
            made.remove();
        }
        copiers
            .into_iter()
            .map(|c| c.join().unwrap_or(false))
            .fold(false, |a, b| a | b)
    };

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
        processes: result.processes.clone(),
        scratch_bytes: if result.tier == Tier::Full {
            spec.plan.scratch_size
        } else {
            0
        },
        ..Default::default()
    };
    if let Some(info) = &result.info {
        report.enforced.landlock = info.landlock.clone();
        report.enforced.seccomp = info.seccomp;
        report.enforced.no_new_privs = info.no_new_privs;
        report.enforced.capabilities_dropped = info.capabilities_dropped;
    }
    report.blocked.extend(result.blocked.iter().cloned());
    // Every process of the sandbox is gone now: undo protected paths it created (those
    // in copy-on-write roots never reached the host; the merge judges them).
    let created = if result.tier == Tier::Full {
        spec.plan.watched_protected()
    } else {
        spec.plan.missing_protected.clone()
    };
    for p in &created {
        if let Some(detail) = remove_created(p) {
            report.blocked.push(Blocked {
                kind: BlockedKind::Write,
                target: p.display().to_string(),
                detail,
            });
        }
    }
    if result.tier == Tier::Fallback {
        // The roots were written in place: put back the protected paths the run changed,
        // and say what this tier did not protect (printed before the command ran).
        if let Some(snapshot) = undo {
            report.blocked.extend(snapshot.settle(&spec.home));
        }
        report.unprotected =
            crate::fallback::fallback_gaps(report.landlock_abi, Some(&spec.network));
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
        merge_error: None,
    })
}

/// Wait until the helper has written its result and closed the pipe, forwarding
/// SIGINT, SIGTERM and SIGHUP (read from `sfd`; blocked in this thread) to it meanwhile.
///
/// With a watch over the run's changes, their size is checked twice a second; when it
/// reaches the limit the helper's alarm is raised early, which stops the run as a
/// timeout would (every process killed), and the watch says why.
fn receive_result(
    helper: Pid,
    res_r: &std::fs::File,
    sfd: &nix::sys::signalfd::SignalFd,
    mut watch: Option<&mut super::limit::ChangesWatch>,
) -> Result<Vec<u8>, SandboxError> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let tick = match watch {
        Some(_) => PollTimeout::from(500u16),
        None => PollTimeout::NONE,
    };
    let mut stopping = false;
    loop {
        if !stopping
            && let Some(w) = watch.as_deref_mut()
            && w.over()
        {
            stopping = true;
            let _ = kill(helper, Signal::SIGALRM);
        }
        let (result_ready, signal_ready) = {
            let mut fds = [
                PollFd::new(res_r.as_fd(), PollFlags::POLLIN),
                PollFd::new(sfd.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, tick) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(SandboxError::sys("cannot wait for the sandbox helper", e)),
            }
            let ready = |f: &PollFd<'_>| f.revents().is_some_and(|r| !r.is_empty());
            (ready(&fds[0]), ready(&fds[1]))
        };
        if signal_ready
            && let Ok(Some(info)) = sfd.read_signal()
            && let Ok(sig) = Signal::try_from(info.ssi_signo as i32)
            && sig != Signal::SIGCHLD
        {
            let _ = kill(helper, sig);
        }
        if result_ready {
            match (&*res_r).read(&mut buf) {
                // Every writer is gone: the helper closed it, or died.
                Ok(0) => return Ok(raw),
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(SandboxError::io("cannot read the sandbox result", e)),
            }
        }
    }
}

/// Reap an exited or exiting helper without waiting for it here (and remove its
/// cgroup, should it still be there).
fn reap_later(mut child: HelperChild, cgroup: Option<Made>) {
    let pid = Pid::from_raw(child.id() as i32);
    let leftover = cgroup.clone();
    // Like every long-lived thread, it must not take the signals meant for a command
    // that a later run forwards to.
    let spawned = with_forwarded_signals_blocked(|| {
        std::thread::Builder::new()
            .name("cordon-reap".into())
            .spawn(move || {
                let _ = child.wait();
                if let Some(made) = cgroup {
                    made.remove();
                }
            })
    });
    // Without a thread, wait here: no zombie is left behind.
    if spawned.is_err() {
        let _ = nix::sys::wait::waitpid(pid, None);
        if let Some(made) = leftover {
            made.remove();
        }
    }
}
