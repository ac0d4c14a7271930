//! Findings and verdicts: each check reports what it saw and how serious it is.

use serde::Serialize;
use std::fmt;

/// How serious a finding is, least first. The package's verdict is the most serious of
/// its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// Checked and acceptable; shown for the record.
    Pass,
    /// A human should look before this package is installed.
    Review,
    /// The package must not be installed.
    Refuse,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Pass => "pass",
            Severity::Review => "review",
            Severity::Refuse => "refuse",
        })
    }
}

/// Which check produced a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Check {
    /// One `SKILL.md` at the root with a valid name; a valid destination.
    EntryPoint,
    /// Entry names.
    Name,
    /// Two names that are one file under case folding or Unicode normalization.
    Collision,
    /// Links, devices, FIFOs, sockets.
    EntryKind,
    /// setuid, setgid, sticky and executable bits.
    Mode,
    /// File count and unpacked sizes.
    Limit,
    /// An archive inside the package.
    NestedArchive,
    /// A command found in `SKILL.md` or a script.
    Command,
    /// A network origin the package names.
    Origin,
    /// A read of a file the guards protect.
    SensitiveRead,
    /// A literal that looks like a credential.
    Secret,
    /// Something fetched at run time and executed.
    DownloadExec,
    /// Shell text built at run time (`eval`, `shell=True`, `os.system`).
    ConstructedShell,
    /// A package-manager hook that runs at install time.
    LifecycleHook,
    /// Use of credentials the user's environment already holds.
    AmbientCredential,
    /// What an upgrade changes.
    Upgrade,
    /// Bidirectional controls or invisible characters in a text.
    HiddenText,
    /// Editor or agent configuration that makes a tool run something on opening.
    AutoRun,
    /// A script writes where a program will run it later (shell start-up files, Python
    /// site hooks, autostart, cron, systemd units, git hooks).
    Persistence,
}

impl Check {
    /// The stable name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::EntryPoint => "entry-point",
            Check::Name => "name",
            Check::Collision => "collision",
            Check::EntryKind => "entry-kind",
            Check::Mode => "mode",
            Check::Limit => "limit",
            Check::NestedArchive => "nested-archive",
            Check::Command => "command",
            Check::Origin => "origin",
            Check::SensitiveRead => "sensitive-read",
            Check::Secret => "secret",
            Check::DownloadExec => "download-exec",
            Check::ConstructedShell => "constructed-shell",
            Check::LifecycleHook => "lifecycle-hook",
            Check::AmbientCredential => "ambient-credential",
            Check::Upgrade => "upgrade",
            Check::HiddenText => "hidden-text",
            Check::AutoRun => "auto-run",
            Check::Persistence => "persistence",
        }
    }
}

/// One thing a check saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The check.
    pub check: Check,
    /// How serious.
    pub verdict: Severity,
    /// The entry it concerns, as the package names it (control characters escaped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// One sentence.
    pub message: String,
}

impl Finding {
    pub(crate) fn new(
        check: Check,
        verdict: Severity,
        entry: Option<&str>,
        msg: impl Into<String>,
    ) -> Self {
        Finding {
            check,
            verdict,
            entry: entry.map(shown),
            message: msg.into(),
        }
    }
}

/// A name as it may be shown: non-printing characters escaped, so a name cannot rewrite
/// the terminal or the table it is printed in.
pub(crate) fn shown(raw: &str) -> String {
    raw.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// A raw entry name for display, whether or not it is UTF-8.
pub(crate) fn shown_bytes(raw: &[u8]) -> String {
    shown(&String::from_utf8_lossy(raw))
}
