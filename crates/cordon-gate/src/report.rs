//! Outcomes as the verdict JSON every surface prints: the one place that builds it, so
//! that `cordon check` and `cordon serve` can never say different things about one call.
//!
//! The object is the policy's verdict (`decision`, `reason`, `source`, `findings`,
//! `contained`) plus what the gate added: `outcome`, `pending` for a pending approval,
//! `fixes` for a refusal, and `policy_version`, the fingerprint of the configuration that
//! decided, and `updated_input` (with `updated_cwd`) when a preset or a human's edit
//! changed the call, which the caller must then run instead. Fields may be added, never
//! removed (the README's contract).

use crate::flow::{Gate, Outcome};
use cordon_policy::Request;
use serde_json::{Value, json};

impl Gate {
    /// The verdict JSON of `outcome` for the call `asked` (the request as the harness
    /// sent it), as `cordon check` prints it.
    pub fn report(&self, asked: &Request, outcome: &Outcome) -> Value {
        let d = outcome.decided();
        // A verdict is plain data (strings, enums, vectors); serializing it cannot fail,
        // and if it ever did the object below still says what was decided.
        let mut json = serde_json::to_value(&d.verdict).unwrap_or_else(
            |_| json!({"decision": d.verdict.decision.as_str(), "reason": d.verdict.reason}),
        );
        json["outcome"] = json!(outcome.name());
        json["policy_version"] = json!(self.policy().version());
        if let Some(id) = d.pending {
            json["pending"] = json!(id);
        }
        // A preset or a human's edit changed the call: the caller must run this one.
        if d.request.input != asked.input || d.request.cwd != asked.cwd {
            json["updated_input"] = Value::Object(d.request.input.clone());
            if let Some(cwd) = &d.request.cwd {
                json["updated_cwd"] = json!(cwd);
            }
        }
        if let Outcome::Refused(r) = outcome {
            json["fixes"] = json!(r.fixes.iter().map(|f| f.to_string()).collect::<Vec<_>>());
        }
        json
    }
}
