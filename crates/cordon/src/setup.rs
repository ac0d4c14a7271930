//! Turning command-line flags and the environment into a loaded policy and a gate
//! (shared by every subcommand that judges something).

use crate::exit::{Code, Exit};
use cordon_gate::{Gate, GateOptions, StoreLocation};
use cordon_policy::{ApprovalPolicy, LoadOptions, Mode, Policy, RealFs, SandboxMode};
use cordon_store::{RememberedRule, Store, StoreAt};
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
    /// Where the stores are for a surface loading its policy with `load`: the one
    /// resolver every surface asks ([`cordon_gate::locate`]). A `[store]` that cannot be
    /// used (its password file readable by others, its variable unset) is refused.
    pub fn location(&self, load: &LoadOptions) -> anyhow::Result<StoreLocation> {
        cordon_gate::locate(load, self.store.as_deref()).map_err(|e| {
            Exit::new(
                Code::Invalid,
                cordon_policy::terminal::sanitize_for_terminal(&e.to_string()),
            )
            .into()
        })
    }

    /// The stores to keep out of a command's reach (password file and variable, sockets,
    /// loopback port): `location` itself, or with `--isolated` (which ignores the user
    /// and managed files for the policy) the `[store]` those files name all the same
    /// ([`cordon_gate::locate_for_protection`]); one that cannot be used is refused.
    pub fn guarded(
        &self,
        load: &LoadOptions,
        location: &StoreLocation,
    ) -> anyhow::Result<StoreLocation> {
        if !load.skip_default_files {
            return Ok(location.clone());
        }
        cordon_gate::locate_for_protection(load, self.store.as_deref()).map_err(|e| {
            Exit::new(
                Code::Invalid,
                cordon_policy::terminal::sanitize_for_terminal(&e.to_string()),
            )
            .into()
        })
    }

    /// The remembered rules, with the store connection they were read from, to hand to
    /// the gate ([`Remembered::gate`]) so that one process opens the store once.
    pub fn remembered(&self, load: &LoadOptions) -> anyhow::Result<Remembered> {
        let location = self.location(load)?;
        Ok(remembered_at(location))
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

/// After a one-shot surface answered: ship what its audit log holds for the fleet's
/// shared store (nothing without one), best effort. A failure leaves the records queued
/// in the log for the next `cordon serve` or console on this machine.
pub fn ship_after_answer(gate: &Gate, reached: bool) {
    if !reached {
        return;
    }
    let (Some(shared), Some(log), Ok(local)) =
        (gate.shared_store(), gate.audit_path(), gate.store_path())
    else {
        return;
    };
    let _ = cordon_export::Shipper::new(&log, &local, std::sync::Arc::new(shared.clone())).ship();
}

/// Where the stores are for a command that loads no policy of its own (`approvals`,
/// `sessions`, `mcp`, the console): `[store]` from the user and managed files (HOME and
/// XDG_CONFIG_HOME from the environment), through the same resolver as every surface.
pub fn locate_store(local: Option<&std::path::Path>) -> anyhow::Result<StoreLocation> {
    let opts = PolicyArgs::default().options()?;
    ApprovalArgs {
        store: local.map(std::path::Path::to_path_buf),
        ..Default::default()
    }
    .location(&opts)
}

/// Load the policy `opts` describe; config errors carry file:line:column and `code`.
pub fn load(opts: &LoadOptions, code: Code) -> anyhow::Result<Policy> {
    Policy::load(opts, &RealFs).map_err(|e| Exit::new(code, format!("invalid config: {e}")).into())
}

/// The remembered rules in the shared store `location` names. A local file that does not
/// exist yet holds none; a store that cannot be read contributes none (said on stderr).
pub fn remembered_at(location: StoreLocation) -> Remembered {
    let none = |location: StoreLocation| Remembered {
        rules: Vec::new(),
        store: None,
        location,
    };
    if let StoreAt::File(path) = &*location.shared
        && !path.exists()
    {
        return none(location);
    }
    let read = match &*location.shared {
        StoreAt::File(_) => Store::open_at(&location.shared)
            .and_then(|s| s.rules().map(|rules| (rules, s)))
            .map_err(|e| e.to_string()),
        _ => shared_rules(&location),
    };
    match read {
        Ok((rules, store)) => Remembered {
            rules: rules.into_iter().map(|r| r.rule).collect(),
            store: Some(store),
            location,
        },
        Err(e) => {
            eprintln!(
                "cordon: remembered rules not loaded: {}",
                cordon_policy::terminal::sanitize_for_terminal(&e)
            );
            none(location)
        }
    }
}

/// How long a one-shot surface waits for a shared store's remembered rules before it
/// decides without them (fewer allows, said on stderr): a decision that needs only the
/// policy must not wait for a database that hangs.
pub const SHARED_RULES_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The remembered rules of a shared store, read in a thread of its own and waited for at
/// most [`SHARED_RULES_WAIT`].
fn shared_rules(location: &StoreLocation) -> Result<(Vec<RememberedRule>, Store), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let at = std::sync::Arc::clone(&location.shared);
    std::thread::Builder::new()
        .name("cordon-rules".into())
        .spawn(move || {
            let read = Store::open_at(&at).and_then(|s| s.rules().map(|rules| (rules, s)));
            let _ = tx.send(read.map_err(|e| e.to_string()));
        })
        .map_err(|e| format!("cannot start a thread to read them: {e}"))?;
    rx.recv_timeout(SHARED_RULES_WAIT).unwrap_or_else(|_| {
        Err(format!(
            "the shared store did not answer within {} s",
            SHARED_RULES_WAIT.as_secs()
        ))
    })
}

/// Remembered rules as read from the approval store, the open connection they came
/// from, and where the stores are.
pub struct Remembered {
    /// The rules, as text (loaded as allow rules of the `remembered` layer).
    pub rules: Vec<String>,
    store: Option<Store>,
    /// Where the stores are.
    pub location: StoreLocation,
}

impl Remembered {
    /// Whether the store answered when the rules were read (a shared store that did not
    /// is not asked again after the answer: a one-shot surface exits without waiting).
    pub fn reached(&self) -> bool {
        self.store.is_some()
    }

    /// `gate`, keeping its shared state where the location says and using the
    /// connection the rules were read from (when there was one).
    pub fn gate(self, gate: Gate) -> Gate {
        let gate = gate.with_location(&self.location);
        match self.store {
            Some(store) => gate.with_store(store),
            None => gate,
        }
    }
}
