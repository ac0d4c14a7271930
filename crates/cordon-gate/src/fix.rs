//! What a refused call can do next: the narrow rule to add and where, another approval
//! policy, a pending approval, trusting the workspace. Only fixes that would change the
//! outcome are offered; a guard offers none.

use crate::flow::Decided;
use cordon_policy::{ApprovalPolicy, Policy, Step};
use std::path::PathBuf;

/// One way forward for a refused call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fix {
    /// A guard refused: nothing turns it off.
    Never,
    /// A deny rule refused; it would have to be changed where it is written.
    DenyRule {
        /// The rule as written.
        rule: String,
        /// Its file and line, when it came from one.
        at: Option<(PathBuf, usize)>,
    },
    /// The permission mode refused (`plan`).
    Mode(String),
    /// The project's allow rules were ignored because the workspace is not trusted.
    TrustWorkspace {
        /// The workspace.
        workspace: PathBuf,
        /// The user config file where `trusted_workspaces` goes.
        user_file: PathBuf,
        /// The project allow rules that would then apply.
        rules: Vec<String>,
    },
    /// This allow rule in this file allows exactly what was asked.
    AddRule {
        /// The rule.
        rule: String,
        /// The user config file.
        file: PathBuf,
    },
    /// `cordon exec --approval on-failure` runs it contained and asks only about what
    /// containment blocked.
    OnFailure,
    /// `--pending` records the ask; `cordon approvals approve ID` answers it.
    Pending,
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::Never => f.write_str(
                "nothing can allow it: a guard refused it, and no rule, mode, flag or approval turns a guard off",
            ),
            Fix::DenyRule { rule, at: Some((file, line)) } => write!(
                f,
                "the deny rule `{rule}` ({}:{line}) decided; change it there if it is wrong",
                file.display()
            ),
            Fix::DenyRule { rule, at: None } => {
                write!(f, "the deny rule `{rule}` decided; change it where it is set")
            }
            Fix::Mode(m) => write!(f, "the `{m}` mode refuses it; run with another --mode"),
            Fix::TrustWorkspace {
                workspace,
                user_file,
                rules,
            } => write!(
                f,
                "the project's allow rule{} {} {} ignored because the workspace is not trusted; to trust it, add `trusted_workspaces = [\"{}\"]` to {}",
                if rules.len() == 1 { "" } else { "s" },
                rules
                    .iter()
                    .map(|r| format!("`{r}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if rules.len() == 1 { "was" } else { "were" },
                workspace.display(),
                user_file.display()
            ),
            Fix::AddRule { rule, file } => write!(
                f,
                "to allow exactly this, add `allow = [\"{rule}\"]` under `[permissions]` in {}",
                file.display()
            ),
            Fix::OnFailure => f.write_str(
                "or run it with `--approval on-failure`: it runs contained, and only what containment blocks is asked about",
            ),
            Fix::Pending => f.write_str(
                "or pass `--pending` to record the ask, answer it with `cordon approvals approve ID`, and run again",
            ),
        }
    }
}

/// The fixes for a refusal, most specific first.
pub(crate) fn fixes(policy: &Policy, d: &Decided, surface: crate::Surface) -> Vec<Fix> {
    let source = &d.verdict.source;
    let rule = source.rule.as_deref().unwrap_or_default().to_string();
    match source.step {
        // A refused private address names its flag and config line in the reason.
        Step::Guard if rule.starts_with("network:") => return Vec::new(),
        Step::Guard | Step::Validate => return vec![Fix::Never],
        Step::DenyRule => {
            let at = source.file.clone().zip(source.line);
            return vec![Fix::DenyRule { rule, at }];
        }
        Step::Mode => return vec![Fix::Mode(rule)],
        _ => {}
    }
    let mut out = Vec::new();
    if !policy.ignored_allows().is_empty() {
        out.push(Fix::TrustWorkspace {
            workspace: policy.workspace().to_path_buf(),
            user_file: policy.user_file().to_path_buf(),
            rules: policy.ignored_allows().to_vec(),
        });
    }
    if let Some(rule) = policy.suggestion(&d.ops, &d.verdict) {
        out.push(Fix::AddRule {
            rule,
            file: policy.user_file().to_path_buf(),
        });
    }
    if surface == crate::Surface::Exec && policy.approval() != ApprovalPolicy::OnFailure {
        out.push(Fix::OnFailure);
    }
    if d.pending.is_none() {
        out.push(Fix::Pending);
    }
    out
}
