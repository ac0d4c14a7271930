//! `cordon mcp`: the pinned identities of MCP servers, and approving their changes.

use crate::exit::{Code, Exit};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use cordon_store::Store;
use std::path::PathBuf;

/// `cordon mcp …`.
#[derive(clap::Subcommand)]
pub enum McpCommand {
    /// List pinned servers, their tools, and changes waiting for approval.
    Pins(StoreArg),
    /// Approve what the gateway saw change for a server (every change, or the named tools).
    Approve {
        #[command(flatten)]
        store: StoreArg,
        /// The server's name.
        name: String,
        /// Only these tools (default: every changed tool and a changed command).
        tools: Vec<String>,
    },
    /// Forget a server's pins: its next run is pinned on first use again.
    Forget {
        #[command(flatten)]
        store: StoreArg,
        /// The server's name.
        name: String,
    },
}

/// `--store`.
#[derive(clap::Args)]
pub struct StoreArg {
    /// The approval store (default: the one in cordon's state directory).
    #[arg(long, value_name = "FILE")]
    store: Option<PathBuf>,
}

impl StoreArg {
    fn open(&self) -> anyhow::Result<Store> {
        // MCP pins are shared state: `[store]`'s database when configured.
        let location = crate::setup::locate_store(self.store.as_deref())?;
        Store::open_at(&location.shared)
            .map_err(|e| Exit::new(Code::Internal, e.to_string()).into())
    }
}

/// Run `cordon mcp …`.
pub fn run(c: McpCommand) -> anyhow::Result<u8> {
    match c {
        McpCommand::Pins(s) => {
            let servers = s.open()?.mcp_servers()?;
            if servers.is_empty() {
                println!("no MCP server is pinned");
            }
            for p in servers {
                println!(
                    "{}  {}",
                    clean(&p.server),
                    clean(&cordon_store::format_time(p.command.at))
                );
                println!("  command: {}", clean(&p.command.command));
                if let Some(c) = &p.seen_command {
                    println!("  command CHANGED to: {}", clean(&c.command));
                }
                for t in p.tools.keys() {
                    let mark = if p.seen_tools.contains_key(t) {
                        "changed, waiting for approval"
                    } else {
                        "approved"
                    };
                    println!("  tool {}: {mark}", clean(t));
                }
                for t in p.seen_tools.keys().filter(|t| !p.tools.contains_key(*t)) {
                    println!("  tool {}: added, waiting for approval", clean(t));
                }
            }
            Ok(0)
        }
        McpCommand::Approve { store, name, tools } => {
            let s = store.open()?;
            if s.mcp_pins(&name)?.is_none() {
                return Err(Exit::new(
                    Code::Invalid,
                    format!(
                        "no MCP server `{}` is pinned (see `cordon mcp pins`)",
                        clean(&name)
                    ),
                )
                .into());
            }
            let only = (!tools.is_empty()).then_some(tools.as_slice());
            let a = s.mcp_approve(&name, only)?;
            if !a.command && a.tools.is_empty() {
                println!("nothing of `{}` was waiting for approval", clean(&name));
            }
            if a.command {
                println!("approved the new command of `{}`", clean(&name));
            }
            for t in a.tools {
                println!("approved tool `{}` of `{}`", clean(&t), clean(&name));
            }
            Ok(0)
        }
        McpCommand::Forget { store, name } => {
            if store.open()?.mcp_forget(&name)? {
                println!("forgot the pins of `{}`", clean(&name));
                Ok(0)
            } else {
                Err(Exit::new(
                    Code::Invalid,
                    format!("no MCP server `{}` is pinned", clean(&name)),
                )
                .into())
            }
        }
    }
}
