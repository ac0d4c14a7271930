//! Hook payloads of Claude Code, Codex and Gemini CLI.
//!
//! The first byte picks the harness, the rest is the payload. Properties:
//! - always an answer: exit 0 or the blocking exit 2; exit 2 with a reason on stderr; any
//!   stdout is one JSON object on one line;
//! - never allow what `cordon check` denies: when the same request through a gate of its
//!   own (as `cordon check` takes it) is refused, the reply does not allow it (for Codex,
//!   whose allow is silence, a pre-tool reply is then a block);
//! - a permission request is never answered "allow".

use cordon_gate::{Containment, Gate, GateOptions, Human, Outcome};
use cordon_hook::{BLOCK_EXIT, Containing, Event, Harness};
use cordon_policy::{FakeFs, LoadOptions, Policy};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

struct World {
    fs: FakeFs,
    policy: Policy,
    check_store: PathBuf,
    hook_store: PathBuf,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        // The stores, removed when the process exits.
        let dir = crate::scratch::process_dir("cordon-fuzz-hook");
        let fs = FakeFs::new()
            .dir("/w/proj/src")
            .file("/w/proj/src/main.rs")
            .file("/w/proj/README.md")
            .dir("/home/u/.ssh")
            .file("/home/u/.ssh/id_rsa");
        let opts = LoadOptions {
            workspace: "/w/proj".into(),
            home: "/home/u".into(),
            skip_default_files: true,
            ..Default::default()
        };
        let policy = Policy::load(&opts, &fs).expect("the default policy loads");
        World {
            check_store: dir.join("check.sqlite3"),
            hook_store: dir.join("hook.sqlite3"),
            fs,
            policy,
        }
    })
}

fn gate(harness: Harness, store: &std::path::Path, policy: Policy) -> Gate {
    Gate::new(
        policy,
        GateOptions {
            // The harness's surface only labels audit records (none are written here).
            surface: harness.surface(),
            store: Some(store.to_path_buf()),
            audit: None,
            no_audit: true,
            edits: false,
        },
    )
}

/// The property.
pub fn check(data: &[u8]) {
    let Some((&first, payload)) = data.split_first() else {
        return;
    };
    let harness = Harness::ALL[usize::from(first) % Harness::ALL.len()];
    let w = world();
    let call = match cordon_hook::parse(harness, payload) {
        Ok(c) => c,
        // The binary answers a payload that does not parse with Reply::block.
        Err(e) => {
            assert!(
                !e.to_string().trim().is_empty(),
                "an unreadable payload needs a reason"
            );
            return;
        }
    };
    let Ok(narrowed) = cordon_hook::narrow(w.policy.clone(), call.mode.as_ref()) else {
        return;
    };
    // `cordon check` on the same request (no human at hand: an ask stays an ask).
    let checker = gate(harness, &w.check_store, w.policy.clone());
    let checked = checker.decide(
        &call.request,
        &w.fs,
        Containment::None,
        Human::caller(),
        false,
    );
    let denied = matches!(checked, Outcome::Refused(_));
    let hook = gate(harness, &w.hook_store, narrowed);
    let reply = cordon_hook::answer(&hook, &call, &w.fs, &Containing::default());
    assert!(
        reply.status == 0 || reply.status == BLOCK_EXIT,
        "exit {} is neither an answer nor a block",
        reply.status
    );
    if reply.status == BLOCK_EXIT {
        assert!(reply.stdout.is_empty(), "a block prints nothing on stdout");
        assert!(
            reply.stderr.trim().len() > "cordon:".len(),
            "a block says why"
        );
        return;
    }
    let answer: Option<Value> = (!reply.stdout.is_empty()).then(|| {
        assert!(
            reply.stdout.ends_with('\n') && reply.stdout.matches('\n').count() == 1,
            "stdout is one line: {:?}",
            reply.stdout
        );
        serde_json::from_str(&reply.stdout).expect("stdout is JSON")
    });
    let allows = match (&answer, call.event, harness) {
        (None, Event::PreTool, Harness::Codex) => true,
        (None, _, _) => false,
        (Some(v), _, _) => {
            v.pointer("/hookSpecificOutput/permissionDecision") == Some(&Value::from("allow"))
                || v.get("decision") == Some(&Value::from("allow"))
                || v.pointer("/hookSpecificOutput/decision/behavior") == Some(&Value::from("allow"))
        }
    };
    if call.event == Event::PermissionRequest {
        assert!(
            !allows,
            "a permission request was answered allow: {answer:?}"
        );
    }
    if call.event == Event::PreTool {
        assert!(
            !(denied && allows),
            "check denies {:?} but the {} hook allows it: {:?}",
            call.request,
            harness.name(),
            reply
        );
    }
}
