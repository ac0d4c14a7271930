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
use crate::rules::{self, Anchors, Matcher, Rule, RuleOrigin};
use crate::settings::{ApprovalPolicy, NetworkSettings, SandboxMode, SandboxSettings};
use crate::verdict::Decision;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

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

/// The permission mode (DESIGN.md, step 6).
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

// ---- the file format ------------------------------------------------------------------

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    mode: Option<Spanned<String>>,
    sandbox: Option<Spanned<SandboxField>>,
    approval: Option<Spanned<String>>,
    trusted_workspaces: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    permissions: Permissions,
    defaults: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    contained: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    #[serde(default)]
    network: NetworkTable,
    #[serde(default)]
    rule: Vec<RuleTable>,
    #[serde(default)]
    preset: Vec<Spanned<PresetTable>>,
    #[serde(default)]
    mcp: crate::mcp::McpTable,
    #[serde(default)]
    sessions: crate::session::SessionsTable,
    hook: Option<Spanned<HookTable>>,
    slots: Option<Spanned<SlotsTable>>,
    #[serde(default)]
    credential: Vec<Spanned<crate::credential::CredentialTable>>,
}

/// `[slots]`: defaults of `cordon exec --slot`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SlotsTable {
    scope: Option<Spanned<String>>,
    wait_seconds: Option<u64>,
    tmp: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetTable {
    tool: Spanned<String>,
    #[serde(default)]
    set: serde_json::Map<String, serde_json::Value>,
    cwd: Option<Spanned<String>>,
}

/// `[hook]`: how `cordon hook` treats the harness's calls.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct HookTable {
    /// Rewrite shell calls that are allowed only contained to run inside `cordon exec`.
    contain: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SandboxField {
    Mode(String),
    Table(Box<SandboxTable>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SandboxTable {
    mode: Option<String>,
    #[serde(default)]
    writable_roots: Vec<String>,
    #[serde(default)]
    mask: Vec<String>,
    home_readable: Option<Vec<String>>,
    #[serde(default)]
    env_allow: Vec<String>,
    #[serde(default)]
    env_allow_secret: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Permissions {
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct NetworkTable {
    #[serde(default)]
    allow: Vec<Spanned<AllowEntry>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
    #[serde(default)]
    allow_private: Vec<Spanned<String>>,
}

/// An entry of `[network] allow`: a host pattern, or a table with method and path rules.
#[derive(Deserialize)]
#[serde(untagged)]
enum AllowEntry {
    Host(String),
    Rule(RequestRuleTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestRuleTable {
    host: String,
    #[serde(default)]
    methods: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    git_push: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleTable {
    action: Spanned<String>,
    rule: Option<Spanned<String>>,
    tool: Option<Spanned<String>>,
    pattern: Option<Spanned<String>>,
    reason: Option<String>,
    #[serde(default, rename = "match")]
    must_match: Vec<Spanned<String>>,
    #[serde(default)]
    not_match: Vec<Spanned<String>>,
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

fn merge(
    opts: &LoadOptions,
    fs: &dyn FileFacts,
    layers: Vec<Layer>,
    workspace: PathBuf,
    home: PathBuf,
    home_resolved: PathBuf,
    version: Versions,
) -> Result<Merged, ConfigError> {
    let mut notes = Vec::new();
    // Trust comes only from the user and managed layers.
    let mut trusted = false;
    for l in &layers {
        if let Some(list) = &l.cfg.trusted_workspaces {
            if !matches!(l.kind, LayerKind::User | LayerKind::Managed) {
                notes.push(format!(
                    "{}: `trusted_workspaces` ignored: only the user and managed files may mark a workspace trusted",
                    l.file.display()
                ));
                continue;
            }
            for w in list.get_ref() {
                let p = crate::paths::expand_home(w.get_ref(), &home);
                if !p.is_absolute() {
                    return Err(l.err(
                        w.span(),
                        format!(
                            "trusted workspace `{}` must be an absolute path or start with ~/",
                            w.get_ref()
                        ),
                    ));
                }
                if crate::paths::resolve(&p, fs).0 == workspace {
                    trusted = true;
                }
            }
        }
    }
    let honoured = |l: &Layer| l.kind != LayerKind::Project || trusted;

    let anchors = Anchors {
        workspace: workspace.clone(),
        home: home.clone(),
    };

    // Scalars: the first (highest) layer that sets them wins; command-line values belong to
    // the flags layer, which sits below managed.
    let mut mode = None;
    let mut sandbox_mode = None;
    let mut approval = None;
    let mut sandbox = SandboxSettings::default();
    let mut network = NetworkSettings::default();
    let mut defaults_set: BTreeMap<&'static str, Decision> = BTreeMap::new();
    let mut project_defaults = Defaults::loosest();
    let mut contained_set: BTreeMap<&'static str, Decision> = BTreeMap::new();
    let mut project_contained = Defaults::loosest();
    let mut rules = Vec::new();
    let mut ignored_allows = Vec::new();
    let mut presets = Vec::new();
    let mut mcp = crate::mcp::McpSettings::default();
    let mut sessions = crate::session::SessionSettings::default();
    let mut sessions_seen = crate::session::Seen::default();
    let mut hook_contain = None;
    let mut slots = crate::settings::SlotSettings::default();

    let flags_inserted =
        |mode: &mut Option<Mode>, sm: &mut Option<SandboxMode>, ap: &mut Option<ApprovalPolicy>| {
            if mode.is_none() {
                *mode = opts.mode;
            }
            if sm.is_none() {
                *sm = opts.sandbox_mode;
            }
            if ap.is_none() {
                *ap = opts.approval;
            }
        };
    let mut flags_done = false;

    for l in &layers {
        if l.kind > LayerKind::Managed && !flags_done {
            flags_inserted(&mut mode, &mut sandbox_mode, &mut approval);
            flags_done = true;
        }
        let ok = honoured(l);
        // Marking a server untrusted only narrows: every layer may.
        l.cfg
            .mcp
            .merge_into(&mut mcp, ok)
            .map_err(|(span, why)| l.err(span, why))?;
        for what in l
            .cfg
            .sessions
            .merge_into(&mut sessions, &mut sessions_seen, ok, &workspace, &home)
            .map_err(|(span, why)| l.err(span, why))?
        {
            notes.push(format!(
                "{}: {what} ignored: the workspace is not trusted (add it to `trusted_workspaces` in your user config)",
                l.file.display()
            ));
        }
        let ignored = |what: &str, notes: &mut Vec<String>| {
            notes.push(format!(
                "{}: {what} ignored: the workspace is not trusted (add it to `trusted_workspaces` in your user config)",
                l.file.display()
            ));
        };
        if let Some(m) = &l.cfg.mode {
            let parsed = m
                .get_ref()
                .parse::<Mode>()
                .map_err(|e| l.err(m.span(), e.to_string()))?;
            if ok {
                mode.get_or_insert(parsed);
            } else {
                ignored("`mode`", &mut notes);
            }
        }
        // Containment decides with the `[contained]` table, which asks less: like the
        // mode, a repository's own file may not choose it.
        if let Some(contain) = l.cfg.hook.as_ref().and_then(|h| h.get_ref().contain) {
            if ok {
                hook_contain.get_or_insert(contain);
            } else {
                ignored("`[hook] contain`", &mut notes);
            }
        }
        if let Some(t) = &l.cfg.slots {
            let t = t.get_ref();
            if !ok {
                ignored("`[slots]`", &mut notes);
            } else {
                if let Some(sc) = &t.scope {
                    let parsed =
                        crate::settings::SlotScope::parse(sc.get_ref()).ok_or_else(|| {
                            l.err(
                                sc.span(),
                                format!(
                                    "unknown slot scope `{}`: use session, user, agent or global",
                                    sc.get_ref()
                                ),
                            )
                        })?;
                    slots.scope.get_or_insert(parsed);
                }
                if let Some(w) = t.wait_seconds {
                    slots.wait_seconds.get_or_insert(w);
                }
                if let Some(tmp) = t.tmp {
                    slots.tmp.get_or_insert(tmp);
                }
            }
        }
        if let Some(a) = &l.cfg.approval {
            let parsed = a
                .get_ref()
                .parse::<ApprovalPolicy>()
                .map_err(|e| l.err(a.span(), e.to_string()))?;
            if ok {
                approval.get_or_insert(parsed);
            } else {
                ignored("`approval`", &mut notes);
            }
        }
        if let Some(s) = &l.cfg.sandbox {
            let m = match s.get_ref() {
                SandboxField::Mode(m) => Some(m.as_str()),
                SandboxField::Table(t) => t.mode.as_deref(),
            };
            if let Some(m) = m {
                let parsed = m
                    .parse::<SandboxMode>()
                    .map_err(|e| l.err(s.span(), e.to_string()))?;
                if ok {
                    sandbox_mode.get_or_insert(parsed);
                } else {
                    ignored("`sandbox` mode", &mut notes);
                }
            }
            if let SandboxField::Table(t) = s.get_ref() {
                let abs = |v: &[String]| -> Result<Vec<PathBuf>, ConfigError> {
                    v.iter()
                        .map(|p| {
                            let e = crate::paths::expand_home(p, &home);
                            if e.is_absolute() {
                                Ok(crate::paths::clean(&e))
                            } else {
                                Err(l.err(
                                    s.span(),
                                    format!("sandbox path `{p}` must be absolute or start with ~/"),
                                ))
                            }
                        })
                        .collect()
                };
                // Masks only ever hide more: honoured from every layer.
                sandbox.mask.extend(abs(&t.mask)?);
                if ok {
                    sandbox.writable_roots.extend(abs(&t.writable_roots)?);
                    sandbox.env_allow.extend(t.env_allow.iter().cloned());
                    sandbox
                        .env_allow_secret
                        .extend(t.env_allow_secret.iter().cloned());
                    if sandbox.home_readable.is_none()
                        && let Some(v) = &t.home_readable
                    {
                        sandbox.home_readable = Some(v.iter().map(PathBuf::from).collect());
                    }
                } else if !t.writable_roots.is_empty()
                    || !t.env_allow.is_empty()
                    || !t.env_allow_secret.is_empty()
                    || t.home_readable.is_some()
                {
                    ignored("[sandbox] widening settings", &mut notes);
                }
            }
        }
        if !l.cfg.preset.is_empty() {
            if ok {
                // Later presets of one file win: they go first in the highest-first list.
                let mut mine = l
                    .cfg
                    .preset
                    .iter()
                    .map(|p| preset_of(l, p, &home))
                    .collect::<Result<Vec<_>, _>>()?;
                mine.reverse();
                presets.extend(mine);
            } else {
                ignored("`[[preset]]`", &mut notes);
            }
        }
        if let Some(d) = &l.cfg.defaults {
            for (key, dec) in defaults_table(l, d)? {
                if ok {
                    defaults_set.entry(key).or_insert(dec);
                } else if let Some(slot) = project_defaults.slot(key) {
                    // An untrusted project may only tighten.
                    *slot = dec;
                }
            }
        }
        if let Some(d) = &l.cfg.contained {
            for (key, dec) in defaults_table(l, d)? {
                if l.kind == LayerKind::Project {
                    // A project, trusted or not, may only tighten what runs unasked in
                    // the sandbox.
                    if let Some(slot) = project_contained.slot(key) {
                        *slot = dec;
                    }
                } else {
                    contained_set.entry(key).or_insert(dec);
                }
            }
        }
        // Network lists (validated here so errors carry positions).
        let check_host = |v: &Spanned<String>| -> Result<String, ConfigError> {
            crate::net::HostPattern::parse(v.get_ref())
                .map(|_| v.get_ref().clone())
                .map_err(|e| l.err(v.span(), e.to_string()))
        };
        for v in &l.cfg.network.deny {
            network.deny.push(check_host(v)?);
        }
        for v in &l.cfg.network.allow {
            match v.get_ref() {
                AllowEntry::Host(h) => {
                    crate::net::HostPattern::parse(h)
                        .map_err(|e| l.err(v.span(), e.to_string()))?;
                    if ok {
                        network.allow.push(h.clone());
                    } else {
                        ignored(&format!("network allow `{h}`"), &mut notes);
                    }
                }
                AllowEntry::Rule(t) => {
                    let spec = crate::net::RequestRuleSpec {
                        host: t.host.clone(),
                        methods: t.methods.clone(),
                        paths: t.paths.clone(),
                        read_only: t.read_only,
                        git_push: t.git_push,
                    };
                    crate::net::RequestRule::parse(&spec)
                        .map_err(|e| l.err(v.span(), e.to_string()))?;
                    if ok {
                        network.allow.push(t.host.clone());
                        network.rules.push(spec);
                    } else {
                        ignored(&format!("network rule for `{}`", t.host), &mut notes);
                    }
                }
            }
        }
        credentials_of(l, &home, &mut network, &mut notes)?;
        for v in &l.cfg.network.allow_private {
            let c = v.get_ref();
            check_cidr(c).map_err(|e| l.err(v.span(), e))?;
            if ok {
                network.allow_private.push(c.clone());
            } else {
                ignored(&format!("network allow_private `{c}`"), &mut notes);
            }
        }
        // Rules.
        let p = &l.cfg.permissions;
        for (action, list) in [
            (Decision::Deny, &p.deny),
            (Decision::Ask, &p.ask),
            (Decision::Allow, &p.allow),
        ] {
            for r in list {
                let matcher =
                    rules::parse_rule(r.get_ref(), &anchors).map_err(|e| l.err(r.span(), e))?;
                if action == Decision::Allow && !ok {
                    ignored(&format!("allow rule `{}`", r.get_ref()), &mut notes);
                    ignored_allows.push(r.get_ref().clone());
                    continue;
                }
                rules.push(Rule {
                    action,
                    text: r.get_ref().clone(),
                    matcher,
                    origin: l.origin(r.span()),
                    reason: None,
                });
            }
        }
        for t in &l.cfg.rule {
            let action = t
                .action
                .get_ref()
                .parse::<Decision>()
                .map_err(|e| l.err(t.action.span(), e.to_string()))?;
            let (text, span) = match (&t.rule, &t.tool, &t.pattern) {
                (Some(r), None, None) => (r.get_ref().clone(), r.span()),
                (None, Some(tool), Some(p)) => {
                    (format!("{}({})", tool.get_ref(), p.get_ref()), tool.span())
                }
                (None, Some(tool), None) => (tool.get_ref().clone(), tool.span()),
                _ => {
                    return Err(l.err(
                        t.action.span(),
                        "a [[rule]] needs either `rule = \"Tool(pattern)\"` or `tool` (with an optional `pattern`)",
                    ));
                }
            };
            let matcher = rules::parse_rule(&text, &anchors).map_err(|e| l.err(span.clone(), e))?;
            check_examples(l, &text, &matcher, &anchors, &t.must_match, &t.not_match)?;
            if action == Decision::Allow && !ok {
                ignored(&format!("allow rule `{text}`"), &mut notes);
                ignored_allows.push(text.clone());
                continue;
            }
            rules.push(Rule {
                action,
                text,
                matcher,
                origin: l.origin(span),
                reason: t.reason.clone(),
            });
        }
    }
    if !flags_done {
        flags_inserted(&mut mode, &mut sandbox_mode, &mut approval);
    }
    crate::credential::check_unambiguous(
        network
            .credentials
            .iter()
            .map(|c| (c.name.as_str(), c.destinations.as_slice())),
    )
    .map_err(|m| ConfigError {
        file: None,
        position: None,
        message: m,
    })?;
    let flag_err = |m: String| ConfigError {
        file: None,
        position: None,
        message: m,
    };
    for h in &opts.network_allow {
        crate::net::HostPattern::parse(h).map_err(|e| flag_err(format!("--allow-net {h}: {e}")))?;
        network.allow.push(h.clone());
    }
    for c in &opts.network_allow_private {
        c.parse::<ipnet::IpNet>()
            .or_else(|_| c.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
            .map_err(|_| {
                flag_err(format!(
                    "--allow-private {c}: not a CIDR such as 10.0.0.0/8"
                ))
            })?;
        network.allow_private.push(c.clone());
    }
    for text in &opts.remembered_rules {
        let matcher = rules::parse_rule(text, &anchors).map_err(|e| ConfigError {
            file: None,
            position: None,
            message: format!("remembered rule `{text}` in the approval store: {e}"),
        })?;
        rules.push(Rule {
            action: Decision::Allow,
            text: text.clone(),
            matcher,
            origin: RuleOrigin {
                layer: "remembered",
                ..Default::default()
            },
            reason: None,
        });
    }

    let user_file = user_file(opts, &home);
    let mut defaults = Defaults::default();
    for (k, v) in &defaults_set {
        if let Some(slot) = defaults.slot(k) {
            *slot = *v;
        }
    }
    defaults.tighten(&project_defaults);
    let mut contained = Defaults::contained();
    for (k, v) in &contained_set {
        if let Some(slot) = contained.slot(k) {
            *slot = *v;
        }
    }
    contained.tighten(&project_contained);

    let mut sandbox_roots = Vec::new();
    for r in &sandbox.writable_roots {
        sandbox_roots.push(crate::paths::resolve(r, fs).0);
    }
    sandbox.writable_roots = sandbox_roots;

    Ok(Merged {
        workspace,
        home,
        home_resolved,
        mode: mode.unwrap_or_default(),
        hook_contain: hook_contain.unwrap_or(false),
        slots,
        sandbox_mode: sandbox_mode.unwrap_or_default(),
        approval: approval.unwrap_or_default(),
        defaults,
        contained,
        rules,
        network,
        sandbox,
        trusted,
        files: layers.iter().map(|l| (l.kind, l.file.clone())).collect(),
        notes,
        ignored_allows,
        user_file,
        version: version.full,
        grant_version: version.grants,
        presets,
        mcp,
        sessions,
    })
}

/// The `[[credential]]` tables of one layer, checked, into `network` (their hosts
/// allowlisted). A project's tables are never used, trusted or not: a credential runs a
/// command or reads a secret on the host, and sends it where the table says.
fn credentials_of(
    l: &Layer,
    home: &Path,
    network: &mut NetworkSettings,
    notes: &mut Vec<String>,
) -> Result<(), ConfigError> {
    for (i, t) in l.cfg.credential.iter().enumerate() {
        let span = t.span();
        if l.kind == LayerKind::Project {
            notes.push(format!(
                "{}: a [[credential]] table ignored: credentials come from the user's or the managed config, never a project's",
                l.file.display()
            ));
            continue;
        }
        let spec = t
            .get_ref()
            .check(i, home)
            .map_err(|m| l.err(span.clone(), m))?;
        if network.credentials.iter().any(|c| c.name == spec.name) {
            return Err(l.err(
                span,
                format!(
                    "[[credential]] `{}`: `name`: another credential has this name",
                    spec.name
                ),
            ));
        }
        for d in &spec.destinations {
            network.allow.push(d.authority.to_string());
        }
        network.credentials.push(spec);
    }
    Ok(())
}

/// A `[[preset]]` table, checked.
fn preset_of(l: &Layer, p: &Spanned<PresetTable>, home: &Path) -> Result<Preset, ConfigError> {
    let t = p.get_ref();
    let tool = t.tool.get_ref();
    if tool.is_empty()
        || tool.contains(char::is_whitespace)
        || tool[..tool.len().saturating_sub(1)].contains('*')
    {
        return Err(l.err(
            t.tool.span(),
            "a preset's `tool` is a tool name as the harness calls it, optionally ending in `*`",
        ));
    }
    if t.set.is_empty() && t.cwd.is_none() {
        return Err(l.err(
            p.span(),
            "a preset must `set` at least one field or a `cwd`",
        ));
    }
    let cwd = match &t.cwd {
        None => None,
        Some(c) => {
            let text = c.get_ref();
            let path = match text.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => PathBuf::from(text),
            };
            if !path.is_absolute() {
                return Err(l.err(
                    c.span(),
                    "a preset's `cwd` must be absolute or start with ~/",
                ));
            }
            Some(crate::paths::clean(&path))
        }
    };
    Ok(Preset {
        tool: tool.clone(),
        set: t.set.clone(),
        cwd,
        origin: l.origin(p.span()),
    })
}

/// A CIDR (`10.0.0.0/8`) or a single address, as `allow_private` accepts.
fn check_cidr(c: &str) -> Result<(), String> {
    c.parse::<ipnet::IpNet>()
        .map(|_| ())
        .or_else(|_| c.parse::<std::net::IpAddr>().map(|_| ()))
        .map_err(|_| format!("`{c}` is not a CIDR such as 10.0.0.0/8"))
}

/// A structured rule's `match` / `not_match` examples must behave as written, so a rule that
/// does not do what its author thought fails loudly at load time.
fn check_examples(
    l: &Layer,
    text: &str,
    matcher: &Matcher,
    anchors: &Anchors,
    must: &[Spanned<String>],
    must_not: &[Spanned<String>],
) -> Result<(), ConfigError> {
    for (examples, want) in [(must, true), (must_not, false)] {
        for ex in examples {
            let got =
                example_matches(matcher, ex.get_ref(), anchors).map_err(|e| l.err(ex.span(), e))?;
            if got != want {
                let verb = if want { "does not match" } else { "matches" };
                return Err(l.err(
                    ex.span(),
                    format!("rule `{text}` {verb} its example `{}`", ex.get_ref()),
                ));
            }
        }
    }
    Ok(())
}

fn example_matches(matcher: &Matcher, example: &str, anchors: &Anchors) -> Result<bool, String> {
    Ok(match matcher {
        Matcher::Command(p) => {
            let words: Vec<String> = example.split_whitespace().map(String::from).collect();
            p.matches(&words)
        }
        Matcher::Path { glob, .. } => {
            let path = crate::paths::absolute(
                &crate::paths::expand_home(example, &anchors.home),
                &anchors.workspace,
            );
            let path = crate::paths::clean(&path);
            rules::path_matcher(glob)?.iter().any(|g| g.is_match(&path))
        }
        Matcher::Domain(p) => {
            let (host, port) = match crate::net::Origin::parse_url(example) {
                Ok(o) => (o.host, o.port),
                Err(_) => {
                    let a = crate::net::Authority::parse(example, 443)
                        .map_err(|e| format!("example `{example}`: {e}"))?;
                    (a.host, a.port)
                }
            };
            p.matches_host(&host) && p.port().is_none_or(|x| x == port)
        }
        Matcher::Mcp { server, tool } => {
            let rest = example.strip_prefix("mcp__").unwrap_or(example);
            let (s, t) = rest.split_once("__").unwrap_or((rest, ""));
            s == server && tool.as_deref().is_none_or(|x| x == t)
        }
        Matcher::Tool(_) | Matcher::UnknownTool(_) => {
            return Err("tool-wide rules take no examples".into());
        }
    })
}

/// The entries of a `[defaults]` or `[contained]` table, checked: known keys, decisions.
fn defaults_table(
    l: &Layer,
    table: &BTreeMap<Spanned<String>, Spanned<String>>,
) -> Result<Vec<(&'static str, Decision)>, ConfigError> {
    table
        .iter()
        .map(|(k, v)| {
            let key = DEFAULT_KEYS
                .iter()
                .find(|x| **x == k.get_ref().as_str())
                .ok_or_else(|| {
                    l.err(
                        k.span(),
                        format!(
                            "unknown default `{}`: expected one of {}",
                            k.get_ref(),
                            DEFAULT_KEYS.join(", ")
                        ),
                    )
                })?;
            let dec = v
                .get_ref()
                .parse::<Decision>()
                .map_err(|e| l.err(v.span(), e.to_string()))?;
            Ok((*key, dec))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::FakeFs;

    fn fs() -> FakeFs {
        FakeFs::new().dir("/w/proj").dir("/home/u/.config/cordon")
    }

    fn opts() -> LoadOptions {
        LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            managed: Some("/etc/cordon/policy.toml".into()),
            ..Default::default()
        }
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let fs = fs().file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            b"mode = \"default\"\n[permissions]\nallow = [\"Frob(x)\"]\n",
        );
        let e = load(&opts(), &fs).unwrap_err();
        assert_eq!(
            e.file.as_deref(),
            Some(Path::new("/home/u/.config/cordon/policy.toml"))
        );
        assert_eq!(e.position, Some((3, 10)));
        assert!(e.message.contains("Frob"), "{e}");

        let fs2 = FakeFs::new().dir("/w/proj").file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            b"mode = \"default\"\nbogus = 1\n",
        );
        let e = load(&opts(), &fs2).unwrap_err();
        assert_eq!(e.position.map(|p| p.0), Some(2), "{e}");
        let fs3 = FakeFs::new().dir("/w/proj").file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            b"mode = \"yolo\"\n",
        );
        let e = load(&opts(), &fs3).unwrap_err();
        assert_eq!(e.position, Some((1, 8)), "{e}");
    }

    #[test]
    fn untrusted_project_cannot_widen() {
        let fs = fs().file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            br#"mode = "bypass"
[permissions]
allow = ["Bash(curl:*)"]
deny = ["Read(./secrets/**)"]
[defaults]
read_outside = "allow"
write_inside = "deny"
[network]
allow = ["evil.com"]
deny = ["pastebin.com"]
"#,
        );
        let m = load(&opts(), &fs).unwrap();
        assert!(!m.trusted);
        assert_eq!(m.mode, Mode::Default);
        assert_eq!(m.rules.len(), 1);
        assert_eq!(m.rules[0].action, Decision::Deny);
        assert_eq!(m.defaults.read_outside, Decision::Ask);
        assert_eq!(
            m.defaults.write_inside,
            Decision::Deny,
            "tightening is honoured"
        );
        assert!(m.network.allow.is_empty());
        assert_eq!(m.network.deny, vec!["pastebin.com".to_string()]);
        assert!(m.notes.iter().any(|n| n.contains("not trusted")));
    }

    #[test]
    fn trusted_project_applies_and_user_wins() {
        let fs = fs()
            .file_with(
                "/home/u/.config/cordon/policy.toml",
                1,
                b"trusted_workspaces = [\"/w/proj\"]\n[defaults]\nexec = \"deny\"\n",
            )
            .file_with(
                "/w/proj/.cordon/policy.toml",
                1,
                b"mode = \"accept-edits\"\n[permissions]\nallow = [\"Bash(cargo test:*)\"]\n[defaults]\nexec = \"allow\"\n",
            );
        let m = load(&opts(), &fs).unwrap();
        assert!(m.trusted);
        assert_eq!(m.mode, Mode::AcceptEdits);
        assert_eq!(m.rules.len(), 1);
        assert_eq!(
            m.defaults.exec,
            Decision::Deny,
            "the user layer outranks the project"
        );
    }

    #[test]
    fn project_cannot_trust_itself() {
        let fs = fs().file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            b"trusted_workspaces = [\"/w/proj\"]\n[permissions]\nallow = [\"Bash\"]\n",
        );
        let m = load(&opts(), &fs).unwrap();
        assert!(!m.trusted);
        assert!(m.rules.is_empty());
    }

    #[test]
    fn precedence_managed_over_flags_over_user() {
        let fs = fs()
            .file_with("/etc/cordon/policy.toml", 1, b"mode = \"plan\"\n")
            .file_with(
                "/home/u/.config/cordon/policy.toml",
                1,
                b"mode = \"bypass\"\n",
            );
        let mut o = opts();
        o.mode = Some(Mode::AcceptEdits);
        assert_eq!(load(&o, &fs).unwrap().mode, Mode::Plan);
        let fs = self::fs().file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            b"mode = \"bypass\"\n",
        );
        assert_eq!(load(&o, &fs).unwrap().mode, Mode::AcceptEdits);
        o.mode = None;
        assert_eq!(load(&o, &fs).unwrap().mode, Mode::Bypass);
    }

    #[test]
    fn rule_examples_are_checked() {
        let good = br#"[[rule]]
action = "deny"
rule = "Bash(git push:*)"
reason = "pushes need review"
match = ["git push origin main"]
not_match = ["git pull"]
"#;
        let fs = fs().file_with("/home/u/.config/cordon/policy.toml", 1, good);
        let m = load(&opts(), &fs).unwrap();
        assert_eq!(m.rules[0].reason.as_deref(), Some("pushes need review"));
        let bad = br#"[[rule]]
action = "deny"
rule = "Read(./secrets/*.key)"
match = ["secrets/a/b.key"]
"#;
        let fs = self::fs().file_with("/home/u/.config/cordon/policy.toml", 1, bad);
        let e = load(&opts(), &fs).unwrap_err();
        assert!(e.message.contains("does not match its example"), "{e}");
        assert_eq!(e.position.map(|p| p.0), Some(4));
    }

    #[test]
    fn unreadable_or_invalid_files_are_errors() {
        let fs = fs().file_with("/home/u/.config/cordon/policy.toml", 1, b"\xff\xfe");
        assert!(load(&opts(), &fs).is_err());
        let mut o = opts();
        o.config_files = vec!["/nope.toml".into()];
        assert!(load(&o, &self::fs()).is_err());
        let fs = fs_with_network("allow = [\"http://x.com/\"]");
        assert!(load(&opts(), &fs).is_err());
        let fs = fs_with_network("allow_private = [\"10.0.0.0/33\"]");
        assert!(load(&opts(), &fs).is_err());
    }

    #[test]
    fn network_allow_takes_request_rules() {
        let fs = fs_with_network(
            r#"allow = ["example.com", { host = "github.com", read_only = true, paths = ["/org/repo"] }]"#,
        );
        let m = load(&opts(), &fs).unwrap();
        assert_eq!(m.network.allow, vec!["example.com", "github.com"]);
        assert_eq!(m.network.rules.len(), 1);
        assert!(m.network.rules[0].read_only);
        let p = crate::net::NetworkPolicy::from_settings(&m.network).unwrap();
        let gh = crate::net::Host::parse("github.com").unwrap();
        assert!(p.is_ruled(&gh, 443));
        assert!(p.check_request(&gh, 443, "GET", "/org/repo/x").is_ok());
        assert!(p.check_request(&gh, 443, "POST", "/org/repo/x").is_err());
        for bad in [
            r#"allow = [{ host = "github.com", methods = ["G ET"] }]"#,
            r#"allow = [{ host = "github.com", paths = ["org"] }]"#,
            r#"allow = [{ host = "github.com", colour = "red" }]"#,
        ] {
            assert!(load(&opts(), &fs_with_network(bad)).is_err(), "{bad}");
        }
    }

    fn fs_with_network(line: &str) -> FakeFs {
        fs().file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            format!("[network]\n{line}\n").as_bytes(),
        )
    }
}
