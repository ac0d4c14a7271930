//! Leases: approvals granted for one fingerprint, consumed, revoked and listed.

use super::db::{Tx, args};
use super::{Lease, LeaseId, LeaseUse, Scope, Store, from_ms, now_ms, ttl_ms};
use crate::error::{StoreError, StoreErrorKind};
use std::time::Duration;

/// The prefix of the session a `cordon mcp-gateway` run gives its calls when no agent
/// session was named (`mcp-gateway:NAME:NONCE`): it lasts one run of the gateway and is no
/// agent's, so once-leases treat it as no session (an approval of a gateway call covers
/// the retry that comes through the next run of the gateway).
pub const GATEWAY_RUN_SESSION: &str = "mcp-gateway:";

/// The session a once-lease is bound to or spent in: none for an empty one or a gateway
/// run's own.
pub(crate) fn once_session(session: Option<&str>) -> Option<&str> {
    session.filter(|s| !s.is_empty() && !s.starts_with(GATEWAY_RUN_SESSION))
}

impl Store {
    /// Record an approval for the invocation with this fingerprint.
    ///
    /// `ttl` bounds its life (`None`: until revoked). `answer_note` records what the
    /// human answered, for the audit trail. A [`Scope::Once`] lease made here is spent
    /// in any session or none ([`Store::grant_once`] binds one to a session).
    pub fn grant(
        &self,
        fingerprint: &str,
        scope: Scope,
        ttl: Option<Duration>,
        answer_note: &str,
    ) -> Result<LeaseId, StoreError> {
        let tx = self.write()?;
        let id = self.insert_lease(&tx, fingerprint, &scope, ttl, answer_note, false)?;
        if scope == Scope::Once {
            self.bind_session(&tx, id, None, true)?;
        }
        tx.commit()?;
        Ok(id)
    }

    /// Record a once-lease bound to the session it was asked in: spent only by a call of
    /// `session` (`None`: only by a call without a session), unless `any_session`.
    pub fn grant_once(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        any_session: bool,
        ttl: Option<Duration>,
        answer_note: &str,
    ) -> Result<LeaseId, StoreError> {
        let tx = self.write()?;
        let id = self.insert_lease(&tx, fingerprint, &Scope::Once, ttl, answer_note, false)?;
        self.bind_session(&tx, id, session, any_session)?;
        tx.commit()?;
        Ok(id)
    }

    /// Bind a once-lease to the session it was asked in (`None`: asked without one), or
    /// to any session.
    pub(super) fn bind_session(
        &self,
        tx: &Tx<'_>,
        lease: LeaseId,
        session: Option<&str>,
        any_session: bool,
    ) -> Result<(), StoreError> {
        let session = once_session(session);
        tx.exec(
            "UPDATE leases SET bound_session = ?2, any_session = ?3 WHERE id = ?1",
            args![lease.0, session, any_session],
        )?;
        Ok(())
    }

    /// Record a once-lease that is spent at the moment it is made (an "allow once"
    /// answered at the terminal), so that the use has a lease id in the audit log.
    pub(crate) fn grant_spent(
        &self,
        fingerprint: &str,
        answer_note: &str,
    ) -> Result<LeaseId, StoreError> {
        let tx = self.write()?;
        let id = self.insert_lease(&tx, fingerprint, &Scope::Once, None, answer_note, true)?;
        tx.commit()?;
        Ok(id)
    }

    pub(super) fn insert_lease(
        &self,
        tx: &Tx<'_>,
        fingerprint: &str,
        scope: &Scope,
        ttl: Option<Duration>,
        answer_note: &str,
        spent: bool,
    ) -> Result<LeaseId, StoreError> {
        if fingerprint.is_empty() {
            return Err(self.invalid("a lease needs a non-empty fingerprint"));
        }
        let session = match scope {
            Scope::Session(s) if s.is_empty() => {
                return Err(self.invalid("a session lease needs a non-empty session id"));
            }
            Scope::Session(s) => Some(s.as_str()),
            _ => None,
        };
        let now = now_ms();
        let expires = ttl.map(|t| now.saturating_add(ttl_ms(t)));
        let (used, uses) = if spent { (Some(now), 1) } else { (None, 0) };
        let row = tx.row(
            "INSERT INTO leases (fingerprint, scope, session, created_ms, expires_ms, used_at_ms, uses, answer)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
            args![fingerprint, scope.as_str(), session, now, expires, used, uses, answer_note],
        )?;
        match row {
            Some(r) => Ok(LeaseId(r.i64(0)?)),
            None => Err(self.invalid("inserting a lease returned no id")),
        }
    }

    /// Find a valid lease for this fingerprint and record its use, in one transaction.
    ///
    /// Valid means: not revoked, not expired, and either unused `Once`, `Always`, or
    /// `Session` of the same (non-empty) session. A `Once` lease is spent here: of two
    /// concurrent callers exactly one gets it. The check holds the write lock even when
    /// nothing is spent, so a store locked by another writer grants nothing. Session and always leases are preferred
    /// over once-leases so that the latter are not spent needlessly.
    pub fn consume(
        &self,
        fingerprint: &str,
        session: Option<&str>,
    ) -> Result<Option<LeaseUse>, StoreError> {
        self.consume_for(fingerprint, session, None)
    }

    /// [`consume`](Store::consume) for a call that carries the harness's operation id.
    ///
    /// A once-lease is spent only by a call of the session it was asked in (one asked
    /// without a session only by a call without one), unless a human widened it to any
    /// session. A once-lease asked without a session, not widened, and bound to an
    /// operation id (an approved pending request that had one) matches only a call with
    /// that same id; one asked in a session (or widened) answers the call, whatever id the harness gives its retry (a
    /// Codex retry carries a new call id), and a replay of an id already permitted is
    /// refused by the operation claim.
    pub fn consume_for(
        &self,
        fingerprint: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
    ) -> Result<Option<LeaseUse>, StoreError> {
        let session = session.filter(|s| !s.is_empty());
        let tx = self.write()?;
        let now = now_ms();
        let found = tx.row(
            "SELECT id, scope, session, answer FROM leases
             WHERE fingerprint = ?1 AND revoked = 0
               AND (expires_ms IS NULL OR expires_ms > ?2)
               AND ((scope = 'once' AND used_at_ms IS NULL
                     AND (any_session = 1 OR bound_session IS NOT DISTINCT FROM CAST(?5 AS TEXT))
                     AND (operation_id IS NULL OR operation_id = CAST(?4 AS TEXT)
                          OR bound_session IS NOT NULL OR any_session = 1))
                    OR scope = 'always'
                    OR (scope = 'session' AND CAST(?3 AS TEXT) IS NOT NULL
                        AND session = CAST(?3 AS TEXT)))
             ORDER BY CASE scope WHEN 'session' THEN 0 WHEN 'always' THEN 1 ELSE 2 END, id
             LIMIT 1",
            args![
                fingerprint,
                now,
                session,
                operation_id,
                once_session(session)
            ],
        )?;
        let Some(found) = found else {
            tx.commit()?;
            return Ok(None);
        };
        let (id, scope, lease_session, answer) = (
            found.i64(0)?,
            found.text(1)?,
            found.opt_text(2)?,
            found.text(3)?,
        );
        let Some(scope) = Scope::from_row(&scope, lease_session) else {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt(format!("lease {id} has an unknown scope")),
            ));
        };
        // Only a once-lease changes state when used; recording every use of the others
        // would cost a synced write on the hot path, and the audit log has the use.
        if scope == Scope::Once {
            let changed = tx.exec(
                "UPDATE leases SET used_at_ms = ?2, uses = uses + 1 WHERE id = ?1 AND used_at_ms IS NULL",
                args![id, now],
            )?;
            if changed != 1 {
                // Impossible under the write lock; refuse rather than grant twice.
                return Ok(None);
            }
        }
        tx.commit()?;
        Ok(Some(LeaseUse {
            lease: LeaseId(id),
            scope,
            answer,
        }))
    }

    /// Revoke a lease; returns whether it existed and was active.
    pub fn revoke(&self, lease: LeaseId) -> Result<bool, StoreError> {
        let n = self.exec(
            "UPDATE leases SET revoked = 1 WHERE id = ?1 AND revoked = 0",
            args![lease.0],
        )?;
        Ok(n == 1)
    }

    /// Leases that can still be used (not revoked, not expired, not spent).
    pub fn leases(&self) -> Result<Vec<Lease>, StoreError> {
        let rows = self.rows(
            "SELECT id, fingerprint, scope, session, created_ms, expires_ms, used_at_ms, uses, answer
             FROM leases WHERE revoked = 0 AND (expires_ms IS NULL OR expires_ms > ?1)
               AND NOT (scope = 'once' AND used_at_ms IS NOT NULL)
             ORDER BY id",
            args![now_ms()],
        )?;
        let mut out = Vec::new();
        for r in rows {
            let (id, fingerprint, scope, session, created, expires, used, uses, answer) = (
                r.i64(0)?,
                r.text(1)?,
                r.text(2)?,
                r.opt_text(3)?,
                r.i64(4)?,
                r.opt_i64(5)?,
                r.opt_i64(6)?,
                r.i64(7)?,
                r.text(8)?,
            );
            let scope = Scope::from_row(&scope, session).ok_or_else(|| {
                StoreError::new(
                    &self.path,
                    StoreErrorKind::Corrupt(format!("lease {id} has an unknown scope")),
                )
            })?;
            out.push(Lease {
                id: LeaseId(id),
                fingerprint,
                scope,
                created: from_ms(created),
                expires: expires.map(from_ms),
                used_at: used.map(from_ms),
                uses,
                answer,
            });
        }
        Ok(out)
    }
}
