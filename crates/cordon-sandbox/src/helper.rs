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

use crate::error::{SandboxError, SandboxErrorKind};
use crate::landlock::{self, LandlockOutcome, Rules};
use crate::observe::{self, Observer};
use crate::report::{Blocked, Tier};
use crate::seccomp::{self, Sockets};
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::errno::Errno;
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, getgid, getpid, getppid, getuid};
use seccompiler::BpfProgram;
use serde::{Deserialize, Serialize};
use std::ffi::{CString, OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Exit status when cordon itself failed.
pub const EXIT_CORDON_FAILED: i32 = 125;
/// Exit status when the command was not found.
pub const EXIT_NOT_FOUND: i32 = 127;
/// Exit status when the command was found but could not be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// Exit status on timeout.
pub const EXIT_TIMEOUT: i32 = 124;

/// What the caller sends the helper.
#[derive(Serialize, Deserialize)]
pub(crate) struct HelperRequest {
    pub spec: SandboxSpec,
    pub parent: i32,
}

/// An error crossing the process boundary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WireError {
    pub kind: String,
    pub message: String,
}

impl WireError {
    fn from_error(e: &SandboxError) -> Self {
        let kind = match e.kind {
            SandboxErrorKind::ProtectedSymlink => "protected-symlink",
            SandboxErrorKind::TierUnavailable => "tier-unavailable",
            SandboxErrorKind::NotFound => "not-found",
            SandboxErrorKind::Invalid => "invalid",
            _ => "setup",
        };
        WireError {
            kind: kind.into(),
            message: e.message.clone(),
        }
    }

    pub(crate) fn into_error(self) -> SandboxError {
        let kind = match self.kind.as_str() {
            "protected-symlink" => SandboxErrorKind::ProtectedSymlink,
            "tier-unavailable" => SandboxErrorKind::TierUnavailable,
            "not-found" => SandboxErrorKind::NotFound,
            "invalid" => SandboxErrorKind::Invalid,
            _ => SandboxErrorKind::Setup,
        };
        SandboxError::new(kind, self.message)
    }
}

/// What the command's process enforced before `execve`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CommandInfo {
    pub landlock: LandlockOutcome,
    pub seccomp: bool,
    pub no_new_privs: bool,
    pub capabilities_dropped: bool,
}

/// One line on the internal info pipe (I and C → H).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "kebab-case")]
enum InfoLine {
    Enforced(CommandInfo),
    Error(WireError),
    TimedOut,
    Blocked { records: Vec<Blocked> },
}

/// What the helper sends back to the caller.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct HelperResult {
    pub status: i32,
    pub tier: Tier,
    pub namespaces: Vec<String>,
    pub info: Option<CommandInfo>,
    pub timed_out: bool,
    pub error: Option<WireError>,
    pub blocked: Vec<Blocked>,
}

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
    // other object in this freshly executed process.
    Some(unsafe { OwnedFd::from_raw_fd(n) })
}

/// `fork`, sound here because every process of the helper is single-threaded.
#[allow(unsafe_code)]
fn fork() -> Result<ForkResult, SandboxError> {
    // SAFETY: the helper never starts a thread before its last fork (the forwarder starts
    // threads only after its own fork, in its own process), so the child cannot inherit a
    // lock held by another thread.
    unsafe { nix::unistd::fork() }.map_err(|e| SandboxError::sys("cannot fork", e))
}

fn signal_set() -> SigSet {
    let mut s = SigSet::empty();
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGCHLD,
        Signal::SIGALRM,
    ] {
        s.add(sig);
    }
    s
}

fn send_result(fd: OwnedFd, result: &HelperResult) {
    let mut f = std::fs::File::from(fd);
    if let Ok(bytes) = serde_json::to_vec(result) {
        let _ = f.write_all(&bytes);
    }
}

/// The longest spec the helper accepts (a spec is a few kilobytes).
const MAX_SPEC: u64 = 16 << 20;

/// Read the length-framed spec, leaving whatever follows (the go byte) in the pipe.
/// `Ok(None)`: the pipe closed before a spec began.
fn read_spec(spec: &mut std::fs::File) -> Result<Option<Vec<u8>>, SandboxError> {
    let mut len = [0u8; 8];
    let mut got = 0;
    while got < len.len() {
        match spec.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(SandboxError::setup("the sandbox spec was cut short")),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(SandboxError::io("cannot read the sandbox spec", e)),
        }
    }
    let len = u64::from_le_bytes(len);
    if len > MAX_SPEC {
        return Err(SandboxError::setup("the sandbox spec is too large"));
    }
    let mut raw = vec![0u8; len as usize];
    spec.read_exact(&mut raw)
        .map_err(|e| SandboxError::io("cannot read the sandbox spec", e))?;
    Ok(Some(raw))
}

/// Wait for cordon's go byte on the spec pipe (inherited by every process of the
/// helper). Anything else (the pipe closed: cordon could not record the run, or
/// exited) means the command must not run.
fn wait_for_go(go: RawFd) -> Result<(), SandboxError> {
    let mut byte = [0u8; 1];
    loop {
        #[allow(unsafe_code)]
        // SAFETY: `go` is the spec pipe's read end, open for the life of this process
        // (owned by the helper's `run`, inherited across fork); borrowing it for one read.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(go) };
        match nix::unistd::read(fd, &mut byte) {
            Ok(1) if byte[0] == crate::run::GO => return Ok(()),
            Err(Errno::EINTR) => {}
            _ => {
                return Err(SandboxError::setup(
                    "cordon did not confirm the start (it could not record the run, or exited); the command did not run",
                ));
            }
        }
    }
}

/// Helper argument: the spec will ask for an isolated network (a new network namespace).
pub(crate) const NET_ISOLATE: &str = "net:isolate";
/// Helper argument: the spec will ask for the host's network.
pub(crate) const NET_SHARE: &str = "net:share";

/// Make the sandbox's user, IPC, UTS and (when `isolate_net`) network namespaces for
/// this process, map its uid and gid, and make it non-dumpable (after the maps, which a
/// non-dumpable process could not write). The mount and PID namespaces are made later,
/// when the spec is here (`run_inner`): the mount table's copy must be the one the
/// mount plan was computed against.
fn unshare_namespaces(isolate_net: bool) -> Result<(), nix::Error> {
    let uid = getuid();
    let gid = getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    if isolate_net {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).and_then(|()| write_id_maps(uid.as_raw(), gid.as_raw()))?;
    // Nothing outside can read this process's memory or descriptors through /proc
    // (such as the spec pipe) while it waits for the spec. (`run_inner` sets it again
    // and checks the result.)
    let _ = nix::sys::prctl::set_dumpable(false);
    Ok(())
}

fn run(spec_fd: OwnedFd, result_fd: OwnedFd, early_net: Option<bool>) -> i32 {
    let mut result = HelperResult::default();
    let signals = signal_set();
    let mut spec_file = std::fs::File::from(spec_fd);
    let blocked = signals
        .thread_block()
        .map_err(|e| SandboxError::sys("cannot block signals", e));
    // Creating the namespaces (the network namespace above all) is the largest part of
    // the helper's work, and needs nothing from the spec but its network mode: do it
    // while cordon is still judging the call. No command runs in them until the spec
    // and the go byte arrive.
    let early = early_net.map(|isolate| (isolate, unshare_namespaces(isolate)));
    let raw = blocked.and_then(|()| read_spec(&mut spec_file));
    let raw = match raw {
        // Started ahead of a spec that never came (cordon decided not to run anything,
        // or exited): nothing to do and nobody to tell.
        Ok(None) => return 0,
        Ok(Some(raw)) => Ok(raw),
        Err(e) => Err(e),
    };
    let go = spec_file.as_raw_fd();
    let status =
        match raw.and_then(|raw| run_inner(&raw, go, early, &signals, &result_fd, &mut result)) {
            Ok(code) => code,
            Err(e) => {
                result.error = Some(WireError::from_error(&e));
                EXIT_CORDON_FAILED
            }
        };
    drop(spec_file);
    result.status = status;
    send_result(result_fd, &result);
    status
}

fn run_inner(
    raw: &[u8],
    go: RawFd,
    early: Option<(bool, Result<(), nix::Error>)>,
    signals: &SigSet,
    result_fd: &OwnedFd,
    result: &mut HelperResult,
) -> Result<i32, SandboxError> {
    let req: HelperRequest = serde_json::from_slice(raw)
        .map_err(|e| SandboxError::setup(format!("the sandbox spec is malformed: {e}")))?;
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
    let sockets = match spec.network {
        Network::None => Sockets::UnixOnly,
        Network::Proxy { .. } => Sockets::UnixAndInet,
        _ => Sockets::Any,
    };
    let filters = seccomp::filters(sockets)?;

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
        .map_err(|e| format!("user namespaces are unavailable ({})", e.desc()))
        .and_then(|()| {
            unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID).map_err(|e| {
                format!(
                    "the mount and PID namespaces cannot be created ({})",
                    e.desc()
                )
            })
        });
    let tier = match unshared {
        Ok(()) => Tier::Full,
        Err(why) => {
            if matches!(spec.require, crate::spec::Require::Full) {
                return Err(SandboxError::new(
                    SandboxErrorKind::TierUnavailable,
                    format!("full containment was required but {why}"),
                ));
            }
            eprintln!("cordon: {why}; running with Landlock and seccomp only (fallback tier)");
            Tier::Fallback
        }
    };
    result.tier = tier;
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
                    let code = init_main(&spec, info_w, go, &filters);
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
            let (mine, theirs) = listener_channel()?;
            let fallback = FallbackRules::new(&spec);
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
                            command_main(&spec, Some(&fallback), info_fd, go, &filters, theirs)
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

fn write_id_maps(uid: u32, gid: u32) -> Result<(), nix::Error> {
    let w = |path: &str, text: String| {
        std::fs::write(path, text)
            .map_err(|e| e.raw_os_error().map(Errno::from_raw).unwrap_or(Errno::EIO))
    };
    w("/proc/self/setgroups", "deny".into())?;
    w("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    w("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

fn write_info(fd: RawFd, line: &InfoLine) {
    if let Ok(mut s) = serde_json::to_string(line) {
        s.push('\n');
        #[allow(unsafe_code)]
        // SAFETY: `fd` is the write end of the info pipe, open for the life of this
        // process; it is borrowed for one write.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = nix::unistd::write(fd, s.as_bytes());
    }
}

/// The trees Landlock lets the command write (in the sandbox's view). The device files
/// get their own, narrower rule in `landlock::apply`.
fn landlock_write_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    let mut write: Vec<PathBuf> = spec.plan.write_paths.clone();
    write.push(PathBuf::from("/tmp"));
    write.push(PathBuf::from("/dev/shm"));
    write
}

/// Landlock's rules in the fallback tier, where no mount hides the system secrets: the
/// plan's reads and the writable trees, split so that no rule covers a secret this user
/// could read (reads, and writes under `full-access`, which writes beneath `/`). Made
/// only when the fallback tier is used: splitting `/etc` costs about a millisecond.
struct FallbackRules {
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    list: Vec<PathBuf>,
}

impl FallbackRules {
    fn new(spec: &SandboxSpec) -> FallbackRules {
        use crate::plan::{readable_system_secrets, without_secrets};
        let secrets = readable_system_secrets();
        let (read, mut list) = without_secrets(spec.plan.fallback_read_paths.clone(), &secrets);
        let (write, write_list) = without_secrets(landlock_write_paths(spec), &secrets);
        list.extend(write_list);
        list.sort();
        list.dedup();
        FallbackRules { read, write, list }
    }
}

/// Where a write is expected to succeed, for the write observer: the writable trees
/// (the fallback tier's split ones, when given) and the device files.
fn observed_write_paths(spec: &SandboxSpec, fallback: Option<&FallbackRules>) -> Vec<PathBuf> {
    let mut write = match fallback {
        Some(rules) => rules.write.clone(),
        None => landlock_write_paths(spec),
    };
    write.extend(crate::landlock::DEVICE_FILES.iter().map(PathBuf::from));
    write
}

/// The socket pair over which the command hands its supervisor the listener.
fn listener_channel() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
    socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| SandboxError::sys("cannot create a socket pair", e))
}

/// PID 1 of the sandbox.
fn init_main(spec: &SandboxSpec, info_w: OwnedFd, go: RawFd, filters: &[BpfProgram]) -> i32 {
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
    if let Network::Proxy { port, .. } = &spec.network
        && let Err(e) = start_forwarder(*port, filters, &[go, info])
    {
        return fail(e);
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
            command_main(spec, None, info, go, filters, theirs)
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
            if let Some(o) = observer
                && !o.records.is_empty()
            {
                write_info(info, &InfoLine::Blocked { records: o.records });
            }
            drop(info_w);
            out.code
        }
    }
}

/// Does the pipe whose write end is `w` still have a reader?
fn reader_alive(w: std::os::fd::BorrowedFd<'_>) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut fds = [PollFd::new(w, PollFlags::POLLOUT)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => !fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)),
        Err(_) => false,
    }
}

/// Start the in-sandbox forwarder to the proxy socket, in its own process, which closes
/// `close` (pipes it has no business holding) first.
fn start_forwarder(port: u16, filters: &[BpfProgram], close: &[RawFd]) -> Result<(), SandboxError> {
    sys::loopback_up().map_err(|e| SandboxError::sys("cannot bring up the loopback", e))?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
        SandboxError::io(
            format!("cannot listen on 127.0.0.1:{port} in the sandbox"),
            e,
        )
    })?;
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
            crate::forward::serve(
                listener,
                PathBuf::from(crate::plan::PROXY_SOCKET_IN_SANDBOX),
            )
        }
        ForkResult::Parent { .. } => {
            drop(listener);
            Ok(())
        }
    }
}

/// Find `prog` the way a shell would, in the sandbox's `PATH`.
fn resolve(prog: &OsStr, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if prog.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(prog));
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let cand = dir.join(prog);
        if let Ok(m) = std::fs::metadata(&cand)
            && m.is_file()
            && m.permissions().mode() & 0o111 != 0
        {
            return Some(cand);
        }
    }
    None
}

fn set_limits(spec: &SandboxSpec) -> Result<(), SandboxError> {
    use nix::sys::resource::{Resource, setrlimit};
    let set = |r: Resource, v: Option<u64>, what: &str| -> Result<(), SandboxError> {
        match v {
            Some(v) => setrlimit(r, v, v)
                .map_err(|e| SandboxError::sys(format_args!("cannot limit {what}"), e)),
            None => Ok(()),
        }
    };
    set(Resource::RLIMIT_CORE, Some(0), "core dumps")?;
    set(Resource::RLIMIT_CPU, spec.limits.cpu_seconds, "CPU time")?;
    set(
        Resource::RLIMIT_AS,
        spec.limits.address_space,
        "address space",
    )?;
    set(Resource::RLIMIT_NPROC, spec.limits.processes, "processes")?;
    set(Resource::RLIMIT_FSIZE, spec.limits.file_size, "file size")?;
    set(
        Resource::RLIMIT_NOFILE,
        spec.limits.open_files,
        "open files",
    )?;
    Ok(())
}

/// The command's process: everything here runs after the last fork and ends in
/// `execve` or an exit status.
fn command_main(
    spec: &SandboxSpec,
    fallback: Option<&FallbackRules>,
    info: RawFd,
    go: RawFd,
    filters: &[BpfProgram],
    listener_to: OwnedFd,
) -> i32 {
    let fail = |e: SandboxError| {
        write_info(info, &InfoLine::Error(WireError::from_error(&e)));
        EXIT_CORDON_FAILED
    };
    let _ = SigSet::empty().thread_set_mask();
    if let Err(e) = sys::default_sigpipe() {
        return fail(SandboxError::sys("cannot restore SIGPIPE", e));
    }
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(SandboxError::sys("cannot set the parent-death signal", e));
    }
    if fallback.is_some() {
        if let Err(e) = nix::unistd::setsid() {
            return fail(SandboxError::sys("cannot start a new session", e));
        }
        if let Err(e) = nix::unistd::chdir(&spec.cwd) {
            return fail(SandboxError::sys(
                format_args!("cannot enter {}", spec.cwd.display()),
                e,
            ));
        }
    }
    if let Err(e) = set_limits(spec) {
        return fail(e);
    }
    let Some(prog) = spec.argv.first() else {
        return fail(SandboxError::invalid("no command was given"));
    };
    let Some(path) = resolve(prog, &spec.env) else {
        write_info(
            info,
            &InfoLine::Error(WireError {
                kind: "not-found".into(),
                message: format!("command not found: {}", prog.to_string_lossy()),
            }),
        );
        return EXIT_NOT_FOUND;
    };
    let to_c = |s: &OsStr| CString::new(s.as_bytes()).ok();
    let Some(c_path) = to_c(path.as_os_str()) else {
        return fail(SandboxError::invalid("the command contains a NUL byte"));
    };
    let Some(c_argv) = spec
        .argv
        .iter()
        .map(|a| to_c(a))
        .collect::<Option<Vec<_>>>()
    else {
        return fail(SandboxError::invalid("an argument contains a NUL byte"));
    };
    let c_env: Vec<CString> = spec
        .env
        .iter()
        .filter_map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            CString::new(kv).ok()
        })
        .collect();

    let mut info_out = CommandInfo::default();
    let full_tier = fallback.is_none();
    match sys::drop_capabilities() {
        Ok(()) => info_out.capabilities_dropped = true,
        Err(e) => return fail(SandboxError::sys("cannot drop capabilities", e)),
    }
    if let Err(e) = nix::sys::prctl::set_no_new_privs() {
        return fail(SandboxError::sys("cannot set no_new_privs", e));
    }
    info_out.no_new_privs = true;
    let (read, write, list) = match fallback {
        None => (
            vec![PathBuf::from("/")],
            landlock_write_paths(spec),
            Vec::new(),
        ),
        // No mount masks the system secrets here: the fallback rules leave them out.
        Some(rules) => (rules.read.clone(), rules.write.clone(), rules.list.clone()),
    };
    let rules = Rules {
        read: &read,
        list: &list,
        write: &write,
        restrict_tcp: !matches!(spec.network, Network::Full),
        connect_port: match spec.network {
            Network::Proxy { port, .. } => Some(port),
            _ => None,
        },
    };
    match landlock::apply(&rules) {
        // Without namespaces, Landlock is the only filesystem containment: refuse to
        // run uncontained.
        Ok(l) if !full_tier && !l.filesystem => {
            return fail(SandboxError::new(
                SandboxErrorKind::TierUnavailable,
                "neither user namespaces nor Landlock are available here; refusing to run the command uncontained",
            ));
        }
        Ok(l) => info_out.landlock = l,
        Err(e) => return fail(e),
    }
    if let Err(e) = sys::cloexec_from(3) {
        return fail(SandboxError::sys("cannot close inherited descriptors", e));
    }
    // Everything is in place; run only once cordon has recorded the run. The supervisor
    // waits for the listener below before it starts the `--timeout` clock, so the wait
    // for the go byte (the audit record, a lock held by another cordon) is not counted.
    if let Err(e) = wait_for_go(go) {
        return fail(e);
    }
    // Hand the supervisor a listener for refused writes (observation only; if it
    // cannot be set up, the run goes on unobserved).
    if let Ok(listener) = observe::install() {
        let _ = observe::send_fd(listener_to.as_raw_fd(), listener.as_raw_fd());
    }
    drop(listener_to);
    info_out.seccomp = true;
    write_info(info, &InfoLine::Enforced(info_out));
    if let Err(e) = seccomp::install(filters) {
        return fail(e);
    }
    let mut err = nix::unistd::execve(&c_path, &c_argv, &c_env).err();
    if err == Some(Errno::ENOEXEC) {
        // A script without `#!`: run it with the shell, as execvp(3) does.
        let mut sh_argv = vec![CString::from(c"/bin/sh"), c_path.clone()];
        sh_argv.extend(c_argv.iter().skip(1).cloned());
        err = nix::unistd::execve(c"/bin/sh", &sh_argv, &c_env).err();
    }
    match err {
        Some(Errno::ENOENT) => {
            write_info(
                info,
                &InfoLine::Error(WireError {
                    kind: "not-found".into(),
                    message: format!("command not found: {}", prog.to_string_lossy()),
                }),
            );
            EXIT_NOT_FOUND
        }
        Some(e) => {
            write_info(
                info,
                &InfoLine::Error(WireError {
                    kind: "setup".into(),
                    message: format!("cannot execute {}: {}", path.display(), e.desc()),
                }),
            );
            EXIT_NOT_EXECUTABLE
        }
        None => EXIT_CORDON_FAILED,
    }
}

/// How much to kill when the watched child ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reap {
    /// Only the child (H watching PID 1: the kernel empties the namespace when it dies).
    Child,
    /// Everything in the PID namespace (we are its PID 1).
    Namespace,
    /// The child's process group and every orphan reparented to us (fallback tier).
    Tree,
}

struct Supervised {
    code: i32,
    timed_out: bool,
}

fn status_code(ws: WaitStatus) -> Option<i32> {
    match ws {
        WaitStatus::Exited(_, c) => Some(c),
        WaitStatus::Signaled(_, s, _) => Some(128 + s as i32),
        _ => None,
    }
}

/// Wait for `child`, forwarding SIGINT/SIGTERM/SIGHUP, enforcing `timeout`, then kill
/// what `reap` says and reap everything.
fn supervise(
    child: Pid,
    timeout: Option<std::time::Duration>,
    reap: Reap,
    set: &SigSet,
    mut observer: Option<&mut Observer>,
) -> Supervised {
    if let Some(t) = timeout
        && sys::arm_alarm(t).is_err()
    {
        // Without a working timer the timeout cannot be honoured: stop now.
        kill_all(child, reap);
        reap_all();
        return Supervised {
            code: EXIT_CORDON_FAILED,
            timed_out: false,
        };
    }
    let mut code = None;
    let mut timed_out = false;
    let sigfd = match &observer {
        Some(_) => {
            nix::sys::signalfd::SignalFd::with_flags(set, nix::sys::signalfd::SfdFlags::SFD_CLOEXEC)
                .ok()
        }
        None => None,
    };
    if observer.is_some() && sigfd.is_none() {
        // The command waits on the listener for every observed write; without a way to
        // serve it alongside signals, stop rather than leave it hanging.
        kill_all(child, reap);
        reap_all();
        return Supervised {
            code: EXIT_CORDON_FAILED,
            timed_out: false,
        };
    }
    while code.is_none() {
        let sig = match (&sigfd, observer.as_deref_mut()) {
            (Some(sfd), Some(obs)) => match wait_either(sfd, obs) {
                Some(sig) => sig,
                None => continue,
            },
            _ => match set.wait() {
                Ok(sig) => sig,
                Err(_) => continue,
            },
        };
        match sig {
            Signal::SIGCHLD => loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(ws) => {
                        if ws.pid() == Some(child) {
                            code = status_code(ws);
                        }
                    }
                }
            },
            Signal::SIGALRM => {
                timed_out = true;
                code = Some(EXIT_TIMEOUT);
            }
            other => {
                let _ = kill(child, other);
            }
        }
    }
    kill_all(child, reap);
    reap_all();
    Supervised {
        code: code.unwrap_or(EXIT_CORDON_FAILED),
        timed_out,
    }
}

/// Serve the observer until a signal arrives; `None` when woken by the observer only.
fn wait_either(sfd: &nix::sys::signalfd::SignalFd, obs: &mut Observer) -> Option<Signal> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut listener_ev = PollFlags::empty();
    let signal_ready;
    {
        let mut fds = vec![PollFd::new(sfd.as_fd(), PollFlags::POLLIN)];
        if let Some(l) = obs.listener() {
            fds.push(PollFd::new(l, PollFlags::POLLIN));
        }
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            return None;
        }
        if let Some(f) = fds.get(1) {
            listener_ev = f.revents().unwrap_or(PollFlags::empty());
        }
        signal_ready = fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN));
    }
    if listener_ev.contains(PollFlags::POLLIN) {
        obs.handle();
    } else if listener_ev.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
        // No process is left under the filter: stop watching the listener.
        obs.close();
    }
    if signal_ready && let Ok(Some(info)) = sfd.read_signal() {
        return Signal::try_from(info.ssi_signo as i32).ok();
    }
    None
}

fn kill_all(child: Pid, reap: Reap) {
    match reap {
        Reap::Child => {
            let _ = kill(child, Signal::SIGKILL);
        }
        Reap::Namespace => {
            // From PID 1, -1 means every other process of the namespace.
            let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
        }
        Reap::Tree => {
            let _ = kill(child, Signal::SIGKILL);
            let _ = kill(Pid::from_raw(-child.as_raw()), Signal::SIGKILL);
            // Orphans that left the group were reparented to us (subreaper).
            for _ in 0..64 {
                let kids = children_of(getpid());
                if kids.is_empty() {
                    break;
                }
                for k in kids {
                    let _ = kill(Pid::from_raw(-k), Signal::SIGKILL);
                    let _ = kill(Pid::from_raw(k), Signal::SIGKILL);
                }
                reap_all();
            }
        }
    }
}

/// Reap every child we have, blocking until none is left.
fn reap_all() {
    loop {
        match waitpid(None, None) {
            Ok(_) => {}
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
}

/// PIDs whose parent is `me`, from /proc.
fn children_of(me: Pid) -> Vec<i32> {
    let path = format!("/proc/{}/task/{}/children", me.as_raw(), me.as_raw());
    let mut out: Vec<i32> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect();
    if out.is_empty() {
        // Kernels without CONFIG_PROC_CHILDREN: scan every process.
        if let Ok(rd) = std::fs::read_dir("/proc") {
            for e in rd.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                // The field after the `)` that closes the command name is the state,
                // then the parent PID.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|s| s.parse::<i32>().ok());
                if ppid == Some(me.as_raw()) {
                    out.push(pid);
                }
            }
        }
    }
    out
}

/// Can this host create the namespaces the full tier needs? Run in a throwaway helper
/// process, so the caller's own process is never changed.
fn probe_namespaces() -> Result<(), String> {
    let uid = getuid().as_raw();
    let gid = getgid().as_raw();
    unshare(
        CloneFlags::CLONE_NEWUSER
            | CloneFlags::CLONE_NEWNS
            | CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS
            | CloneFlags::CLONE_NEWNET,
    )
    .map_err(|e| {
        format!(
            "unshare of user, mount, PID, IPC, UTS and network namespaces failed: {}",
            e.desc()
        )
    })?;
    write_id_maps(uid, gid)
        .map_err(|e| format!("writing the uid/gid maps failed: {}", e.desc()))?;
    nix::mount::mount(
        None::<&str>,
        "/",
        None::<&str>,
        nix::mount::MsFlags::MS_REC | nix::mount::MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|e| format!("making the mount tree private failed: {}", e.desc()))?;
    nix::mount::mount(
        Some("tmpfs"),
        Path::new("/tmp"),
        Some("tmpfs"),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| format!("mounting a tmpfs failed: {}", e.desc()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_round_trip() {
        let lines = [
            InfoLine::Error(WireError {
                kind: "not-found".into(),
                message: "command not found: x".into(),
            }),
            InfoLine::TimedOut,
            InfoLine::Enforced(CommandInfo::default()),
        ];
        for l in lines {
            let s = serde_json::to_string(&l).unwrap();
            let back: InfoLine = serde_json::from_str(&s).unwrap();
            assert_eq!(format!("{l:?}"), format!("{back:?}"));
        }
    }

    #[test]
    fn wire_errors_keep_their_kind() {
        for kind in [
            SandboxErrorKind::ProtectedSymlink,
            SandboxErrorKind::TierUnavailable,
            SandboxErrorKind::NotFound,
            SandboxErrorKind::Invalid,
            SandboxErrorKind::Setup,
        ] {
            let e = SandboxError::new(kind, "x");
            assert_eq!(WireError::from_error(&e).into_error().kind, kind);
        }
    }

    #[test]
    fn resolve_searches_path() {
        let env = vec![(OsString::from("PATH"), OsString::from("/nonexistent:/bin"))];
        assert_eq!(
            resolve(OsStr::new("sh"), &env),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(resolve(OsStr::new("no-such-program-xyz"), &env), None);
        assert_eq!(resolve(OsStr::new("./x"), &env), Some(PathBuf::from("./x")));
    }
}
