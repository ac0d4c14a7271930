//! Pinned MCP servers: the identity a human approved, and changes waiting for approval.
//!
//! An MCP server's tool descriptions are text the model reads, and a server can change
//! them after it was approved (a "rug pull"). The gateway records, per server name, the
//! command it runs and one hash per tool (over the tool's canonical definition), and
//! compares every later tool list with them. This module only keeps those records: the
//! hashes and canonical definitions are computed by the caller (`cordon-mcp`) and are
//! opaque strings here, and nothing in it decides whether a call may proceed.
//!
//! Two states per row: `approved` (what a human approved, or what was pinned on first
//! use) and `seen` (a changed or added definition, kept so that `cordon mcp approve` can
//! approve exactly what the gateway saw, without running the server again).

use std::collections::BTreeMap;
use std::time::SystemTime;

use crate::error::StoreError;
use crate::store::db::{Tx, args};
use crate::store::{Store, from_ms, now_ms};

/// One tool's definition as the gateway saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPin {
    /// The tool's name.
    pub name: String,
    /// The hash of its canonical definition.
    pub hash: String,
    /// Its canonical definition (JSON text), to explain a later change.
    pub definition: String,
}

/// A command (the server's argv as JSON text) and when it was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPin {
    /// The argv, as JSON text.
    pub command: String,
    /// When it was recorded.
    pub at: SystemTime,
}

/// Everything the store holds about one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPins {
    /// The server's name (`--name`).
    pub server: String,
    /// The approved command.
    pub command: CommandPin,
    /// A different command seen since, waiting for approval.
    pub seen_command: Option<CommandPin>,
    /// Approved tools by name.
    pub tools: BTreeMap<String, ToolPin>,
    /// Changed or added tools seen since, waiting for approval.
    pub seen_tools: BTreeMap<String, ToolPin>,
}

/// What [`Store::mcp_approve`] approved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinsApproved {
    /// Whether a changed command was approved.
    pub command: bool,
    /// The tools whose seen definitions were approved.
    pub tools: Vec<String>,
}

const APPROVED: &str = "approved";
const SEEN: &str = "seen";

impl Store {
    /// Everything recorded about `server`; `None` when it was never pinned.
    pub fn mcp_pins(&self, server: &str) -> Result<Option<ServerPins>, StoreError> {
        let command = |state: &str| -> Result<Option<CommandPin>, StoreError> {
            self.row(
                "SELECT command, at_ms FROM mcp_servers WHERE name = ?1 AND state = ?2",
                args![server, state],
            )?
            .map(|r| {
                Ok(CommandPin {
                    command: r.text(0)?,
                    at: from_ms(r.i64(1)?),
                })
            })
            .transpose()
        };
        let Some(approved) = command(APPROVED)? else {
            return Ok(None);
        };
        Ok(Some(ServerPins {
            server: server.to_string(),
            command: approved,
            seen_command: command(SEEN)?,
            tools: self.mcp_tools(server, APPROVED)?,
            seen_tools: self.mcp_tools(server, SEEN)?,
        }))
    }

    fn mcp_tools(
        &self,
        server: &str,
        state: &str,
    ) -> Result<BTreeMap<String, ToolPin>, StoreError> {
        let mut out = BTreeMap::new();
        for r in self.rows(
            "SELECT tool, hash, definition FROM mcp_tools WHERE server = ?1 AND state = ?2
             ORDER BY tool",
            args![server, state],
        )? {
            let t = ToolPin {
                name: r.text(0)?,
                hash: r.text(1)?,
                definition: r.text(2)?,
            };
            out.insert(t.name.clone(), t);
        }
        Ok(out)
    }

    /// Every pinned server, by name.
    pub fn mcp_servers(&self) -> Result<Vec<ServerPins>, StoreError> {
        let names = self
            .rows(
                "SELECT name FROM mcp_servers WHERE state = 'approved' ORDER BY name",
                args![],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for n in names {
            if let Some(p) = self.mcp_pins(&n)? {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// Pin `server` on first use: its command and tools become the approved identity.
    /// Returns false, changing nothing, when the server is already pinned (another
    /// gateway may have pinned it first; the caller must then compare against that).
    pub fn mcp_pin_first(
        &self,
        server: &str,
        command: &str,
        tools: &[ToolPin],
    ) -> Result<bool, StoreError> {
        if server.is_empty() {
            return Err(self.invalid("an MCP server pin needs a non-empty name"));
        }
        let tx = self.write()?;
        let exists = tx.row(
            "SELECT 1 FROM mcp_servers WHERE name = ?1 AND state = 'approved'",
            args![server],
        )?;
        if exists.is_some() {
            return Ok(false);
        }
        self.put_command(&tx, server, APPROVED, command)?;
        for t in tools {
            self.put_tool(&tx, server, APPROVED, t)?;
        }
        tx.commit()?;
        Ok(true)
    }

    /// Record a changed command (when `command` is given) and changed or added tools, as
    /// seen and waiting for approval. A seen definition equal to the approved one is
    /// dropped instead (the server changed back).
    pub fn mcp_note_seen(
        &self,
        server: &str,
        command: Option<&str>,
        tools: &[ToolPin],
    ) -> Result<(), StoreError> {
        let tx = self.write()?;
        match command {
            Some(c) => self.put_command(&tx, server, SEEN, c)?,
            None => {
                tx.exec(
                    "DELETE FROM mcp_servers WHERE name = ?1 AND state = 'seen'",
                    args![server],
                )?;
            }
        }
        for t in tools {
            self.put_tool(&tx, server, SEEN, t)?;
        }
        tx.commit()
    }

    /// Approve what was seen for `server`: the named tools, or with `None` everything
    /// (the command and every tool). Nothing seen means nothing approved.
    pub fn mcp_approve(
        &self,
        server: &str,
        tools: Option<&[String]>,
    ) -> Result<PinsApproved, StoreError> {
        let tx = self.write()?;
        let mut approved = PinsApproved::default();
        if tools.is_none() {
            let moved = tx.exec(
                "INSERT INTO mcp_servers (name, state, command, at_ms)
                 SELECT name, 'approved', command, ?2 FROM mcp_servers
                 WHERE name = ?1 AND state = 'seen'
                 ON CONFLICT (name, state) DO UPDATE SET command = excluded.command,
                     at_ms = excluded.at_ms",
                args![server, now_ms()],
            )?;
            tx.exec(
                "DELETE FROM mcp_servers WHERE name = ?1 AND state = 'seen'",
                args![server],
            )?;
            approved.command = moved > 0;
        }
        let seen = tx
            .rows(
                "SELECT tool FROM mcp_tools WHERE server = ?1 AND state = 'seen' ORDER BY tool",
                args![server],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect::<Result<Vec<_>, _>>()?;
        for tool in seen {
            if let Some(only) = tools
                && !only.contains(&tool)
            {
                continue;
            }
            tx.exec(
                "INSERT INTO mcp_tools (server, tool, state, hash, definition, at_ms)
                 SELECT server, tool, 'approved', hash, definition, ?3 FROM mcp_tools
                 WHERE server = ?1 AND tool = ?2 AND state = 'seen'
                 ON CONFLICT (server, tool, state) DO UPDATE SET hash = excluded.hash,
                     definition = excluded.definition, at_ms = excluded.at_ms",
                args![server, tool.as_str(), now_ms()],
            )?;
            tx.exec(
                "DELETE FROM mcp_tools WHERE server = ?1 AND tool = ?2 AND state = 'seen'",
                args![server, tool.as_str()],
            )?;
            approved.tools.push(tool);
        }
        tx.commit()?;
        Ok(approved)
    }

    /// Forget everything about `server` (its next run is pinned on first use again).
    /// Returns whether it was pinned.
    pub fn mcp_forget(&self, server: &str) -> Result<bool, StoreError> {
        let tx = self.write()?;
        let n = tx.exec("DELETE FROM mcp_servers WHERE name = ?1", args![server])?;
        tx.exec("DELETE FROM mcp_tools WHERE server = ?1", args![server])?;
        tx.commit()?;
        Ok(n > 0)
    }

    fn put_command(
        &self,
        tx: &Tx<'_>,
        server: &str,
        state: &str,
        command: &str,
    ) -> Result<(), StoreError> {
        tx.exec(
            "INSERT INTO mcp_servers (name, state, command, at_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (name, state) DO UPDATE SET command = excluded.command,
                 at_ms = excluded.at_ms",
            args![server, state, command, now_ms()],
        )?;
        Ok(())
    }

    fn put_tool(
        &self,
        tx: &Tx<'_>,
        server: &str,
        state: &str,
        t: &ToolPin,
    ) -> Result<(), StoreError> {
        if t.name.is_empty() || t.hash.is_empty() {
            return Err(self.invalid("a pinned MCP tool needs a name and a hash"));
        }
        if state == SEEN {
            let approved = tx
                .row(
                    "SELECT hash FROM mcp_tools WHERE server = ?1 AND tool = ?2 AND state = 'approved'",
                    args![server, &t.name],
                )?
                .map(|r| r.text(0))
                .transpose()?;
            if approved.as_deref() == Some(t.hash.as_str()) {
                tx.exec(
                    "DELETE FROM mcp_tools WHERE server = ?1 AND tool = ?2 AND state = 'seen'",
                    args![server, &t.name],
                )?;
                return Ok(());
            }
        }
        tx.exec(
            "INSERT INTO mcp_tools (server, tool, state, hash, definition, at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (server, tool, state) DO UPDATE SET hash = excluded.hash,
                 definition = excluded.definition, at_ms = excluded.at_ms",
            args![server, &t.name, state, &t.hash, &t.definition, now_ms()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, hash: &str) -> ToolPin {
        ToolPin {
            name: name.into(),
            hash: hash.into(),
            definition: format!("{{\"name\":\"{name}\"}}"),
        }
    }

    crate::both_backends! {
    fn pin_once_then_seen_then_approve(b) {
        let s = b.open();
        assert!(s.mcp_pins("srv").unwrap().is_none());
        assert!(
            s.mcp_pin_first("srv", "[\"a\"]", &[tool("t", "h1")])
                .unwrap()
        );
        assert!(
            !s.mcp_pin_first("srv", "[\"b\"]", &[tool("t", "h9")])
                .unwrap()
        );
        let p = s.mcp_pins("srv").unwrap().unwrap();
        assert_eq!(p.command.command, "[\"a\"]");
        assert_eq!(p.tools["t"].hash, "h1");

        s.mcp_note_seen("srv", Some("[\"b\"]"), &[tool("t", "h2"), tool("u", "h3")])
            .unwrap();
        let p = s.mcp_pins("srv").unwrap().unwrap();
        assert_eq!(p.seen_tools.len(), 2);
        assert_eq!(p.seen_command.unwrap().command, "[\"b\"]");

        // Approving one tool leaves the rest waiting.
        let a = s.mcp_approve("srv", Some(&["u".to_string()])).unwrap();
        assert_eq!(a.tools, vec!["u".to_string()]);
        assert!(!a.command);
        let p = s.mcp_pins("srv").unwrap().unwrap();
        assert_eq!(p.tools["u"].hash, "h3");
        assert_eq!(p.tools["t"].hash, "h1");

        let a = s.mcp_approve("srv", None).unwrap();
        assert!(a.command);
        assert_eq!(a.tools, vec!["t".to_string()]);
        let p = s.mcp_pins("srv").unwrap().unwrap();
        assert_eq!(p.tools["t"].hash, "h2");
        assert_eq!(p.command.command, "[\"b\"]");
        assert!(p.seen_tools.is_empty() && p.seen_command.is_none());
    }
    }

    crate::both_backends! {
    fn a_change_back_is_no_longer_waiting(b) {
        let s = b.open();
        s.mcp_pin_first("srv", "[]", &[tool("t", "h1")]).unwrap();
        s.mcp_note_seen("srv", None, &[tool("t", "h2")]).unwrap();
        s.mcp_note_seen("srv", None, &[tool("t", "h1")]).unwrap();
        assert!(s.mcp_pins("srv").unwrap().unwrap().seen_tools.is_empty());
        assert!(s.mcp_forget("srv").unwrap());
        assert!(s.mcp_pins("srv").unwrap().is_none());
        assert_eq!(s.mcp_servers().unwrap().len(), 0);
    }
    }
}
