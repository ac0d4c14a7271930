//! Tests of the decision steps, each alone.

//! Each step of the order on its own, on hand-built operations.
use super::*;
use crate::facts::FakeFs;
use crate::ops::{Opaque, SubCommand};
use crate::paths::{Location, PathFacts};

fn policy(cfg: &str, mode: Option<Mode>) -> Policy {
    let fs = FakeFs::new().dir("/w/proj").file_with(
        "/home/u/.config/cordon/policy.toml",
        1,
        cfg.as_bytes(),
    );
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        mode,
        ..Default::default()
    };
    Policy::load(&opts, &fs).unwrap()
}

fn path_op(kind: OpKind, p: &str, loc: Location) -> Operation {
    let facts = PathFacts {
        literal: p.into(),
        resolved: p.into(),
        exists: true,
        via_symlink: false,
        nlink: 1,
        problem: None,
        same_file: None,
    };
    Operation {
        kind,
        target: Target::Path(facts),
        location: Some(loc),
        command: None,
        hazard: None,
        opaque: None,
        invalid: None,
        mention: false,
        config: false,
        plain_git_setting: false,
        note: String::new(),
    }
}

fn shell_ops(words: &[&str], op: Operation) -> Operations {
    Operations {
        ops: vec![Operation {
            command: Some(0),
            ..op
        }],
        commands: vec![SubCommand {
            words: words.iter().map(|w| w.to_string()).collect(),
            text: words.join(" "),
            in_code: false,
        }],
        tool_kind: Some(ToolKind::Bash),
        tool_name: "bash".into(),
        analysis: None,
    }
}

#[test]
fn validate_step() {
    let p = policy("", None);
    let mut op = path_op(OpKind::Read, "/w/proj/a", Location::Inside);
    assert!(p.step_validate(&op).is_none());
    op.invalid = Some("bad".into());
    assert_eq!(p.step_validate(&op).map(|o| o.0), Some(Decision::Deny));
}

#[test]
fn guard_step() {
    let p = policy("", None);
    let key = path_op(OpKind::Read, "/home/u/.ssh/id_rsa", Location::Outside);
    assert_eq!(p.step_guard(&key).map(|o| o.0), Some(Decision::Deny));
    let fine = path_op(OpKind::Read, "/w/proj/src/a.rs", Location::Inside);
    assert!(p.step_guard(&fine).is_none());
    let mut hazard = path_op(OpKind::Exec, "/x", Location::Inside);
    hazard.hazard = Some(("fetch-to-exec", "curl | sh".into()));
    assert_eq!(p.step_guard(&hazard).map(|o| o.0), Some(Decision::Deny));
}

#[test]
fn rule_steps() {
    let p = policy(
        "[permissions]\ndeny = [\"Bash(rm:*)\"]\nask = [\"Read(./a/**)\"]\nallow = [\"Read(./**)\"]\n",
        None,
    );
    let rm = shell_ops(
        &["rm", "x"],
        path_op(OpKind::Delete, "/w/proj/x", Location::Inside),
    );
    assert_eq!(
        p.step_rule(&rm.ops[0], &rm, Decision::Deny).map(|o| o.0),
        Some(Decision::Deny)
    );
    let read = Operations {
        ops: vec![path_op(OpKind::Read, "/w/proj/a/b", Location::Inside)],
        ..Default::default()
    };
    assert!(p.step_rule(&read.ops[0], &read, Decision::Deny).is_none());
    assert_eq!(
        p.step_rule(&read.ops[0], &read, Decision::Ask).map(|o| o.0),
        Some(Decision::Ask)
    );
    assert_eq!(
        p.step_allow(&read.ops[0], &read).map(|o| o.0),
        Some(Decision::Allow)
    );
}

#[test]
fn opaque_step_needs_literal_names() {
    let p = policy(
        "[permissions]\nallow = [\"Bash(find:*)\", \"Bash(rg --pre ./x:*)\"]\n",
        None,
    );
    let mut op = path_op(OpKind::Opaque, "/", Location::Inside);
    op.target = Target::Program("find".into());
    op.opaque = Some(Opaque {
        why: "-exec".into(),
        needs: Some(vec!["find".into(), "-exec".into()]),
    });
    let find = shell_ops(&["find", ".", "-exec", "rm", "{}", "+"], op.clone());
    assert_eq!(
        p.step_opaque(&find.ops[0], &find).map(|o| o.0),
        Some(Decision::Ask)
    );
    op.opaque = Some(Opaque {
        why: "--pre".into(),
        needs: Some(vec!["rg".into(), "--pre".into()]),
    });
    let rg = shell_ops(&["rg", "--pre", "./x", "foo"], op.clone());
    assert!(p.step_opaque(&rg.ops[0], &rg).is_none(), "named literally");
    op.opaque = Some(Opaque {
        why: "dynamic".into(),
        needs: None,
    });
    let dynamic = shell_ops(&["rg", "--pre", "./x", "foo"], op);
    assert_eq!(
        p.step_opaque(&dynamic.ops[0], &dynamic).map(|o| o.0),
        Some(Decision::Ask)
    );
}

#[test]
fn mode_step() {
    let w = path_op(OpKind::Write, "/w/proj/a", Location::Inside);
    let out = path_op(OpKind::Write, "/tmp/a", Location::Outside);
    let r = path_op(OpKind::Read, "/tmp/a", Location::Outside);
    assert!(policy("", None).step_mode(&w).is_none());
    assert_eq!(
        policy("", Some(Mode::Plan)).step_mode(&w).map(|o| o.0),
        Some(Decision::Deny)
    );
    assert!(policy("", Some(Mode::Plan)).step_mode(&r).is_none());
    assert_eq!(
        policy("", Some(Mode::AcceptEdits))
            .step_mode(&w)
            .map(|o| o.0),
        Some(Decision::Allow)
    );
    assert!(
        policy("", Some(Mode::AcceptEdits))
            .step_mode(&out)
            .is_none()
    );
    assert_eq!(
        policy("", Some(Mode::Bypass)).step_mode(&out).map(|o| o.0),
        Some(Decision::Allow)
    );
    assert!(policy("", Some(Mode::DontAsk)).step_mode(&out).is_none());
}

#[test]
fn default_step() {
    let p = policy(
        "[defaults]\nwrite_outside = \"deny\"\nexec = \"allow\"\n",
        None,
    );
    let d = |op: &Operation| p.step_default(op).0;
    assert_eq!(
        d(&path_op(OpKind::Read, "/w/proj/a", Location::Inside)),
        Decision::Allow
    );
    assert_eq!(
        d(&path_op(OpKind::Read, "/etc/a", Location::Outside)),
        Decision::Ask
    );
    assert_eq!(
        d(&path_op(OpKind::Write, "/tmp/a", Location::Outside)),
        Decision::Deny
    );
    assert_eq!(
        d(&path_op(OpKind::Write, "/w/proj/h", Location::Unknown)),
        Decision::Deny
    );
    assert_eq!(
        d(&path_op(OpKind::Read, "/w/proj/h", Location::Unknown)),
        Decision::Ask
    );
    let mut exec = path_op(OpKind::Exec, "x", Location::Inside);
    exec.target = Target::Program("make".into());
    assert_eq!(d(&exec), Decision::Allow);
    exec.kind = OpKind::Opaque;
    assert_eq!(d(&exec), Decision::Ask, "unclassified is always ask");
}
