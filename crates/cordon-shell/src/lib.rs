//! cordon-shell: bash text to structured commands, plus per-program knowledge of
//! what each argument does.
//!
//! [`analyze`] parses text with a real bash grammar, walks every piece of code it
//! would run (substitutions, `bash -c` strings, heredocs fed to shells, function
//! bodies, `find -exec` commands), peels wrappers such as `sudo`, `env` and `timeout`,
//! and classifies each simple command with the program knowledge base: the paths it
//! reads, writes and deletes, the network targets it reaches, and every argument that
//! makes it run other code. It also reports hazards that span commands
//! (fetch-to-exec, DNS exfiltration, privilege escalation).
//!
//! This crate performs no I/O at all and never decides: `cordon-policy` judges the
//! [`Analysis`]. Anything the text alone cannot fix is said so ([`Dynamic`],
//! [`Class::Unknown`], [`Analysis::parse_error`]) so that the policy can ask.
//!
//! ```
//! let a = cordon_shell::analyze("cd src && grep -rn TODO . | head");
//! assert!(a.parse_error.is_none());
//! assert_eq!(a.commands.len(), 3);
//! assert_eq!(a.commands[1].cwd, cordon_shell::CwdChange::Relative("src".into()));
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod analyze;
mod knowledge;
mod model;
mod parse;
mod word;
mod wrappers;

pub use model::{
    Analysis, Class, Context, CwdChange, Dynamic, Effects, ExecArg, Hazard, HazardKind, NetTarget,
    Redirect, RedirectKind, RepoConfigUse, SimpleCommand, Word,
};

/// Analyze bash text. Never panics and never hangs: deeply nested text is refused
/// with [`Analysis::parse_error`] set, and nested code past the analysis depth limit
/// is marked [`Dynamic::TooDeep`] instead of being followed.
#[must_use]
pub fn analyze(script: &str) -> Analysis {
    analyze::analyze(script)
}

/// Parse with the underlying bash parser only, without analysis; for benchmarks that
/// compare the analyzer's cost with the parser's. Returns whether the text parsed.
#[doc(hidden)]
#[must_use]
pub fn raw_parse(script: &str) -> bool {
    parse::raw_parse(script)
}
