//! Small error types of the policy's public API: a word that is not a mode, sandbox mode,
//! approval policy or decision, and an attenuation that would widen a policy.
//!
//! Each parse error names the text that was refused and the words that are accepted; its
//! message is the one config files and flags have always shown.

use std::fmt;

use crate::config::Mode;
use crate::net::OriginError;

/// `a, b or c`.
fn one_of(words: &[&str]) -> String {
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Declares a parse error for one word type: the refused text, the accepted words, a
/// `Display` from the given format (`{value}`, `{accepted}`), and `std::error::Error`.
macro_rules! word_error {
    ($(#[$doc:meta])* $name:ident, accepted: [$($word:literal),+], $display:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            value: String,
        }

        impl $name {
            /// The words accepted (aliases aside).
            pub const ACCEPTED: &'static [&'static str] = &[$($word),+];

            pub(crate) fn new(value: &str) -> $name {
                $name {
                    value: value.to_owned(),
                }
            }

            /// The text that was refused.
            pub fn value(&self) -> &str {
                &self.value
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    $display,
                    value = self.value,
                    accepted = one_of(Self::ACCEPTED)
                )
            }
        }

        impl std::error::Error for $name {}
    };
}

word_error!(
    /// A word that is not a permission mode ([`Mode`]).
    ParseModeError,
    accepted: ["default", "accept-edits", "plan", "bypass", "dont-ask"],
    "unknown mode `{value}`: expected {accepted}"
);

word_error!(
    /// A word that is not a sandbox mode ([`crate::SandboxMode`]).
    ParseSandboxModeError,
    accepted: ["read-only", "workspace-write", "full-access"],
    "unknown sandbox mode `{value}`: expected {accepted}"
);

word_error!(
    /// A word that is not a required containment tier ([`crate::RequiredTier`]).
    ParseRequiredTierError,
    accepted: ["full", "any"],
    "unknown tier requirement `{value}`: expected {accepted}"
);

word_error!(
    /// A word that is not an approval policy ([`crate::ApprovalPolicy`]).
    ParseApprovalPolicyError,
    accepted: ["untrusted", "on-request", "on-failure", "never"],
    "unknown approval policy `{value}`: expected {accepted}"
);

word_error!(
    /// A word that is not a decision ([`crate::Decision`]).
    ParseDecisionError,
    accepted: ["allow", "ask", "deny"],
    "`{value}` is not a decision: expected {accepted}"
);

/// An attenuation that is unusable or would widen the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttenuationError {
    /// A deny or ask rule that does not parse.
    Rule {
        /// The rule as written.
        rule: String,
        /// Why it does not parse.
        why: crate::rules::RuleError,
    },
    /// The narrowed rules could not be compiled.
    Rules(String),
    /// A mode that is not narrower (only `plan` and `dont-ask` are).
    Mode(Mode),
    /// A network allowlist entry that cannot be used.
    Network(OriginError),
}

impl fmt::Display for AttenuationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttenuationError::Rule { rule, why } => write!(f, "attenuation rule `{rule}`: {why}"),
            AttenuationError::Rules(why) => f.write_str(why),
            AttenuationError::Mode(m) => write!(
                f,
                "an attenuation cannot switch to mode {m:?}: only plan or dont-ask narrow a policy"
            ),
            AttenuationError::Network(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AttenuationError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AttenuationError::Rule { why, .. } => Some(why),
            AttenuationError::Network(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApprovalPolicy, Decision, RequiredTier, SandboxMode};

    #[test]
    fn messages_name_the_value_and_the_accepted_words() {
        let e = "fast".parse::<Mode>().unwrap_err();
        assert_eq!(e.value(), "fast");
        assert_eq!(
            e.to_string(),
            "unknown mode `fast`: expected default, accept-edits, plan, bypass or dont-ask"
        );
        assert_eq!(
            "rw".parse::<SandboxMode>().unwrap_err().to_string(),
            "unknown sandbox mode `rw`: expected read-only, workspace-write or full-access"
        );
        assert_eq!(
            "always".parse::<ApprovalPolicy>().unwrap_err().to_string(),
            "unknown approval policy `always`: expected untrusted, on-request, on-failure or never"
        );
        assert_eq!(
            "yes".parse::<Decision>().unwrap_err().to_string(),
            "`yes` is not a decision: expected allow, ask or deny"
        );
    }

    #[test]
    fn every_accepted_word_parses() {
        for w in ParseModeError::ACCEPTED {
            assert_eq!(w.parse::<Mode>().map(Mode::as_str), Ok(*w));
        }
        for w in ParseSandboxModeError::ACCEPTED {
            assert_eq!(w.parse::<SandboxMode>().map(SandboxMode::as_str), Ok(*w));
        }
        for w in ParseApprovalPolicyError::ACCEPTED {
            assert_eq!(
                w.parse::<ApprovalPolicy>().map(ApprovalPolicy::as_str),
                Ok(*w)
            );
        }
        for w in ParseRequiredTierError::ACCEPTED {
            assert_eq!(w.parse::<RequiredTier>().map(RequiredTier::as_str), Ok(*w));
        }
        for w in ParseDecisionError::ACCEPTED {
            assert_eq!(w.parse::<Decision>().map(Decision::as_str), Ok(*w));
        }
    }

    #[test]
    fn one_of_joins_like_a_sentence() {
        assert_eq!(one_of(&[]), "");
        assert_eq!(one_of(&["a"]), "a");
        assert_eq!(one_of(&["a", "b"]), "a or b");
        assert_eq!(one_of(&["a", "b", "c"]), "a, b or c");
    }
}
