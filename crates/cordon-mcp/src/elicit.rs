//! Asking the human through the MCP client: an approval as an `elicitation/create`
//! request (MCP 2025-06-18 onwards), for clients that declared the `elicitation`
//! capability.
//!
//! The question is a form with one required field, `decision`, whose enum is the
//! answers the approval flow offers (`allow-once`, `allow-session`, `always-allow`,
//! `deny`). Anything but an `accept` carrying one of them is a denial: a decline, a
//! cancel, an error, an unknown answer, or no answer within [`ANSWER_TIMEOUT`].

use crate::gateway::Shared;
use cordon_store::{Choice, PromptOutcome, Prompter, Question};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long the human has to answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// A [`Prompter`] that asks through the client.
pub(crate) struct Elicitor {
    pub(crate) shared: Arc<Shared>,
    pub(crate) tool: String,
    /// Why the call is asked beyond the policy's own reason (a changed definition).
    pub(crate) change: Option<String>,
}

/// The word an answer is offered under, for the answers a client can give in one word
/// (no rule to pick, no input to edit).
fn word(c: Choice) -> Option<&'static str> {
    match c {
        Choice::AllowOnce | Choice::AllowSession | Choice::AlwaysAllow | Choice::Deny => {
            Some(c.word())
        }
        Choice::AlwaysAllowOption(_) | Choice::Edit => None,
    }
}

impl Prompter for Elicitor {
    fn ask(&mut self, q: &Question<'_>) -> std::io::Result<PromptOutcome> {
        let c = q.context;
        let offered: Vec<(Choice, &str)> = q
            .choices
            .iter()
            .filter_map(|&ch| word(ch).map(|w| (ch, w)))
            .collect();
        // A tool's arguments; for a resource read judged as a file read or a fetch, the
        // whole input (the path or the URL).
        let input = c.request.get("input");
        let args = input
            .and_then(|i| i.get("arguments"))
            .or(input)
            .map(|a| a.to_string())
            .unwrap_or_else(|| "{}".into());
        let mut message = format!(
            "cordon: approve the call of tool `{}` on MCP server `{}`?\narguments: {}\nreason: {}",
            self.tool,
            self.shared.name,
            crate::cut(&args, 2000),
            c.reason
        );
        if let Some(change) = &self.change {
            message.push_str(&format!("\nchanged since approval: {change}"));
        }
        if let Some(rule) = &c.suggestion {
            message.push_str(&format!("\n`always-allow` saves the rule `{rule}`."));
        }
        let params = json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "decision": {
                        "type": "string",
                        "title": "Decision",
                        "description": "allow-once, allow-session (this gateway's run), always-allow, or deny",
                        "enum": offered.iter().map(|(_, w)| *w).collect::<Vec<_>>(),
                    }
                },
                "required": ["decision"]
            }
        });
        let response = self
            .shared
            .request_client("elicitation/create", params, ANSWER_TIMEOUT)
            .map_err(std::io::Error::other)?;
        let result = match response.get("result") {
            Some(r) => r,
            None => {
                let why = response
                    .get("error")
                    .map(Value::to_string)
                    .unwrap_or_else(|| "no result".into());
                return Err(std::io::Error::other(format!(
                    "the client answered the elicitation with an error: {why}"
                )));
            }
        };
        if result.get("action").and_then(Value::as_str) != Some("accept") {
            return Ok(PromptOutcome::Answered(Choice::Deny));
        }
        let answer = result
            .get("content")
            .and_then(|c| c.get("decision"))
            .and_then(Value::as_str)
            .unwrap_or("");
        Ok(PromptOutcome::Answered(
            offered
                .iter()
                .find(|(_, w)| *w == answer)
                .map(|(c, _)| *c)
                .unwrap_or(Choice::Deny),
        ))
    }
}
