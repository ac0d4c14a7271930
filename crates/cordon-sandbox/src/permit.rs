//! The proof that a run was allowed. This crate never decides whether a command may
//! run: it contains one that the policy (or a human approval) allowed, and [`Permit`]
//! is how that allowance reaches it. It must never offer a way to make a permit from
//! anything but the sealed proofs below.

#[cfg(doc)]
use crate::run::{Helper, run};
use cordon_policy::{Allowed, ApprovalPolicy, ApprovalProof, Decision, Judgement};

/// Proof that the policy (or a human approval) allowed this run; [`run`] and
/// [`Helper::start`] cannot be called without one.
///
/// Only three things make one, and none of them can be forged from plain data:
/// an [`Allowed`] (made by `cordon-policy` alone, from an unedited allow judgement), an
/// [`ApprovalProof`] (`cordon-store`'s `Grant`, made by its approval flow alone, after
/// a lease or a human allowed the exact call; a test keeps it the one implementation),
/// or a [`Judgement`] that asks under the `on-failure`
/// approval policy for a call judged as contained (a trial run that asks no one).
///
/// A permit for a decision that counted on the full tier makes the sandbox refuse to
/// run at a lower one.
///
/// ```compile_fail
/// // A verdict built by hand is no proof.
/// let v = cordon_policy::Verdict::simple(
///     cordon_policy::Decision::Allow,
///     cordon_policy::Source::new(cordon_policy::Step::Default, "forged"),
///     "forged",
/// );
/// let p = cordon_sandbox::Permit::from_verdict(&v);
/// ```
///
/// ```compile_fail
/// let p = cordon_sandbox::Permit { reason: String::new(), require_full: false };
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct Permit {
    reason: String,
    require_full: bool,
}

impl Permit {
    /// A permit for a call the policy allowed.
    pub fn from_allowed(allowed: Allowed) -> Permit {
        Permit {
            reason: allowed.verdict().reason.clone(),
            require_full: allowed.containment().is_full_tier(),
        }
    }

    /// A permit for a call a lease or a human allowed.
    pub fn from_grant(grant: impl ApprovalProof) -> Permit {
        Permit {
            reason: format!("approved ({})", grant.answer()),
            require_full: false,
        }
    }

    /// A permit to run an ask inside the sandbox before asking anyone: only under the
    /// `on-failure` approval policy, and only for a call judged as contained.
    pub fn on_failure_trial(judgement: &Judgement) -> Option<Permit> {
        (judgement.decision() == Decision::Ask
            && judgement.approval() == ApprovalPolicy::OnFailure
            && judgement.containment().is_contained())
        .then(|| Permit {
            reason: format!(
                "contained trial (on-failure): {}",
                judgement.verdict().reason
            ),
            require_full: judgement.containment().is_full_tier(),
        })
    }

    /// Why the run was allowed.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Does the decision behind it hold only at the full tier?
    pub fn requires_full_tier(&self) -> bool {
        self.require_full
    }
}
