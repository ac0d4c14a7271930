//! The shared store's roles against a machine that writes SQL of its own: a function it
//! plants where names are looked up never runs in another role's session (every
//! statement cordon sends is search-path-proof), and it cannot erase, expire or rewrite
//! another machine's session history (append only, by grants and triggers).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::time::Duration;

use cordon_store::pg_test::Cluster;
use cordon_store::{
    Answer, CallRef, PG_ROLES_SQL, PgTarget, Scope, SessionLimits, SessionRecord, Store, StoreAt,
};
use serde_json::json;

struct Fleet {
    cluster: Cluster,
    db: String,
}

impl Fleet {
    /// A cluster of this test's own, a database migrated by its owner, the roles SQL
    /// applied, and login roles `m1`, `m2` (machines) and `a1` (approver).
    fn new() -> Option<Fleet> {
        let cluster = Cluster::start_private()?;
        let db = cluster.fresh_database();
        drop(Store::open_at(&StoreAt::Postgres(cluster.target(&db, "owner"))).unwrap());
        let mut admin = cluster.admin_of(&db);
        admin.batch_execute(PG_ROLES_SQL).unwrap();
        admin
            .batch_execute(
                "CREATE ROLE m1 LOGIN IN ROLE cordon_machine; CREATE ROLE m2 LOGIN IN ROLE cordon_machine;
                 CREATE ROLE a1 LOGIN IN ROLE cordon_approver",
            )
            .unwrap();
        Some(Fleet { cluster, db })
    }

    fn url(&self, role: &str) -> String {
        format!(
            "postgresql:///{}?host={}&user={role}",
            self.db,
            self.cluster.socket_dir().display()
        )
    }

    fn open(&self, role: &str) -> Store {
        let t = PgTarget::new(&self.url(role), None, role).unwrap();
        Store::open_at(&StoreAt::Postgres(t)).unwrap()
    }

    fn owner(&self) -> Store {
        Store::open_at(&StoreAt::Postgres(self.cluster.target(&self.db, "owner"))).unwrap()
    }

    fn raw(&self, role: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(role), postgres::NoTls).unwrap()
    }

    /// How often a planted function ran, and as whom.
    fn ran(&self) -> Vec<String> {
        self.cluster
            .admin_of(&self.db)
            .query("SELECT who FROM public.planted_ran ORDER BY who", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }
}

/// A machine plants `public.pg_advisory_xact_lock(integer)` (where PUBLIC may create in
/// schema public: PostgreSQL 14 and older, or a database upgraded from one), and, second
/// spelling, `public.pg_advisory_xact_lock(bigint)` for a database whose search path puts
/// public before pg_catalog. Nothing of it runs in an approver's or the owner's session:
/// no rule appears, and the planted body never ran.
#[test]
fn a_planted_function_never_runs_in_cordon_sessions() {
    let Some(f) = Fleet::new() else { return };
    let mut admin = f.cluster.admin_of(&f.db);
    admin
        .batch_execute(&format!(
            "GRANT CREATE ON SCHEMA public TO PUBLIC;
             ALTER DATABASE {} SET search_path = \"$user\", public, pg_catalog",
            f.db
        ))
        .unwrap();
    let mut m1 = f.raw("m1");
    m1.batch_execute(
        r#"
CREATE TABLE public.planted_ran (who TEXT);
GRANT INSERT ON public.planted_ran TO PUBLIC;
CREATE FUNCTION public.pg_advisory_xact_lock(k integer) RETURNS void
LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO public.planted_ran VALUES ('int4 ' || session_user);
  BEGIN
    INSERT INTO public.rules (rule, tool_kind, created_ms, created_by)
      VALUES ('Bash', 'Bash', 0, 'planted') ON CONFLICT DO NOTHING;
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  PERFORM pg_catalog.pg_advisory_xact_lock(k::bigint);
END $f$;
CREATE FUNCTION public.pg_advisory_xact_lock(k bigint) RETURNS void
LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO public.planted_ran VALUES ('int8 ' || session_user);
  BEGIN
    INSERT INTO public.rules (rule, tool_kind, created_ms, created_by)
      VALUES ('Bash', 'Bash', 0, 'planted') ON CONFLICT DO NOTHING;
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  PERFORM pg_catalog.pg_advisory_xact_lock(k);
END $f$;
"#,
    )
    .unwrap();
    // The planted functions work when called by name (the test is not vacuous).
    m1.batch_execute(
        "SELECT pg_advisory_xact_lock(1); SELECT public.pg_advisory_xact_lock(1::bigint)",
    )
    .unwrap();
    assert_eq!(f.ran(), vec!["int4 m1", "int8 m1"]);
    m1.batch_execute("DELETE FROM public.planted_ran").unwrap();

    let m = f.open("m1");
    let a = f.open("a1");
    let id = m
        .add_pending("fp-fetch", None, &json!({"tool": "Bash"}), &json!({}), None)
        .unwrap();
    a.answer(id, Answer::Deny).unwrap();
    a.grant("fp-other", Scope::Once, None, "alice").unwrap();
    let owner = f.owner();
    owner.remember_rule("Bash(git status)", "Bash").unwrap();
    let rules: Vec<String> = a.rules().unwrap().into_iter().map(|r| r.rule).collect();
    assert_eq!(rules, vec!["Bash(git status)".to_string()]);
    assert!(f.ran().is_empty(), "a planted function ran: {:?}", f.ran());
}

/// The roles SQL takes CREATE on schema public from everyone but the tables' owner (who
/// still migrates), and every function it installs runs with a fixed search path.
#[test]
fn the_roles_sql_closes_schema_public() {
    let Some(f) = Fleet::new() else { return };
    let mut admin = f.cluster.admin_of(&f.db);
    admin
        .batch_execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
        .unwrap();
    admin.batch_execute(PG_ROLES_SQL).unwrap();
    let e = f
        .raw("m1")
        .batch_execute("CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        .unwrap_err();
    assert_eq!(
        e.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
        "{e}"
    );
    let unfixed: Vec<String> = admin
        .query(
            "SELECT proname::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'public' AND proname LIKE 'cordon%'
               AND NOT coalesce(proconfig, '{}') && ARRAY['search_path=pg_catalog, pg_temp']",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        unfixed.is_empty(),
        "without a fixed search path: {unfixed:?}"
    );
    let n: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
             WHERE n.nspname = 'public' AND proname LIKE 'cordon%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 4, "the functions checked");
}

fn by(call: &str) -> CallRef {
    CallRef {
        tool: "Write".into(),
        call: call.into(),
        operation_id: None,
    }
}

const LIMITS: SessionLimits = SessionLimits {
    max_writes: 100,
    expire_after: Duration::from_secs(3600),
};

fn write(path: &str) -> SessionRecord {
    SessionRecord {
        writes: vec![(path.into(), Some("h".into()))],
        ..SessionRecord::default()
    }
}

fn writes(s: &Store, session: &str) -> usize {
    s.session_view(session, &["/w/"], LIMITS.expire_after)
        .unwrap()
        .writes
        .len()
}

/// Machine m2 tries to erase, expire or rewrite what machine m1's session wrote: every
/// spelling is refused or has no effect, and m1 still sees the write.
#[test]
fn a_machine_cannot_erase_another_machines_session() {
    let Some(f) = Fleet::new() else { return };
    let m = f.open("m1");
    m.record_session("s1", &by("w"), &write("/w/run.sh"), LIMITS)
        .unwrap();
    assert_eq!(writes(&m, "s1"), 1);
    let mut m2 = f.raw("m2");
    for sql in [
        "DELETE FROM session_events WHERE session = 's1'",
        "DELETE FROM sessions WHERE id = 's1'",
        "TRUNCATE session_events",
        "TRUNCATE sessions CASCADE",
        "UPDATE sessions SET started_ms = 0",
        "UPDATE sessions SET id = 'gone' WHERE id = 's1'",
        "UPDATE session_events SET key = '/elsewhere', target = '/elsewhere'",
        "UPDATE session_events SET session = 'other'",
        "UPDATE session_events SET kind = 'private'",
    ] {
        let e = m2.batch_execute(sql).expect_err(sql);
        assert_eq!(
            e.code(),
            Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
            "{sql}: {e}"
        );
    }
    // Allowed columns, moved back: kept where they were.
    for sql in [
        "UPDATE sessions SET last_ms = 0 WHERE id = 's1'",
        "UPDATE sessions SET writes = 0, overflowed_ms = NULL WHERE id = 's1'",
        "INSERT INTO sessions (id, started_ms, last_ms) VALUES ('s1', 0, 0)
         ON CONFLICT (id) DO UPDATE SET last_ms = 0",
    ] {
        m2.batch_execute(sql).unwrap();
    }
    // The expiry function, asked to delete everything: only day-old sessions go.
    let n: i64 = m2
        .query_one("SELECT cordon_expire_sessions(9223372036854775807)", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
    assert_eq!(writes(&m, "s1"), 1, "m1's write is still there");
    let (summary, _) = m.session("s1", LIMITS.expire_after).unwrap().unwrap();
    assert!(summary.writes >= 1);
    // Through the store's own API, a machine's role cannot end a session either.
    assert!(f.open("m2").end_session("s1").is_err());
    assert_eq!(writes(&m, "s1"), 1);
}

/// What machines still do with the narrower grants: record, rewrite the same path,
/// overflow, and expire idle sessions (a day old for a machine); an approver ends one.
#[test]
fn machines_still_record_and_expire_sessions() {
    let Some(f) = Fleet::new() else { return };
    let m = f.open("m1");
    m.record_session("s1", &by("w"), &write("/w/a"), LIMITS)
        .unwrap();
    m.record_session("s1", &by("w2"), &write("/w/a"), LIMITS)
        .unwrap();
    let small = SessionLimits {
        max_writes: 1,
        ..LIMITS
    };
    m.record_session("s1", &by("w3"), &write("/w/b"), small)
        .unwrap();
    let v = m.session_view("s1", &["/w/"], LIMITS.expire_after).unwrap();
    assert_eq!(v.writes.len(), 1);
    assert!(v.overflowed.is_some());
    // A session idle for two days (its clock set back by the owner) is deleted by a
    // machine's next record; one idle for an hour is not (a machine's floor is a day),
    // though a one-minute expiry reads it as gone.
    let mut admin = f.cluster.admin_of(&f.db);
    m.record_session("old", &by("w"), &write("/w/c"), LIMITS)
        .unwrap();
    m.record_session("hour", &by("w"), &write("/w/d"), LIMITS)
        .unwrap();
    admin
        .batch_execute(
            "ALTER TABLE sessions DISABLE TRIGGER cordon_session_forward_only;
             UPDATE sessions SET last_ms = last_ms - 172800000 WHERE id = 'old';
             UPDATE sessions SET last_ms = last_ms - 3600000 WHERE id = 'hour';
             ALTER TABLE sessions ENABLE TRIGGER cordon_session_forward_only",
        )
        .unwrap();
    let minute = SessionLimits {
        expire_after: Duration::from_secs(60),
        ..LIMITS
    };
    m.record_session("s2", &by("w"), &write("/w/e"), minute)
        .unwrap();
    let left: Vec<String> = admin
        .query("SELECT id FROM sessions ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(left, vec!["hour", "s1", "s2"]);
    assert!(m.session("hour", minute.expire_after).unwrap().is_none());
    // An approver ends a session.
    assert!(f.open("a1").end_session("s1").unwrap());
    assert!(m.session("s1", LIMITS.expire_after).unwrap().is_none());
}
