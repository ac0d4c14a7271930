//! cordon-mcp: the MCP gateway. It sits between an MCP client and a real MCP server on
//! stdio, forwards messages under ids of its own, and judges every `tools/call`,
//! `resources/read`, `prompts/get`, `completion/complete` and the server's
//! `sampling/createMessage` through cordon's gate.
//!
//! What it owns: the stdio framing ([`frame`]), the forwarding and the messages it
//! stops (`gateway`), the id matcher ([`ids`]), the bounded paging of its own tool list
//! ([`pages`]), the judgement of calls (`call`), the
//! server's pinned identity ([`pin`], stored by `cordon-store`) and the view of its
//! current tools (`view`), elicitation as a way to ask the human (`elicit`), and the
//! walker that labels and redacts every message of an untrusted server ([`trust`]). It decides nothing itself: the policy decides and the gate
//! runs the approval flow. It must never forward a `tools/call` that the gate did not
//! permit, and never let a message it cannot read reach the server as a call.
//!
//! # Why plain JSON-RPC and not the Rust MCP SDK
//!
//! A gateway must be transparent: ids, protocol versions, capabilities, and methods it
//! does not know (sampling, roots, tasks, extensions of later revisions) must pass
//! unchanged, whichever revision the two ends negotiate. An SDK (`rmcp`) parses messages
//! into the types of the revision it was built for and answers on its own; using it
//! here would mean terminating the protocol on both sides and re-creating each message,
//! losing whatever the SDK does not model. So the gateway reads each line as a
//! `serde_json::Value`, replaces the `id` of every request with one of its own, looks
//! only at `method` and the parts of the messages it judges or labels, and writes the
//! rest back as it was. MCP's stdio transport is exactly that: newline-delimited JSON-RPC 2.0
//! messages in UTF-8 (specification, "Transports", revisions 2025-03-26 to 2025-11-25).
//!
//! # Pinning (trust on first use)
//!
//! The first time a server name is seen, its command and tool list are pinned
//! automatically, with a notice on stderr and an audit record: the user chose the
//! server when they configured the client to run it through the gateway, as with an SSH
//! host key. From then on a changed description, schema or command, or an added tool,
//! makes that tool ask: it is withheld from the lists the client receives (its new
//! description is text the model would read) and its calls are judged with an extra ask
//! rule, whose reason says what changed. `cordon mcp approve NAME` approves what was
//! seen; a removed tool simply disappears.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod call;
mod elicit;
pub mod frame;
mod gateway;
pub mod ids;
pub mod pages;
pub mod pin;
pub mod trust;
mod view;

use cordon_gate::Gate;
use std::io::{BufRead, Write};

pub use elicit::ANSWER_TIMEOUT;

/// How to run a gateway.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// The server's name: its tools are `mcp__NAME__TOOL` to the policy.
    pub name: String,
    /// The server's command as the user gave it (what is pinned).
    pub identity: Vec<String>,
    /// What to spawn: the same command, or `cordon exec … -- command` to contain it.
    pub spawn: Vec<String>,
    /// Ask on `/dev/tty` when the client cannot be asked.
    pub interactive: bool,
    /// The session the calls belong to (an agent's, so MCP calls count in its rule of
    /// two and its "allow for this session"); `None`: a session of this gateway run.
    pub session: Option<String>,
}

/// How a gateway run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// The client closed its end (the normal end of a session).
    ClientClosed,
    /// The server closed its output.
    ServerClosed,
    /// The server exited, with this status when it could be read.
    ServerExited(Option<std::process::ExitStatus>),
}

/// Why a gateway could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum GatewayError {
    /// The server name cannot be used.
    Name(String),
    /// The server could not be started.
    Spawn {
        /// The command.
        command: String,
        /// Why.
        why: String,
    },
    /// No random nonce for operation ids could be made.
    Random(String),
}

impl std::fmt::Display for GatewayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GatewayError::Name(why) => write!(f, "invalid MCP server name: {why}"),
            GatewayError::Spawn { command, why } => {
                write!(f, "the MCP server `{command}` could not be started: {why}")
            }
            GatewayError::Random(why) => write!(f, "no random nonce could be made: {why}"),
        }
    }
}

impl std::error::Error for GatewayError {}

/// Check a server name: letters, digits, `-` and `_`, without `__` (which separates the
/// server from the tool in `mcp__SERVER__TOOL`).
pub fn check_name(name: &str) -> Result<(), GatewayError> {
    if name.is_empty() || name.len() > 64 {
        return Err(GatewayError::Name(
            "it must be 1 to 64 characters long".into(),
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(GatewayError::Name(format!(
            "`{name}` may hold only letters, digits, `-` and `_`"
        )));
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err(GatewayError::Name(format!(
            "`{name}` must not contain `__` or start or end with `_` (tool names are mcp__NAME__TOOL)"
        )));
    }
    Ok(())
}

/// Run the gateway between `client_in`/`client_out` and the server `options` name, until
/// one of them ends. `gate` judges every call and writes the audit records (its surface
/// should be `mcp-gateway`).
pub fn run(
    gate: Gate,
    options: GatewayOptions,
    client_in: Box<dyn BufRead + Send>,
    client_out: Box<dyn Write + Send>,
) -> Result<Ended, GatewayError> {
    check_name(&options.name)?;
    gateway::run(gate, options, client_in, client_out)
}

/// A random hex nonce.
fn nonce() -> Result<String, GatewayError> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| GatewayError::Random(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// At most `max` bytes of `s`, cut at a character boundary.
fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}
