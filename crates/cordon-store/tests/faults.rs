//! The shared store's server stops and starts under load: every grant the store returned
//! was committed and is still there after the restart, every failure was a `StoreError`
//! (which callers turn into "deny"), no call waited longer than the connect budget, and a
//! connection kept across the restart works again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cordon_store::pg_test::Cluster;
use cordon_store::{Scope, Store, StoreAt, StoreError, StoreErrorKind};

#[derive(Default, Debug)]
struct Seen {
    /// Iterations run (lease `fp-I` and operation `op-I` for each).
    ran: usize,
    granted: Vec<usize>,
    won: Vec<usize>,
    claimed: Vec<usize>,
    errors: usize,
    not_current_after_error: bool,
    slowest_failure: Duration,
}

impl Seen {
    fn failed(
        &mut self,
        what: &str,
        i: usize,
        started: Instant,
        e: &StoreError,
        s: Option<&Store>,
    ) {
        assert!(
            matches!(e.kind(), StoreErrorKind::Unavailable(_)),
            "{what} {i} failed otherwise: {e}"
        );
        self.errors += 1;
        self.slowest_failure = self.slowest_failure.max(started.elapsed());
        if let Some(s) = s {
            self.not_current_after_error |= !s.is_current();
        }
    }
}

/// Grant, spend and claim, one after another, until `stop`, reopening the store when it
/// is no longer current (as the service does).
fn load(at: &StoreAt, stop: &AtomicBool) -> Seen {
    let mut seen = Seen::default();
    let mut store: Option<Store> = None;
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        seen.ran = i + 1;
        let started = Instant::now();
        let s = match store.take().filter(Store::is_current) {
            Some(s) => s,
            None => match Store::open_at(at) {
                Ok(s) => s,
                Err(e) => {
                    seen.failed("open", i, started, &e, None);
                    continue;
                }
            },
        };
        let fp = format!("fp-{i}");
        match s.grant(&fp, Scope::Once, None, "t") {
            Ok(_) => seen.granted.push(i),
            Err(e) => seen.failed("grant", i, started, &e, Some(&s)),
        }
        let started = Instant::now();
        match s.consume(&fp, None) {
            Ok(Some(_)) => seen.won.push(i),
            // Refused: its grant failed (or committed unseen and is spent below).
            Ok(None) => assert!(
                !seen.granted.contains(&i),
                "lease {i} was refused while nobody else claimed it"
            ),
            Err(e) => seen.failed("consume", i, started, &e, Some(&s)),
        }
        let started = Instant::now();
        match s.claim_operation(&format!("op-{i}"), "hook", "fp") {
            Ok(true) => seen.claimed.push(i),
            Ok(false) => panic!("operation {i} was refused while nobody else claimed it"),
            Err(e) => seen.failed("claim", i, started, &e, Some(&s)),
        }
        store = Some(s);
        std::thread::sleep(Duration::from_millis(2));
    }
    seen
}

#[test]
fn a_server_stopped_under_load_loses_no_commit_and_grants_nothing_uncommitted() {
    let Some(c) = Cluster::start_private() else {
        return;
    };
    let db = c.fresh_database();
    let at = StoreAt::Postgres(c.target(&db, "m1"));
    // A connection held across the restart, as a service holds one.
    let held = Store::open_at(&at).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (at, stop) = (at.clone(), stop.clone());
        std::thread::spawn(move || load(&at, &stop))
    };
    std::thread::sleep(Duration::from_millis(300));
    c.stop("immediate");
    std::thread::sleep(Duration::from_millis(400));
    c.restart();
    std::thread::sleep(Duration::from_millis(300));
    c.stop("fast");
    std::thread::sleep(Duration::from_millis(200));
    c.restart();
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::SeqCst);
    let seen = worker.join().unwrap();

    assert!(seen.errors > 0, "the stops were not seen: {seen:?}");
    assert!(
        seen.not_current_after_error,
        "a broken connection stayed current"
    );
    assert!(
        seen.slowest_failure < Duration::from_secs(3),
        "a failing call waited {:?}",
        seen.slowest_failure
    );
    assert!(!seen.won.is_empty() && !seen.claimed.is_empty(), "{seen:?}");

    // Every grant returned was committed: its lease is spent, its claim refuses a replay.
    let s = Store::open_at(&at).unwrap();
    let unspent: HashSet<String> = s
        .leases()
        .unwrap()
        .into_iter()
        .map(|l| l.fingerprint)
        .collect();
    for i in &seen.won {
        assert!(
            !unspent.contains(&format!("fp-{i}")),
            "lease {i} was granted but not spent"
        );
    }
    for i in &seen.claimed {
        assert!(
            !s.claim_operation(&format!("op-{i}"), "hook", "fp").unwrap(),
            "operation {i} was granted but its claim is gone"
        );
    }
    // What failed either committed (spent, used by nobody) or not: a lease is never
    // granted twice.
    for i in 0..seen.ran {
        let fp = format!("fp-{i}");
        let _ = s.consume(&fp, None).unwrap();
        assert!(s.consume(&fp, None).unwrap().is_none());
    }

    // The held connection reconnects by itself after the restart.
    let mut ok = false;
    for _ in 0..3 {
        if held.rules().is_ok() {
            ok = true;
            break;
        }
    }
    assert!(
        ok,
        "a connection held across the restart never worked again"
    );
    assert!(held.is_current());
    eprintln!(
        "faults: {} iterations, {} spent, {} claimed, {} failed calls, slowest failure {:?}",
        seen.ran,
        seen.won.len(),
        seen.claimed.len(),
        seen.errors,
        seen.slowest_failure
    );
}

/// The server ends this connection (an administrator, a failover): the next call fails
/// with one sentence naming the database, the store is no longer current, and the call
/// after that reconnects and finds what was committed before.
#[test]
fn a_connection_ended_by_the_server_fails_closed_then_reconnects() {
    let Some(c) = Cluster::shared() else { return };
    let db = c.fresh_database();
    let at = StoreAt::Postgres(c.target(&db, "m1"));
    let s = Store::open_at(&at).unwrap();
    s.grant("fp", Scope::Once, None, "t").unwrap();
    let ended: i64 = c
        .admin()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
            &[&db],
        )
        .unwrap()
        .get(0);
    assert!(ended >= 1);
    let err = s.consume("fp", None).unwrap_err();
    assert!(
        matches!(err.kind(), StoreErrorKind::Unavailable(_)),
        "{err}"
    );
    assert!(err.to_string().contains(&db), "{err}");
    assert!(!s.is_current(), "a broken connection stayed current");
    let used = s.consume("fp", None).unwrap();
    assert!(
        used.is_some(),
        "the lease committed before the break is there"
    );
    assert!(s.is_current());
}

/// Another machine holds the fleet's write lock past the busy timeout: the call fails as
/// `Locked` and grants nothing (the second spelling of SQLite's locked store).
#[test]
fn a_write_lock_held_elsewhere_grants_nothing() {
    let Some(c) = Cluster::shared() else { return };
    let db = c.fresh_database();
    let t = c.target(&db, "m1");
    let s = Store::open_pg(
        &t,
        &cordon_store::StoreOptions {
            busy_timeout: Duration::from_millis(300),
        },
    )
    .unwrap();
    s.grant("fp", Scope::Once, None, "t").unwrap();
    let mut other = postgres::Client::connect(&c.url(&db), postgres::NoTls).unwrap();
    other
        .batch_execute("SELECT pg_advisory_lock(1668248164)")
        .unwrap();
    let start = Instant::now();
    let err = s.consume("fp", None).unwrap_err();
    assert!(matches!(err.kind(), StoreErrorKind::Locked), "{err}");
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(
        s.is_current(),
        "a lock timeout does not break the connection"
    );
    other
        .batch_execute("SELECT pg_advisory_unlock(1668248164)")
        .unwrap();
    assert!(
        s.consume("fp", None).unwrap().is_some(),
        "nothing was spent while locked"
    );
}

/// The server's processes (the postmaster of `c` and its children): found by the pid in
/// its data directory's `postmaster.pid` and the parent pid in `/proc/PID/stat`.
fn server_pids(c: &Cluster) -> Vec<String> {
    let pidfile = c.socket_dir().join("data/postmaster.pid");
    let text = std::fs::read_to_string(&pidfile).unwrap();
    let master = text.lines().next().unwrap().trim().to_string();
    let mut pids = vec![master.clone()];
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the fields after the last ')'.
        let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
        if after.split_whitespace().nth(1) == Some(master.as_str()) {
            pids.push(name);
        }
    }
    pids
}

fn signal(pids: &[String], sig: &str) {
    let ok = std::process::Command::new("kill")
        .arg(sig)
        .args(pids)
        .status()
        .unwrap();
    assert!(ok.success(), "kill {sig} {pids:?}");
}

/// Run `f`, failing the whole test process when it has not returned within `limit`: the
/// bug this guards against is a call that never returns, which must fail CI, not hang it.
/// The server's processes `pids` are resumed first, so that none is left stopped.
fn watchdog<T>(what: &'static str, limit: Duration, pids: &[String], f: impl FnOnce() -> T) -> T {
    let pids = pids.to_vec();
    let done = Arc::new(AtomicBool::new(false));
    let seen = done.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < limit {
            if seen.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{what} still hung after {limit:?}: a stalled server blocks the store");
        signal(&pids, "-CONT");
        std::process::exit(101);
    });
    let r = f();
    done.store(true, Ordering::SeqCst);
    r
}

/// Every process of the server stopped (SIGSTOP: a frozen host, a stalled server, which
/// enforces none of its own timeouts): each call on an open store, and opening a store,
/// fails as `Unavailable` naming the database within its client-side deadline; after
/// SIGCONT the store reconnects and finds what was committed before.
#[test]
fn a_stalled_server_fails_each_call_within_its_deadline_then_reconnects() {
    let Some(c) = Cluster::start_private() else {
        return;
    };
    let db = c.fresh_database();
    let t = c.target(&db, "m1");
    // A short lock timeout: a round trip's deadline is this plus 2 s.
    let options = cordon_store::StoreOptions {
        busy_timeout: Duration::from_millis(500),
    };
    let answer = Duration::from_millis(2500);
    let connect = Duration::from_millis(2500);
    let margin = Duration::from_millis(700);
    let s = Store::open_pg(&t, &options).unwrap();
    s.grant("fp-a", Scope::Once, None, "t").unwrap();
    s.grant("fp-b", Scope::Once, None, "t").unwrap();
    assert!(s.claim_operation("op-1", "hook", "fp").unwrap());
    // A second connection, idle with its statements prepared, as a service holds one.
    let idle = Store::open_pg(&t, &options).unwrap();
    assert!(idle.leases().unwrap().len() == 2);

    let pids = server_pids(&c);
    assert!(pids.len() > 2, "the server's processes: {pids:?}");
    signal(&pids, "-STOP");
    let expect_unavailable =
        |what: &str, limit: Duration, r: Result<(), StoreError>, took: Duration| {
            let err = r.expect_err(what);
            assert!(
                matches!(err.kind(), StoreErrorKind::Unavailable(_)),
                "{what}: {err}"
            );
            assert!(err.to_string().contains(&db), "{what}: {err}");
            assert!(took < limit + margin, "{what} took {took:?}");
            eprintln!("stalled: {what} failed after {took:?}: {err}");
        };
    let results = watchdog(
        "a call on a stalled server",
        Duration::from_secs(20),
        &pids,
        || {
            let mut r = Vec::new();
            // A write (BEGIN and the write lock), then the same store again (it reconnects:
            // the login is what stalls now), a read on a prepared connection, a claim, an open.
            let t0 = Instant::now();
            r.push((
                "consume",
                answer,
                s.consume("fp-a", None).map(|_| ()),
                t0.elapsed(),
            ));
            let t0 = Instant::now();
            r.push((
                "a reconnecting claim",
                connect,
                s.claim_operation("op-2", "hook", "fp").map(|_| ()),
                t0.elapsed(),
            ));
            let t0 = Instant::now();
            r.push(("a read", answer, idle.leases().map(|_| ()), t0.elapsed()));
            let t0 = Instant::now();
            r.push((
                "open",
                connect,
                Store::open_pg(&t, &options).map(|_| ()),
                t0.elapsed(),
            ));
            let t0 = Instant::now();
            r.push((
                "open with the defaults",
                connect,
                Store::open_at(&StoreAt::Postgres(t.clone())).map(|_| ()),
                t0.elapsed(),
            ));
            r
        },
    );
    signal(&pids, "-CONT");
    for (what, limit, r, took) in results {
        expect_unavailable(what, limit, r, took);
    }
    assert!(!s.is_current() && !idle.is_current());

    // Running again: both stores reconnect and find what was committed before the stop.
    let used = watchdog(
        "a call after SIGCONT",
        Duration::from_secs(20),
        &pids,
        || s.consume("fp-a", None),
    );
    assert!(
        used.unwrap().is_some(),
        "the lease granted before the stall is there"
    );
    assert!(s.is_current());
    assert!(
        !s.claim_operation("op-1", "hook", "fp").unwrap(),
        "the claim committed before the stall is there"
    );
    assert!(idle.consume("fp-b", None).unwrap().is_some());
    assert!(idle.consume("fp-a", None).unwrap().is_none(), "spent once");
}
