//! Operation ids and edited approvals.
//!
//! A harness names each tool call (Claude Code's `tool_use_id`, a service request's
//! `operation_id`). The store keeps two things about those ids:
//!
//! * **claims**: a surface permits an operation id at most once ([`Store::claim_operation`]),
//!   so a duplicated confirmation or a replayed call is refused rather than run twice;
//! * **bindings**: a once-lease made by approving a pending call that had an id is bound to
//!   it, and a once-lease made by approving an *edited* input remembers the call it
//!   replaces (its origin fingerprint) and the replacement input.
//!
//! The store never judges an edit: the gate judges the edited call before an edited
//! approval is recorded, and again when it is used.

use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Map, Value};

use crate::error::{StoreError, StoreErrorKind};
use crate::store::{LeaseId, Pending, Store, now_ms};

/// An input a human put in place of a call's own when approving it.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    /// The fingerprint of the edited call (computed by the policy).
    pub fingerprint: String,
    /// The replacement input.
    pub input: Map<String, Value>,
}

/// An approved edit waiting for its call to arrive again.
#[derive(Debug, Clone, PartialEq)]
pub struct EditedLease {
    /// The once-lease that carries it.
    pub lease: LeaseId,
    /// The fingerprint of the edited call the human approved.
    pub fingerprint: String,
    /// The replacement input.
    pub input: Map<String, Value>,
}

impl Store {
    /// Bind a fresh once-lease to the pending call's operation id, and to its edit.
    pub(crate) fn bind_lease(
        &self,
        tx: &Transaction<'_>,
        lease: LeaseId,
        pending: &Pending,
        edit: Option<&Edit>,
    ) -> Result<(), StoreError> {
        let input = edit
            .map(|e| serde_json::to_string(&e.input))
            .transpose()
            .map_err(|e| self.invalid(&e.to_string()))?;
        let origin = edit.map(|_| pending.fingerprint.as_str());
        tx.execute(
            "UPDATE leases SET operation_id = ?2, origin = ?3, input = ?4 WHERE id = ?1",
            params![lease.0, pending.operation_id, origin, input],
        )
        .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The unspent edited approval for a call with this fingerprint, in the session it
    /// was asked in (and with its operation id, when it was asked without a session and
    /// had one), without spending it.
    pub fn edited_lease(
        &self,
        origin: &str,
        session: Option<&str>,
        operation_id: Option<&str>,
    ) -> Result<Option<EditedLease>, StoreError> {
        let session = crate::store::once_session(session);
        let row = self
            .conn
            .query_row(
                "SELECT id, fingerprint, input FROM leases
                 WHERE origin = ?1 AND revoked = 0 AND scope = 'once' AND used_at_ms IS NULL
                   AND (expires_ms IS NULL OR expires_ms > ?2)
                   AND (any_session = 1 OR bound_session IS ?4)
                   AND (operation_id IS NULL OR operation_id = ?3 OR bound_session IS NOT NULL
                        OR any_session = 1)
                 ORDER BY id LIMIT 1",
                params![origin, now_ms(), operation_id, session],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((id, fingerprint, input)) = row else {
            return Ok(None);
        };
        let input = input
            .as_deref()
            .map(serde_json::from_str::<Map<String, Value>>)
            .transpose()
            .ok()
            .flatten()
            .ok_or_else(|| {
                StoreError::new(
                    &self.path,
                    StoreErrorKind::Corrupt(format!("lease {id} holds an unreadable edited input")),
                )
            })?;
        Ok(Some(EditedLease {
            lease: LeaseId(id),
            fingerprint,
            input,
        }))
    }

    /// Spend a once-lease by id; `false` when it was already spent, revoked or expired
    /// (of two concurrent callers exactly one gets `true`).
    pub fn spend_once(&self, lease: LeaseId) -> Result<bool, StoreError> {
        let tx = self.immediate()?;
        let now = now_ms();
        let n = tx
            .execute(
                "UPDATE leases SET used_at_ms = ?2, uses = uses + 1
                 WHERE id = ?1 AND scope = 'once' AND used_at_ms IS NULL AND revoked = 0
                   AND (expires_ms IS NULL OR expires_ms > ?2)",
                params![lease.0, now],
            )
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    /// Claim an operation id for a surface: `true` the first time, `false` when that
    /// surface already permitted the id (a duplicate confirmation or a replay).
    ///
    /// The claim is committed without waiting for the disk (`synchronous = NORMAL` for
    /// this one write): a power cut may forget the newest claims, never corrupt the
    /// store, and the audit log still has the first permit.
    pub fn claim_operation(
        &self,
        operation_id: &str,
        surface: &str,
        fingerprint: &str,
    ) -> Result<bool, StoreError> {
        if operation_id.is_empty() {
            return Err(self.invalid("an operation id must not be empty"));
        }
        // Cached statements: a long-lived connection (the service) claims an id on every
        // call, and preparing three statements cost more than running them.
        let run = |sql: &str| {
            self.conn
                .prepare_cached(sql)
                .and_then(|mut s| s.raw_execute())
        };
        run("PRAGMA synchronous = NORMAL").map_err(|e| self.err(e))?;
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO operations (operation_id, surface, fingerprint, at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut s| s.execute(params![operation_id, surface, fingerprint, now_ms()]));
        let restored = run("PRAGMA synchronous = FULL");
        let n = inserted.map_err(|e| self.err(e))?;
        restored.map_err(|e| self.err(e))?;
        Ok(n == 1)
    }
}
