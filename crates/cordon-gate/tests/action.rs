#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! An action request's `ask` is answered only through the approval store, bound to the
//! request's hash: a pending approval (made once, named again), a human at a prompt
//! whose answer the store records, never anything typed. Nothing here reaches the
//! sandbox: every case ends before launch.

use cordon_action::{ActionPolicy, ActionRequest};
use cordon_gate::action::{ActionOutcome, ActionRun, request_fingerprint};
use cordon_gate::{Absent, Gate, GateOptions, Human};
use cordon_policy::{LoadOptions, Policy, RealFs};
use cordon_store::{Choice, PromptOutcome, Prompter, Question, Store};

struct Says(Choice);

impl Prompter for Says {
    fn ask(&mut self, q: &Question<'_>) -> std::io::Result<PromptOutcome> {
        assert!(q.context.target.contains("delete"), "{}", q.context.target);
        Ok(PromptOutcome::Answered(self.0))
    }
}

struct Case {
    _t: tempfile::TempDir,
    ws: std::path::PathBuf,
    store: std::path::PathBuf,
}

impl Case {
    fn new() -> Case {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join("out")).unwrap();
        std::fs::write(ws.join("out/old.txt"), "old").unwrap();
        Case {
            store: t.path().join("store.sqlite3"),
            ws,
            _t: t,
        }
    }

    fn action(&self, reason: &str) -> ActionRun {
        let w = self.ws.display();
        let policy = ActionPolicy::from_toml(&format!(
            "workspace = \"{w}\"\n[paths]\ndelete = [\"{w}/out/**\"]\n[executables]\nallow = [\"/bin/rm\"]\n"
        ))
        .unwrap();
        let req = ActionRequest::from_json(
            &serde_json::json!({"actor": "a", "capability": "clean", "cwd": self.ws,
                "argv": ["/bin/rm", self.ws.join("out/old.txt")],
                "paths": [{"path": self.ws.join("out/old.txt"), "access": "delete"}],
                "side_effect": "none", "reason": reason})
            .to_string(),
        )
        .unwrap();
        ActionRun::new(req, policy, &RealFs)
    }

    fn gate(&self) -> Gate {
        let opts = LoadOptions {
            workspace: self.ws.clone(),
            home: "/nonexistent".into(),
            skip_default_files: true,
            ..Default::default()
        };
        Gate::new(
            Policy::load(&opts, &RealFs).unwrap(),
            GateOptions {
                surface: cordon_gate::Surface::RunAction,
                store: Some(self.store.clone()),
                audit: None,
                no_audit: true,
                edits: false,
            },
        )
    }
}

fn nobody<'a>() -> Human<'a> {
    Human {
        prompter: None,
        absent: Absent::Pending,
    }
}

#[test]
fn an_ask_becomes_one_pending_approval_bound_to_the_request_hash() {
    let c = Case::new();
    let a = c.action("tidy up");
    let fp = a.fingerprint().to_string();
    let first = match a.run(&c.gate(), &RealFs, "/nonexistent".as_ref(), nobody()) {
        Ok(ActionOutcome::Pending { id, message }) => {
            assert!(
                message.contains(&format!("cordon approvals approve {id}")),
                "{message}"
            );
            id
        }
        other => panic!("{other:?}"),
    };
    let again = c
        .action("tidy up")
        .run(&c.gate(), &RealFs, "/nonexistent".as_ref(), nobody());
    assert!(matches!(again, Ok(ActionOutcome::Pending { id, .. }) if id == first));
    let store = Store::open(&c.store).unwrap();
    let pending = store.pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].fingerprint, fp);
    // Another reason is another request: another hash, another approval.
    let other = c.action("tidy up, really");
    assert_ne!(other.fingerprint(), fp);
    let third = other.run(&c.gate(), &RealFs, "/nonexistent".as_ref(), nobody());
    assert!(matches!(third, Ok(ActionOutcome::Pending { id, .. }) if id != first));
    assert!(c.ws.join("out/old.txt").exists());
}

#[test]
fn a_human_at_the_prompt_who_refuses_stops_the_action() {
    let c = Case::new();
    let mut no = Says(Choice::Deny);
    let human = Human {
        prompter: Some(&mut no),
        absent: Absent::Pending,
    };
    let out = c
        .action("tidy up")
        .run(&c.gate(), &RealFs, "/nonexistent".as_ref(), human);
    match out {
        Ok(ActionOutcome::Refused(why)) => assert!(why.contains("approval refused"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(c.ws.join("out/old.txt").exists());
    assert!(Store::open(&c.store).unwrap().leases().unwrap().is_empty());
}

#[test]
fn the_hash_covers_every_field() {
    let c = Case::new();
    let a = c.action("x");
    let mut req: serde_json::Value = serde_json::to_value(
        ActionRequest::from_json(
            &serde_json::json!({"actor": "a",
            "capability": "clean", "cwd": c.ws, "argv": ["/bin/rm", "f"], "paths": [],
            "side_effect": "none", "reason": "x"})
            .to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let base = request_fingerprint(&serde_json::from_value(req.clone()).unwrap());
    req["argv"][1] = "g".into();
    let changed = request_fingerprint(&serde_json::from_value(req).unwrap());
    assert_ne!(base, changed);
    assert!(a.fingerprint().starts_with("action:"));
}
