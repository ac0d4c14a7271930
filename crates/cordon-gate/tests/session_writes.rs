#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A session knows every write (issue 41): git commands that rewrite the work tree and
//! code whose writes cannot be read, through the gate with a real store.

use cordon_gate::{Containment, Gate, GateOptions, Human, Outcome};
use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request, Step};
use serde_json::json;

const CONFIG: &str = r#"
[permissions]
allow = ["Bash(sh run.sh)", "Bash(git:*)", "Bash(make)", "Bash(python3 gen.py)",
         "Bash(cargo test)", "Bash(cp:*)", "Bash(ls)"]
"#;

struct Setup {
    _dir: tempfile::TempDir,
    gate: Gate,
    fs: FakeFs,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let fs = FakeFs::new()
        .dir("/w/proj/src")
        .file("/w/proj/run.sh")
        .file("/w/proj/Makefile")
        .file("/w/proj/gen.py")
        .dir("/home/u")
        .file_with("/cfg.toml", 1, CONFIG.as_bytes());
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        skip_default_files: true,
        config_files: vec!["/cfg.toml".into()],
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).expect("policy loads");
    let gate = Gate::new(
        policy,
        GateOptions {
            surface: cordon_gate::Surface::Check,
            store: Some(dir.path().join("store.sqlite3")),
            audit: None,
            no_audit: true,
            edits: false,
        },
    );
    Setup {
        _dir: dir,
        gate,
        fs,
    }
}

fn request(session: &str, command: &str) -> Request {
    Request::from_value(json!({"tool": "Bash", "session": session, "cwd": "/w/proj",
                               "input": {"command": command}}))
    .expect("valid request")
}

fn run(s: &Setup, session: &str, command: &str, containment: Containment) -> Outcome {
    s.gate.decide(
        &request(session, command),
        &s.fs,
        containment,
        Human::caller(),
        false,
    )
}

fn allowed(s: &Setup, session: &str, command: &str, containment: Containment) {
    let o = run(s, session, command, containment);
    let v = &o.decided().verdict;
    assert!(
        matches!(o, Outcome::Permitted(_)),
        "`{command}` was not allowed: {:?} {}",
        v.decision,
        v.reason
    );
}

fn asked(s: &Setup, session: &str, command: &str) -> String {
    let o = run(s, session, command, Containment::None);
    let v = &o.decided().verdict;
    assert_eq!(v.decision, Decision::Ask, "`{command}`: {}", v.reason);
    assert_eq!(v.source.step, Step::Session, "`{command}`: {}", v.reason);
    v.reason.clone()
}

/// Why the call's writes cannot be read off it, as the policy says.
fn unseen(s: &Setup, command: &str) -> Option<String> {
    let req = request("x", command);
    let ops = s.gate.policy().operations(&req, &s.fs);
    s.gate
        .policy()
        .session_facts(&req, &ops, &s.fs)
        .unseen
        .map(|u| {
            assert_eq!(u.dir, std::path::Path::new("/w/proj"));
            u.why
        })
}

#[test]
fn git_rewrites_then_the_script_they_wrote_is_asked() {
    let s = setup();
    for (i, git) in [
        "git checkout evil -- run.sh",
        "git restore --source evil run.sh",
        "git restore --sou evil run.sh",
        "git reset --hard evil",
        "git merge evil",
        "git switch evil",
        "git checkout evil",
        "git checkout -f",
        "git cherry-pick abc",
        "git apply x.patch",
        "git stash pop",
        "git -C src checkout evil -- ../run.sh",
        "git --work-tree /w/proj checkout evil -- run.sh",
    ]
    .iter()
    .enumerate()
    {
        let session = format!("g{i}");
        allowed(&s, &session, git, Containment::None);
        let reason = asked(&s, &session, "sh run.sh");
        assert!(reason.contains(git), "{git}: {reason}");
        // `make` runs the Makefile (and the scripts beneath): asked after a whole-tree
        // rewrite, and after `run.sh` was rewritten too.
        asked(&s, &session, "make");
    }
}

#[test]
fn code_whose_writes_cannot_be_read_marks_the_workspace() {
    for (command, marks) in [
        ("python3 gen.py", true),
        ("python3 -c 'print(1)'", true),
        ("node -e 'x'", true),
        ("sh run.sh", true),
        ("./run.sh", true),
        ("python3 - <<'EOF'\nopen('Makefile','w')\nEOF", true),
        ("frobnicate --all", true),
        ("cp a \"$DEST\"", true),
        ("echo x > \"$F\"", true),
        ("$TOOL build", true),
        ("ls | xargs rm", true),
        ("if then fi (", true),
        ("git checkout evil", true),
        ("git pull", true),
        ("make", false),
        ("cargo test", false),
        ("npm test", false),
        ("go test ./...", false),
        ("cp a b", false),
        ("echo x > notes.txt", false),
        ("ls -la", false),
        ("git status", false),
        ("git checkout evil -- run.sh", false),
        ("git commit -m x", false),
        ("bash -c 'ls'", false),
    ] {
        let s = setup();
        let got = unseen(&s, command);
        assert_eq!(got.is_some(), marks, "`{command}`: {got:?}");
    }
}

#[test]
fn only_an_uncontained_or_fallback_run_marks_the_workspace() {
    let s = setup();
    // In the full tier the merge lists what the run wrote (recorded by `cordon exec`):
    // nothing is guessed at decision time.
    allowed(&s, "full", "python3 gen.py", Containment::Full);
    allowed(&s, "full", "sh run.sh", Containment::None);
    // The fallback tier writes the host directly.
    allowed(&s, "fallback", "python3 gen.py", Containment::Fallback);
    let reason = asked(&s, "fallback", "sh run.sh");
    assert!(
        reason.contains("python3 gen.py") && reason.contains("cannot read"),
        "{reason}"
    );
    allowed(&s, "none", "python3 gen.py", Containment::None);
    asked(&s, "none", "make");
}

#[test]
fn a_runner_doing_its_own_job_does_not_mark_the_workspace() {
    let s = setup();
    allowed(&s, "r", "make", Containment::None);
    allowed(&s, "r", "cargo test", Containment::None);
    allowed(&s, "r", "make", Containment::None);
    allowed(&s, "r", "sh run.sh", Containment::None);
}

/// Issue 38: the fingerprint a session-bound (and runs-bound) ask is recorded under is
/// the one computed again from the request and verdict it records, so answering it from
/// what it shows (`cordon approvals`, the console, another machine) leases this call;
/// and the lease that answer makes lets the same call through once.
#[test]
fn a_pending_session_bound_ask_is_approved_for_the_call_it_shows() {
    let s = setup();
    allowed(&s, "p", "git checkout evil -- run.sh", Containment::None);
    let pending = cordon_gate::Human {
        prompter: None,
        absent: cordon_gate::Absent::Pending,
    };
    let o = s.gate.decide(
        &request("p", "sh run.sh"),
        &s.fs,
        Containment::None,
        pending,
        false,
    );
    let Outcome::Pending(d) = o else {
        panic!("not pending: {}", o.decided().verdict.reason)
    };
    assert_eq!(d.verdict.source.step, Step::Session);
    let store = s.gate.open_store().unwrap();
    let p = store.get_pending(d.pending.unwrap()).unwrap();
    assert_eq!(p.fingerprint, d.fingerprint);
    assert_eq!(
        cordon_policy::fingerprint::approval_fingerprint(&p.request, &p.verdict).unwrap(),
        d.fingerprint,
        "recorded: {} / {}",
        p.request,
        p.verdict
    );
    assert!(p.verdict["grant_version"].is_string());
    assert!(
        p.verdict["runs"]["files"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "runs-bound too: {}",
        p.verdict
    );
    store.answer(p.id, cordon_store::Answer::Approve).unwrap();
    allowed(&s, "p", "sh run.sh", Containment::None);
    asked(&s, "p", "sh run.sh");
}
