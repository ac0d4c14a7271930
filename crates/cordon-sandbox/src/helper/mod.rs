//! The re-executed helper: builds the sandbox, runs the command as a child of the
//! sandbox's PID 1, and reports back.
//!
//! Processes, in the full tier:
//! - **H**, the helper itself (`cordon __cordon-sandbox-helper run …`), started with an
//!   empty environment and not dumpable. It creates the user, mount, PID, IPC, UTS and
//!   (unless full network) network namespaces, maps the caller's uid/gid, then forks:
//! - **I**, PID 1 of the new PID namespace: builds the mount plan, pivots, starts the
//!   forwarder when a proxy is configured, forks the command, reaps, forwards signals,
//!   enforces the timeout and kills every remaining process when the command ends;
//! - **C**, the command: rlimits, capabilities dropped, `PR_SET_NO_NEW_PRIVS`, Landlock,
//!   seccomp last, `execve`.
//!
//! In the fallback tier (no user namespaces) H forks C directly and acts as a
//! subreaper. Everything here is single-threaded until the last `execve` (the forwarder
//! process excepted), which is what makes `fork` sound.
//!
//! This module owns the entry point and the layout of both tiers: which process forks
//! which, and which pipe end each one keeps. The rest has one submodule per job: `wire`
//! (everything that crosses a process boundary), `namespaces`, `fs_rules` (the paths
//! Landlock and the write observer get), `init` (PID 1 and the forwarder), `command`
//! (the command's process up to `execve`), `supervise` (signals, the timeout, killing
//! and reaping) and `process` (`fork` and the liveness check). It must never start a
//! thread (see above), nor import from the caller's side (`run.rs`): the two meet in
//! `wire` only.

mod command;
mod fs_rules;
mod init;
mod namespaces;
mod process;
mod supervise;
pub(crate) mod wire;

use command::{Limits, command_main};
use fs_rules::{FallbackRules, observed_write_paths};
use init::init_main;
use namespaces::{probe_namespaces, unshare_namespaces};
use process::{fork, reader_alive};
use supervise::{Reap, listener_channel, signal_set, supervise};
use wire::{
    EXIT_CORDON_FAILED, HelperRequest, HelperResult, InfoLine, NET_ISOLATE, NET_SHARE, WireError,
    read_spec, send_result, write_info,
};

use crate::cgroup::Joined;
use crate::error::{SandboxError, SandboxErrorKind};
use crate::observe::{self, Observer};
use crate::report::Tier;
use crate::seccomp::{self, Sockets};
use crate::spec::Network;
use crate::sys;
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{ForkResult, getppid};
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Entry point (see `crate::helper_main`).
pub(crate) fn main(args: &[OsString]) -> i32 {
    match args.first().and_then(|a| a.to_str()) {
        Some("run") => {
            let (Some(spec_fd), Some(result_fd)) = (fd_arg(args.get(1)), fd_arg(args.get(2)))
            else {
                eprintln!("cordon: the sandbox helper was started with invalid arguments");
                return EXIT_CORDON_FAILED;
            };
            // Known network mode: the namespaces can be made before the spec arrives.
            let early_net = match args.get(3).and_then(|a| a.to_str()) {
                Some(NET_ISOLATE) => Some(true),
                Some(NET_SHARE) => Some(false),
                _ => None,
            };
            run(spec_fd, result_fd, early_net)
        }
        Some("probe") => match probe_namespaces() {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        },
        _ => {
            eprintln!("cordon: the sandbox helper is internal and is started by `cordon exec`");
            EXIT_CORDON_FAILED
        }
    }
}

/// Entry point of a helper forked from cordon itself (`run/child.rs`), which has already
/// closed what `execve` would have closed and cleared its environment: the two pipe ends
/// by number, and the network mode (`Some(true)`: an isolated network).
pub(crate) fn forked_main(spec_fd: RawFd, result_fd: RawFd, early_net: Option<bool>) -> i32 {
    let (Some(spec_fd), Some(result_fd)) = (
        fd_arg(Some(&OsString::from(spec_fd.to_string()))),
        fd_arg(Some(&OsString::from(result_fd.to_string()))),
    ) else {
        eprintln!("cordon: the sandbox helper was started with invalid descriptors");
        return EXIT_CORDON_FAILED;
    };
    run(spec_fd, result_fd, early_net)
}

fn fd_arg(a: Option<&OsString>) -> Option<OwnedFd> {
    let n: RawFd = a?.to_str()?.parse().ok()?;
    if n < 3 {
        return None;
    }
    // Only adopt a descriptor that is open.
    nix::fcntl::fcntl(
        #[allow(unsafe_code)]
        // SAFETY: F_GETFD on a borrowed raw fd reads flags only; a closed fd gives EBADF.
        unsafe {
            std::os::fd::BorrowedFd::borrow_raw(n)
        },
        nix::fcntl::FcntlArg::F_GETFD,
    )
    .ok()?;
    #[allow(unsafe_code)]
    // SAFETY: the caller (`run.rs`) passes the number of a pipe end it created for this
    // helper alone and closed on its side; it is open (checked above) and owned by no
    // other object in this freshly executed (or forked, `run/child.rs`) process.
    Some(unsafe { OwnedFd::from_raw_fd(n) })
}

fn run(spec_fd: OwnedFd, result_fd: OwnedFd, early_net: Option<bool>) -> i32 {
    let mut result = HelperResult::default();
    let signals = signal_set();
    let mut spec_file = std::fs::File::from(spec_fd);
    let blocked = signals
        .thread_block()
        .map_err(|e| SandboxError::sys("cannot block signals", e));
    // Asked before any namespace: afterwards the uid map is the sandbox's.
    let host_root = crate::limits::host_root();
    let status = serve(
        &mut spec_file,
        early_net,
        host_root,
        &signals,
        blocked,
        &result_fd,
        &mut result,
    );
    drop(spec_file);
    match status {
        Some(status) => {
            result.status = status;
            send_result(result_fd, &result);
            status
        }
        None => 0,
    }
}

/// The run, from the early namespaces on; `None` when the spec never came (cordon
/// decided not to run anything, or exited: nobody to tell).
fn serve(
    spec_file: &mut std::fs::File,
    early_net: Option<bool>,
    host_root: bool,
    signals: &SigSet,
    blocked: Result<(), SandboxError>,
    result_fd: &OwnedFd,
    result: &mut HelperResult,
) -> Option<i32> {
    // Creating the namespaces (the network namespace above all) is the largest part of
    // the helper's work, and needs nothing from the spec but its network mode: do it
    // while cordon is still judging the call. No command runs in them until the spec
    // and the go byte arrive.
    let early = early_net.map(|isolate| (isolate, unshare_namespaces(isolate)));
    let raw = blocked.and_then(|()| read_spec(spec_file));
    let raw = match raw {
        // Started ahead of a spec that never came: nothing to do.
        Ok(None) => return None,
        Ok(Some(raw)) => Ok(raw),
        Err(e) => Err(e),
    };
    let go = spec_file.as_raw_fd();
    let inner = Inner {
        go,
        early,
        host_root,
        signals,
        result_fd,
    };
    Some(match raw.and_then(|raw| run_inner(&raw, inner, result)) {
        Ok(code) => code,
        Err(e) => {
            result.error = Some(WireError::from_error(&e));
            EXIT_CORDON_FAILED
        }
    })
}

/// What `run_inner` works with besides the spec.
struct Inner<'a> {
    /// The spec pipe, where the go byte will come.
    go: RawFd,
    /// The namespaces made before the spec, for which network mode.
    early: Option<(bool, Result<(), nix::Error>)>,
    /// cordon runs as the host's root (whom `RLIMIT_NPROC` does not limit).
    host_root: bool,
    signals: &'a SigSet,
    result_fd: &'a OwnedFd,
}

fn run_inner(raw: &[u8], inner: Inner<'_>, result: &mut HelperResult) -> Result<i32, SandboxError> {
    let req: HelperRequest = serde_json::from_slice(raw)
        .map_err(|e| SandboxError::setup(format!("the sandbox spec is malformed: {e}")))?;
    // Into the run's cgroup (made by cordon while this process started) before any
    // process of the sandbox exists, so that each one is counted. Why there is none,
    // when there is none, decides below whether the run may go on.
    let joined = match &req.cgroup {
        Ok(made) => Joined::enter(made),
        Err(why) => Err(why.clone()),
    };
    let status = run_sandbox(req, inner, &joined, result);
    // Every process of the sandbox is gone (or none was made): leave and remove the
    // cgroup before cordon hears of it (it may exit at once, and this process with it).
    if let Ok(j) = joined {
        j.leave();
    }
    status
}

fn run_sandbox(
    req: HelperRequest,
    inner: Inner<'_>,
    cgroup: &Result<Joined, String>,
    result: &mut HelperResult,
) -> Result<i32, SandboxError> {
    let Inner {
        go,
        early,
        host_root,
        signals,
        result_fd,
    } = inner;
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| SandboxError::sys("cannot set the parent-death signal", e))?;
    if getppid().as_raw() != req.parent {
        return Err(SandboxError::setup(
            "cordon exited before the sandbox started",
        ));
    }
    sys::set_cloexec(result_fd.as_raw_fd(), true)
        .map_err(|e| SandboxError::sys("cannot protect the result pipe", e))?;
    let spec = req.spec;

    let isolate_net = !matches!(spec.network, Network::Full);
    let unshared = match early {
        None => unshare_namespaces(isolate_net),
        Some((isolate, r)) if isolate == isolate_net => r,
        // Namespaces cannot be left again: refuse rather than run in the wrong one.
        Some(_) => {
            return Err(SandboxError::setup(
                "the sandbox helper was started for another network mode than the spec's",
            ));
        }
    };
    // The mount and PID namespaces, now that the plan the mount table must match is
    // here. Made together and last: if the kernel refuses them (`max_mnt_namespaces`),
    // neither exists, and the fallback tier's command is an ordinary child, not the
    // PID 1 of a namespace (which would ignore the signals forwarded to it).
    let unshared = unshared
        .map_err(|e| ("user namespaces are unavailable", e.desc()))
        .and_then(|()| {
            unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID)
                .map_err(|e| ("the mount and PID namespaces cannot be created", e.desc()))
        });
    let tier = match unshared {
        Ok(()) => Tier::Full,
        Err((what, detail)) => {
            // Where AppArmor's restriction is the cause, the command that lifts it.
            let detail = match crate::apparmor::advice() {
                Some(advice) => format!("{detail}; {advice}"),
                None => detail.to_string(),
            };
            let detail = detail.as_str();
            if matches!(spec.require, crate::spec::Require::Full) {
                // Nothing of the command exists yet: refusing here runs nothing.
                return Err(SandboxError::new(
                    SandboxErrorKind::TierUnavailable,
                    crate::fallback::refusal(what, detail, spec.full_tier_for.as_deref()),
                ));
            }
            // Accepted, and said at every run, before the command starts: what this
            // tier does not protect.
            let gaps = crate::fallback::fallback_gaps(sys::landlock_abi(), Some(&spec.network));
            eprint!(
                "{}",
                crate::fallback::notice(&format!("{what} ({detail})"), &gaps)
            );
            Tier::Fallback
        }
    };
    result.tier = tier;
    let filters = seccomp::filters(socket_families(&spec.network, tier))?;
    let nproc = process_limit(&spec, tier, (cgroup, host_root), result)?;
    if tier == Tier::Full {
        result.namespaces = ["user", "mount", "pid", "ipc", "uts"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        if isolate_net {
            result.namespaces.push("net".into());
        }
    }
    // Not dumpable from here on: nothing inside can read this process's memory or
    // environment through /proc. (Set after the id maps, which a non-dumpable process
    // could not write.)
    nix::sys::prctl::set_dumpable(false)
        .map_err(|e| SandboxError::sys("cannot make the helper non-dumpable", e))?;

    let (info_r, info_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| SandboxError::sys("cannot create a pipe", e))?;
    let status = match tier {
        Tier::Full => {
            nix::sys::prctl::set_child_subreaper(true)
                .map_err(|e| SandboxError::sys("cannot become a subreaper", e))?;
            match fork()? {
                ForkResult::Child => {
                    drop(info_r);
                    // Only the helper answers cordon: PID 1 must not keep the result pipe
                    // open (cordon reads it to its end).
                    let _ = nix::unistd::close(result_fd.as_raw_fd());
                    let code = init_main(&spec, info_w, go, &filters, nproc);
                    std::process::exit(code)
                }
                ForkResult::Parent { child } => {
                    drop(info_w);
                    supervise(child, None, Reap::Child, signals, None).code
                }
            }
        }
        _ => {
            nix::sys::prctl::set_child_subreaper(true)
                .map_err(|e| SandboxError::sys("cannot become a subreaper", e))?;
            let info_fd = info_w.as_raw_fd();
            let mut fallback = FallbackRules::new(&spec)?;
            if let Network::Proxy { socket, .. } = &spec.network {
                let close = [
                    go,
                    result_fd.as_raw_fd(),
                    info_r.as_raw_fd(),
                    info_w.as_raw_fd(),
                ];
                fallback.proxy_port = Some(fallback_forwarder(socket, &filters, &close)?);
            }
            let (mine, theirs) = listener_channel()?;
            match fork()? {
                ForkResult::Child => {
                    drop(info_r);
                    drop(mine);
                    let _ = nix::unistd::close(result_fd.as_raw_fd());
                    // A helper that died before the pdeathsig was set would leave this
                    // process unsupervised. (`getppid` cannot tell: a PID namespace may
                    // have been made before the user namespace's maps failed.)
                    let e = match nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
                        Ok(()) if reader_alive(info_w.as_fd()) => {
                            let limits = Limits { nproc };
                            command_main(
                                &spec,
                                Some(&fallback),
                                info_fd,
                                go,
                                &filters,
                                theirs,
                                limits,
                            )
                        }
                        Ok(()) => EXIT_CORDON_FAILED,
                        Err(e) => {
                            let e = SandboxError::sys("cannot set the parent-death signal", e);
                            write_info(info_fd, &InfoLine::Error(WireError::from_error(&e)));
                            EXIT_CORDON_FAILED
                        }
                    };
                    std::process::exit(e)
                }
                ForkResult::Parent { child } => {
                    drop(info_w);
                    drop(theirs);
                    let mut observer = observe::recv_fd(mine.as_raw_fd()).map(|l| {
                        Observer::new(l, None, observed_write_paths(&spec, Some(&fallback)))
                            .guard_connect(fallback.proxy_port)
                    });
                    drop(mine);
                    let out =
                        supervise(child, spec.timeout, Reap::Tree, signals, observer.as_mut());
                    if out.timed_out {
                        result.timed_out = true;
                    }
                    if let Some(o) = observer {
                        result.blocked.extend(o.records);
                    }
                    out.code
                }
            }
        }
    };
    let mut text = String::new();
    let _ = std::fs::File::from(info_r).read_to_string(&mut text);
    for line in text.lines() {
        match serde_json::from_str::<InfoLine>(line) {
            Ok(InfoLine::Enforced(i)) => result.info = Some(i),
            Ok(InfoLine::Error(e)) => result.error = Some(e),
            Ok(InfoLine::TimedOut) => result.timed_out = true,
            Ok(InfoLine::Blocked { records }) => result.blocked.extend(records),
            Err(_) => {}
        }
    }
    Ok(status)
}

/// The fallback tier's forwarder to the proxy at `socket` (a path on the host, where the
/// command runs too): on a port of the host's loopback that the kernel chose, held by
/// the forwarder for the run, serving this user's sockets only. Returns the port, the
/// one destination the supervisor connects the command to (`connect_guard.rs`).
/// Refused where Landlock cannot restrict TCP (ABI < 4): the guard lets the kernel run
/// the calls it does not make itself, and counts on Landlock to refuse any of them that
/// reaches TCP.
fn fallback_forwarder(
    socket: &std::path::Path,
    filters: &[seccompiler::BpfProgram],
    close: &[RawFd],
) -> Result<u16, SandboxError> {
    let abi = sys::landlock_abi();
    if abi < 4 {
        return Err(SandboxError::new(
            SandboxErrorKind::TierUnavailable,
            format!(
                "the egress proxy cannot be confined here: there are no user namespaces (fallback tier) and this kernel's Landlock (ABI {abi}) cannot restrict TCP (ABI 4, Linux 6.7, is needed), so the command could connect anywhere; run without a network allowlist, or on a host with user namespaces or a newer kernel"
            ),
        ));
    }
    let listener = init::listen(("127.0.0.1", 0))?;
    let port = listener
        .local_addr()
        .map_err(|e| SandboxError::io("cannot read the forwarder's port", e))?
        .port();
    let peers = crate::forward::Peers::SameUser(nix::unistd::getuid().as_raw());
    init::spawn_forwarder(listener, socket.to_path_buf(), peers, filters, close)?;
    Ok(port)
}

/// How the process limit holds: the cgroup when there is one, else the `RLIMIT_NPROC`
/// the command's process is to set (returned); recorded in `result`.
/// Refuses when the spec asked for a limit that nothing here can hold.
fn process_limit(
    spec: &crate::spec::SandboxSpec,
    tier: Tier,
    (cgroup, host_root): (&Result<Joined, String>, bool),
    result: &mut HelperResult,
) -> Result<Option<u64>, SandboxError> {
    use crate::limits::{self, Means};
    let asked = spec.limits.processes;
    let path = cgroup
        .as_ref()
        .map(|cg| cg.path.display().to_string())
        .unwrap_or_default();
    // cordon wrote its pids.max before it sent the spec.
    let held = match cgroup {
        Ok(cg) => Ok((cg.version, path.as_str())),
        Err(why) => Err(why.clone()),
    };
    let means = Means {
        cgroup: held,
        host_root,
        per_user_namespace: limits::nproc_per_user_namespace(),
        tier,
    };
    let (report, nproc) = limits::choose(asked, means)
        .map_err(|why| SandboxError::new(SandboxErrorKind::Setup, why))?;
    result.processes = report;
    Ok(nproc)
}

/// The socket families the command may create. At the full tier an isolated network
/// namespace holds nothing but its own loopback, so IP sockets reach only the sandbox
/// itself (a test suite's local server) and, with a proxy, the forwarder; without that
/// namespace (the fallback tier) only the proxy mode gets IP sockets, TCP ones only
/// (nothing would contain UDP or ICMP), whose one connection, to the forwarder, the
/// supervisor makes (`connect_guard.rs`).
fn socket_families(network: &Network, tier: Tier) -> Sockets {
    match (network, tier) {
        (Network::None, Tier::Fallback) => Sockets::UnixOnly,
        (Network::Proxy { .. }, Tier::Fallback) => Sockets::UnixAndTcp,
        (Network::None | Network::Proxy { .. }, _) => Sockets::UnixAndInet,
        _ => Sockets::Any,
    }
}
