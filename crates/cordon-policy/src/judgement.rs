//! Sealed results of the decision order: what other crates may act on.
//!
//! A [`Verdict`] is plain data with public fields, made to be printed and recorded; anyone
//! can build one. What lets a command run must not be: a [`Judgement`] is made only by
//! [`crate::Policy::judge_with`], cannot be edited, and yields an [`Allowed`] only when
//! its decision is `allow`. `cordon-sandbox`'s `Permit` is made from an `Allowed` (or from
//! a human's grant), so no hand-built verdict can start a sandboxed command.
//!
//! This module owns those proof types and the [`Containment`] a call is judged under. It
//! must never offer a public constructor of either proof type.

use crate::settings::ApprovalPolicy;
use crate::verdict::{Decision, Source, Verdict};
use serde::Serialize;

/// Where the call will run, as far as the decision is concerned.
///
/// A contained call's step 8 reads the `[contained]` table for what containment enforces
/// by itself: at the full tier, program runs, opaque code, reads, writes and network
/// through the egress proxy; at the fallback tier (Landlock and seccomp, no namespaces),
/// only program runs, opaque code and writes. Only shell calls are ever contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Containment {
    /// The call runs (or is carried out) outside any sandbox.
    #[default]
    None,
    /// `cordon exec`'s fallback tier: Landlock and seccomp only.
    Fallback,
    /// `cordon exec`'s full tier: namespaces, Landlock, seccomp, the egress proxy.
    Full,
    /// The full tier sharing the host's network (`--net full`): network is not contained.
    FullHostNetwork,
    /// The full tier with HOME visible (`--home visible`): reads are not contained, since
    /// only the secrets are masked and everything else in HOME can be read.
    FullHomeVisible,
    /// The full tier with HOME visible and the host's network: only program runs, opaque
    /// code and writes are contained.
    FullHomeVisibleHostNetwork,
}

impl Containment {
    /// Stable short name (as in JSON and the audit log).
    pub fn as_str(self) -> &'static str {
        match self {
            Containment::None => "none",
            Containment::Fallback => "fallback",
            Containment::Full => "full",
            Containment::FullHostNetwork => "full-host-network",
            Containment::FullHomeVisible => "full-home-visible",
            Containment::FullHomeVisibleHostNetwork => "full-home-visible-host-network",
        }
    }

    /// Does the call run in a sandbox at all?
    pub fn is_contained(self) -> bool {
        self != Containment::None
    }

    /// Does the sandbox have its own namespaces (mount, PID, network unless shared)?
    pub fn is_full_tier(self) -> bool {
        !matches!(self, Containment::None | Containment::Fallback)
    }

    /// The full tier with HOME hidden, and the given network mode.
    pub fn full(host_network: bool, home_visible: bool) -> Containment {
        match (host_network, home_visible) {
            (false, false) => Containment::Full,
            (true, false) => Containment::FullHostNetwork,
            (false, true) => Containment::FullHomeVisible,
            (true, true) => Containment::FullHomeVisibleHostNetwork,
        }
    }

    /// Are reads contained (HOME hidden, secrets masked, a private `/tmp`)?
    pub fn contains_reads(self) -> bool {
        matches!(self, Containment::Full | Containment::FullHostNetwork)
    }

    /// Is network contained (an empty network namespace, egress only through the proxy)?
    pub fn contains_network(self) -> bool {
        matches!(self, Containment::Full | Containment::FullHomeVisible)
    }
}

impl std::fmt::Display for Containment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policy's judgement of one call: the verdict, under which containment it was
/// reached, and the approval policy in force. Only [`crate::Policy::judge_with`] makes
/// one, and nothing can change it afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    // Boxed: a judgement travels by value through `Result`s.
    verdict: Box<Verdict>,
    containment: Containment,
    approval: ApprovalPolicy,
}

impl Judgement {
    pub(crate) fn new(
        verdict: Verdict,
        containment: Containment,
        approval: ApprovalPolicy,
    ) -> Judgement {
        Judgement {
            verdict: Box::new(verdict),
            containment,
            approval,
        }
    }

    /// The verdict (read-only).
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// The decision.
    pub fn decision(&self) -> Decision {
        self.verdict.decision
    }

    /// The containment the call was judged under (`None` for calls that are not shell
    /// calls, whatever the caller asked for).
    pub fn containment(&self) -> Containment {
        self.containment
    }

    /// The approval policy in force when it was judged.
    pub fn approval(&self) -> ApprovalPolicy {
        self.approval
    }

    /// The verdict as plain data, to print or edit. What is given up is the proof: a
    /// verdict can no longer become an [`Allowed`].
    pub fn into_verdict(self) -> Verdict {
        *self.verdict
    }

    /// The same judgement made stricter by something the policy learned after the
    /// evaluation order (what the call's session already did): the decision becomes
    /// `decision` when that is more restrictive, with `reason` and `source`; a less
    /// restrictive `decision` changes nothing. Never loosens.
    pub fn tighten(mut self, decision: Decision, reason: String, source: Source) -> Judgement {
        if decision > self.verdict.decision {
            self.verdict.decision = decision;
            self.verdict.reason = reason;
            self.verdict.source = source;
        }
        self
    }

    /// The proof that the policy allowed the call, when it did.
    pub fn allowed(self) -> Result<Allowed, Judgement> {
        if self.verdict.decision == Decision::Allow {
            Ok(Allowed { judgement: self })
        } else {
            Err(self)
        }
    }
}

/// Proof that the policy allowed a call: made only from a [`Judgement`] whose decision is
/// `allow`.
///
/// ```compile_fail
/// // A verdict built by hand cannot become proof of anything.
/// let v = cordon_policy::Verdict::simple(
///     cordon_policy::Decision::Allow,
///     cordon_policy::Source::new(cordon_policy::Step::Default, "forged"),
///     "forged",
/// );
/// let a = cordon_policy::Allowed { judgement: todo!() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    judgement: Judgement,
}

impl Allowed {
    /// The allow verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.judgement.verdict
    }

    /// The containment the allow was reached under: a run must have at least this much.
    pub fn containment(&self) -> Containment {
        self.judgement.containment
    }

    /// The judgement behind it.
    pub fn judgement(&self) -> &Judgement {
        &self.judgement
    }
}

/// Proof that a lease or a human approved a call the policy asked about, as the sandbox
/// takes it (`cordon_sandbox::Permit::from_grant`) without knowing where approvals are
/// kept.
///
/// cordon-store's `Grant` is the one implementation, and only the store's approval flow
/// makes a `Grant`. Rust cannot seal a trait to a crate above the one that defines it,
/// so this rule is kept by a test instead: `cordon-store`'s
/// `tests/one_approval_proof.rs` fails when any other `impl ApprovalProof` appears in
/// the workspace.
pub trait ApprovalProof {
    /// The human's answer in a word (`lease`, `allow-once`, …), for the permit's reason.
    fn answer(&self) -> &'static str;
}
