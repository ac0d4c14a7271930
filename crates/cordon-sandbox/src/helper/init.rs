//! PID 1 of the sandbox (full tier): enters the mount plan, brings the loopback of the
//! sandbox's network namespace up, starts the forwarder to the egress proxy when there
//! is one, forks the command, supervises it, and tells the
//! helper on the info pipe how it went.
//!
//! It must never become the command itself (the command is its child, so that PID 1
//! outlives it and can kill every process of the namespace), and never hold the result
//! pipe: only the helper answers cordon.

use super::command::{Limits, command_main};
use super::fs_rules::observed_write_paths;
use super::process::{fork, reader_alive};
use super::supervise::{Reap, listener_channel, signal_set, supervise};
use super::wire::{EXIT_CORDON_FAILED, InfoLine, WireError, write_info};
use crate::error::SandboxError;
use crate::forward::Peers;
use crate::observe::{self, Observer};
use crate::seccomp;
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::ForkResult;
use seccompiler::BpfProgram;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

/// PID 1 of the sandbox.
pub(super) fn init_main(
    spec: &SandboxSpec,
    info_w: OwnedFd,
    go: RawFd,
    filters: &[BpfProgram],
    nproc: Option<u64>,
) -> i32 {
    let info = info_w.as_raw_fd();
    let fail = |e: SandboxError| {
        write_info(info, &InfoLine::Error(WireError::from_error(&e)));
        EXIT_CORDON_FAILED
    };
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(SandboxError::sys("cannot set the parent-death signal", e));
    }
    // A helper that died before the line above left this process orphaned (its parent
    // is outside this PID namespace, so `getppid` cannot tell): the helper alone reads
    // the info pipe, so a pipe without a reader means it is gone.
    if !reader_alive(info_w.as_fd()) {
        return EXIT_CORDON_FAILED;
    }
    if let Err(e) = crate::mounts::enter(&spec.plan) {
        return fail(e);
    }
    let _ = nix::unistd::sethostname("cordon");
    if let Err(e) = nix::unistd::chdir(&spec.cwd) {
        return fail(SandboxError::sys(
            format_args!(
                "the working directory {} is not visible inside the sandbox",
                spec.cwd.display()
            ),
            e,
        ));
    }
    // A new session: the command has no controlling terminal to inject into.
    if let Err(e) = nix::unistd::setsid() {
        return fail(SandboxError::sys("cannot start a new session", e));
    }
    // The command may use the namespace's loopback (a test suite's local server): it
    // reaches nothing of the host's.
    if !matches!(spec.network, Network::Full)
        && let Err(e) = sys::loopback_up()
    {
        return fail(SandboxError::sys("cannot bring up the loopback", e));
    }
    // Without it a lookup still fails at once (nothing listens where resolv.conf points),
    // only unreported.
    let dns = if matches!(spec.network, Network::Full) {
        None
    } else {
        crate::dns::Stub::start().ok()
    };
    if let Network::Proxy { port, .. } = &spec.network {
        let started = listen(("127.0.0.1", *port)).and_then(|l| {
            spawn_forwarder(
                l,
                PathBuf::from(crate::plan::PROXY_SOCKET_IN_SANDBOX),
                Peers::Any,
                filters,
                &[go, info],
            )
        });
        if let Err(e) = started {
            return fail(e);
        }
    }
    let signals = signal_set();
    let (mine, theirs) = match listener_channel() {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    match fork() {
        Err(e) => fail(e),
        Ok(ForkResult::Child) => {
            drop(mine);
            command_main(spec, None, info, go, filters, theirs, Limits { nproc })
        }
        Ok(ForkResult::Parent { child }) => {
            drop(theirs);
            let mut observer = observe::recv_fd(mine.as_raw_fd())
                .map(|l| Observer::new(l, Some(&spec.plan), observed_write_paths(spec, None)));
            drop(mine);
            let out = supervise(
                child,
                spec.timeout,
                Reap::Namespace,
                &signals,
                observer.as_mut(),
            );
            if out.timed_out {
                write_info(info, &InfoLine::TimedOut);
            }
            let mut records = observer.map(|o| o.records).unwrap_or_default();
            records.extend(dns.map(|d| d.records()).unwrap_or_default());
            if !records.is_empty() {
                write_info(info, &InfoLine::Blocked { records });
            }
            drop(info_w);
            out.code
        }
    }
}

/// A TCP listener at `addr` for the forwarder.
pub(super) fn listen(addr: (&str, u16)) -> Result<std::net::TcpListener, SandboxError> {
    std::net::TcpListener::bind(addr).map_err(|e| {
        SandboxError::io(
            format!(
                "cannot listen on {}:{} for the egress proxy's forwarder",
                addr.0, addr.1
            ),
            e,
        )
    })
}

/// Start the forwarder from `listener` to the proxy's socket at `socket`, serving
/// `peers`, in its own process, which closes `close` (pipes it has no business holding)
/// first.
pub(super) fn spawn_forwarder(
    listener: std::net::TcpListener,
    socket: PathBuf,
    peers: Peers,
    filters: &[BpfProgram],
    close: &[RawFd],
) -> Result<(), SandboxError> {
    match fork()? {
        ForkResult::Child => {
            for fd in close {
                let _ = nix::unistd::close(*fd);
            }
            let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
            let _ = SigSet::empty().thread_set_mask();
            // The forwarder keeps the same seccomp filters as the command and no
            // capability; it needs nothing else.
            if sys::drop_capabilities().is_err()
                || nix::sys::prctl::set_no_new_privs().is_err()
                || seccomp::install(filters).is_err()
            {
                std::process::exit(EXIT_CORDON_FAILED);
            }
            crate::forward::serve(listener, socket, peers)
        }
        ForkResult::Parent { .. } => {
            drop(listener);
            Ok(())
        }
    }
}
