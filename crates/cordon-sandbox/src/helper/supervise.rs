//! Supervision of one child (the command, by PID 1 or in the fallback tier by the
//! helper; PID 1, by the helper): waiting for it while forwarding SIGINT, SIGTERM and
//! SIGHUP, serving the write observer, enforcing the timeout, and when it ends, killing
//! and reaping whatever is left.
//!
//! It must never return with a process of the sandbox left behind: every way out of
//! `supervise` kills what `Reap` says and reaps every child.

use super::wire::{EXIT_CORDON_FAILED, EXIT_TIMEOUT};
use crate::error::SandboxError;
use crate::observe::Observer;
use crate::sys;
use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid};
use std::os::fd::OwnedFd;

/// The signals a supervisor waits for: those it forwards, SIGCHLD, and SIGALRM for the
/// timeout. The helper blocks them first thing: one that comes early waits for the
/// supervisor instead of taking its default action.
pub(super) fn signal_set() -> SigSet {
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

/// The socket pair over which the command hands its supervisor the listener.
pub(super) fn listener_channel() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
    socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| SandboxError::sys("cannot create a socket pair", e))
}

/// How much to kill when the watched child ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reap {
    /// Only the child (H watching PID 1: the kernel empties the namespace when it dies).
    Child,
    /// Everything in the PID namespace (we are its PID 1).
    Namespace,
    /// The child's process group and every orphan reparented to us (fallback tier).
    Tree,
}

pub(super) struct Supervised {
    pub(super) code: i32,
    pub(super) timed_out: bool,
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
pub(super) fn supervise(
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
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe;
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    /// Set in the environment of the test binary run again as the process under test.
    const CHILD: &str = "CORDON_TEST_OBSERVER_CHILD";
    const DIR: &str = "CORDON_TEST_OBSERVER_DIR";
    const FILES: usize = 40;

    /// The process under test: a supervisor serving the write observer, and a command
    /// under the observing filter that creates `FILES` files by relative paths, every one
    /// outside what the observer is told is writable, then exits at once. Prints each
    /// recorded path on a line.
    #[test]
    #[allow(unsafe_code)]
    fn observer_child() {
        let (Ok(_), Ok(dir)) = (std::env::var(CHILD), std::env::var(DIR)) else {
            return;
        };
        // SAFETY: the copy runs only the code below, which ends in `_exit`; glibc's fork
        // leaves its allocator usable in the copy.
        let supervisor = match unsafe { nix::unistd::fork() }.expect("fork") {
            nix::unistd::ForkResult::Parent { child } => child,
            nix::unistd::ForkResult::Child => {
                // The copy has this thread only, so SIGCHLD waits for the supervisor.
                let set = signal_set();
                set.thread_block().expect("signals blocked");
                let (mine, theirs) = listener_channel().expect("socket pair");
                // SAFETY: as above; the command's copy ends in `_exit` too.
                let command = match unsafe { nix::unistd::fork() }.expect("fork") {
                    nix::unistd::ForkResult::Parent { child } => child,
                    nix::unistd::ForkResult::Child => {
                        nix::sys::prctl::set_no_new_privs().expect("no new privileges");
                        let l = observe::install(false).expect("observing filter");
                        observe::send_fd(theirs.as_raw_fd(), l.as_raw_fd()).expect("sent");
                        drop(l);
                        std::env::set_current_dir(&dir).expect("chdir");
                        for i in 0..FILES {
                            #[allow(clippy::disallowed_methods)] // a test's own files
                            std::fs::write(format!("f{i}"), "x").expect("written");
                        }
                        // SAFETY: ends the copy without running the test harness's exit.
                        unsafe { libc::_exit(0) }
                    }
                };
                drop(theirs);
                let l = observe::recv_fd(mine.as_raw_fd()).expect("listener");
                let mut o = Observer::new(l, None, vec!["/nonexistent-writable-root".into()]);
                let out = supervise(
                    command,
                    Some(Duration::from_secs(30)),
                    Reap::Child,
                    &set,
                    Some(&mut o),
                );
                // On lines of their own, after the harness's "test … " prefix.
                let mut text = String::from("\n");
                for b in &o.records {
                    text.push_str(&b.target);
                    text.push('\n');
                }
                // SAFETY: writes the bytes of `text` to standard output.
                unsafe { libc::write(1, text.as_ptr().cast(), text.len()) };
                // SAFETY: ends the copy without running the test harness's exit.
                unsafe { libc::_exit(out.code) }
            }
        };
        let status = nix::sys::wait::waitpid(supervisor, None).expect("waited");
        let code = match status {
            WaitStatus::Exited(_, c) => c,
            _ => 99,
        };
        std::process::exit(code);
    }

    /// Every write the command made before it exited is recorded, with its directory
    /// read from the process.
    #[test]
    fn the_observer_records_every_write_before_the_command_ends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "helper::supervise::tests::observer_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .env(DIR, dir.path())
            .output()
            .expect("test binary runs");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let dir = std::fs::canonicalize(dir.path()).expect("canonical");
        for i in 0..FILES {
            let want = format!("{}/f{i}", dir.display());
            assert!(
                stdout.lines().any(|l| l == want),
                "{want} not recorded:\n{stdout}"
            );
        }
    }
}
