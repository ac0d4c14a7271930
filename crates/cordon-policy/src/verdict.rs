//! The verdict: what was decided, why, by which step and rule, and what analysis saw.
//!
//! The JSON shape (`decision`, `reason`, `source`, `findings`) is a stable contract: fields
//! may be added, never removed.

use serde::Serialize;
use std::borrow::Cow;
use std::path::PathBuf;

/// The three possible answers, ordered from least to most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The call may proceed.
    Allow,
    /// A human must approve the call first.
    Ask,
    /// The call must not proceed.
    Deny,
}

impl Decision {
    /// The word used in config files and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Decision {
    type Err = crate::errors::ParseDecisionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(Decision::Allow),
            "ask" => Ok(Decision::Ask),
            "deny" => Ok(Decision::Deny),
            _ => Err(crate::errors::ParseDecisionError::new(s)),
        }
    }
}

/// The step of the evaluation order that decided (the order is part of the policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Step {
    /// 1: the request or config was malformed.
    Validate,
    /// 2: a non-disableable guard.
    Guard,
    /// 3: a deny rule.
    DenyRule,
    /// 4: an ask rule.
    AskRule,
    /// 5: an operation the analysis cannot see through.
    Opaque,
    /// 6: the permission mode.
    Mode,
    /// 7: an allow rule.
    AllowRule,
    /// 8: the configured default for the operation and location.
    Default,
    /// After the order: what the call's session already did (write-then-run, the rule
    /// of two) made it stricter.
    Session,
    /// After the order: an ask turned into deny because no human can be asked.
    NoHuman,
    /// After the order: an ask answered by a human or an existing approval.
    Approval,
}

impl Step {
    /// Stable short name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Validate => "validate",
            Step::Guard => "guard",
            Step::DenyRule => "deny-rule",
            Step::AskRule => "ask-rule",
            Step::Opaque => "opaque",
            Step::Mode => "mode",
            Step::AllowRule => "allow-rule",
            Step::Default => "default",
            Step::Session => "session",
            Step::NoHuman => "no-human",
            Step::Approval => "approval",
        }
    }
}

/// Which step and which rule decided, with the config file and position where one applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// The deciding step.
    pub step: Step,
    /// The rule, guard or default that applied, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<Cow<'static, str>>,
    /// The config file the rule came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// 1-based line in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Source {
    /// A source with a step and a rule but no file.
    pub fn new(step: Step, rule: impl Into<Cow<'static, str>>) -> Self {
        Source {
            step,
            rule: Some(rule.into()),
            file: None,
            line: None,
            column: None,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.step.as_str())?;
        if let Some(r) = &self.rule {
            write!(f, " `{r}`")?;
        }
        if let Some(file) = &self.file {
            write!(f, " ({}", file.display())?;
            if let (Some(l), Some(c)) = (self.line, self.column) {
                write!(f, ":{l}:{c}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// One operation the call performs, and how it was judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The operation (`read`, `write`, `delete`, `list`, `run`, `exec`, `network`, `search`,
    /// `mcp`, `opaque` in JSON).
    pub op: crate::ops::OpKind,
    /// What it acts on: a path, an origin, a program, a server/tool.
    pub target: String,
    /// The resolved path, when it differs from the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// Inside or outside the workspace, when that applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<crate::paths::Location>,
    /// The decision for this operation alone.
    pub decision: Decision,
    /// The step and rule that decided it.
    pub source: Source,
    /// One sentence on what this operation is and why it was judged so.
    pub reason: String,
    /// The sub-command this operation came from, for shell calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// The answer for one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// allow, ask or deny: the most restrictive over the call's operations.
    pub decision: Decision,
    /// One human sentence.
    pub reason: String,
    /// The step and rule behind the decision.
    pub source: Source,
    /// Every operation and how it was judged.
    pub findings: Vec<Finding>,
    /// Whether the call was judged as one that runs contained, so that what containment
    /// enforces was decided by the `[contained]` table.
    pub contained: bool,
    /// The evaluation trail (printed by `--explain`; not part of the JSON).
    #[serde(skip)]
    pub trail: Vec<String>,
}

impl Verdict {
    /// A verdict that decides without examining operations (validation failures).
    pub fn simple(decision: Decision, source: Source, reason: impl Into<String>) -> Self {
        Verdict {
            decision,
            reason: reason.into(),
            source,
            findings: Vec::new(),
            contained: false,
            trail: Vec::new(),
        }
    }
}
