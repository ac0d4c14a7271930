//! The caller's side: start the helper, hand it the spec, wait, collect the report.
//!
//! The helper is a fork of this process when it has a single thread, else
//! `/proc/self/exe` re-executed with [`crate::HELPER_ARG`]; either way with an empty
//! environment (`run/child.rs`). The spec travels over an inherited pipe (not argv, not the
//! environment, so nothing in it shows up in `/proc/*/cmdline` or `environ`); the result
//! comes back over another. The binary that links this crate must call
//! [`crate::helper_main`] when `argv[1]` is `HELPER_ARG`, before anything else.

use crate::cgroup::Made;
use crate::changes::ChangeSet;
use crate::error::SandboxError;
use crate::helper::wire::{HelperRequest, NET_ISOLATE, NET_SHARE};
use crate::permit::Permit;
use crate::report::{DenialReport, Tier};
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use child::HelperChild;
use cordon_policy::settings::SandboxMode;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod child;
mod limit;
mod settle;
mod undo;
mod wait;

use settle::merge_back;
use wait::finish;
pub use wait::with_forwarded_signals_blocked;

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
    /// The command ran, but its changes could not all be merged back (one sentence; the
    /// report says what landed and which change set keeps the rest). The caller fails
    /// the run after writing the report.
    pub merge_error: Option<String>,
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
    child: Option<HelperChild>,
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
        let child = if child::single_threaded() {
            let early_net = hints.host_network.map(|host| !host);
            child::fork_helper(&spec_r, &res_w, hints.capture_output, |spec_fd, res_fd| {
                crate::helper::forked_main(spec_fd, res_fd, early_net)
            })?
        } else {
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
            HelperChild::from_std(
                cmd.spawn()
                    .map_err(|e| SandboxError::io("cannot start the sandbox helper", e))?,
            )
        };
        drop(spec_r);
        drop(res_w);
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
            if spec.require == crate::spec::Require::Any && spec.full_tier_for.is_none() {
                spec.full_tier_for = Some("this call, allowed for the full tier,".into());
            }
            spec.require = crate::spec::Require::Full;
        }
        // A run that may fall back gets its private scratch directory, and a copy of the
        // protected paths its writes could reach (there is no copy-on-write layer to
        // judge them in): made now, whichever tier the helper finds. `full-access`
        // writes everything at either tier.
        let may_fall_back = spec.require == crate::spec::Require::Any
            && !matches!(spec.mode, SandboxMode::FullAccess);
        let scratch = if may_fall_back {
            Some(crate::scratch::Scratch::create()?)
        } else {
            None
        };
        spec.plan.fallback_scratch = scratch.as_ref().map(|s| s.path().to_path_buf());
        let undo = may_fall_back.then(|| undo::Snapshot::take(&spec));
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
            let set = ChangeSet::create_in(&bases, &roots, &spec.writable_files, &command)?;
            spec.plan.overlays = set.layers().to_vec();
            Some(set)
        };
        let caches = spec.plan.cache_paths();
        let slot = if caches.is_empty() {
            None
        } else {
            // The workspace's slot (a `--slot` keeps its own), reset before it is handed out.
            match crate::caches::CacheSlot::for_run(&spec, &caches) {
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
            scratch,
            undo,
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
fn stop_after_close(child: Option<HelperChild>, res_r: Option<&std::fs::File>) {
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
fn stop(child: Option<HelperChild>) {
    if let Some(mut child) = child {
        child.kill();
        let _ = child.wait();
    }
}

/// A sandbox being built for a command that has not run yet (see [`Helper::start`]).
/// Dropping it instead of calling [`Started::finish`] stops the helper: the command's
/// process sees the pipe close without the go byte and exits without running anything.
#[derive(Debug)]
pub struct Started {
    child: Option<HelperChild>,
    go_w: Option<std::fs::File>,
    res_r: Option<std::fs::File>,
    spec: SandboxSpec,
    changes: Option<ChangeSet>,
    // Held until the run ends, so that no concurrent run shares its caches.
    _slot: Option<crate::caches::CacheSlot>,
    cgroup: Option<Made>,
    /// The fallback tier's scratch directory (removed when dropped).
    scratch: Option<crate::scratch::Scratch>,
    /// The protected paths as they were, for the fallback tier to put back.
    undo: Option<undo::Snapshot>,
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
        let uppers: Vec<PathBuf> = self
            .changes
            .as_ref()
            .map(|s| s.layers().iter().map(|l| l.upper.clone()).collect())
            .unwrap_or_default();
        let mut watch = limit::ChangesWatch::new(&uppers, self.spec.changes_limit);
        let mut outcome = finish(
            child,
            go_w,
            res_r,
            &self.spec,
            wait::Aside {
                cgroup: cgroup.as_ref(),
                watch: watch.as_mut(),
                undo: self.undo.as_ref(),
                start_after: self.changes.as_ref().map(|s| s.meta().horizon()),
            },
        );
        // Every process of the sandbox is gone: nothing may be left in its scratch.
        if let Some(scratch) = self.scratch.take()
            && let Err(e) = scratch.remove()
        {
            eprintln!("cordon: {e}");
        }
        let stopped = watch
            .as_ref()
            .and_then(|w| w.reached.map(|r| (r, w.limit())));
        if let (Some((used, limit)), Ok(o)) = (stopped, &mut outcome) {
            // Stopped part way: what it changed is kept whole for a human, not merged.
            o.timed_out = false;
            o.status = crate::helper::wire::EXIT_CORDON_FAILED as u8;
            o.report.blocked.push(crate::report::Blocked {
                kind: crate::report::BlockedKind::Write,
                target: "changes-limit".into(),
                detail: format!(
                    "the run's changes took {used} bytes (or the disk holding them was nearly full), and the limit is {limit}: the run was stopped and its changes discarded (raise the limit with --changes-limit or [sandbox] changes_limit)"
                ),
            });
            // A runaway's changes would keep the disk full: they go, nothing is merged.
            if let Some(set) = self.changes.take() {
                let _ = set.remove();
            }
        }
        if let (Some(w), Ok(o)) = (&watch, &mut outcome) {
            o.report.enforced.changes_limit = Some(w.limit());
        }
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
            // The report stays: it says what landed and where the rest waits.
            if let (Err(e), Ok(o)) = (merged, &mut outcome) {
                o.merge_error = Some(e.message);
            }
        }
        if !finished && let Some(made) = &cgroup {
            // The helper is gone (reaped on every error path): nothing is left in it.
            made.remove();
        }
        outcome
    }
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
