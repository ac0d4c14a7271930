//! The surfaces cordon's gate serves, named in every audit record. Behaviour that differs by surface (what a fix may
//! suggest, how an operation id is claimed) branches on this enum, never on a name.

/// A surface of cordon: the way a request reached the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Surface {
    /// `cordon check`, one call.
    #[default]
    Check,
    /// `cordon exec`, which runs the command it judged.
    Exec,
    /// `cordon serve`, the long-lived service.
    Serve,
    /// `cordon hook claude-code`.
    HookClaudeCode,
    /// `cordon hook codex`.
    HookCodex,
    /// `cordon hook gemini`.
    HookGemini,
    /// `cordon mcp-gateway`.
    McpGateway,
    /// `cordon run-action`.
    RunAction,
    /// `cordon approvals`, judging an edited input.
    Approvals,
    /// The console (`cordon ui`), judging an edited input.
    Console,
}

impl Surface {
    /// The surface's name in audit records and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Check => "check",
            Self::Exec => "exec",
            Self::Serve => "serve",
            Self::HookClaudeCode => "hook-claude-code",
            Self::HookCodex => "hook-codex",
            Self::HookGemini => "hook-gemini",
            Self::McpGateway => "mcp-gateway",
            Self::RunAction => "run-action",
            Self::Approvals => "approvals",
            Self::Console => "ui",
        }
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Surface {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
