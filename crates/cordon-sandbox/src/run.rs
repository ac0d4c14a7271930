//! The caller's side: start the helper, hand it the spec, wait, collect the report.
//!
//! The helper is `/proc/self/exe` re-executed with [`crate::HELPER_ARG`] and an empty
//! environment. The spec travels over an inherited pipe (not argv, not the
//! environment, so nothing in it shows up in `/proc/*/cmdline` or `environ`); the result
//! comes back over another. The binary that links this crate must call
//! [`crate::helper_main`] when `argv[1]` is `HELPER_ARG`, before anything else.

use crate::cgroup::Made;
use crate::changes::ChangeSet;
use crate::error::{SandboxError, SandboxErrorKind};
use crate::helper::wire::{GO, HelperRequest, HelperResult, NET_ISOLATE, NET_SHARE};
use crate::permit::Permit;
use crate::report::{Blocked, BlockedKind, DenialReport, Enforced, Tier};
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

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
/// inheritable). Same as [`Helper::spawn`] followed by [`Helper::run`].
pub fn run(spec: &SandboxSpec, permit: Permit) -> Result<Outcome, SandboxError> {
    Helper::spawn(HelperHints::for_spec(spec))?.run(spec, permit)
}

/// What a helper started ahead of its spec can prepare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HelperHints {
    /// Pipe the command's stdout and stderr through this process (needed for
    /// [`SandboxSpec::output_limit`]).
    pub capture_output: bool,
    /// The network the spec will ask for: `Some(true)` for the host's
    /// ([`Network::Full`]), `Some(false)` for an isolated one (any other). With it the
    /// helper makes its namespaces before the spec arrives; `None` waits for the spec.
    pub host_network: Option<bool>,
}

impl HelperHints {
    /// The hints that match `spec` exactly.
    pub fn for_spec(spec: &SandboxSpec) -> HelperHints {
        HelperHints {
            capture_output: spec.output_limit.is_some(),
            host_network: Some(matches!(spec.network, Network::Full)),
        }
    }

    /// Can a helper started with these hints run `spec`?
    fn fit(&self, spec: &SandboxSpec) -> bool {
        let exact = HelperHints::for_spec(spec);
        self.capture_output == exact.capture_output
            && self
                .host_network
                .is_none_or(|h| Some(h) == exact.host_network)
    }
}

/// A sandbox helper started before its spec is known.
///
/// Starting the helper (executing the binary again, loading it) takes about as long as
/// loading the policy and writing the audit record, so a caller can start it first and
/// do that work while the helper starts on another CPU. The helper does nothing until
/// [`Helper::run`] sends the spec; dropping an unused `Helper` (a deny, a pending
/// approval) closes the spec pipe, and the helper exits without a word.
#[derive(Debug)]
pub struct Helper {
    child: Option<Child>,
    spec_w: Option<OwnedFd>,
    res_r: Option<OwnedFd>,
    hints: HelperHints,
    /// The helper's pids cgroup, made while it starts, or why there is none.
    cgroup: Option<Result<Made, String>>,
}

impl Helper {
    /// Start a helper prepared as far as `hints` allow, and make its pids cgroup where
    /// this host lets cordon make one (see `cgroup.rs`). Call it while this process has
    /// no other thread that spawns processes (the helper's pipe ends are briefly
    /// inheritable).
    pub fn spawn(hints: HelperHints) -> Result<Helper, SandboxError> {
        let (spec_r, spec_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(sys_err("cannot create a pipe"))?;
        let (res_r, res_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(sys_err("cannot create a pipe"))?;
        sys::set_cloexec(spec_r.as_raw_fd(), false).map_err(sys_err("cannot pass a pipe"))?;
        sys::set_cloexec(res_w.as_raw_fd(), false).map_err(sys_err("cannot pass a pipe"))?;
        let mut cmd = Command::new("/proc/self/exe");
        cmd.arg(crate::HELPER_ARG)
            .arg("run")
            .arg(spec_r.as_raw_fd().to_string())
            .arg(res_w.as_raw_fd().to_string())
            .env_clear();
        match hints.host_network {
            Some(true) => {
                cmd.arg(NET_SHARE);
            }
            Some(false) => {
                cmd.arg(NET_ISOLATE);
            }
            None => {}
        }
        if hints.capture_output {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        let child = cmd
            .spawn()
            .map_err(|e| SandboxError::io("cannot start the sandbox helper", e))?;
        // Made here, while the helper is being executed, so that the helper (whose start
        // is the longest path of a run) only has to move itself in.
        let cgroup = Made::create(child.id());
        Ok(Helper {
            child: Some(child),
            spec_w: Some(spec_w),
            res_r: Some(res_r),
            hints,
            cgroup: Some(cgroup),
        })
    }

    /// Send the spec and wait for the command, as [`run`] does: [`Helper::start`], then
    /// [`Started::finish`].
    pub fn run(self, spec: &SandboxSpec, permit: Permit) -> Result<Outcome, SandboxError> {
        self.start(spec, permit)?.finish()
    }

    /// Send the spec: the helper builds the sandbox and stops just before it would run
    /// the command, until [`Started::finish`] lets it. Work that must succeed before the
    /// command runs (the audit record) can be done in between, while the sandbox is
    /// built on another CPU. A helper whose hints do not fit the spec is replaced by a
    /// new one.
    pub fn start(mut self, spec: &SandboxSpec, permit: Permit) -> Result<Started, SandboxError> {
        if !self.hints.fit(spec) {
            drop(self);
            return Helper::spawn(HelperHints::for_spec(spec))?.start(spec, permit);
        }
        let mut spec = spec.clone();
        if permit.requires_full_tier() {
            // The decision counted on namespaces: no lower tier may run it.
            spec.require = crate::spec::Require::Full;
        }
        let roots: Vec<PathBuf> = spec.plan.overlay_roots().map(Path::to_path_buf).collect();
        let changes = if roots.is_empty() {
            None
        } else {
            let bases = crate::changes::changes_bases(&spec.writable_roots);
            let command: Vec<String> = spec
                .argv
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let set = ChangeSet::create_in(&bases, &roots, &command)?;
            spec.plan.overlays = set.layers().to_vec();
            Some(set)
        };
        let caches = spec.plan.cache_paths();
        let slot = if caches.is_empty() {
            None
        } else {
            // A slot keeps its own caches, which persist with it.
            let base = match &spec.slot {
                Some(slot) => slot.caches.clone(),
                None => crate::caches::caches_base(&spec.writable_roots, &caches),
            };
            match crate::caches::CacheSlot::take(&base, &caches) {
                Ok(slot) => {
                    spec.plan.caches = slot.layers().to_vec();
                    Some(slot)
                }
                // Writable caches are a convenience, not a protection: without a slot
                // they stay as the plan left them (hidden or read-only).
                Err(_) => {
                    spec.plan
                        .ops
                        .retain(|o| !matches!(o, crate::plan::MountOp::Cache { .. }));
                    None
                }
            }
        };
        // A slot's start-up files are reset before every run (`slot/startup.rs`): with
        // the cache layers known, before anything of the sandbox exists.
        if let Some(slot) = spec.slot.as_ref().filter(|s| !s.keep_startup) {
            crate::slot::reset_startup(slot, &spec.plan.caches, &spec.home).map_err(|e| {
                SandboxError::setup(format!(
                    "cannot reset the slot's start-up files: {}",
                    e.message
                ))
            })?;
        }
        let cgroup = match self.cgroup.take() {
            Some(Ok(made)) => {
                let max = spec
                    .limits
                    .processes
                    .unwrap_or(crate::limits::DEFAULT_PROCESS_LIMIT)
                    .saturating_add(crate::limits::OWN_PROCESSES);
                match made.set_max(max) {
                    Ok(()) => Ok(made),
                    Err(why) => {
                        made.remove();
                        Err(why)
                    }
                }
            }
            Some(Err(why)) => Err(why),
            None => Err("the helper's cgroup was already used".to_string()),
        };
        let request = HelperRequest {
            spec: spec.clone(),
            parent: std::process::id() as i32,
            cgroup: cgroup.clone(),
        };
        let payload = serde_json::to_vec(&request)
            .map_err(|e| SandboxError::setup(format!("cannot encode the sandbox spec: {e}")))?;
        let (Some(child), Some(spec_w), Some(res_r)) =
            (self.child.take(), self.spec_w.take(), self.res_r.take())
        else {
            return Err(SandboxError::setup("the sandbox helper was already used"));
        };
        let mut started = Started {
            child: Some(child),
            go_w: Some(std::fs::File::from(spec_w)),
            res_r: Some(std::fs::File::from(res_r)),
            spec: spec.clone(),
            changes,
            _slot: slot,
            cgroup: cgroup.ok(),
        };
        // The length first, so that the helper reads exactly the spec and leaves the go
        // byte in the pipe for the command's process. A helper that died early closed its
        // end; its status tells why (in `finish`).
        if let Some(w) = started.go_w.as_mut() {
            let mut framed = (payload.len() as u64).to_le_bytes().to_vec();
            framed.extend_from_slice(&payload);
            let _ = w.write_all(&framed);
        }
        Ok(started)
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Unused: close the spec pipe (the helper exits on end of file) and make sure it
        // is gone before this process goes on. It never entered its cgroup.
        self.spec_w.take();
        stop(self.child.take());
        if let Some(Ok(made)) = self.cgroup.take() {
            made.remove();
        }
    }
}

/// How long a helper told to stop (its go pipe closed) may take to end the sandbox's
/// processes and exit by itself.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Stop a helper whose go pipe was just closed: give it [`STOP_GRACE`] to exit by
/// itself, watching its result pipe close (then every process of the sandbox is gone,
/// and its cgroup can be removed); then kill it, and reap it.
fn stop_after_close(child: Option<Child>, res_r: Option<&std::fs::File>) {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::io::Read;
    use std::os::fd::AsFd;
    if let (Some(_), Some(mut r)) = (&child, res_r) {
        let deadline = std::time::Instant::now() + STOP_GRACE;
        let mut buf = [0u8; 4096];
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
            let mut fds = [PollFd::new(r.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, timeout) {
                Ok(0) => break,
                Ok(_) => match r.read(&mut buf) {
                    // Every write end is closed: the helper is gone, or going.
                    Ok(0) | Err(_) => break,
                    // A result nobody asked for: drain it.
                    Ok(_) => {}
                },
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => break,
            }
        }
    }
    stop(child);
}

/// Kill a helper that is not to run anything, and reap it.
fn stop(child: Option<Child>) {
    if let Some(mut child) = child {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The signals [`Started::finish`] forwards to the command (and SIGCHLD, which it
/// waits on).
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

/// A sandbox being built for a command that has not run yet (see [`Helper::start`]).
/// Dropping it instead of calling [`Started::finish`] stops the helper: the command's
/// process sees the pipe close without the go byte and exits without running anything.
#[derive(Debug)]
pub struct Started {
    child: Option<Child>,
    go_w: Option<std::fs::File>,
    res_r: Option<std::fs::File>,
    spec: SandboxSpec,
    changes: Option<ChangeSet>,
    // Held until the run ends, so that no concurrent run shares its caches.
    _slot: Option<crate::caches::CacheSlot>,
    cgroup: Option<Made>,
}

impl Drop for Started {
    fn drop(&mut self) {
        // Not finished: the command's process sees the pipe close without the go byte,
        // and exits without running anything; so does the rest of the sandbox.
        self.go_w.take();
        let res_r = self.res_r.take();
        stop_after_close(self.child.take(), res_r.as_ref());
        if let Some(made) = self.cgroup.take() {
            made.remove();
        }
        // Nothing ran, so there is nothing to merge.
        if let Some(set) = self.changes.take() {
            let _ = set.remove();
        }
    }
}

impl Started {
    /// Let the command run, and wait for it. Errors mean the command did not run as
    /// asked (see [`run`]). Signals SIGINT, SIGTERM and SIGHUP received meanwhile are
    /// forwarded to the command.
    pub fn finish(mut self) -> Result<Outcome, SandboxError> {
        let (Some(child), Some(go_w), Some(res_r)) =
            (self.child.take(), self.go_w.take(), self.res_r.take())
        else {
            return Err(SandboxError::setup("the sandbox was already finished"));
        };
        let cgroup = self.cgroup.take();
        let mut outcome = finish(child, go_w, res_r, &self.spec, cgroup.as_ref());
        let finished = outcome.is_ok();
        if let Some(set) = self.changes.take() {
            let merged = match &mut outcome {
                Ok(o) if o.report.tier == Tier::Full => merge_back(set, &self.spec, &mut o.report),
                // The fallback tier wrote the roots directly; the layers stayed empty.
                Ok(_) => set.recycle(),
                // The helper failed: the command may have run part way. What it changed
                // stays for `cordon changes`; an untouched set goes.
                Err(_) if set.is_untouched() => set.remove(),
                Err(_) => Ok(()),
            };
            if let (Err(e), Ok(_)) = (merged, &outcome) {
                outcome = Err(e);
            }
        }
        if !finished && let Some(made) = &cgroup {
            // The helper is gone (reaped on every error path): nothing is left in it.
            made.remove();
        }
        outcome
    }
}

fn finish(
    mut child: Child,
    mut go_w: std::fs::File,
    res_r: std::fs::File,
    spec: &SandboxSpec,
    cgroup: Option<&Made>,
) -> Result<Outcome, SandboxError> {
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
    let _ = go_w.write_all(&[GO]);
    drop(go_w);

    let helper = Pid::from_raw(child.id() as i32);
    let received = receive_result(helper, &res_r, &sfd);
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
    let undo = if result.tier == Tier::Full {
        spec.plan.watched_protected()
    } else {
        spec.plan.missing_protected.clone()
    };
    for p in &undo {
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

/// Merge every layer of `set` into its root, report what stayed out, and delete the set.
/// A merge that stops part way keeps the set (for `cordon changes`) and says so.
fn merge_back(
    set: ChangeSet,
    spec: &SandboxSpec,
    report: &mut DenialReport,
) -> Result<(), SandboxError> {
    let started = std::time::Instant::now();
    if set.is_untouched() {
        // Most runs change nothing: their set is kept for the next run.
        let recycled = set.recycle();
        report.merged.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        return recycled;
    }
    let id = set
        .dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Changes outside an allowlist stay in the set for a human.
    let mut keep = false;
    for layer in set.layers() {
        let merged = match &spec.merge_only {
            Some(only) => crate::merge::merge_layer_only(layer, &spec.home, only),
            None => crate::merge::merge_layer(layer, &spec.home),
        };
        match merged {
            Ok(m) => {
                report.merged.merged += m.merged;
                report.merged.removed += m.removed;
                if !m.kept.is_empty() {
                    keep = true;
                }
                for p in m.kept {
                    report.blocked.push(Blocked {
                        kind: BlockedKind::NotMerged,
                        target: p.display().to_string(),
                        detail: format!(
                            "not merged into the host's tree: the run may change only the paths it declared; the change waits in `cordon changes show {id}`"
                        ),
                    });
                }
                for r in m.refused {
                    report.blocked.push(Blocked {
                        kind: BlockedKind::NotMerged,
                        target: r.path.display().to_string(),
                        detail: format!("not merged into the host's tree: {}", r.reason),
                    });
                }
            }
            Err(e) => {
                return Err(SandboxError::setup(format!(
                    "{}; the run's remaining changes are kept: see `cordon changes show {id}`",
                    e.message
                )));
            }
        }
    }
    let removed = if keep { Ok(()) } else { set.remove() };
    report.merged.micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    removed
}

/// Wait until the helper has written its result and closed the pipe, forwarding
/// SIGINT, SIGTERM and SIGHUP (read from `sfd`; blocked in this thread) to it meanwhile.
fn receive_result(
    helper: Pid,
    res_r: &std::fs::File,
    sfd: &nix::sys::signalfd::SignalFd,
) -> Result<Vec<u8>, SandboxError> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let (result_ready, signal_ready) = {
            let mut fds = [
                PollFd::new(res_r.as_fd(), PollFlags::POLLIN),
                PollFd::new(sfd.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
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
fn reap_later(mut child: Child, cgroup: Option<Made>) {
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

#[cfg(test)]
mod hint_tests {
    use super::HelperHints;
    use crate::spec::{Network, SandboxBuilder};

    #[test]
    fn a_helper_runs_only_specs_its_namespaces_and_pipes_fit() {
        let ws = tempfile::tempdir().unwrap();
        let spec = |net: Network, limit: Option<u64>| {
            SandboxBuilder::new(["true"])
                .workspace(ws.path())
                .network(net)
                .output_limit(limit)
                .build()
                .unwrap()
        };
        let isolated = spec(Network::None, None);
        let host = spec(Network::Full, None);
        let capped = spec(Network::None, Some(10));
        let early_isolated = HelperHints {
            capture_output: false,
            host_network: Some(false),
        };
        assert!(early_isolated.fit(&isolated));
        // Namespaces made for an isolated network cannot serve the host's, nor the
        // reverse.
        assert!(!early_isolated.fit(&host));
        assert!(!HelperHints::for_spec(&host).fit(&isolated));
        // Output capture is fixed when the helper starts.
        assert!(!early_isolated.fit(&capped));
        // Without a network hint the namespaces wait for the spec: any network fits.
        let late = HelperHints::default();
        assert!(late.fit(&isolated) && late.fit(&host) && !late.fit(&capped));
    }
}
