//! Turning command-line flags and the environment into a loaded policy (shared by every
//! subcommand that judges something).

use crate::exit::{Exit, INVALID};
use cordon_policy::{LoadOptions, Mode, Policy, RealFs};
use std::path::PathBuf;

/// Flags that choose the policy.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PolicyArgs {
    /// An extra config file (the flags layer; repeatable, later files rank lower).
    #[arg(long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// The permission mode: default, accept-edits, plan, bypass or dont-ask.
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Ignore the managed, user and project config files (only `--config` files apply).
    #[arg(long)]
    pub isolated: bool,
}

impl PolicyArgs {
    /// The workspace: the flag, else the current directory, made absolute.
    pub fn workspace(&self) -> anyhow::Result<PathBuf> {
        let cwd = std::env::current_dir()
            .map_err(|e| Exit::new(INVALID, format!("cannot read the current directory: {e}")))?;
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
            .ok_or_else(|| Exit::new(INVALID, "HOME is not set; set it to your home directory"))?;
        if !home.is_absolute() {
            return Err(Exit::new(
                INVALID,
                format!("HOME must be an absolute path, got `{}`", home.display()),
            )
            .into());
        }
        let mode = match &self.mode {
            None => None,
            Some(m) => Some(m.parse::<Mode>().map_err(|e| Exit::new(INVALID, e))?),
        };
        Ok(LoadOptions {
            workspace: self.workspace()?,
            home,
            xdg_config_home: std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from),
            config_files: self.config.clone(),
            mode,
            skip_default_files: self.isolated,
            ..Default::default()
        })
    }

    /// Load the policy these flags describe, with rules remembered in the approval store;
    /// config errors exit 2 with file:line:column.
    pub fn load_with(&self, remembered_rules: Vec<String>) -> anyhow::Result<Policy> {
        let mut opts = self.options()?;
        opts.remembered_rules = remembered_rules;
        Policy::load(&opts, &RealFs)
            .map_err(|e| Exit::new(INVALID, format!("invalid config: {e}")).into())
    }
}
