//! cordon-shell: bash text to structured commands, plus per-program knowledge of
//! what each argument does.
//!
//! [`analyze`] parses text with a real bash grammar, walks every piece of code it
//! would run (substitutions, `bash -c` strings, heredocs fed to shells, function
//! bodies, `find -exec` commands), peels wrappers such as `sudo`, `env` and `timeout`,
//! and classifies each simple command with the program knowledge base: the paths it
//! reads, writes and deletes, the network targets it reaches, and every argument that
//! makes it run other code (an option whose value is a command, such as
//! `git -c core.pager=CMD` or `rsync -e CMD`, is analyzed as that command when it is
//! literal). Code in another language (`python3 -c`) stays opaque, but the paths its
//! strings name are reported as mentions. It also reports hazards that span commands
//! (fetch-to-exec, decode-to-exec, DNS exfiltration, privilege escalation).
//!
//! This crate performs no I/O at all and never decides: `cordon-policy` judges the
//! [`Analysis`]. Anything the text alone cannot fix is said so ([`Dynamic`],
//! [`Class::Unknown`], [`Analysis::parse_error`]) so that the policy can ask.
//!
//! # What the analysis promises
//!
//! - Every command the text would run is reported, in the order it runs: a
//!   substitution before the command that uses it, a `bash -c` string, heredoc fed
//!   to a shell, `find -exec` command or function body right after the command that
//!   runs it. A shell given a literal string (`bash -c '…'`, `eval '…'`) is itself
//!   [`Class::ReadOnly`]; the commands of the string carry their own effects. So is a
//!   program whose option names a literal command (`git -c core.pager=less log`).
//! - What bash would evaluate deterministically is evaluated: brace expansion,
//!   variables assigned earlier in the text (parameter operators, indirection,
//!   arrays, `read` of a literal, `printf -v`, `$(echo …)`), word splitting on `IFS`,
//!   and `for` loops over short literal lists, each iteration on its own. A variable
//!   stays unknown wherever code the analysis cannot see may have changed it (a loop,
//!   a branch that may not run, a function, `source`, a trap, a dynamic command
//!   name); a glob stays a pattern ([`Dynamic::Glob`]) for the policy to match.
//! - Whatever is only known at run time is said so: [`Dynamic`] on the command, a
//!   non-literal [`Word`], [`Class::Unknown`], an [`ExecArg`], or
//!   [`Analysis::parse_error`].
//! - Bounded work on any input. Text nested deeper than 64 levels is refused before
//!   parsing (the parser recurses and would overflow the stack); a nesting budget is
//!   shared across nested shell strings; nested analysis stops 12 levels down
//!   ([`Dynamic::TooDeep`]); at most 512 function-body expansions, after which calls
//!   are marked opaque, and every defined function body is still analyzed once.
//!   Evaluation is paid from budgets proportional to the text: at most 256 words per
//!   brace expansion, values of at most 4 KiB, bytes produced by evaluation and loop
//!   bodies analyzed again both bounded by a multiple of the input length.
//! - A parser panic (brush-parser 0.4.0 has an `unwrap` that hostile input reaches)
//!   is caught and reported as a parse error. This relies on unwinding: a binary built
//!   with `panic = "abort"` would abort instead.
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
mod argv;
mod env;
mod executes;
mod expand;
pub mod gitkeys;
mod knowledge;
pub mod lex;
mod model;
mod parse;
pub mod pattern;
mod word;
mod wrappers;

pub use executes::{ExecutedFile, OPEN_ENDED, Reach, executed_files};
pub use knowledge::sources::code_outside_registry;
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

/// The estimate of how many bytes the bash parser would read for this text (see
/// `parse/nesting.rs`), or `None` when the text is refused before the parser's grammar
/// sees it (too deep, too costly, or not tokenized); for calibrating the estimate and for
/// fuzzing's properties.
#[doc(hidden)]
#[must_use]
pub fn parse_estimate(script: &str) -> Option<u64> {
    parse::estimate_only(script)
}

/// The bash parser's grammar run on `script` under the deadline every parse has, without
/// the estimate in front of it (`parse/deadline.rs`); for the deadline's own tests.
#[doc(hidden)]
pub fn parse_past_the_estimate(script: &str) -> Result<(), String> {
    parse::grammar_only(script)
}
