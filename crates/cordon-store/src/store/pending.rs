//! Pending requests: calls that could not be put to a human at once, and their
//! answers (approve, deny) settled later.

use super::db::{Row, args};
use super::{
    APPROVED_PENDING_TTL, Answer, Answered, Approved, Denied, LeaseId, Pending, PendingId,
    PendingState, Scope, Store, from_ms, now_ms,
};
use crate::error::{StoreError, StoreErrorKind};
use cordon_policy::suggest::RuleOption;
use std::time::Duration;

impl Store {
    /// Record a request that could not be put to a human now.
    pub fn add_pending(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        request: &serde_json::Value,
        verdict: &serde_json::Value,
        suggestion: Option<&str>,
    ) -> Result<PendingId, StoreError> {
        self.add_pending_for(fingerprint, session, None, request, verdict, suggestion)
    }

    /// [`add_pending`](Store::add_pending) for a call that carries the harness's
    /// operation id: approving it makes a once-lease bound to that id.
    ///
    /// The same call asked again while its approval is still waiting (same fingerprint,
    /// session, operation id, request and verdict) gets that approval's id, not a second
    /// one: a client that repeats a call until it is answered does not fill the list a
    /// human reads.
    pub fn add_pending_for(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
        request: &serde_json::Value,
        verdict: &serde_json::Value,
        suggestion: Option<&str>,
    ) -> Result<PendingId, StoreError> {
        let options: Vec<RuleOption> = suggestion.map(RuleOption::exact).into_iter().collect();
        self.add_pending_offering(
            fingerprint,
            session,
            operation_id,
            request,
            verdict,
            &options,
        )
    }

    /// [`add_pending_for`](Store::add_pending_for) with every rule "always allow" may
    /// save, the exact one first: approving it "always" saves one of these and no other.
    pub fn add_pending_offering(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
        request: &serde_json::Value,
        verdict: &serde_json::Value,
        options: &[RuleOption],
    ) -> Result<PendingId, StoreError> {
        let suggestion = options.first().map(|o| o.rule.as_str());
        let suggestions = if options.is_empty() {
            None
        } else {
            Some(serde_json::to_string(options).map_err(|e| self.invalid(&e.to_string()))?)
        };
        if fingerprint.is_empty() {
            return Err(self.invalid("a pending approval needs a non-empty fingerprint"));
        }
        let request = serde_json::to_string(request).map_err(|e| self.invalid(&e.to_string()))?;
        let verdict = serde_json::to_string(verdict).map_err(|e| self.invalid(&e.to_string()))?;
        // Looked up and added in one write transaction, so that two connections asking
        // at once add one approval. The request and the verdict must match too: the
        // fingerprint does not cover what a path resolves to, and the human must see the
        // verdict of the call that will run.
        let tx = self.write()?;
        let waiting = tx.row(
            "SELECT id FROM pending WHERE state = 'pending' AND fingerprint = ?1
             AND session IS NOT DISTINCT FROM CAST(?2 AS TEXT)
             AND operation_id IS NOT DISTINCT FROM CAST(?3 AS TEXT)
             AND request = ?4 AND verdict = ?5
             ORDER BY id LIMIT 1",
            args![
                fingerprint,
                session,
                operation_id,
                request.as_str(),
                verdict.as_str()
            ],
        )?;
        if let Some(r) = waiting {
            let id = r.i64(0)?;
            tx.commit()?;
            return Ok(PendingId(id));
        }
        let row = tx.row(
            "INSERT INTO pending (fingerprint, session, request, verdict, suggestion, created_ms, operation_id, suggestions, machine)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            args![fingerprint, session, request, verdict, suggestion, now_ms(), operation_id, suggestions, self.machine()],
        )?;
        let id = match row {
            Some(r) => r.i64(0)?,
            None => return Err(self.invalid("recording a pending approval returned no id")),
        };
        tx.commit()?;
        Ok(PendingId(id))
    }

    fn pending_from_row(r: &Row) -> Result<(Pending, String), StoreError> {
        let request = r.text(3)?;
        let verdict = r.text(4)?;
        let request: serde_json::Value =
            serde_json::from_str(&request).unwrap_or(serde_json::Value::String(request));
        let verdict: serde_json::Value =
            serde_json::from_str(&verdict).unwrap_or(serde_json::Value::String(verdict));
        // The rules "always allow" may save, derived here from the request shown, never
        // taken from the asking machine's columns (which may offer `Bash` for a request
        // showing `git status`).
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .filter(|h| h.is_absolute() && h.as_os_str() != "/")
            .unwrap_or_else(|| std::path::PathBuf::from("/nonexistent"));
        let suggestions = cordon_policy::suggest::offered_for_shown(&request, &verdict, &home);
        let suggestion = suggestions.first().map(|o| o.rule.clone());
        Ok((
            Pending {
                id: PendingId(r.i64(0)?),
                fingerprint: r.text(1)?,
                session: r.opt_text(2)?,
                request,
                verdict,
                suggestion,
                suggestions,
                created: from_ms(r.i64(6)?),
                operation_id: r.opt_text(8)?,
                edited_input: r.opt_text(9)?.and_then(|t| serde_json::from_str(&t).ok()),
                machine: r.opt_text(11)?,
            },
            r.text(7)?,
        ))
    }

    /// Requests still waiting for a human, oldest first.
    pub fn pending(&self) -> Result<Vec<Pending>, StoreError> {
        let rows = self.rows(
            "SELECT id, fingerprint, session, request, verdict, suggestion, created_ms, state,
                    operation_id, edited_input, suggestions, machine
             FROM pending WHERE state = 'pending' ORDER BY id",
            args![],
        )?;
        rows.iter()
            .map(|r| Ok(Self::pending_from_row(r)?.0))
            .collect()
    }

    /// One recorded request in any state, with that state.
    pub fn approval(&self, id: PendingId) -> Result<(Pending, PendingState), StoreError> {
        let row = self
            .row(
                "SELECT id, fingerprint, session, request, verdict, suggestion, created_ms, state,
                        operation_id, edited_input, suggestions, machine
                 FROM pending WHERE id = ?1",
                args![id.0],
            )?
            .map(|r| Self::pending_from_row(&r))
            .transpose()?;
        let Some((p, state)) = row else {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::NoSuchPending(id.0),
            ));
        };
        let state = PendingState::parse(&state).ok_or_else(|| {
            StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt(format!("approval {} has an unknown state", id.0)),
            )
        })?;
        Ok((p, state))
    }

    /// The request with this id, if it is still waiting for a human.
    pub fn get_pending(&self, id: PendingId) -> Result<Pending, StoreError> {
        match self.approval(id)? {
            (p, PendingState::Pending) => Ok(p),
            (_, state) => Err(StoreError::new(
                &self.path,
                StoreErrorKind::AlreadyAnswered {
                    id: id.0,
                    state: state.as_str().to_string(),
                },
            )),
        }
    }

    /// Answer a pending request by id.
    pub fn answer(&self, id: PendingId, answer: Answer) -> Result<Answered, StoreError> {
        let pending = self.get_pending(id)?;
        let reach = match answer {
            Answer::Deny => return pending.deny(self).map(Answered::Denied),
            Answer::Approve => Reach::AskedSession,
            Answer::ApproveAnySession => Reach::AnySession,
            Answer::ApproveForSession => Reach::ForSession,
        };
        pending
            .approve_reaching(self, APPROVED_PENDING_TTL, reach)
            .map(Answered::Approved)
    }

    /// Move a pending row to its final state, creating the lease when approving; one
    /// transaction, and only if it is still pending (a second answer fails).
    fn settle(
        &self,
        pending: &Pending,
        approve: bool,
        ttl: Duration,
        edit: Option<&crate::operations::Edit>,
        reach: Reach,
    ) -> Result<Option<LeaseId>, StoreError> {
        let session = pending.session.as_deref().filter(|s| !s.is_empty());
        if approve && reach == Reach::ForSession && (session.is_none() || edit.is_some()) {
            return Err(self.invalid(&format!(
                "approval {} was asked without a session (or with an edit), so it cannot be allowed for a session; approve it once",
                pending.id
            )));
        }
        // The lease is for the call the human is shown, never for the fingerprint the
        // asking machine wrote beside it.
        let shown = if approve {
            self.shown_fingerprint(pending, edit)?
        } else {
            String::new()
        };
        let tx = self.write()?;
        let lease = if approve && reach == Reach::ForSession {
            let scope = Scope::Session(session.unwrap_or_default().to_string());
            let note = format!("approved pending request {} for the session", pending.id);
            Some(self.insert_lease(&tx, &shown, &scope, Some(SESSION_TTL), &note, false)?)
        } else if approve {
            let note = match edit {
                Some(_) => format!(
                    "approved pending request {} with an edited input",
                    pending.id
                ),
                None => format!("approved pending request {}", pending.id),
            };
            let id = self.insert_lease(&tx, &shown, &Scope::Once, Some(ttl), &note, false)?;
            self.bind_lease(&tx, id, pending, edit)?;
            self.bind_session(&tx, id, session, reach == Reach::AnySession)?;
            Some(id)
        } else {
            None
        };
        let edited = edit
            .map(|e| serde_json::to_string(&e.input))
            .transpose()
            .map_err(|e| self.invalid(&e.to_string()))?;
        let n = tx.exec(
            "UPDATE pending SET state = ?2, answered_ms = ?3, lease_id = ?4, edited_input = ?5 WHERE id = ?1 AND state = 'pending'",
            args![
                pending.id.0,
                if approve { "approved" } else { "denied" },
                now_ms(),
                lease.map(|l| l.0),
                edited
            ],
        )?;
        if n != 1 {
            // Dropping the transaction rolls the lease back.
            let state = self
                .approval(pending.id)
                .map(|(_, s)| s.as_str().to_string());
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::AlreadyAnswered {
                    id: pending.id.0,
                    state: state.unwrap_or_else(|_| "unknown".into()),
                },
            ));
        }
        tx.commit()?;
        Ok(lease)
    }

    /// The fingerprint a lease approving `pending` (with `edit`) is written under,
    /// computed from the request and verdict the human is shown
    /// ([`cordon_policy::fingerprint`]), never the asking machine's own column. A request
    /// whose secrets were cut out (so that the call that asked differs from the call
    /// shown), or whose session or operation id differ from the ones it shows, cannot be
    /// approved as it stands.
    pub(crate) fn shown_fingerprint(
        &self,
        pending: &Pending,
        edit: Option<&crate::operations::Edit>,
    ) -> Result<String, StoreError> {
        use cordon_policy::fingerprint::{approval_fingerprint, edited_fingerprint};
        let refuse = |why: String| {
            StoreError::new(
                &self.path,
                StoreErrorKind::Unverifiable {
                    id: pending.id.0,
                    why,
                },
            )
        };
        let (request, verdict) = (&pending.request, &pending.verdict);
        let named = |key: &str| {
            request
                .get(key)
                .and_then(serde_json::Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let session = pending.session.as_deref().filter(|s| !s.is_empty());
        if named("session") != session || named("operation_id") != pending.operation_id.as_deref() {
            return Err(refuse(
                "its session or operation id is not the one the request it shows names".into(),
            ));
        }
        if let Some(edit) = edit {
            return edited_fingerprint(request, &edit.input, verdict)
                .map_err(|e| refuse(e.to_string()));
        }
        // Two kinds of approval are bound to fingerprints of their own, which cannot be
        // taken for a tool call's: an action's (`action:…`) and a containment
        // escalation's (`…+permission`). Their fingerprints are taken from the record.
        let fp = pending.fingerprint.as_str();
        if named("tool") == Some("run-action") {
            return match fp.starts_with("action:") {
                true => Ok(fp.to_string()),
                false => Err(refuse("an action's approval names no action".into())),
            };
        }
        if verdict.get("escalation").is_some() {
            return match fp.contains('+') {
                true => Ok(fp.to_string()),
                false => Err(refuse(
                    "an escalation's approval names no escalation".into(),
                )),
            };
        }
        let shown = approval_fingerprint(request, verdict).map_err(|e| refuse(e.to_string()))?;
        // The asking machine's column is not trusted: the lease is for the call shown.
        // Only when they differ because secrets were cut out of what is shown can the
        // call shown not be the call that asked: nothing can be leased for it from here.
        let redacted =
            serde_json::to_string(request).is_ok_and(|t| t.contains(crate::redact::REDACTED));
        if shown != fp && redacted {
            return Err(refuse(
                "secrets were cut out of the request it shows, so the call that asked cannot be read in full".into(),
            ));
        }
        Ok(shown)
    }
}

/// How far an approval of a pending request reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reach {
    /// Once, in the session it was asked in (or only without a session).
    #[default]
    AskedSession,
    /// Once, in any session or none.
    AnySession,
    /// The same call for the rest of the session it was asked in ([`SESSION_TTL`]).
    ForSession,
}

/// How long a session lease made by approving a pending request lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

impl Pending {
    /// Approve: the request becomes `approved` and a once-lease for its fingerprint is
    /// created (valid for 24 hours), so the resumed call gets through exactly once.
    pub fn approve(self, store: &Store) -> Result<Approved, StoreError> {
        self.approve_for(store, APPROVED_PENDING_TTL)
    }

    /// Approve with a chosen lifetime for the once-lease.
    pub fn approve_for(self, store: &Store, ttl: Duration) -> Result<Approved, StoreError> {
        self.approve_reaching(store, ttl, Reach::AskedSession)
    }

    /// Approve with a chosen lifetime and reach (see [`Reach`]).
    pub fn approve_reaching(
        self,
        store: &Store,
        ttl: Duration,
        reach: Reach,
    ) -> Result<Approved, StoreError> {
        match store.settle(&self, true, ttl, None, reach)? {
            Some(lease) => Ok(Approved {
                pending: self,
                lease,
            }),
            None => Err(store.invalid("approving created no lease")),
        }
    }

    /// Approve with the input a human put in its place: the once-lease is for the edited
    /// call (`edit.fingerprint`, computed by the policy, which has judged it), and the
    /// call's next arrival (same operation id, or same fingerprint without one) is
    /// turned into the edited one.
    pub fn approve_edited(
        self,
        store: &Store,
        edit: &crate::operations::Edit,
    ) -> Result<Approved, StoreError> {
        match store.settle(
            &self,
            true,
            APPROVED_PENDING_TTL,
            Some(edit),
            Reach::AskedSession,
        )? {
            Some(lease) => Ok(Approved {
                pending: self,
                lease,
            }),
            None => Err(store.invalid("approving created no lease")),
        }
    }

    /// Deny: the request becomes `denied`; nothing is granted.
    pub fn deny(self, store: &Store) -> Result<Denied, StoreError> {
        store.settle(&self, false, Duration::ZERO, None, Reach::AskedSession)?;
        Ok(Denied { pending: self })
    }
}
