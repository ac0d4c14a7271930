//! Turning command-line flags and the environment into a loaded policy and a gate
//! (shared by every subcommand that judges something).

use crate::exit::{Code, Exit};
use cordon_gate::{Gate, GateOptions};
use cordon_policy::{ApprovalPolicy, LoadOptions, Mode, Policy, RealFs, SandboxMode};
use cordon_store::Store;
use std::path::PathBuf;

/// `--mode`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum ModeArg {
    /// Nothing added at the mode step.
    Default,
    /// File writes inside the workspace are allowed.
    AcceptEdits,
    /// Every modification is denied.
    Plan,
    /// What guards, rules and opaque checks left open is allowed.
    Bypass,
    /// Every remaining ask is denied.
    DontAsk,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Default => Mode::Default,
            ModeArg::AcceptEdits => Mode::AcceptEdits,
            ModeArg::Plan => Mode::Plan,
            ModeArg::Bypass => Mode::Bypass,
            ModeArg::DontAsk => Mode::DontAsk,
        }
    }
}

/// `--sandbox`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum SandboxArg {
    /// Nothing writable but a private /tmp.
    ReadOnly,
    /// The workspace and configured roots writable.
    WorkspaceWrite,
    /// No filesystem containment (nothing is judged as contained).
    FullAccess,
}

impl From<SandboxArg> for SandboxMode {
    fn from(m: SandboxArg) -> SandboxMode {
        match m {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::FullAccess => SandboxMode::FullAccess,
        }
    }
}

/// `--approval`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum ApprovalArg {
    /// Only known read-only commands run without asking.
    Untrusted,
    /// What the policy asks is asked.
    OnRequest,
    /// Run contained first; ask only about what containment blocked.
    OnFailure,
    /// Every ask is denied.
    Never,
}

impl From<ApprovalArg> for ApprovalPolicy {
    fn from(m: ApprovalArg) -> ApprovalPolicy {
        match m {
            ApprovalArg::Untrusted => ApprovalPolicy::Untrusted,
            ApprovalArg::OnRequest => ApprovalPolicy::OnRequest,
            ApprovalArg::OnFailure => ApprovalPolicy::OnFailure,
            ApprovalArg::Never => ApprovalPolicy::Never,
        }
    }
}

/// Flags that choose the policy.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PolicyArgs {
    /// An extra config file (the flags layer; repeatable, later files rank lower).
    #[arg(long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The permission mode.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Ignore the managed, user and project config files (only `--config` files apply).
    #[arg(long)]
    pub isolated: bool,
}

impl PolicyArgs {
    /// The workspace: the flag, else the current directory, made absolute.
    pub fn workspace(&self) -> anyhow::Result<PathBuf> {
        let cwd = std::env::current_dir().map_err(|e| {
            Exit::new(
                Code::Invalid,
                format!("cannot read the current directory: {e}"),
            )
        })?;
        Ok(match &self.workspace {
            Some(w) if w.is_absolute() => w.clone(),
            Some(w) => cwd.join(w),
            None => cwd,
        })
    }

    /// The load options these flags describe, with HOME and XDG_CONFIG_HOME from the
    /// environment.
    pub fn options(&self) -> anyhow::Result<LoadOptions> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or_else(|| {
                Exit::new(
                    Code::Invalid,
                    "HOME is not set; set it to your home directory",
                )
            })?;
        if !home.is_absolute() {
            return Err(Exit::new(
                Code::Invalid,
                format!("HOME must be an absolute path, got `{}`", home.display()),
            )
            .into());
        }
        Ok(LoadOptions {
            workspace: self.workspace()?,
            home,
            xdg_config_home: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
            config_files: self.config.clone(),
            mode: self.mode.map(Mode::from),
            skip_default_files: self.isolated,
            ..Default::default()
        })
    }
}

/// Flags about approvals and the audit log.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ApprovalArgs {
    /// Ask a human on this terminal when the policy says ask (needs stdin and stderr to
    /// be a terminal).
    #[arg(long)]
    pub interactive: bool,
    /// When the policy says ask and no human answers, record a pending approval (see
    /// `cordon approvals`) and exit 5.
    #[arg(long)]
    pub pending: bool,
    /// The approval store (default: `$CORDON_STATE_DIR`, `$XDG_STATE_HOME/cordon` or
    /// `~/.local/state/cordon`, file `store.sqlite3`).
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// The audit log (default: `audit.jsonl` in the same state directory).
    #[arg(long, value_name = "FILE")]
    pub audit_file: Option<PathBuf>,
    /// Do not append this decision to the audit log.
    #[arg(long)]
    pub no_audit: bool,
}

impl ApprovalArgs {
    /// Rules a human chose to remember, to be loaded as allow rules. A store that cannot
    /// be read contributes nothing (and says so on stderr): no approval comes from it.
    pub fn remembered_rules(&self) -> Vec<String> {
        self.remembered().rules
    }

    /// The remembered rules, with the store connection they were read from, to hand to
    /// the gate ([`Remembered::gate`]) so that one process opens the store once.
    pub fn remembered(&self) -> Remembered {
        let none = Remembered {
            rules: Vec::new(),
            store: None,
        };
        let path = match &self.store {
            Some(p) => p.clone(),
            None => match cordon_store::default_store_path() {
                Ok(p) => p,
                Err(_) => return none,
            },
        };
        if !path.exists() {
            return none;
        }
        let read = Store::open(&path).and_then(|s| s.rules().map(|rules| (rules, s)));
        match read {
            Ok((rules, store)) => Remembered {
                rules: rules.into_iter().map(|r| r.rule).collect(),
                store: Some(store),
            },
            Err(e) => {
                eprintln!(
                    "cordon: remembered rules not loaded: {}",
                    cordon_policy::terminal::sanitize_for_terminal(&e.to_string())
                );
                none
            }
        }
    }

    /// The gate over `policy` for `surface`, which runs what it was given (no edits).
    pub fn gate(&self, policy: Policy, surface: cordon_gate::Surface) -> Gate {
        Gate::new(policy, self.options(surface, false))
    }

    /// The gate for a surface that hands the judged call back to its caller, so a human
    /// may answer an ask with an edited input.
    pub fn gate_with_edits(&self, policy: Policy, surface: cordon_gate::Surface) -> Gate {
        Gate::new(policy, self.options(surface, true))
    }

    fn options(&self, surface: cordon_gate::Surface, edits: bool) -> GateOptions {
        GateOptions {
            surface,
            store: self.store.clone(),
            audit: self.audit_file.clone(),
            no_audit: self.no_audit,
            edits,
        }
    }
}

/// Load the policy `opts` describe; config errors carry file:line:column and `code`.
pub fn load(opts: &LoadOptions, code: Code) -> anyhow::Result<Policy> {
    Policy::load(opts, &RealFs).map_err(|e| Exit::new(code, format!("invalid config: {e}")).into())
}

/// Remembered rules as read from the approval store, and the open connection they came
/// from.
pub struct Remembered {
    /// The rules, as text (loaded as allow rules of the `remembered` layer).
    pub rules: Vec<String>,
    store: Option<Store>,
}

impl Remembered {
    /// `gate`, using the connection the rules were read from (when there was one).
    pub fn gate(self, gate: Gate) -> Gate {
        match self.store {
            Some(store) => gate.with_store(store),
            None => gate,
        }
    }
}
