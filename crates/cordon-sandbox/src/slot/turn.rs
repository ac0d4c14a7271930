//! One run's turn on a slot: which slot a run asked for, how long it waits for another
//! run that holds it, the guard held for the whole run, and the one record of it, which
//! the caller keeps.
//!
//! The guard is a `flock` on a descriptor of cordon's own process (opened `O_CLOEXEC`),
//! never passed to the sandboxed command. It is held for the run's whole life because
//! the sandbox cannot outlive cordon: the helper, the sandbox's init and the command
//! are each killed when their parent dies (`PR_SET_PDEATHSIG`), and the init is the pid
//! namespace's first process, whose death kills every process left in the namespace. A
//! descriptor passed in would add nothing and would let the command release the lock
//! early (`flock(fd, LOCK_UN)` acts on the open file that every copy shares).
//!
//! The record of a run is made once, when it ends: a single write of the run's command
//! and exit status, through the [`SlotRecorder`] the caller gives [`Turn::end`] (cordon's
//! store, through the CLI's exec path: this crate never opens the store). A run that is
//! killed before it ends leaves no record; the guard, not the record, says whether a
//! slot is in use.

use super::{SlotError, SlotErrorKind, SlotGuard, SlotMounts, SlotName, SlotPaths, Wait};
use cordon_policy::settings::SlotScope;
use cordon_policy::settings::SlotSettings;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// How long a run waits for a slot that another run holds, when neither the command
/// line nor the config says.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);

/// Longest command text kept in a slot's record, in bytes.
const COMMAND_TEXT: usize = 200;

/// What a run asked for: `cordon exec --slot KEY [--scope S] [--slot-wait D | --no-wait]
/// [--slot-tmp]`.
#[derive(Debug, Clone, Default)]
pub struct SlotRequest {
    /// The slot's key.
    pub key: String,
    /// The scope, when given (else the config's, else [`SlotScope::User`]).
    pub scope: Option<SlotScope>,
    /// The session id (names the slot of the session scope).
    pub session: Option<String>,
    /// The agent name (names the slot of the agent scope).
    pub agent: Option<String>,
    /// Refuse at once when the slot is busy.
    pub no_wait: bool,
    /// How long to wait, when given.
    pub wait: Option<Duration>,
    /// Whether the slot's `tmp/` becomes `/tmp` (the config can ask for it too).
    pub tmp: bool,
    /// Keep the start-up files that runs leave in the slot instead of resetting them
    /// before the run (`--slot-keep-startup`).
    pub keep_startup: bool,
}

impl SlotRequest {
    /// How long this run waits: `--no-wait`, else `--slot-wait`, else the config's
    /// `wait_seconds`, else [`DEFAULT_WAIT`].
    pub fn wait(&self, defaults: &SlotSettings) -> Wait {
        if self.no_wait {
            return Wait::No;
        }
        Wait::Up(
            self.wait
                .or(defaults.wait_seconds.map(Duration::from_secs))
                .unwrap_or(DEFAULT_WAIT),
        )
    }

    /// The slot named, with the config's scope when none was given.
    pub fn name(&self, defaults: &SlotSettings) -> Result<SlotName, SlotError> {
        let scope = self.scope.or(defaults.scope).unwrap_or_default();
        SlotName::new(
            scope,
            &self.key,
            self.session.as_deref(),
            self.agent.as_deref(),
        )
    }
}

/// A slot held for one run, from before the call is judged until [`Turn::end`] (or
/// until it is dropped, when the run did not happen).
#[derive(Debug)]
pub struct Turn {
    name: SlotName,
    paths: SlotPaths,
    tmp: bool,
    keep_startup: bool,
    command: String,
    guard: SlotGuard,
}

impl Turn {
    /// Take the slot `request` names for a run of `argv`: wait as the request and the
    /// config say, then make the slot's directories.
    pub fn take(
        request: &SlotRequest,
        defaults: &SlotSettings,
        argv: &[OsString],
    ) -> Result<Turn, SlotError> {
        let name = request.name(defaults)?;
        let (paths, guard) = super::take(&name, request.wait(defaults))?;
        Ok(Turn {
            name,
            paths,
            tmp: request.tmp || defaults.tmp == Some(true),
            keep_startup: request.keep_startup,
            command: command_text(argv),
            guard,
        })
    }

    /// The slot's name.
    pub fn name(&self) -> &SlotName {
        &self.name
    }

    /// Where the slot's files are.
    pub fn paths(&self) -> &SlotPaths {
        &self.paths
    }

    /// What the sandbox mounts of the slot.
    pub fn mounts(&self) -> SlotMounts {
        SlotMounts {
            keep_startup: self.keep_startup,
            ..SlotMounts::of(&self.paths, self.tmp)
        }
    }

    /// How long taking the slot waited.
    pub fn waited(&self) -> Duration {
        self.guard.waited()
    }

    /// The run ended with `status`: hand its record to `recorder` (one write), then give
    /// the slot up. The record is for `cordon slots list|show`; an error here costs the
    /// record, not the run, and the slot is given up either way.
    pub fn end(self, status: i32, recorder: &dyn SlotRecorder) -> Result<(), SlotError> {
        let run = SlotRun {
            name: &self.name,
            dir: &self.paths.dir,
            command: &self.command,
            status,
        };
        recorder.record(&run).map_err(|e| {
            SlotError::new(
                SlotErrorKind::Io,
                format!("the slot's run was not recorded: {e}"),
            )
        })
    }
}

/// One run on a slot as it is recorded when it ends.
#[derive(Debug, Clone, Copy)]
pub struct SlotRun<'a> {
    /// The slot.
    pub name: &'a SlotName,
    /// The slot's directory.
    pub dir: &'a Path,
    /// The command, as one line of display text (cut at 200 bytes).
    pub command: &'a str,
    /// The run's exit status.
    pub status: i32,
}

/// Where the runs on slots are recorded, given by the caller of [`Turn::end`]: cordon's
/// store (`Store::slot_ran`), through the CLI's exec path. Any
/// `Fn(&SlotRun) -> Result<(), String>` is one.
pub trait SlotRecorder {
    /// Record `run`; the error is one sentence saying why it was not recorded.
    fn record(&self, run: &SlotRun<'_>) -> Result<(), String>;
}

impl<F: Fn(&SlotRun<'_>) -> Result<(), String>> SlotRecorder for F {
    fn record(&self, run: &SlotRun<'_>) -> Result<(), String> {
        self(run)
    }
}

/// The command as one line of display text, at most [`COMMAND_TEXT`] bytes.
fn command_text(argv: &[OsString]) -> String {
    let mut text: String = argv
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    if text.len() > COMMAND_TEXT {
        let mut end = COMMAND_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_and_scope_come_from_the_flags_then_the_config() {
        let mut r = SlotRequest {
            key: "k".into(),
            ..SlotRequest::default()
        };
        let none = SlotSettings::default();
        assert_eq!(r.wait(&none), Wait::Up(DEFAULT_WAIT));
        assert_eq!(r.name(&none).unwrap().scope, SlotScope::User);
        let mut config = SlotSettings::default();
        config.scope = Some(SlotScope::Global);
        config.wait_seconds = Some(7);
        assert_eq!(r.wait(&config), Wait::Up(Duration::from_secs(7)));
        assert_eq!(r.name(&config).unwrap().scope, SlotScope::Global);
        r.wait = Some(Duration::from_millis(200));
        r.scope = Some(SlotScope::User);
        assert_eq!(r.wait(&config), Wait::Up(Duration::from_millis(200)));
        assert_eq!(r.name(&config).unwrap().scope, SlotScope::User);
        r.no_wait = true;
        assert_eq!(r.wait(&config), Wait::No);
    }

    #[test]
    fn the_end_of_a_turn_goes_to_the_callers_recorder_once() {
        let base = tempfile::tempdir().unwrap();
        let name = SlotName::new(SlotScope::Global, "venv", None, None).unwrap();
        let paths = SlotPaths::locate(base.path(), &name).unwrap();
        let guard = SlotGuard::acquire(&paths, Wait::No).unwrap();
        paths.create().unwrap();
        let turn = Turn {
            name,
            paths,
            tmp: false,
            keep_startup: false,
            command: command_text(&["make".into(), "test".into()]),
            guard,
        };
        let seen = std::cell::RefCell::new(Vec::new());
        let recorder = |run: &SlotRun<'_>| {
            seen.borrow_mut().push(format!(
                "{} {} {} {} {}",
                run.name.scope.as_str(),
                run.name.key,
                run.dir.display(),
                run.command,
                run.status
            ));
            Err("the disk is full".to_string())
        };
        let dir = turn.paths().dir.clone();
        let e = turn.end(3, &recorder).unwrap_err();
        assert_eq!(
            seen.into_inner(),
            vec![format!("global venv {} make test 3", dir.display())]
        );
        assert_eq!(
            e.message,
            "the slot's run was not recorded: the disk is full"
        );
        // The slot was given up with the turn, recorded or not.
        let name = SlotName::new(SlotScope::Global, "venv", None, None).unwrap();
        let paths = SlotPaths::locate(base.path(), &name).unwrap();
        assert!(SlotGuard::acquire(&paths, Wait::No).is_ok());
    }

    #[test]
    fn long_commands_are_cut_on_a_character() {
        let argv = vec![OsString::from("é".repeat(150))];
        let t = command_text(&argv);
        assert!(t.len() <= COMMAND_TEXT + '…'.len_utf8(), "{}", t.len());
        assert!(t.ends_with('…'));
    }
}
