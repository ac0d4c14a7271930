//! The proof that a run was allowed. This crate never decides whether a command may
//! run: it contains one that the policy (or a human approval) allowed, and [`Permit`]
//! is how that allowance reaches it. Only a verdict makes one; nothing here may build a
//! permit from anything else.

#[cfg(doc)]
use crate::run::run;

/// Proof that the policy (or a human approval) allowed this run. `cordon-sandbox` never
/// decides whether a command may run; it only contains one that was allowed, and its
/// [`run`] cannot be called without this value.
///
/// It can only be made from a verdict: an `allow` (from the policy, or from an approval that
/// turned an ask into an allow), or an `ask` that the `on-failure` approval policy runs
/// contained first. A deny never yields one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    reason: String,
}

impl Permit {
    /// A permit for a call whose verdict is `allow`; `None` for any other verdict.
    pub fn from_verdict(verdict: &cordon_policy::Verdict) -> Option<Self> {
        (verdict.decision == cordon_policy::Decision::Allow).then(|| Permit {
            reason: verdict.reason.clone(),
        })
    }

    /// A permit to run an `ask` inside the sandbox before asking anyone, which only the
    /// `on-failure` approval policy grants; `None` for any other verdict or policy.
    pub fn on_failure_trial(
        verdict: &cordon_policy::Verdict,
        approval: cordon_policy::ApprovalPolicy,
    ) -> Option<Self> {
        (verdict.decision == cordon_policy::Decision::Ask
            && approval == cordon_policy::ApprovalPolicy::OnFailure)
            .then(|| Permit {
                reason: format!("contained trial (on-failure): {}", verdict.reason),
            })
    }

    /// Why the run was allowed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

#[cfg(test)]
mod permit_tests {
    use super::Permit;
    use cordon_policy::{ApprovalPolicy, Decision, Source, Step, Verdict};

    fn verdict(d: Decision) -> Verdict {
        Verdict::simple(d, Source::new(Step::Default, "x"), "because")
    }

    #[test]
    fn only_allow_or_an_on_failure_trial_yields_a_permit() {
        assert!(Permit::from_verdict(&verdict(Decision::Allow)).is_some());
        assert!(Permit::from_verdict(&verdict(Decision::Ask)).is_none());
        assert!(Permit::from_verdict(&verdict(Decision::Deny)).is_none());
        let ask = verdict(Decision::Ask);
        assert!(Permit::on_failure_trial(&ask, ApprovalPolicy::OnFailure).is_some());
        assert!(Permit::on_failure_trial(&ask, ApprovalPolicy::OnRequest).is_none());
        assert!(
            Permit::on_failure_trial(&verdict(Decision::Deny), ApprovalPolicy::OnFailure).is_none()
        );
    }
}
