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

use serde_json::{Map, Value};

use crate::error::{StoreError, StoreErrorKind};
use crate::store::db::{Tx, args};
use crate::store::{LeaseId, Pending, Store, now_ms};

/// How long an operation id's claim is kept: a replay within it is refused.
pub const CLAIM_KEEP: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// At most this many claims are kept after a prune (the newest).
pub const CLAIM_MAX_ROWS: i64 = 20_000;

/// A claim prunes when this much time passed since the last prune…
pub const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// …or the store grew by this many bytes since.
pub const PRUNE_GROWTH: i64 = 1 << 20;

/// An input a human put in place of a call's own when approving it. The lease is for
/// the edited call as the store computes its fingerprint from the pending request with
/// this input ([`cordon_policy::fingerprint::edited_fingerprint`]), under the workspace
/// and policy version the call was asked under.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    /// The replacement input (presets already applied).
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
        tx: &Tx<'_>,
        lease: LeaseId,
        pending: &Pending,
        edit: Option<&Edit>,
    ) -> Result<(), StoreError> {
        let input = edit
            .map(|e| serde_json::to_string(&e.input))
            .transpose()
            .map_err(|e| self.invalid(&e.to_string()))?;
        let origin = edit.map(|_| pending.fingerprint.as_str());
        tx.exec(
            "UPDATE leases SET operation_id = ?2, origin = ?3, input = ?4 WHERE id = ?1",
            args![lease.0, pending.operation_id.as_deref(), origin, input],
        )?;
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
        let row = self.row(
            "SELECT id, fingerprint, input FROM leases
             WHERE origin = ?1 AND revoked = 0 AND scope = 'once' AND used_at_ms IS NULL
               AND (expires_ms IS NULL OR expires_ms > ?2)
               AND (any_session = 1 OR bound_session IS NOT DISTINCT FROM CAST(?4 AS TEXT))
               AND (operation_id IS NULL OR operation_id = CAST(?3 AS TEXT)
                    OR bound_session IS NOT NULL OR any_session = 1)
             ORDER BY id LIMIT 1",
            args![origin, now_ms(), operation_id, session],
        )?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (id, fingerprint, input) = (row.i64(0)?, row.text(1)?, row.opt_text(2)?);
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
        let tx = self.write()?;
        let now = now_ms();
        let n = tx.exec(
            "UPDATE leases SET used_at_ms = ?2, uses = uses + 1
             WHERE id = ?1 AND scope = 'once' AND used_at_ms IS NULL AND revoked = 0
               AND (expires_ms IS NULL OR expires_ms > ?2)",
            args![lease.0, now],
        )?;
        tx.commit()?;
        Ok(n == 1)
    }

    /// Claim an operation id for a surface: `true` the first time, `false` when that
    /// surface already permitted the id (a duplicate confirmation or a replay).
    ///
    /// Claims are kept [`CLAIM_KEEP`] and at most the newest [`CLAIM_MAX_ROWS`]: a replay
    /// is refused for as long as its claim is kept. Pruning happens inside a claim's own
    /// transaction, when [`PRUNE_EVERY`] has passed or the store grew [`PRUNE_GROWTH`]
    /// bytes since the last prune, so between two prunes the table may hold more rows.
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
        if self.pg() {
            return Ok(self.claim_and_prune(operation_id, surface, fingerprint)? == 1);
        }
        // Cached statements: a long-lived connection (the service) claims an id on every
        // call, and preparing the statements cost more than running them.
        let conn = self.lite("operation claims")?;
        let run = |sql: &str| conn.prepare_cached(sql).and_then(|mut s| s.raw_execute());
        run("PRAGMA synchronous = NORMAL").map_err(|e| self.err(e))?;
        let claimed = self.claim_and_prune(operation_id, surface, fingerprint);
        let restored = run("PRAGMA synchronous = FULL");
        let n = claimed?;
        restored.map_err(|e| self.err(e))?;
        Ok(n == 1)
    }

    fn claim_and_prune(
        &self,
        operation_id: &str,
        surface: &str,
        fingerprint: &str,
    ) -> Result<u64, StoreError> {
        // On PostgreSQL the claim commits as every write does, synced: a server that
        // stops at once (a crash, `pg_ctl stop -m immediate`) keeps every claim it
        // confirmed, where `synchronous_commit = off` would forget the newest.
        let tx = self.write()?;
        let now = now_ms();
        let n = tx.exec(
            "INSERT INTO operations (operation_id, surface, fingerprint, at_ms)
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
            args![operation_id, surface, fingerprint, now],
        )?;
        let sizes = if self.pg() {
            tx.row(
                "SELECT p.at_ms, p.bytes, pg_total_relation_size('operations')
                 FROM operations_pruned p WHERE p.id = 1",
                args![],
            )?
        } else {
            tx.row(
                "SELECT p.at_ms, p.bytes, c.page_count * s.page_size
                 FROM operations_pruned p, pragma_page_count() c, pragma_page_size() s
                 WHERE p.id = 1",
                args![],
            )?
        };
        let Some(sizes) = sizes else {
            return Err(StoreError::new(
                &self.path,
                StoreErrorKind::Corrupt("the operation claims' prune record is missing".into()),
            ));
        };
        let (last_ms, last_bytes, bytes) = (sizes.i64(0)?, sizes.i64(1)?, sizes.i64(2)?);
        let every = i64::try_from(PRUNE_EVERY.as_millis()).unwrap_or(i64::MAX);
        if now.saturating_sub(last_ms) >= every
            || bytes.saturating_sub(last_bytes) >= PRUNE_GROWTH
            || now < last_ms
        {
            let keep = i64::try_from(CLAIM_KEEP.as_millis()).unwrap_or(i64::MAX);
            tx.exec(
                "DELETE FROM operations WHERE at_ms < ?1",
                args![now.saturating_sub(keep)],
            )?;
            // SQLite needs a LIMIT before an OFFSET; PostgreSQL refuses a negative one.
            let beyond = if self.pg() {
                "DELETE FROM operations WHERE (operation_id, surface) IN (
                     SELECT operation_id, surface FROM operations
                     ORDER BY at_ms DESC OFFSET ?1)"
            } else {
                "DELETE FROM operations WHERE (operation_id, surface) IN (
                     SELECT operation_id, surface FROM operations
                     ORDER BY at_ms DESC LIMIT -1 OFFSET ?1)"
            };
            tx.exec(beyond, args![CLAIM_MAX_ROWS])?;
            tx.exec(
                "UPDATE operations_pruned SET at_ms = ?1, bytes = ?2 WHERE id = 1",
                args![now, bytes],
            )?;
        }
        tx.commit()?;
        Ok(n)
    }
}
