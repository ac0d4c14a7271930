//! The gateway's view of the server's tools, checked against the pins.
//!
//! The gateway lists the server's tools itself once the session is initialized and
//! again whenever the server says its list changed, so that every `tools/call` is judged
//! against the definitions the server currently publishes, whether or not the client
//! listed them. The first list of a server never seen before is pinned on first use
//! (with a notice on stderr and an audit record); later lists are compared with the
//! pins. A changed or added tool is withheld from the client's lists and its calls are
//! asked about, until `cordon mcp approve NAME` approves what was seen.

use crate::gateway::Shared;
use crate::pin::{self, Comparison};
use cordon_store::{AuditRecord, Phase, Store, ToolPin};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

/// How long a call or a client's list waits for the gateway's own list.
const VIEW_WAIT: Duration = Duration::from_secs(30);

/// Where a tool stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Its definition is the approved one.
    Approved,
    /// It changed, was added, or cannot be checked: calls are asked about, with this
    /// reason.
    Changed(String),
}

/// The current tool list, once known.
#[derive(Debug, Default)]
pub struct View {
    ready: bool,
    tools: BTreeMap<String, Status>,
    /// Why every tool must be asked about (the pins cannot be read, no list).
    all: Option<String>,
    noticed: HashSet<String>,
}

impl Shared {
    /// Where `tool` stands, waiting (bounded) for the gateway's own list.
    pub(crate) fn tool_status(&self, tool: &str) -> Status {
        let Ok(guard) = self.view.lock() else {
            return Status::Changed("the gateway's state is poisoned".into());
        };
        let Ok((view, _)) = self
            .view_changed
            .wait_timeout_while(guard, VIEW_WAIT, |v| !v.ready)
        else {
            return Status::Changed("the gateway's state is poisoned".into());
        };
        if !view.ready {
            return Status::Changed(
                "the server's tool list was not available in time, so the tool could not be checked against its approval".into(),
            );
        }
        if let Some(why) = &view.all {
            return Status::Changed(why.clone());
        }
        view.tools.get(tool).cloned().unwrap_or_else(|| {
            Status::Changed(format!(
                "tool `{tool}` is not in the server's tool list, so it was never approved"
            ))
        })
    }

    /// Take a whole tool list (or the reason there is none) as the current view.
    pub(crate) fn apply_full_list(&self, tools: &[Value], none: Option<&str>) {
        let statuses = match none {
            Some(why) => Err(why.to_string()),
            None => self.check(tools, true),
        };
        let Ok(mut view) = self.view.lock() else {
            return;
        };
        view.ready = true;
        match statuses {
            Ok(s) => {
                view.all = None;
                view.tools = s;
            }
            Err(why) => {
                view.all = Some(why);
                view.tools.clear();
            }
        }
        self.view_changed.notify_all();
    }

    /// Check tools against the pins (pinning them first if the server was never seen
    /// and `whole` says this is its whole list); record what changed.
    fn check(&self, tools: &[Value], whole: bool) -> Result<BTreeMap<String, Status>, String> {
        let pins: Vec<ToolPin> = tools.iter().filter_map(pin::tool_pin).collect();
        // Pins are shared state: the gate opens them where `[store]` says.
        let store = self
            .gate
            .open_store()
            .map_err(|e| format!("the MCP pins cannot be read ({e})"))?;
        let read = |s: &Store| {
            s.mcp_pins(&self.name)
                .map_err(|e| format!("the MCP pins cannot be read ({e})"))
        };
        let mut current = read(&store)?;
        if current.is_none() && whole {
            let pinned = store
                .mcp_pin_first(&self.name, &self.identity, &pins)
                .map_err(|e| format!("the MCP server could not be pinned ({e})"))?;
            if pinned {
                self.pinned_notice(&pins);
                return Ok(pins
                    .iter()
                    .map(|t| (t.name.clone(), Status::Approved))
                    .collect());
            }
            current = read(&store)?;
        }
        let Some(current) = current else {
            return Err(format!(
                "MCP server `{}` has not been pinned yet (its tool list is pinned when the gateway first reads it)",
                self.name
            ));
        };
        let c: Comparison = pin::compare(&current, &self.identity, &pins);
        if !c.seen.is_empty() || c.seen_command.is_some() || current.seen_command.is_some() {
            // Best effort: the call is asked about whether or not this is recorded.
            if let Err(e) = store.mcp_note_seen(&self.name, c.seen_command.as_deref(), &c.seen) {
                eprintln!(
                    "cordon: MCP server `{}`: the changed tools could not be recorded ({e})",
                    self.name
                );
            }
        }
        self.change_notices(&c);
        let mut out: BTreeMap<String, Status> = c
            .clean
            .iter()
            .map(|n| (n.clone(), Status::Approved))
            .collect();
        for (n, ch) in c.changed {
            out.insert(n, Status::Changed(ch.reason));
        }
        Ok(out)
    }

    fn pinned_notice(&self, pins: &[ToolPin]) {
        let names: Vec<&str> = pins.iter().map(|t| t.name.as_str()).collect();
        eprintln!(
            "cordon: MCP server `{}` pinned on first use: its command and {} tools ({}). A later change to them is asked about; see `cordon mcp pins`.",
            self.name,
            pins.len(),
            names.join(", ")
        );
        let mut record = self.audit_record(
            &format!("mcp__{}", self.name),
            json!({"command": serde_json::from_str::<Value>(&self.identity).unwrap_or(Value::Null), "tools": names}),
        );
        record.reason = Some(format!(
            "MCP server `{}` pinned on first use with {} tools",
            self.name,
            pins.len()
        ));
        record.answer = Some("pinned-on-first-use".into());
        if let Err(e) = self.gate.append(&record) {
            eprintln!("cordon: {e}");
        }
    }

    fn change_notices(&self, c: &Comparison) {
        let Ok(mut view) = self.view.lock() else {
            return;
        };
        for (name, ch) in &c.changed {
            if view.noticed.insert(format!("{name}\0{}", ch.reason)) {
                eprintln!(
                    "cordon: MCP server `{}`: {}. The tool is withheld from the tool list and its calls ask for approval until `cordon mcp approve {}`.",
                    self.name, ch.reason, self.name
                );
            }
        }
    }

    /// A notice about this server for the audit log (filled by the caller).
    fn audit_record(&self, tool: &str, input: Value) -> AuditRecord {
        let mut r = self.gate.bare_record(Phase::Notice, tool, input);
        r.session = Some(crate::call::session(self));
        r
    }
}

/// Withhold changed tools from a client's `tools/list` result.
pub(crate) fn filter_client_list(s: &Shared, obj: &mut Map<String, Value>) {
    let Some(tools) = obj
        .get_mut("result")
        .and_then(|r| r.get_mut("tools"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    // Judge this page against the pins (after the gateway's own list, which may be
    // the first one and pin the server).
    let ready = s
        .view
        .lock()
        .ok()
        .and_then(|g| {
            s.view_changed
                .wait_timeout_while(g, VIEW_WAIT, |v| !v.ready)
                .ok()
        })
        .map(|(v, _)| v.ready)
        .unwrap_or(false);
    let statuses = if ready {
        s.check(tools, false)
    } else {
        Err("the server's tool list was not available in time".into())
    };
    match statuses {
        Ok(st) => {
            tools.retain(|t| {
                let name = t.get("name").and_then(Value::as_str).unwrap_or("");
                st.get(name) == Some(&Status::Approved)
            });
            if let Ok(mut view) = s.view.lock() {
                for (n, v) in st {
                    view.tools.insert(n, v);
                }
            }
        }
        Err(why) => {
            eprintln!(
                "cordon: MCP server `{}`: tools withheld from the list: {why}",
                s.name
            );
            tools.clear();
        }
    }
}
