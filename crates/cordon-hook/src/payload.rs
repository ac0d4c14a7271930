//! Reading a harness's hook payload (stdin JSON) into one typed [`Call`].
//!
//! Owns the field names of each harness's protocol and nothing else. It must never guess:
//! a missing field, a field of the wrong type, an event it does not know or a tool input
//! cordon's adapters reject is a [`PayloadError`], which the caller turns into a block.

use crate::Harness;
use cordon_gate::ToolResult;
use cordon_policy::Request;
use cordon_policy::request::MAX_REQUEST_BYTES;
use serde_json::{Map, Value};

/// Largest payload read from the harness, in bytes (the request limit of `cordon check`).
pub const MAX_PAYLOAD_BYTES: usize = MAX_REQUEST_BYTES;

/// Why a payload cannot be judged (every one blocks the call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadError(pub String);

impl std::fmt::Display for PayloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PayloadError {}

fn err<T>(msg: impl Into<String>) -> Result<T, PayloadError> {
    Err(PayloadError(msg.into()))
}

/// The hook events cordon answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Before a tool runs (Claude Code and Codex `PreToolUse`, Gemini CLI `BeforeTool`).
    PreTool,
    /// The harness is about to ask its human (Claude Code and Codex `PermissionRequest`).
    PermissionRequest,
    /// After a tool ran (Claude Code and Codex `PostToolUse`, Gemini CLI `AfterTool`).
    PostTool,
}

impl Event {
    /// The event's name in `harness`'s protocol.
    pub fn wire_name(self, harness: Harness) -> &'static str {
        match (self, harness) {
            (Event::PreTool, Harness::Gemini) => "BeforeTool",
            (Event::PostTool, Harness::Gemini) => "AfterTool",
            (Event::PreTool, _) => "PreToolUse",
            (Event::PermissionRequest, _) => "PermissionRequest",
            (Event::PostTool, _) => "PostToolUse",
        }
    }
}

/// The harness's permission mode, as it reported it (`permission_mode`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HarnessMode {
    /// `default`.
    Default,
    /// `acceptEdits`.
    AcceptEdits,
    /// `plan`.
    Plan,
    /// `dontAsk`.
    DontAsk,
    /// `bypassPermissions`.
    BypassPermissions,
    /// A mode cordon does not know (it narrows nothing and widens nothing).
    Other(String),
}

impl HarnessMode {
    fn parse(s: &str) -> HarnessMode {
        match s {
            "default" => HarnessMode::Default,
            "acceptEdits" => HarnessMode::AcceptEdits,
            "plan" => HarnessMode::Plan,
            "dontAsk" => HarnessMode::DontAsk,
            "bypassPermissions" => HarnessMode::BypassPermissions,
            other => HarnessMode::Other(other.to_string()),
        }
    }
}

/// One hook call, read and validated.
#[derive(Debug, Clone)]
pub struct Call {
    /// The harness that sent it.
    pub harness: Harness,
    /// The event.
    pub event: Event,
    /// The tool call as cordon's request (tool, input, cwd, session, operation id).
    pub request: Request,
    /// The harness's permission mode, when it reports one.
    pub mode: Option<HarnessMode>,
    /// What the tool did (post-tool events only).
    pub result: Option<ToolResult>,
    /// Whether `request.operation_id` was made up by cordon because the harness sends
    /// no id of its own (Gemini CLI).
    pub minted_id: bool,
}

impl Call {
    /// The working directory the harness reported (absolute; the default workspace).
    pub fn cwd(&self) -> Option<&std::path::Path> {
        self.request.cwd.as_deref()
    }
}

/// Read one payload of `harness` from raw stdin bytes.
pub fn parse(harness: Harness, bytes: &[u8]) -> Result<Call, PayloadError> {
    if bytes.len() > MAX_PAYLOAD_BYTES {
        return err(format!(
            "the hook payload is larger than the {MAX_PAYLOAD_BYTES}-byte limit"
        ));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return err("the hook payload is empty (expected the harness's JSON on stdin)");
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| PayloadError("the hook payload is not valid UTF-8".into()))?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| PayloadError(format!("the hook payload is not valid JSON: {e}")))?;
    let Value::Object(obj) = v else {
        return err("the hook payload must be a JSON object");
    };
    let f = Fields(&obj);
    let event_name = f.string("hook_event_name")?;
    let event = match (harness, event_name.as_str()) {
        (Harness::Gemini, "BeforeTool") => Event::PreTool,
        (Harness::Gemini, "AfterTool") => Event::PostTool,
        (Harness::ClaudeCode | Harness::Codex, "PreToolUse") => Event::PreTool,
        (Harness::ClaudeCode | Harness::Codex, "PermissionRequest") => Event::PermissionRequest,
        (Harness::ClaudeCode | Harness::Codex, "PostToolUse") => Event::PostTool,
        (_, other) => {
            return err(format!(
                "`{other}` is not a tool event cordon answers for {}: configure the hook for {} only",
                harness.name(),
                harness.events().join(", ")
            ));
        }
    };
    let session = f.string("session_id")?;
    let cwd = f.string("cwd")?;
    if !cwd.starts_with('/') {
        return err(format!("`cwd` must be an absolute path, got `{cwd}`"));
    }
    let mode = f
        .opt_string("permission_mode")?
        .map(|m| HarnessMode::parse(&m));
    let (tool, input) = tool_call(harness, &f)?;
    let (operation_id, minted_id) = match (harness, event) {
        (Harness::Gemini, Event::PreTool) => (Some(mint_id()), true),
        (Harness::Gemini, _) => (None, false),
        // The pre-tool event already permitted (and claimed) this id; the permission
        // request for the same call only ever denies, so it claims nothing.
        (_, Event::PermissionRequest) => (None, false),
        _ => (Some(f.string("tool_use_id")?), false),
    };
    let mut req = serde_json::json!({
        "tool": tool,
        "input": input,
        "cwd": cwd,
        "session": session,
    });
    if let Some(id) = &operation_id {
        req["operation_id"] = Value::String(id.clone());
    }
    if let Some(agent) = f.opt_string("agent_id")? {
        req["agent"] = Value::String(agent);
    }
    let request = Request::from_value(req)
        .map_err(|e| PayloadError(format!("the tool call cannot be judged: {e}")))?;
    let result = match event {
        Event::PostTool => Some(tool_result(harness, obj.get("tool_response"))?),
        _ => None,
    };
    Ok(Call {
        harness,
        event,
        request,
        mode,
        result,
        minted_id,
    })
}

/// The tool name and input as cordon's adapters know them.
fn tool_call(
    harness: Harness,
    f: &Fields<'_>,
) -> Result<(String, Map<String, Value>), PayloadError> {
    let name = f.string("tool_name")?;
    if name.is_empty() {
        return err("`tool_name` is empty");
    }
    let input = match f.0.get("tool_input") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return err("`tool_input` must be a JSON object"),
        None => return err("the hook payload has no `tool_input`"),
    };
    // Gemini CLI names MCP tools `mcp_SERVER_TOOL`, which cannot be split reliably; its
    // `mcp_context` names both halves.
    if harness == Harness::Gemini
        && let Some(ctx) = f.0.get("mcp_context").filter(|v| !v.is_null())
    {
        let part = |k: &str| match ctx.get(k) {
            Some(Value::String(s)) if !s.is_empty() && !s.contains("__") => Ok(s.clone()),
            _ => err(format!(
                "`mcp_context.{k}` must be a non-empty string without `__`"
            )),
        };
        return Ok((
            format!("mcp__{}__{}", part("server_name")?, part("tool_name")?),
            input,
        ));
    }
    Ok((name, input))
}

/// The result a post-tool event reports.
fn tool_result(harness: Harness, response: Option<&Value>) -> Result<ToolResult, PayloadError> {
    let Some(response) = response else {
        return err("the hook payload has no `tool_response`");
    };
    let mut result = ToolResult::default();
    let output = match (harness, response) {
        (_, Value::String(s)) => s.clone(),
        (Harness::Gemini, Value::Object(m)) => {
            result.ok = Some(m.get("error").is_none_or(Value::is_null));
            match m.get("llmContent") {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            }
        }
        (_, Value::Object(m)) => {
            // Claude Code's Bash reports stdout/stderr/interrupted; Codex reports text.
            if let Some(Value::Number(n)) = m.get("exit_code").or_else(|| m.get("exitCode")) {
                result.exit_status = n.as_i64().and_then(|n| i32::try_from(n).ok());
            }
            if let Some(Value::Bool(b)) = m.get("success") {
                result.ok = Some(*b);
            }
            if let Some(Value::Bool(true)) = m.get("interrupted") {
                result.ok = Some(false);
            }
            let mut out = String::new();
            for k in ["stdout", "stderr", "output", "content"] {
                if let Some(Value::String(s)) = m.get(k) {
                    out.push_str(s);
                }
            }
            if out.is_empty() {
                response.to_string()
            } else {
                out
            }
        }
        (_, other) => other.to_string(),
    };
    Ok(result.with_output(&output))
}

/// An operation id for a harness that sends none: random, so that the hook's decision
/// record and a contained run's records share it and nothing else does.
fn mint_id() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    // The kernel's random device, not a path a run or a project can plant.
    #[allow(clippy::disallowed_methods)]
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No /dev/urandom: time and pid still make the id unique on this machine.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let h = blake3::hash(format!("{now}:{}", std::process::id()).as_bytes());
        bytes.copy_from_slice(&h.as_bytes()[..16]);
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("cordon-{hex}")
}

struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn opt_string(&self, k: &str) -> Result<Option<String>, PayloadError> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => err(format!("`{k}` must be a string")),
        }
    }

    fn string(&self, k: &str) -> Result<String, PayloadError> {
        self.opt_string(k)?
            .ok_or_else(|| PayloadError(format!("the hook payload has no `{k}`")))
    }
}
