#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Soundness of the shell analysis, checked against what commands really do.
//!
//! cordon's analysis claims, for a piece of shell text, which programs run, which files
//! are read, written and deleted, and which connections are attempted. This harness runs
//! a corpus of commands for real, each inside a throwaway root in its own namespaces
//! (`soundness/sandbox.rs`, `soundness/contain.sh`) under strace, and checks that what
//! the processes did is covered by the policy's operations for the same text
//! (`soundness/compare.rs` states the rules and the lists of benign operations).
//! Violations that are understood are listed with their reason in
//! `soundness/known-limits.txt`; any other one fails the test.
//!
//! - `ci_subset` runs about a hundred commands of the corpus (every n-th), in CI.
//! - `full` (ignored by default) runs all of it and prints the report:
//!   `scripts/soundness.sh`, or
//!   `cargo test -p cordon-policy --test soundness -- --ignored --nocapture full`.
//!
//! With `full`, `CORDON_SOUNDNESS_FILTER=TEXT` runs only the commands containing TEXT and
//! `CORDON_SOUNDNESS_CORPUS=FILE` runs the commands of FILE (in the format of
//! `commands.txt`) instead of the corpus;
//! `CORDON_SOUNDNESS_VERBOSE=1` prints every observed operation, and
//! `CORDON_SOUNDNESS_JOBS=N` sets how many commands run at once.
//!
//! Without strace or unprivileged user namespaces the tests print why and pass, unless
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod soundness {
    pub mod compare;
    pub mod corpus;
    pub mod limits;
    pub mod predict;
    pub mod sandbox;
    pub mod trace;
}
use soundness::{compare, corpus, limits, predict, sandbox, trace};

use compare::Violation;
use corpus::Entry;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// About this many commands run in CI.
const CI_SIZE: usize = 100;

fn required() -> bool {
    std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1")
}

fn available(test: &str) -> bool {
    match sandbox::unavailable() {
        None => true,
        Some(why) => {
            assert!(
                !required(),
                "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but the harness cannot run: {why}"
            );
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

/// What happened to one command.
struct Outcome {
    entry: Entry,
    opaque: bool,
    /// The first reason the analysis gave for opacity.
    opaque_why: Option<String>,
    timed_out: bool,
    /// Violations, each with the known limit that covers it (if one does).
    violations: Vec<(Violation, Option<usize>)>,
    /// For an opaque text: how many operations went beyond the prediction.
    beyond: usize,
    harness_error: Option<String>,
    predicted: Vec<String>,
}

struct Report {
    outcomes: Vec<Outcome>,
    elapsed: Duration,
    limits: Vec<limits::Limit>,
}

fn jobs() -> usize {
    std::env::var("CORDON_SOUNDNESS_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1)
}

/// With `CORDON_SOUNDNESS_DUMP=FILE`, every uncovered operation as one JSON line (for
/// working through a run's findings with jq).
fn dump(report: &Report) {
    let Some(path) = std::env::var_os("CORDON_SOUNDNESS_DUMP") else {
        return;
    };
    let mut out = String::new();
    for o in &report.outcomes {
        for (v, l) in &o.violations {
            let line = serde_json::json!({
                "text": o.entry.text, "origin": o.entry.origin, "class": v.class,
                "program": v.program, "target": v.target, "syscall": v.syscall,
                "error": v.error, "argv": v.argv, "predicted": o.predicted,
                "known": l.map(|i| report.limits[i].key.clone()),
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
    }
    std::fs::write(path, out).unwrap();
}

fn run_corpus(entries: Vec<Entry>) -> Report {
    let limits = limits::load().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let seed = sandbox::Seed::build(&dir.path().join("seed")).unwrap_or_else(|e| panic!("{e}"));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let fs = sandbox::SeedFs { seed: &seed };
    let policy = predict::policy(&fs);
    let nameservers = compare::nameservers();
    let verbose = std::env::var_os("CORDON_SOUNDNESS_VERBOSE").is_some();

    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> =
        Mutex::new((0..entries.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for slot in 0..jobs() {
            let (entries, next, results, seed, work, policy, fs, limits, nameservers) = (
                &entries,
                &next,
                &results,
                &seed,
                &work,
                &policy,
                &fs,
                &limits,
                &nameservers,
            );
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(entry) = entries.get(i) else { break };
                    let o = run_one(
                        entry,
                        slot,
                        seed,
                        work,
                        policy,
                        fs,
                        limits,
                        nameservers,
                        verbose,
                    );
                    results.lock().unwrap()[i] = Some(o);
                }
            });
        }
    });
    Report {
        outcomes: results
            .into_inner()
            .unwrap()
            .into_iter()
            .flatten()
            .collect(),
        elapsed: start.elapsed(),
        limits,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    entry: &Entry,
    slot: usize,
    seed: &sandbox::Seed,
    work: &Path,
    policy: &cordon_policy::Policy,
    fs: &sandbox::SeedFs<'_>,
    limits: &[limits::Limit],
    nameservers: &[std::net::IpAddr],
    verbose: bool,
) -> Outcome {
    let pred = predict::predict(policy, fs, &entry.text);
    let mut out = Outcome {
        entry: entry.clone(),
        opaque: !pred.opaque.is_empty(),
        opaque_why: pred.opaque.first().cloned(),
        timed_out: false,
        violations: Vec::new(),
        beyond: 0,
        harness_error: None,
        predicted: pred.summary.clone(),
    };
    let run = match seed.run(work, slot, &entry.text) {
        Ok(r) => r,
        Err(e) => {
            out.harness_error = Some(e);
            return out;
        }
    };
    out.timed_out = run.timed_out;
    let obs = trace::parse(
        &run.trace,
        &run.root,
        Path::new(sandbox::WORKSPACE),
        sandbox::SHELL,
    );
    if !obs.started {
        out.harness_error = Some(format!(
            "the command's shell never started (status {:?}); output: {}",
            run.status,
            run.output.trim()
        ));
        return out;
    }
    if !obs.unparsed.is_empty() {
        out.harness_error = Some(format!(
            "strace lines the parser did not understand: {:?}",
            &obs.unparsed[..obs.unparsed.len().min(3)]
        ));
    }
    let comparison = compare::compare(
        &pred,
        &obs,
        &compare::Inputs {
            fs,
            before: &seed.before,
            after: &run.after,
            nameservers,
        },
    );
    if verbose {
        let mut s = format!("== {} ({})\n", entry.text, entry.origin);
        for p in &pred.summary {
            let _ = writeln!(s, "   predicted {p}");
        }
        for e in &obs.events {
            let _ = writeln!(
                s,
                "   observed [{}] {} {} {}{}",
                e.program,
                e.act.as_str(),
                e.peer
                    .as_ref()
                    .map_or_else(|| e.path.display().to_string(), |p| p.to_string()),
                e.syscall,
                e.error
                    .as_ref()
                    .map(|x| format!(" {x}"))
                    .unwrap_or_default()
            );
        }
        for v in &comparison.violations {
            let _ = writeln!(s, "   UNCOVERED {} [{}] {}", v.class, v.program, v.target);
        }
        let _ = write!(s, "   output: {}", run.output.trim());
        println!("{s}");
    }
    if comparison.opaque {
        out.beyond = comparison.violations.len();
    } else {
        out.violations = comparison
            .violations
            .into_iter()
            .map(|v| {
                let l = limits::find(limits, &v, &entry.text).map(|l| {
                    limits
                        .iter()
                        .position(|x| std::ptr::eq(x, l))
                        .unwrap_or_default()
                });
                (v, l)
            })
            .collect();
    }
    out
}

impl Report {
    fn new_violations(&self) -> usize {
        self.outcomes
            .iter()
            .flat_map(|o| &o.violations)
            .filter(|(_, l)| l.is_none())
            .count()
    }

    /// Known limits no violation of this run matched: fixed gaps whose entries should go.
    fn unused_limits(&self) -> Vec<&str> {
        let used: std::collections::BTreeSet<usize> = self
            .outcomes
            .iter()
            .flat_map(|o| &o.violations)
            .filter_map(|(_, l)| *l)
            .collect();
        self.limits
            .iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, l)| l.origin.as_str())
            .collect()
    }

    /// Commands with at least one violation that a known limit covers.
    fn commands_with_known_limits(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.violations.iter().any(|(_, l)| l.is_some()))
            .count()
    }

    fn harness_errors(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| o.harness_error.is_some())
            .count()
    }

    fn render(&self, full: bool) -> String {
        let mut s = String::new();
        let n = self.outcomes.len();
        let hand = self
            .outcomes
            .iter()
            .filter(|o| !o.entry.origin.starts_with("generated:"))
            .count();
        let opaque = self.outcomes.iter().filter(|o| o.opaque).count();
        let beyond: usize = self.outcomes.iter().map(|o| o.beyond).sum();
        let timed_out = self.outcomes.iter().filter(|o| o.timed_out).count();
        let all: Vec<(&Outcome, &Violation, Option<usize>)> = self
            .outcomes
            .iter()
            .flat_map(|o| o.violations.iter().map(move |(v, l)| (o, v, *l)))
            .collect();
        let with_v = self
            .outcomes
            .iter()
            .filter(|o| !o.violations.is_empty())
            .count();
        let new = all.iter().filter(|(_, _, l)| l.is_none()).count();
        let _ = writeln!(
            s,
            "cordon shell soundness: {n} commands ({hand} hand-written, {} generated) in {:.1}s with {} jobs",
            n - hand,
            self.elapsed.as_secs_f64(),
            jobs()
        );
        let _ = writeln!(
            s,
            "  opaque (the policy asks; not checked): {opaque}, doing {beyond} operations beyond the prediction"
        );
        let _ = writeln!(
            s,
            "  checked: {}, timed out: {timed_out}, harness errors: {}",
            n - opaque,
            self.harness_errors()
        );
        let _ = writeln!(
            s,
            "  violations: {} in {with_v} commands ({} known limits, {new} new)",
            all.len(),
            all.len() - new
        );
        // Per class.
        let mut classes: BTreeMap<&str, (usize, std::collections::BTreeSet<usize>, usize, usize)> =
            BTreeMap::new();
        for (o, v, l) in &all {
            let c = classes.entry(v.class.as_str()).or_default();
            c.0 += 1;
            c.1.insert(*o as *const Outcome as usize);
            if l.is_some() {
                c.2 += 1;
            } else {
                c.3 += 1;
            }
        }
        let _ = writeln!(
            s,
            "\n  {:<15} {:>10} {:>9} {:>6} {:>5}",
            "class", "violations", "commands", "known", "new"
        );
        for (class, (count, cmds, known, new)) in &classes {
            let _ = writeln!(
                s,
                "  {class:<15} {count:>10} {:>9} {known:>6} {new:>5}",
                cmds.len()
            );
        }
        // Violations grouped: the new ones by class, program and the shape of the target;
        // in the full report the known ones too, by class, program and known limit.
        type Group<'a> = Vec<(&'a Outcome, &'a Violation)>;
        type Key = (Option<usize>, String, String, String);
        let mut groups: BTreeMap<Key, Group> = BTreeMap::new();
        for (o, v, l) in &all {
            let key = match l {
                None => (None, v.class.clone(), v.program.clone(), shape(&v.target)),
                Some(_) if full => (*l, v.class.clone(), v.program.clone(), String::new()),
                Some(_) => continue,
            };
            groups.entry(key).or_default().push((o, v));
        }
        let mut heading = None;
        for ((limit, class, program, target), vs) in &groups {
            let known = limit.is_some();
            if heading != Some(known) {
                heading = Some(known);
                let what = if known {
                    "violations covered by known limits (class, program, targets; how many in \
                     how many commands)"
                } else {
                    "NEW violations (class, program, target; how many in how many commands)"
                };
                let _ = writeln!(s, "\n{what}:");
            }
            let (o, v) = vs[0];
            let mut cmds: Vec<&str> = vs.iter().map(|(o, _)| o.entry.text.as_str()).collect();
            cmds.sort();
            cmds.dedup();
            let target = match limit {
                None => target.clone(),
                Some(_) => {
                    let mut shapes: Vec<String> =
                        vs.iter().map(|(_, v)| shape(&v.target)).collect();
                    shapes.sort();
                    shapes.dedup();
                    let more = shapes.len().saturating_sub(4);
                    shapes.truncate(4);
                    let more = if more > 0 {
                        format!(" +{more}")
                    } else {
                        String::new()
                    };
                    format!("{}{more}", shapes.join(" "))
                }
            };
            let _ = writeln!(
                s,
                "  {class:<14} {program:<10} {target}  ({} in {} commands){}\n      e.g. `{}` ({}) → {} {}{}\n      predicted: {}",
                vs.len(),
                cmds.len(),
                limit
                    .map(|l| format!(" [{}]", self.limits[l].origin))
                    .unwrap_or_default(),
                o.entry.text.replace('\n', "⏎"),
                o.entry.origin,
                v.syscall,
                if v.argv.is_empty() {
                    compare::show(&v.target)
                } else {
                    format!("{:?}", v.argv)
                },
                v.error
                    .as_ref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default(),
                o.predicted.join("; ")
            );
            if full && !known {
                for c in cmds.iter().skip(1).take(4) {
                    let _ = writeln!(s, "      also `{}`", c.replace('\n', "⏎"));
                }
            }
        }
        // Known limits seen.
        let mut seen: BTreeMap<usize, Vec<(&Outcome, &Violation)>> = BTreeMap::new();
        for (o, v, l) in &all {
            if let Some(l) = l {
                seen.entry(*l).or_default().push((o, v));
            }
        }
        if !seen.is_empty() {
            let _ = writeln!(s, "\nknown limits seen:");
            for (i, vs) in &seen {
                let l = &self.limits[*i];
                let mut cmds: Vec<&str> = vs.iter().map(|(o, _)| o.entry.text.as_str()).collect();
                cmds.dedup();
                let _ = writeln!(
                    s,
                    "  {}: {} ({} violations in {} commands, e.g. `{}` → {})\n      {}",
                    l.origin,
                    l.key,
                    vs.len(),
                    cmds.len(),
                    cmds[0].replace('\n', "⏎"),
                    compare::show(&vs[0].1.target),
                    l.reason
                );
            }
            if full {
                let unseen: Vec<&str> = self
                    .limits
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !seen.contains_key(i))
                    .map(|(_, l)| l.origin.as_str())
                    .collect();
                if !unseen.is_empty() {
                    let _ = writeln!(s, "known limits not seen in this run: {unseen:?}");
                }
            }
        }
        if full {
            let mut why: BTreeMap<String, usize> = BTreeMap::new();
            for o in self.outcomes.iter().filter(|o| o.opaque) {
                let w = o.opaque_why.clone().unwrap_or_default();
                // Group reasons by their shape, not their details.
                let key = w.split('`').step_by(2).collect::<Vec<_>>().join("…");
                *why.entry(key).or_default() += 1;
            }
            let _ = writeln!(s, "\nopaque texts by the analysis's first reason:");
            let mut why: Vec<_> = why.into_iter().collect();
            why.sort_by_key(|(_, c)| std::cmp::Reverse(*c));
            for (w, c) in why.iter().take(25) {
                let _ = writeln!(s, "  {c:>5}  {w}");
            }
        }
        let errors: Vec<&Outcome> = self
            .outcomes
            .iter()
            .filter(|o| o.harness_error.is_some())
            .collect();
        if !errors.is_empty() {
            let _ = writeln!(s, "\nharness errors:");
            for o in errors.iter().take(20) {
                let _ = writeln!(
                    s,
                    "  `{}`: {}",
                    o.entry.text,
                    o.harness_error.as_deref().unwrap_or("")
                );
            }
        }
        s
    }
}

/// A target generalised for grouping: a path is cut after two components beneath the
/// workspace or the home (three elsewhere), `~` and `./` spelled out.
fn shape(target: &str) -> String {
    if !target.starts_with('/') {
        return target.to_string();
    }
    let (prefix, rest, keep) = if let Some(r) = target.strip_prefix(sandbox::WORKSPACE) {
        ("./", r, 2)
    } else if let Some(r) = target.strip_prefix(sandbox::HOME) {
        ("~/", r, 2)
    } else {
        ("/", target, 3)
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() <= keep {
        format!("{prefix}{}", parts.join("/"))
    } else {
        format!("{prefix}{}/**", parts[..keep].join("/"))
    }
}

/// Every n-th command of the corpus, about `CI_SIZE` of them.
fn ci_entries() -> Vec<Entry> {
    let all = corpus::all();
    let stride = (all.len() / CI_SIZE).max(1);
    all.into_iter().step_by(stride).collect()
}

#[test]
fn observer_sees_what_commands_do() {
    if !available("observer_sees_what_commands_do") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seed = sandbox::Seed::build(&dir.path().join("seed")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let text = "cat ~/.aws/credentials; touch new.txt; rm data.csv; echo hi > /dev/tcp/127.0.0.1/9";
    let run = seed.run(&work, 0, text).unwrap();
    let obs = trace::parse(
        &run.trace,
        &run.root,
        Path::new(sandbox::WORKSPACE),
        sandbox::SHELL,
    );
    assert!(obs.started, "{}", run.output);
    assert!(obs.unparsed.is_empty(), "{:?}", obs.unparsed);
    let has = |act: trace::Act, what: &str| {
        obs.events.iter().any(|e| {
            e.act == act
                && (e.path == Path::new(what)
                    || e.peer.as_ref().is_some_and(|p| p.to_string() == what))
        })
    };
    assert!(has(trace::Act::Read, "/home/user/.aws/credentials"));
    assert!(has(trace::Act::Write, "/home/user/proj/new.txt"));
    assert!(has(trace::Act::Delete, "/home/user/proj/data.csv"));
    assert!(has(trace::Act::Exec, "/usr/bin/rm"));
    assert!(has(trace::Act::Connect, "127.0.0.1:9"));
    // The command's writes stayed in its throwaway root.
    assert!(run.after.contains(Path::new("/home/user/proj/new.txt")));
    assert!(!run.after.contains(Path::new("/home/user/proj/data.csv")));
    assert!(!seed.dir.join("home/user/proj/new.txt").exists());
    assert!(seed.dir.join("home/user/proj/data.csv").exists());

    // Against an empty prediction, every one of them is a violation: the comparison can fail.
    let fs = sandbox::SeedFs { seed: &seed };
    let v = compare::compare(
        &predict::Prediction::default(),
        &obs,
        &compare::Inputs {
            fs: &fs,
            before: &seed.before,
            after: &run.after,
            nameservers: &[],
        },
    );
    let classes: std::collections::BTreeSet<&str> =
        v.violations.iter().map(|v| v.class.as_str()).collect();
    assert_eq!(
        classes.into_iter().collect::<Vec<_>>(),
        [
            "delete-inside",
            "exec",
            "network",
            "read-outside",
            "write-inside"
        ]
    );
    // And against cordon's prediction, none of them is.
    let policy = predict::policy(&fs);
    let pred = predict::predict(&policy, &fs, text);
    let v = compare::compare(
        &pred,
        &obs,
        &compare::Inputs {
            fs: &fs,
            before: &seed.before,
            after: &run.after,
            nameservers: &[],
        },
    );
    assert!(!v.opaque, "{:?}", pred.opaque);
    assert!(v.violations.is_empty(), "{:?}", v.violations);
}

#[test]
fn known_limits_parse_and_match() {
    let l = limits::load().unwrap_or_else(|e| panic!("{e}"));
    let v = |class: &str, program: &str, target: &str| Violation {
        class: class.into(),
        program: program.into(),
        target: target.into(),
        syscall: String::new(),
        error: None,
        argv: Vec::new(),
    };
    let key = |v: &Violation, text: &str| limits::find(&l, v, text).map(|l| l.key.as_str());
    // `DIR/**` covers what is beneath DIR; `when:` narrows an entry to a form of the
    // command.
    let tree = v("write-inside", "git", "/home/user/proj/src/main.rs");
    assert_eq!(key(&tree, "git stash"), Some("write-inside git ./**"));
    let login = v("exec", "sh", "/usr/bin/id");
    assert_eq!(
        key(&login, "sh -lc 'true'"),
        Some("exec {bash,sh,dash} /usr/bin/*")
    );
    assert_eq!(key(&login, "sh -c 'id'"), None);
    // `~` is the decoy home; `*` stays within a component.
    assert!(
        key(
            &v("write-outside", "node", "/home/user/.npm/_logs/x.log"),
            "npm ls"
        )
        .is_some()
    );
    assert!(key(&v("write-outside", "node", "/home/user/x/.npm/y"), "npm ls").is_none());
    // Nothing covers a read of a credential by a program the list does not name.
    assert!(key(&v("read-outside", "cat", "/home/user/.ssh/id_rsa"), "cat x").is_none());
}

#[test]
fn corpus_is_large_enough() {
    let all = corpus::all();
    assert!(all.len() >= 1000, "{} commands", all.len());
    assert!(corpus::hand_written().len() >= 150);
}

#[test]
fn ci_subset() {
    if !available("ci_subset") {
        return;
    }
    let report = run_corpus(ci_entries());
    let text = report.render(false);
    println!("{text}");
    assert!(
        report.new_violations() == 0 && report.harness_errors() == 0,
        "the shell analysis missed operations that commands performed (add a fix, or a known \
         limit with its reason):\n{text}"
    );
}

#[test]
#[ignore = "runs the whole corpus (minutes): scripts/soundness.sh"]
fn full() {
    if !available("full") {
        return;
    }
    let mut entries = match std::env::var_os("CORDON_SOUNDNESS_CORPUS") {
        Some(path) => {
            let text = std::fs::read_to_string(&path).unwrap();
            corpus::parse(&text, &Path::new(&path).display().to_string())
        }
        None => corpus::all(),
    };
    if let Ok(f) = std::env::var("CORDON_SOUNDNESS_FILTER") {
        entries.retain(|e| e.text.contains(&f));
    }
    let whole = std::env::var_os("CORDON_SOUNDNESS_CORPUS").is_none()
        && std::env::var_os("CORDON_SOUNDNESS_FILTER").is_none();
    let report = run_corpus(entries);
    dump(&report);
    let text = report.render(true);
    println!("{text}");
    println!(
        "commands with known limits: {} of {}",
        report.commands_with_known_limits(),
        report.outcomes.len()
    );
    assert!(
        report.new_violations() == 0 && report.harness_errors() == 0,
        "new violations or harness errors (see the report above)"
    );
    // On the whole corpus every entry of known-limits.txt must still be needed: a gap
    // that was closed loses its entry.
    if whole {
        let unused = report.unused_limits();
        assert!(
            unused.is_empty(),
            "known limits that no command needs any more (delete them): {unused:?}"
        );
    }
}
