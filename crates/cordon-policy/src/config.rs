//! Config files: TOML, layered managed > flags > user > project.
//!
//! A deny in any layer wins (rules are unioned and deny is evaluated first). Scalar settings
//! (mode, defaults, sandbox mode, approval policy) come from the highest layer that sets
//! them. The project layer is written by whoever wrote the repository: it may add deny and
//! ask rules, masks and network denies, and tighten defaults, but its allow rules, mode,
//! looser defaults, writable roots and network allowances are ignored unless the user (or
//! managed) layer lists the workspace in `trusted_workspaces`.
//!
//! Every error names the file, line and column. Config files are read through
//! [`FileFacts`], so this module does no I/O of its own.

use crate::facts::FileFacts;
use crate::presets::Preset;
use crate::rules::{Rule, RuleOrigin};
use crate::settings::{ApprovalPolicy, NetworkSettings, SandboxMode, SandboxSettings};
use crate::verdict::Decision;
use std::path::{Path, PathBuf};

mod format;
mod merge;
mod store;
use format::FileConfig;
use merge::merge;
pub use store::store_settings;

/// Largest config file accepted.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The managed (administrator) config file.
pub const MANAGED_CONFIG: &str = "/etc/cordon/policy.toml";

/// A config file could not be used. Always names the file and, where known, the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, or `None` for flags given on the command line.
    pub file: Option<PathBuf>,
    /// 1-based line and column, when the problem has a position.
    pub position: Option<(usize, usize)>,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.file, self.position) {
            (Some(file), Some((l, c))) => write!(f, "{}:{l}:{c}: ", file.display())?,
            (Some(file), None) => write!(f, "{}: ", file.display())?,
            (None, Some((l, c))) => write!(f, "command line {l}:{c}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The permission mode (docs/architecture.md, "The decision", step 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Mode {
    /// Nothing added at the mode step.
    #[default]
    Default,
    /// File writes inside writable roots are allowed.
    AcceptEdits,
    /// Every modification is denied.
    Plan,
    /// Whatever guards, rules and opaque checks left undecided is allowed.
    Bypass,
    /// Like default, but every remaining ask becomes deny.
    DontAsk,
}

impl Mode {
    /// The word used in config files, flags and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
            Mode::Bypass => "bypass",
            Mode::DontAsk => "dont-ask",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = crate::errors::ParseModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Mode::Default),
            "accept-edits" | "acceptEdits" => Ok(Mode::AcceptEdits),
            "plan" => Ok(Mode::Plan),
            "bypass" | "bypassPermissions" => Ok(Mode::Bypass),
            "dont-ask" | "dontAsk" => Ok(Mode::DontAsk),
            _ => Err(crate::errors::ParseModeError::new(s)),
        }
    }
}

/// The configurable defaults of step 8, per operation and location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Defaults {
    /// Reading or listing inside the workspace.
    pub read_inside: Decision,
    /// Reading or listing outside it.
    pub read_outside: Decision,
    /// Writing or deleting inside the workspace.
    pub write_inside: Decision,
    /// Writing or deleting outside it.
    pub write_outside: Decision,
    /// Running a program that is not known to be read-only.
    pub exec: Decision,
    /// Reaching a network origin not on the allowlist.
    pub network: Decision,
    /// Calling an MCP tool.
    pub mcp: Decision,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            read_inside: Decision::Allow,
            read_outside: Decision::Ask,
            write_inside: Decision::Ask,
            write_outside: Decision::Ask,
            exec: Decision::Ask,
            network: Decision::Ask,
            mcp: Decision::Ask,
        }
    }
}

impl Defaults {
    /// The `[contained]` table's built-in values: what containment enforces by itself
    /// (program runs and opaque code, reads, writes, network through the proxy) is
    /// allowed, since the sandbox holds even when the command turns hostile. MCP calls do
    /// not run in a sandbox and keep the `[defaults]` value.
    pub fn contained() -> Defaults {
        Defaults {
            read_inside: Decision::Allow,
            read_outside: Decision::Allow,
            write_inside: Decision::Allow,
            write_outside: Decision::Allow,
            exec: Decision::Allow,
            network: Decision::Allow,
            mcp: Decision::Ask,
        }
    }

    /// The value of one key (`read_inside`, `exec`, …); an unknown key is `ask`.
    pub fn get(&self, key: &str) -> Decision {
        let mut copy = *self;
        copy.slot(key).map_or(Decision::Ask, |d| *d)
    }

    /// Only the `deny` slots of these defaults; every other slot `allow`.
    pub fn denials(&self) -> Defaults {
        let mut out = Defaults::loosest();
        for k in DEFAULT_KEYS {
            if self.get(k) == Decision::Deny
                && let Some(slot) = out.slot(k)
            {
                *slot = Decision::Deny;
            }
        }
        out
    }

    /// Every slot `allow`: the neutral element of [`Defaults::tighten`].
    fn loosest() -> Defaults {
        Defaults {
            mcp: Decision::Allow,
            ..Defaults::contained()
        }
    }
}

const DEFAULT_KEYS: [&str; 7] = [
    "read_inside",
    "read_outside",
    "write_inside",
    "write_outside",
    "exec",
    "network",
    "mcp",
];

impl Defaults {
    fn slot(&mut self, key: &str) -> Option<&mut Decision> {
        Some(match key {
            "read_inside" => &mut self.read_inside,
            "read_outside" => &mut self.read_outside,
            "write_inside" => &mut self.write_inside,
            "write_outside" => &mut self.write_outside,
            "exec" => &mut self.exec,
            "network" => &mut self.network,
            "mcp" => &mut self.mcp,
            _ => return None,
        })
    }

    /// Each default becomes the more restrictive of the two.
    pub fn tighten(&mut self, other: &Defaults) {
        let mut other = *other;
        for k in DEFAULT_KEYS {
            if let (Some(mine), Some(theirs)) = (self.slot(k), other.slot(k)) {
                *mine = (*mine).max(*theirs);
            }
        }
    }
}

// ---- layers ---------------------------------------------------------------------------

/// Which layer a config came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LayerKind {
    /// `/etc/cordon/policy.toml`.
    Managed,
    /// Files and settings given on the command line.
    Flags,
    /// `$XDG_CONFIG_HOME/cordon/policy.toml`.
    User,
    /// `WORKSPACE/.cordon/policy.toml`.
    Project,
}

impl LayerKind {
    /// The layer's name in sources and explanations.
    pub fn name(self) -> &'static str {
        match self {
            LayerKind::Managed => "managed",
            LayerKind::Flags => "flags",
            LayerKind::User => "user",
            LayerKind::Project => "project",
        }
    }
}

/// One parsed config file.
struct Layer {
    kind: LayerKind,
    file: PathBuf,
    text: String,
    cfg: FileConfig,
}

impl Layer {
    fn err(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: Some(self.file.clone()),
            position: Some(line_col(&self.text, span.start)),
            message: message.into(),
        }
    }

    fn origin(&self, span: std::ops::Range<usize>) -> RuleOrigin {
        let (line, column) = line_col(&self.text, span.start);
        RuleOrigin {
            file: Some(self.file.clone()),
            line,
            column,
            layer: self.kind.name(),
        }
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

fn parse_layer(kind: LayerKind, file: &Path, text: String) -> Result<Layer, ConfigError> {
    let cfg: FileConfig = toml::from_str(&text).map_err(|e| ConfigError {
        file: Some(file.to_path_buf()),
        position: e.span().map(|s| line_col(&text, s.start)),
        message: e.message().trim().to_string(),
    })?;
    Ok(Layer {
        kind,
        file: file.to_path_buf(),
        text,
        cfg,
    })
}

/// Read a config file through `fs`: `Ok(None)` when it does not exist, an error when it
/// exists but cannot be read, is too large, or is not UTF-8.
fn read_config(fs: &dyn FileFacts, path: &Path) -> Result<Option<String>, ConfigError> {
    let e = |m: String| ConfigError {
        file: Some(path.to_path_buf()),
        position: None,
        message: m,
    };
    if fs.metadata(path).is_none() {
        return Ok(None);
    }
    let bytes = fs.read_small_file(path, MAX_CONFIG_BYTES).ok_or_else(|| {
        e(format!(
            "cannot read this config file (unreadable, not a regular file, or larger than {MAX_CONFIG_BYTES} bytes); fix or remove it"
        ))
    })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| e("the config file is not valid UTF-8".into()))
}

/// What to load and from where.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The workspace root (defaults to the caller's cwd in the binary).
    pub workspace: PathBuf,
    /// HOME.
    pub home: PathBuf,
    /// The managed file; `None` means [`MANAGED_CONFIG`].
    pub managed: Option<PathBuf>,
    /// The user file; `None` means `$XDG_CONFIG_HOME/cordon/policy.toml` via `xdg_config_home`,
    /// else `HOME/.config/cordon/policy.toml`.
    pub user: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, if set.
    pub xdg_config_home: Option<PathBuf>,
    /// Config files named on the command line (the flags layer), in order.
    pub config_files: Vec<PathBuf>,
    /// `--mode` on the command line (flags layer).
    pub mode: Option<Mode>,
    /// `--sandbox` on the command line (flags layer).
    pub sandbox_mode: Option<SandboxMode>,
    /// `--approval` on the command line (flags layer).
    pub approval: Option<ApprovalPolicy>,
    /// `--require` on the command line (flags layer).
    pub require: Option<crate::settings::RequiredTier>,
    /// Skip the managed, user and project files (only flags apply). For tests and
    /// `--isolated` runs.
    pub skip_default_files: bool,
    /// Whether a human can be asked: when false, every remaining ask becomes deny.
    pub no_human: bool,
    /// Allow rules a human chose to remember ("always allow"), from the approval store.
    /// They rank with the user layer.
    pub remembered_rules: Vec<String>,
    /// `--allow-net` hosts from the command line (flags layer).
    pub network_allow: Vec<String>,
    /// `--allow-private` CIDRs from the command line (flags layer).
    pub network_allow_private: Vec<String>,
}

/// Everything merged from the layers, before compilation into a `Policy`.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The resolved workspace.
    pub workspace: PathBuf,
    /// HOME as given, and resolved.
    pub home: PathBuf,
    /// HOME with symlinks resolved.
    pub home_resolved: PathBuf,
    /// The effective mode.
    pub mode: Mode,
    /// The effective sandbox mode.
    pub sandbox_mode: SandboxMode,
    /// The effective approval policy.
    pub approval: ApprovalPolicy,
    /// The effective defaults.
    pub defaults: Defaults,
    /// The effective `[contained]` table: step 8's defaults for a call that will run
    /// contained (see [`Defaults::contained`]).
    pub contained: Defaults,
    /// Every rule, highest layer first, in file order.
    pub rules: Vec<Rule>,
    /// Network lists.
    pub network: NetworkSettings,
    /// Sandbox settings.
    pub sandbox: SandboxSettings,
    /// Whether the project layer was trusted.
    pub trusted: bool,
    /// Config files that were read, with their layer.
    pub files: Vec<(LayerKind, PathBuf)>,
    /// Things that were ignored or noteworthy (shown by `--explain`).
    pub notes: Vec<String>,
    /// Allow rules of the project file that were ignored because the workspace is not
    /// trusted.
    pub ignored_allows: Vec<String>,
    /// The user's config file (whether or not it exists).
    pub user_file: PathBuf,
    /// `[hook] contain`: shell calls of a harness hook run inside `cordon exec`.
    pub hook_contain: bool,
    /// `[hook] accept_edits`: a harness's `acceptEdits` mode counts as cordon's.
    pub hook_accept_edits: bool,
    /// The `[slots]` table.
    pub slots: crate::settings::SlotSettings,
    /// Fingerprint of every input that shaped the policy.
    pub version: String,
    /// Fingerprint of every input but the remembered rules: what approvals are bound to.
    pub grant_version: String,
    /// The presets, highest precedence first.
    pub presets: Vec<Preset>,
    /// `[mcp.servers.NAME]` settings.
    pub mcp: crate::mcp::McpSettings,
    /// `[sessions]` settings.
    pub sessions: crate::session::SessionSettings,
    /// `[store]`: the shared store, from the user or managed file (`None`: the local
    /// SQLite file).
    pub store: Option<crate::settings::StoreSettings>,
}

/// The user's config file: `--user`-style override, else
/// `$XDG_CONFIG_HOME/cordon/policy.toml`, else `HOME/.config/cordon/policy.toml`.
pub fn user_file(opts: &LoadOptions, home: &Path) -> PathBuf {
    opts.user.clone().unwrap_or_else(|| {
        opts.xdg_config_home
            .clone()
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| home.join(".config"))
            .join("cordon/policy.toml")
    })
}

/// Load and merge the layers.
pub fn load(opts: &LoadOptions, fs: &dyn FileFacts) -> Result<Merged, ConfigError> {
    let plain = |m: String| ConfigError {
        file: None,
        position: None,
        message: m,
    };
    if !opts.workspace.is_absolute() {
        return Err(plain(format!(
            "the workspace must be an absolute path, got `{}`",
            opts.workspace.display()
        )));
    }
    if !opts.home.is_absolute() {
        return Err(plain(format!(
            "HOME must be an absolute path, got `{}`",
            opts.home.display()
        )));
    }
    let (workspace, ws_exists, _, problem) = crate::paths::resolve(&opts.workspace, fs);
    if !ws_exists || problem.is_some() {
        return Err(plain(format!(
            "the workspace `{}` does not exist or cannot be resolved",
            opts.workspace.display()
        )));
    }
    let home = crate::paths::clean(&opts.home);
    let home_resolved = crate::paths::resolve(&home, fs).0;

    let mut layers = Vec::new();
    let mut hasher = blake3::Hasher::new();
    let mut add = |kind: LayerKind, path: &Path, required: bool| -> Result<(), ConfigError> {
        match read_config(fs, path)? {
            Some(text) => {
                hasher.update(kind.name().as_bytes());
                hasher.update(path.as_os_str().as_encoded_bytes());
                hasher.update(&(text.len() as u64).to_le_bytes());
                hasher.update(text.as_bytes());
                layers.push(parse_layer(kind, path, text)?);
                Ok(())
            }
            None if required => Err(ConfigError {
                file: Some(path.to_path_buf()),
                position: None,
                message: "the config file named on the command line does not exist".into(),
            }),
            None => Ok(()),
        }
    };
    if !opts.skip_default_files {
        let managed = opts
            .managed
            .clone()
            .unwrap_or_else(|| PathBuf::from(MANAGED_CONFIG));
        add(LayerKind::Managed, &managed, false)?;
    }
    for f in &opts.config_files {
        add(LayerKind::Flags, f, true)?;
    }
    if !opts.skip_default_files {
        add(LayerKind::User, &user_file(opts, &home), false)?;
        add(
            LayerKind::Project,
            &workspace.join(".cordon/policy.toml"),
            false,
        )?;
    }
    hasher.update(format!("{:?}{:?}{:?}", opts.mode, opts.sandbox_mode, opts.approval).as_bytes());
    let add_list = |hasher: &mut blake3::Hasher, tag: &str, list: &[String]| {
        for r in list {
            hasher.update(tag.as_bytes());
            hasher.update(&(r.len() as u64).to_le_bytes());
            hasher.update(r.as_bytes());
        }
    };
    // Approvals are bound to every input but the remembered rules: saving or forgetting
    // one only adds or removes an allow, and must not void the leases a human gave (the
    // "always" lease given together with the rule included).
    let mut grants = hasher.clone();
    add_list(&mut hasher, "remembered", &opts.remembered_rules);
    for (tag, list) in [
        ("allow-net", &opts.network_allow),
        ("allow-private", &opts.network_allow_private),
    ] {
        add_list(&mut hasher, tag, list);
        add_list(&mut grants, tag, list);
    }
    let version = Versions {
        full: hasher.finalize().to_hex()[..32].to_string(),
        grants: grants.finalize().to_hex()[..32].to_string(),
    };
    merge(opts, fs, layers, workspace, home, home_resolved, version)
}

/// The fingerprints of a policy's inputs.
struct Versions {
    /// Of every input.
    full: String,
    /// Of every input but the remembered rules (what approvals are bound to).
    grants: String,
}

#[cfg(test)]
mod tests;
