//! Approving a pending request "always": one of the rules offered with it is saved, and
//! no other. The rules were computed when the call was asked (the exact call first, then
//! the generalisations from the allowlist, see `cordon_policy::suggest`); a human picks
//! one by its number or its text, and a rule that was not offered is refused.

use super::{Answer, Answered, LeaseId, Pending, PendingId, Scope, Store};
use crate::error::StoreError;

/// Which offered rule an "always" approval saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RulePick {
    /// The rule numbered so in the listing (1 is the exact call, the default).
    Number(usize),
    /// The offered rule with exactly this text.
    Rule(String),
}

impl RulePick {
    /// `N` (a number) or the text of a rule.
    pub fn parse(text: &str) -> RulePick {
        match text.trim().parse::<usize>() {
            Ok(n) => RulePick::Number(n),
            Err(_) => RulePick::Rule(text.trim().to_string()),
        }
    }
}

/// What an "always" approval did.
#[derive(Debug, Clone, PartialEq)]
pub struct AlwaysApproved {
    /// The request that was approved.
    pub request: Pending,
    /// The always-lease for its exact fingerprint.
    pub lease: LeaseId,
    /// The rule saved.
    pub rule: String,
}

impl Store {
    /// Approve pending request `id` for good: save the offered rule `pick` (attributed to
    /// the current user, answering through `source`: `cordon approvals`, the console, the
    /// service) and give its exact call an always-lease. Refused, with nothing changed, when
    /// no rule was offered or `pick` is not one of them.
    pub fn answer_always(
        &self,
        id: PendingId,
        pick: &RulePick,
        source: &str,
    ) -> Result<AlwaysApproved, StoreError> {
        let (pending, _) = self.approval(id)?;
        // The call shown, as the once-lease is (never the asking machine's column): a
        // record that cannot be verified is refused before any rule is looked at.
        let shown = self.shown_fingerprint(&pending, None)?;
        let offered = &pending.suggestions;
        if offered.is_empty() {
            return Err(self.invalid(&format!(
                "no narrow rule was offered for request {id}, so it cannot be always allowed; approve it once"
            )));
        }
        let listing = || {
            offered
                .iter()
                .enumerate()
                .map(|(i, o)| format!("{} {}", i + 1, o.rule))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let chosen = match pick {
            RulePick::Number(n) => n.checked_sub(1).and_then(|i| offered.get(i)),
            RulePick::Rule(r) => offered.iter().find(|o| o.rule == *r),
        };
        let Some(rule) = chosen.map(|o| o.rule.clone()) else {
            let what = match pick {
                RulePick::Number(n) => format!("there is no rule {n}"),
                RulePick::Rule(r) => format!("`{r}` is not a rule offered"),
            };
            return Err(self.invalid(&format!(
                "{what} for request {id}; the rules offered: {}",
                listing()
            )));
        };
        let kind = cordon_policy::Request::from_value(pending.request.clone())
            .map(|r| format!("{:?}", r.kind()))
            .unwrap_or_else(|_| "unknown".into());
        let once = match self.answer(id, Answer::Approve)? {
            Answered::Approved(a) => a.lease(),
            Answered::Denied(_) => {
                return Err(self.invalid(&format!("request {id} was denied")));
            }
        };
        let note = format!("always allowed (pending request {id}); saved rule {rule}");
        let lease = self.grant(&shown, Scope::Always, None, &note)?;
        self.revoke(once)?;
        self.remember_rule_by(&rule, &kind, &format!("{} ({source})", super::whoami()))?;
        Ok(AlwaysApproved {
            request: pending,
            lease,
            rule,
        })
    }
}
