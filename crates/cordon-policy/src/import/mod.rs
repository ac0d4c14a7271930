//! Bringing existing settings: Claude Code's `permissions` block and Codex's exec-policy
//! `.rules` files, converted into cordon's TOML config.
//!
//! Every entry becomes the cordon rule that means the same, or is reported with the reason
//! it could not be converted. The one rule of this module: **an import never widens what
//! is allowed.** An allow that cordon can only express more widely is skipped; a deny or
//! ask that cordon can only express more widely is kept (a wider deny still denies what the
//! original denied) and reported as wider. Nothing here is guessed: a construct the
//! importer does not understand is reported with its line, never approximated.
//!
//! The produced TOML is loaded with cordon's own config loader before it is returned, so
//! what the caller prints always loads.

mod claude;
mod codex;
mod starlark;

pub use claude::{ClaudeSource, claude_settings};
pub use codex::{MAX_EXPANSIONS, codex_rules};

use crate::facts::FakeFs;
use crate::policy::Policy;
use std::fmt;
use std::path::PathBuf;

/// What became of one entry that was not converted exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemarkKind {
    /// Not converted: cordon cannot express its meaning without widening an allow or
    /// narrowing a deny, or the importer does not understand it.
    Skipped,
    /// Converted into a deny or ask rule that covers more than the original did.
    Wider,
    /// Converted, but one of the source's own examples gets a different verdict from
    /// cordon than the source's decision.
    Differs,
    /// A setting outside the permissions that has no place in cordon's policy.
    Ignored,
}

impl RemarkKind {
    /// The word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RemarkKind::Skipped => "skipped",
            RemarkKind::Wider => "wider",
            RemarkKind::Differs => "differs",
            RemarkKind::Ignored => "ignored",
        }
    }
}

/// One line of the import report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remark {
    /// What happened to the entry.
    pub kind: RemarkKind,
    /// The entry as written in the source (a rule, a key, a call).
    pub item: String,
    /// The 1-based source line, when the source format has lines that matter (Codex).
    pub line: Option<usize>,
    /// Why, in one sentence.
    pub why: String,
}

impl fmt::Display for Remark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind.as_str())?;
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        write!(f, "`{}`: {}", self.item, self.why)
    }
}

/// The result of an import: the cordon config and the report.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The cordon config, as TOML that cordon's loader accepts.
    pub toml: String,
    /// Everything that was not converted exactly, in source order.
    pub remarks: Vec<Remark>,
}

impl Imported {
    /// Entries that were not converted.
    pub fn skipped(&self) -> impl Iterator<Item = &Remark> {
        self.remarks
            .iter()
            .filter(|r| r.kind == RemarkKind::Skipped)
    }

    /// True when every entry was converted and every example behaves as its source says
    /// (wider denies and ignored non-permission settings are reported but count as done).
    pub fn complete(&self) -> bool {
        !self
            .remarks
            .iter()
            .any(|r| matches!(r.kind, RemarkKind::Skipped | RemarkKind::Differs))
    }
}

/// The source could not be read as what it claims to be; nothing was produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line and column, when the problem has a position.
    pub position: Option<(usize, usize)>,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
}

impl ImportError {
    fn new(message: impl Into<String>) -> ImportError {
        ImportError {
            position: None,
            message: message.into(),
        }
    }

    fn at(line: usize, column: usize, message: impl Into<String>) -> ImportError {
        ImportError {
            position: Some((line, column)),
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((l, c)) = self.position {
            write!(f, "{l}:{c}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}

/// A TOML basic string holding `s`, with every character TOML requires escaped.
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML array of strings, one per line.
pub(crate) fn toml_list(items: &[String]) -> String {
    if items.is_empty() {
        return "[]".into();
    }
    let mut out = String::from("[\n");
    for i in items {
        out.push_str("  ");
        out.push_str(&toml_string(i));
        out.push_str(",\n");
    }
    out.push(']');
    out
}

/// Where produced configs are loaded to check them: a made-up workspace and HOME, so the
/// check depends on nothing on this machine.
pub(crate) const CHECK_WORKSPACE: &str = "/import-check/workspace";
pub(crate) const CHECK_HOME: &str = "/import-check/home";
const CHECK_FILE: &str = "/import-check/policy.toml";

/// Load `toml` with cordon's config loader (as a command-line config file, so every
/// setting is honoured) over an empty fake file system.
pub(crate) fn load_check(toml: &str) -> Result<(Policy, FakeFs), ImportError> {
    let fs = FakeFs::new()
        .dir(CHECK_WORKSPACE)
        .dir(CHECK_HOME)
        .file_with(CHECK_FILE, 1, toml.as_bytes());
    let opts = crate::config::LoadOptions {
        workspace: CHECK_WORKSPACE.into(),
        home: CHECK_HOME.into(),
        config_files: vec![PathBuf::from(CHECK_FILE)],
        skip_default_files: true,
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).map_err(|e| {
        ImportError::new(format!(
            "the converted config does not load ({e}); this is a bug in cordon's importer, please report it with the input"
        ))
    })?;
    Ok((policy, fs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_round_trip() {
        for s in [
            "plain",
            "a\"b",
            "back\\slash",
            "tab\tnl\n",
            "\u{1}\u{7f}",
            "ünï",
        ] {
            let doc = format!("x = {}\n", toml_string(s));
            let v: toml::Table = toml::from_str(&doc).unwrap();
            assert_eq!(v["x"].as_str(), Some(s), "{doc}");
        }
        let doc = format!("x = {}\n", toml_list(&["a".into(), "b\"".into()]));
        let v: toml::Table = toml::from_str(&doc).unwrap();
        assert_eq!(v["x"].as_array().map(Vec::len), Some(2));
    }
}
