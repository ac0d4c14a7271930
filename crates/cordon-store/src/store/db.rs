//! The one connection a [`Store`] holds, SQLite or PostgreSQL, and the small query layer
//! every shared operation goes through, so that each operation's SQL is written once.
//!
//! SQL is written with `?N` placeholders in the subset both engines accept (`ON CONFLICT`,
//! `RETURNING`, `IS NOT DISTINCT FROM`, `CAST(? AS TEXT)`); for PostgreSQL the
//! placeholders become `$N`. Parameters are a [`Val`] (null, 64-bit integer, text) and
//! rows are read by index.
//!
//! Write transactions: SQLite's `BEGIN IMMEDIATE` takes the database's one write lock.
//! On PostgreSQL a write transaction is `BEGIN ISOLATION LEVEL READ COMMITTED` followed by
//! `pg_catalog.pg_advisory_xact_lock` on one key, so every write transaction of every machine runs
//! one at a time, exactly as on SQLite: whatever an SQLite test proves about a once-lease
//! spent once or a pending approval answered once holds on PostgreSQL by construction.
//! The lock is released when the transaction commits or rolls back (also when the
//! connection dies), and under READ COMMITTED each statement after the lock sees every
//! transaction that held it before. A single write outside a transaction takes the same
//! lock, so it cannot slip between the read and the write of another's transaction.
//!
//! Deadlines: a stalled server (a stopped process, a frozen host, a full backlog) answers
//! nothing and enforces nothing, so its own `statement_timeout` bounds nothing. Every
//! round trip (connect with its startup and login, prepare, query, execute, batch,
//! BEGIN/COMMIT/ROLLBACK) therefore runs on tokio-postgres under a deadline of the
//! client's, on a current-thread runtime the connection owns: opening within
//! [`CONNECT_BUDGET`] in all, each later round trip within [`answer_deadline`]. A round
//! trip past its deadline drops the connection (the socket closes, the server rolls back
//! what it had begun) and fails as `Unavailable`, which callers turn into a denial.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::Store;
use crate::at::PgTarget;
use crate::error::{StoreError, StoreErrorKind};

mod pg;
use pg::pg_row;
pub(crate) use pg::{PgClient, connect};

/// The search path of every session cordon opens: the store's schema `public` alone.
/// PostgreSQL searches `pg_catalog` before any path that does not name it (and a
/// session's own temporary schema, which cordon never creates in, before that), so names
/// resolve in the system catalog first, then in the store's schema, and never in a
/// schema named after the role (`"$user"` of the default path) or one a URL's `options`
/// names; unqualified `CREATE`s of the migrations still land in `public`. Set in the
/// startup packet and again (`SET LOCAL`) at the start of every transaction, so a pooler
/// that drops startup options still runs cordon's statements with it. cordon's own calls
/// of system functions are schema-qualified and typed exactly as well
/// (`pg_catalog.pg_advisory_xact_lock(…::pg_catalog.int8)`): an overload with other
/// argument types that matches better wins over the catalog's whatever the path.
pub(crate) const SEARCH_PATH: &str = "public";

/// How long opening (or reopening) a PostgreSQL connection may take in all, retries
/// included: a decision waiting on the store must not hang.
pub(crate) const CONNECT_BUDGET: Duration = Duration::from_millis(2500);

/// The first pause between connection attempts; each next one doubles.
const CONNECT_BACKOFF: Duration = Duration::from_millis(100);

/// How much longer than the session's lock timeout one statement may run before a live
/// server cancels it (`statement_timeout`; the statement then fails as `Locked` and the
/// connection is kept).
const STATEMENT_SLACK: Duration = Duration::from_secs(1);

/// How much longer than the session's lock timeout the client waits for any answer of
/// the server before it gives the connection up: past the server's own
/// `statement_timeout` (so a live but slow server answers first), and short enough that
/// a decision waiting on a stalled server is denied within seconds.
const ANSWER_SLACK: Duration = Duration::from_secs(2);

/// The longest the client waits for the server's answer to one round trip: the lock
/// timeout (a write transaction may wait that long for the fleet's write lock) plus
/// [`ANSWER_SLACK`]; 7 seconds with the default 5-second busy timeout.
pub(crate) fn answer_deadline(lock_timeout: Duration) -> Duration {
    lock_timeout.saturating_add(ANSWER_SLACK)
}

/// A parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Text(String),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Int(i64::from(v))
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(v.clone())
    }
}
impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(v: Option<T>) -> Val {
        v.map_or(Val::Null, Into::into)
    }
}

/// Parameters for a query: `args![a, b, c]`.
macro_rules! args {
    ($($e:expr),* $(,)?) => { &[$($crate::store::db::Val::from($e)),*] as &[$crate::store::db::Val] };
}
pub(crate) use args;

/// One row read, by column index.
pub(crate) struct Row {
    vals: Vec<Val>,
    at: Rc<PathBuf>,
}

impl Row {
    fn bad(&self, i: usize, want: &str) -> StoreError {
        StoreError::new(
            &self.at,
            StoreErrorKind::Corrupt(format!("column {i} of a row is not {want}")),
        )
    }

    pub(crate) fn opt_i64(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.vals.get(i) {
            Some(Val::Int(v)) => Ok(Some(*v)),
            Some(Val::Null) => Ok(None),
            _ => Err(self.bad(i, "an integer")),
        }
    }

    pub(crate) fn i64(&self, i: usize) -> Result<i64, StoreError> {
        self.opt_i64(i)?.ok_or_else(|| self.bad(i, "an integer"))
    }

    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.vals.get(i) {
            Some(Val::Text(v)) => Ok(Some(v.clone())),
            Some(Val::Null) => Ok(None),
            _ => Err(self.bad(i, "text")),
        }
    }

    pub(crate) fn text(&self, i: usize) -> Result<String, StoreError> {
        self.opt_text(i)?.ok_or_else(|| self.bad(i, "text"))
    }
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Val::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Val::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Val::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::BOOL => (*v != 0).to_sql(ty, out),
                _ => Err(format!("an integer was given where {ty} is wanted").into()),
            },
            Val::Text(s) if <&str as ToSql>::accepts(ty) => s.as_str().to_sql(ty, out),
            Val::Text(_) => Err(format!("text was given where {ty} is wanted").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// `?N` placeholders as PostgreSQL's `$N`.
fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A PostgreSQL connection and what it knows about itself.
pub(crate) struct PgConn {
    client: Option<PgClient>,
    target: PgTarget,
    statements: HashMap<&'static str, tokio_postgres::Statement>,
    /// Inside a transaction this store began.
    in_tx: bool,
    /// The connection failed (lost, reset, shut down): reconnect before the next use.
    broken: bool,
    lock_timeout: Duration,
}

/// The connection of a store.
pub(crate) enum Conn {
    Lite(rusqlite::Connection),
    Pg(Box<RefCell<PgConn>>),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Conn::Lite(c) => c.fmt(f),
            Conn::Pg(p) => match p.try_borrow() {
                Ok(p) => write!(f, "Pg({:?})", p.target),
                Err(_) => f.write_str("Pg(busy)"),
            },
        }
    }
}

fn lite_row(r: &rusqlite::Row<'_>, n: usize) -> rusqlite::Result<Vec<Val>> {
    use rusqlite::types::ValueRef;
    (0..n)
        .map(|i| {
            Ok(match r.get_ref(i)? {
                ValueRef::Null => Val::Null,
                ValueRef::Integer(v) => Val::Int(v),
                ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Real(_) | ValueRef::Blob(_) => {
                    return Err(rusqlite::Error::InvalidColumnType(
                        i,
                        String::new(),
                        rusqlite::types::Type::Blob,
                    ));
                }
            })
        })
        .collect()
}

/// A transaction; rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx<'a> {
    store: &'a Store,
    done: bool,
}

impl Tx<'_> {
    pub(crate) fn exec(&self, sql: &'static str, args: &[Val]) -> Result<u64, StoreError> {
        self.store.exec_raw(sql, args)
    }

    pub(crate) fn rows(&self, sql: &'static str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        self.store.rows(sql, args)
    }

    pub(crate) fn row(&self, sql: &'static str, args: &[Val]) -> Result<Option<Row>, StoreError> {
        self.store.row(sql, args)
    }

    /// Commit; an error means nothing of this transaction was committed (SQLite: rolled
    /// back; PostgreSQL: rolled back, or the connection was lost before the server
    /// committed).
    pub(crate) fn commit(mut self) -> Result<(), StoreError> {
        let r = self.store.end_tx("COMMIT");
        // A commit that failed and left the transaction open (SQLite: busy) is rolled
        // back when `self` drops, as rusqlite's own transactions are.
        self.done = r.is_ok();
        r
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.store.end_tx("ROLLBACK");
        }
    }
}

impl Store {
    /// Whether this store's engine is PostgreSQL (for the few statements written twice).
    pub(crate) fn pg(&self) -> bool {
        matches!(self.conn, Conn::Pg(_))
    }

    /// The SQLite connection, for what is kept per machine (audit heads, export cursors,
    /// slots' records); refused on a shared store, naming what was asked.
    pub(crate) fn lite(&self, what: &str) -> Result<&rusqlite::Connection, StoreError> {
        match &self.conn {
            Conn::Lite(c) => Ok(c),
            Conn::Pg(_) => Err(self.invalid(&format!(
                "{what} are kept per machine in the local SQLite store, never in the shared PostgreSQL store; open the local store for them"
            ))),
        }
    }

    /// Begin a write transaction: SQLite's `BEGIN IMMEDIATE`; on PostgreSQL a READ
    /// COMMITTED transaction holding the fleet's write lock (see the module docs).
    pub(crate) fn write(&self) -> Result<Tx<'_>, StoreError> {
        self.begin(
            "BEGIN IMMEDIATE",
            // The key spells "cord"; a bigint, and the catalog's function by name: see
            // SEARCH_PATH.
            "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL search_path = public;
             SELECT pg_catalog.pg_advisory_xact_lock(1668248164::pg_catalog.int8)",
        )
    }

    /// Begin a read transaction: one consistent view for several statements.
    pub(crate) fn read(&self) -> Result<Tx<'_>, StoreError> {
        self.begin(
            "BEGIN DEFERRED",
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL search_path = public",
        )
    }

    fn begin(&self, lite: &str, pg: &str) -> Result<Tx<'_>, StoreError> {
        match &self.conn {
            Conn::Lite(c) => c.execute_batch(lite).map_err(|e| self.err(e))?,
            Conn::Pg(p) => {
                let mut p = p.borrow_mut();
                if p.in_tx {
                    return Err(self.invalid("a transaction was begun inside another"));
                }
                if let Err(e) = p.batch(pg) {
                    // BEGIN may have run before the lock timed out: end what it began,
                    // or never reuse a connection whose state is unknown.
                    if p.healthy() && p.batch("ROLLBACK").is_err() {
                        p.broken = true;
                    }
                    return Err(e);
                }
                p.in_tx = true;
            }
        }
        Ok(Tx {
            store: self,
            done: false,
        })
    }

    fn end_tx(&self, how: &str) -> Result<(), StoreError> {
        match &self.conn {
            // SQLite may have rolled back by itself (a full disk): nothing to end then.
            Conn::Lite(c) if c.is_autocommit() && how == "ROLLBACK" => Ok(()),
            Conn::Lite(c) => c.execute_batch(how).map_err(|e| self.err(e)),
            Conn::Pg(p) => {
                let mut p = p.borrow_mut();
                if !p.in_tx && how == "ROLLBACK" {
                    // A failed COMMIT already ended it on the server.
                    return Ok(());
                }
                p.in_tx = false;
                if !p.healthy() {
                    // The server rolls back what a lost connection had begun.
                    return Err(StoreError::new(
                        &self.path,
                        StoreErrorKind::Unavailable(
                            "the connection was lost before the transaction ended".into(),
                        ),
                    ));
                }
                let r = p.batch(how);
                if r.is_err() && how == "ROLLBACK" {
                    // Cannot tell the server's state: never reuse this connection.
                    p.broken = true;
                }
                r
            }
        }
    }

    fn in_tx(&self) -> bool {
        match &self.conn {
            Conn::Lite(c) => !c.is_autocommit(),
            Conn::Pg(p) => p.borrow().in_tx,
        }
    }

    /// Run a statement; the number of rows it changed. On PostgreSQL a statement outside
    /// a transaction runs in a write transaction of its own (see the module docs).
    pub(crate) fn exec(&self, sql: &'static str, args: &[Val]) -> Result<u64, StoreError> {
        if self.pg() && !self.in_tx() {
            let tx = self.write()?;
            let n = tx.exec(sql, args)?;
            tx.commit()?;
            return Ok(n);
        }
        self.exec_raw(sql, args)
    }

    fn exec_raw(&self, sql: &'static str, args: &[Val]) -> Result<u64, StoreError> {
        match &self.conn {
            Conn::Lite(c) => c
                .prepare_cached(sql)
                .and_then(|mut s| s.execute(rusqlite::params_from_iter(args)))
                .map(|n| u64::try_from(n).unwrap_or(0))
                .map_err(|e| self.err(e)),
            Conn::Pg(p) => p.borrow_mut().exec(sql, args),
        }
    }

    /// Every row of a query.
    pub(crate) fn rows(&self, sql: &'static str, args: &[Val]) -> Result<Vec<Row>, StoreError> {
        let at = Rc::new(self.path.clone());
        match &self.conn {
            Conn::Lite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| self.err(e))?;
                let n = st.column_count();
                let rows = st
                    .query_map(rusqlite::params_from_iter(args), |r| lite_row(r, n))
                    .map_err(|e| self.err(e))?;
                let mut out = Vec::new();
                for r in rows {
                    out.push(Row {
                        vals: r.map_err(|e| self.err(e))?,
                        at: at.clone(),
                    });
                }
                Ok(out)
            }
            Conn::Pg(p) => {
                let rows = p.borrow_mut().rows(sql, args)?;
                rows.iter().map(|r| pg_row(r, &at)).collect()
            }
        }
    }

    /// The first row of a query, if any.
    pub(crate) fn row(&self, sql: &'static str, args: &[Val]) -> Result<Option<Row>, StoreError> {
        Ok(self.rows(sql, args)?.into_iter().next())
    }

    /// Run several statements without parameters (migrations).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), StoreError> {
        match &self.conn {
            Conn::Lite(c) => c.execute_batch(sql).map_err(|e| self.err(e)),
            Conn::Pg(p) => p.borrow_mut().batch(sql),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_dollars() {
        assert_eq!(
            dollars("SELECT ?1, ?12 WHERE a IS ?2 AND b = '?'"),
            "SELECT $1, $12 WHERE a IS $2 AND b = '?'"
        );
    }
}
