//! The execution guard: one exclusive `flock` per slot, held for a whole run.
//!
//! The kernel drops a `flock` when the last descriptor of it closes, so a holder that
//! was killed (SIGKILL included) leaves nothing to recover: the next taker simply gets
//! the lock. The holder writes its pid and start time into the lock file for the
//! "busy" message; that text is informative only, never trusted for the decision.
//! The lock file sits beside the slot's directory, outside what the sandbox mounts, so
//! a sandboxed command can neither reach nor delete it. Lock files are never removed:
//! removing one while another process has it open would let two holders lock two
//! different files of the same name.

use super::{SlotError, SlotErrorKind, SlotPaths, mkdir_0700};
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long to wait for a busy slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Refuse at once.
    No,
    /// Wait up to this long.
    Up(Duration),
}

/// Who holds a slot, as its lock file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The holder's pid.
    pub pid: u32,
    /// When it took the slot (seconds since the epoch).
    pub since: u64,
}

/// A slot held exclusively until this is dropped.
#[derive(Debug)]
pub struct SlotGuard {
    file: File,
    waited: Duration,
}

/// How often a waiting taker tries again.
const POLL: Duration = Duration::from_millis(25);

impl SlotGuard {
    /// Take the slot at `paths`, waiting as `wait` says. Creates the slot's parent
    /// directory and lock file, not the slot itself.
    pub fn acquire(paths: &SlotPaths, wait: Wait) -> Result<SlotGuard, SlotError> {
        let parent = mkdir_0700(paths.parent())?;
        let lock_name = paths.lock.file_name().unwrap_or_default();
        let file = parent.open_rw(Path::new(lock_name), 0o600).map_err(|e| {
            SlotError::io(
                format_args!("cannot open the slot lock {}", paths.lock.display()),
                e,
            )
        })?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => {
                    return Err(SlotError::io(
                        format_args!("cannot lock {}", paths.lock.display()),
                        e,
                    ));
                }
            }
            let limit = match wait {
                Wait::No => Duration::ZERO,
                Wait::Up(d) => d,
            };
            if start.elapsed() >= limit {
                return Err(busy(&file, wait));
            }
            std::thread::sleep(POLL.min(limit.saturating_sub(start.elapsed())));
        }
        let mut guard = SlotGuard {
            file,
            waited: start.elapsed(),
        };
        guard.write_holder()?;
        Ok(guard)
    }

    fn write_holder(&mut self) -> Result<(), SlotError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let text = format!("{} {now}\n", std::process::id());
        let f = &mut self.file;
        f.set_len(0)
            .and_then(|()| f.rewind())
            .and_then(|()| f.write_all(text.as_bytes()))
            .map_err(|e| SlotError::io("cannot record the slot's holder", e))
    }

    /// How long taking the slot waited.
    pub fn waited(&self) -> Duration {
        self.waited
    }
}

/// The holder named by a lock file's text.
fn holder(file: &File) -> Option<Holder> {
    let mut text = String::new();
    let mut f = file;
    f.rewind().ok()?;
    f.take(64).read_to_string(&mut text).ok()?;
    let mut parts = text.split_whitespace();
    Some(Holder {
        pid: parts.next()?.parse().ok()?,
        since: parts.next()?.parse().ok()?,
    })
}

fn busy(file: &File, wait: Wait) -> SlotError {
    let who = match holder(file) {
        Some(h) => format!(
            "held by pid {} since {}",
            h.pid,
            cordon_policy::time::format_time(UNIX_EPOCH + Duration::from_secs(h.since))
        ),
        None => "held by another run".to_string(),
    };
    let after = match wait {
        Wait::No => "--no-wait was given".to_string(),
        Wait::Up(d) => format!("waited {:.1}s", d.as_secs_f64()),
    };
    SlotError::new(
        SlotErrorKind::Busy,
        format!("the slot is busy: {who} ({after}); try again when it ends, or raise --slot-wait"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot::{SlotName, SlotScope};

    #[test]
    fn exclusive_with_wait_and_no_wait() {
        let t = tempfile::tempdir().unwrap();
        let n = SlotName::new(SlotScope::Global, "k", None, None).unwrap();
        let p = SlotPaths::new(t.path(), &n);
        let a = SlotGuard::acquire(&p, Wait::No).unwrap();
        let e = SlotGuard::acquire(&p, Wait::No).unwrap_err();
        assert_eq!(e.kind, SlotErrorKind::Busy);
        assert!(
            e.message
                .contains(&format!("held by pid {}", std::process::id())),
            "{e}"
        );
        let e = SlotGuard::acquire(&p, Wait::Up(Duration::from_millis(100))).unwrap_err();
        assert!(e.message.contains("waited 0.1s"), "{e}");
        drop(a);
        SlotGuard::acquire(&p, Wait::No).unwrap();
    }
}
