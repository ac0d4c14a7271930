//! `cordon import`'s conversions, end to end: the produced TOML loads with cordon's real
//! config loader, and calls get the verdicts the source settings gave them.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::import::{ClaudeSource, Imported, RemarkKind, claude_settings, codex_rules};
use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, Request};
use std::path::PathBuf;

const CLAUDE: &str = include_str!("import/claude-settings.json");
const CODEX: &str = include_str!("import/default.rules");

fn load(toml: &str) -> (Policy, FakeFs) {
    let fs = FakeFs::new()
        .dir("/w/proj/src")
        .dir("/w/proj/build")
        .dir("/home/u")
        .file_with("/w/proj/src/main.rs", 1, b"fn main() {}")
        .file_with("/w/proj/.env", 1, b"TOKEN=x")
        .file_with("/tmp/imported.toml", 1, toml.as_bytes());
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        config_files: vec![PathBuf::from("/tmp/imported.toml")],
        skip_default_files: true,
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    (policy, fs)
}

fn verdict(p: &Policy, fs: &FakeFs, json: &str) -> Decision {
    let req = Request::from_json(json).unwrap();
    p.decide(&req, fs).decision
}

fn shell(p: &Policy, fs: &FakeFs, cmd: &str) -> Decision {
    let req = Request::shell(cmd, Some("/w/proj".into()));
    let v = p.decide(&req, fs);
    eprintln!("{cmd}: {} ({})", v.decision, v.reason);
    v.decision
}

fn remark<'a>(i: &'a Imported, item: &str) -> Option<&'a cordon_policy::import::Remark> {
    i.remarks.iter().find(|r| r.item == item)
}

fn claude() -> Imported {
    let src = ClaudeSource::from_path(
        std::path::Path::new("/w/proj/.claude/settings.json"),
        std::path::Path::new("/home/u"),
    );
    claude_settings(CLAUDE, &src).unwrap()
}

#[test]
fn claude_settings_load_and_keep_their_verdicts() {
    let out = claude();
    let (p, fs) = load(&out.toml);
    assert_eq!(p.mode(), cordon_policy::Mode::AcceptEdits);
    assert!(
        p.sandbox()
            .writable_roots
            .iter()
            .any(|r| r.ends_with("shared-lib")),
        "{:?}",
        p.sandbox()
    );
    assert_eq!(shell(&p, &fs, "npm run test -- --watch"), Decision::Allow);
    assert_eq!(shell(&p, &fs, "git diff HEAD~1"), Decision::Allow);
    assert_eq!(shell(&p, &fs, "git push origin main"), Decision::Ask);
    assert_eq!(shell(&p, &fs, "curl https://example.com"), Decision::Deny);
    let read_env = r#"{"tool":"Read","input":{"file_path":"/w/proj/.env"}}"#;
    assert_eq!(verdict(&p, &fs, read_env), Decision::Deny);
    let write_build =
        r#"{"tool":"Write","input":{"file_path":"/w/proj/build/out.js","content":""}}"#;
    assert_eq!(verdict(&p, &fs, write_build), Decision::Deny);
    let fetch = r#"{"tool":"WebFetch","input":{"url":"https://pastebin.com/x","prompt":"p"}}"#;
    assert_eq!(verdict(&p, &fs, fetch), Decision::Deny);
    // Ask is checked before allow, in Claude Code as in cordon: the server-wide ask wins
    // over the allow for one of its tools.
    let mcp = r#"{"tool":"mcp__github__get_issue","input":{}}"#;
    assert_eq!(verdict(&p, &fs, mcp), Decision::Ask);
    let mcp_memory = r#"{"tool":"mcp__memory__read_graph","input":{}}"#;
    assert_eq!(verdict(&p, &fs, mcp_memory), Decision::Allow);
}

#[test]
fn claude_report_names_what_was_not_converted() {
    let out = claude();
    assert!(!out.complete());
    for (item, kind) in [
        ("Bash(git commit -m \"wip\")", RemarkKind::Skipped),
        ("Write(./notes/**)", RemarkKind::Skipped),
        ("Grep", RemarkKind::Skipped),
        ("Bash(* --force)", RemarkKind::Skipped),
        ("Task(Explore)", RemarkKind::Skipped),
        (
            "permissions.disableBypassPermissionsMode",
            RemarkKind::Skipped,
        ),
        ("Write", RemarkKind::Wider),
        ("Read(*.pem)", RemarkKind::Wider),
        ("model", RemarkKind::Ignored),
        ("env", RemarkKind::Ignored),
    ] {
        let r = remark(&out, item)
            .unwrap_or_else(|| panic!("no remark for {item}: {:#?}", out.remarks));
        assert_eq!(r.kind, kind, "{r}");
    }
    // A skipped entry is absent from the config.
    assert!(!out.toml.contains("git commit"), "{}", out.toml);
    assert!(!out.toml.contains("notes"), "{}", out.toml);
    assert!(!out.toml.contains("--force"), "{}", out.toml);
    // Every converted rule is in the config.
    for rule in [
        "Bash(npm run test:*)",
        "Read(//opt/shared/docs/**)",
        "Read(~/.gitconfig)",
        "Edit(./*.md)",
        "Read(**/*.pem)",
    ] {
        assert!(out.toml.contains(rule), "{rule} missing:\n{}", out.toml);
    }
}

#[test]
fn an_allow_is_never_widened() {
    // Each of these allows could only be written more widely in cordon: skipped, and the
    // call it would have covered is not allowed by the import.
    let text = r#"{"permissions":{"allow":["Write","MultiEdit(./a/**)","LS","Bash(git commit -m \"x\")"]}}"#;
    let out = claude_settings(text, &ClaudeSource::default()).unwrap();
    assert_eq!(out.skipped().count(), 4, "{:#?}", out.remarks);
    let (p, fs) = load(&out.toml);
    let edit = r#"{"tool":"Edit","input":{"file_path":"/w/proj/src/main.rs","old_string":"a","new_string":"b"}}"#;
    assert_eq!(verdict(&p, &fs, edit), Decision::Ask);
    assert!(p.rules().is_empty());
    // The same entries as denies are kept, wider, and say so.
    let text = r#"{"permissions":{"deny":["Write","MultiEdit(./a/**)","LS"]}}"#;
    let out = claude_settings(text, &ClaudeSource::default()).unwrap();
    assert!(out.complete());
    assert_eq!(
        out.remarks
            .iter()
            .filter(|r| r.kind == RemarkKind::Wider)
            .count(),
        3
    );
    let (p, fs) = load(&out.toml);
    assert_eq!(verdict(&p, &fs, edit), Decision::Deny);
}

#[test]
fn the_bare_permissions_block_is_accepted() {
    let out = claude_settings(
        r#"{"allow":["Bash(ls:*)"],"defaultMode":"plan"}"#,
        &ClaudeSource::default(),
    )
    .unwrap();
    assert!(out.complete(), "{:#?}", out.remarks);
    let (p, _) = load(&out.toml);
    assert_eq!(p.mode(), cordon_policy::Mode::Plan);
}

fn codex() -> Imported {
    codex_rules(CODEX).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn codex_rules_load_and_keep_their_verdicts() {
    let out = codex();
    let (p, fs) = load(&out.toml);
    assert_eq!(shell(&p, &fs, "git push origin main"), Decision::Ask);
    assert_eq!(shell(&p, &fs, "git fetch"), Decision::Ask);
    assert_eq!(shell(&p, &fs, "rm -rf build"), Decision::Deny);
    assert_eq!(shell(&p, &fs, "cargo test --workspace"), Decision::Allow);
    // The justification travels with the rule.
    let req = Request::shell("rm -rf build", Some("/w/proj".into()));
    assert!(p.decide(&req, &fs).reason.contains("trash"));
    // Alternatives became one rule each.
    for r in [
        "Bash(gh pr view:*)",
        "Bash(gh pr list:*)",
        "Bash(git push:*)",
        "Bash(git fetch:*)",
    ] {
        assert!(
            p.rules().iter().any(|x| x.text == r),
            "{r} missing:\n{}",
            out.toml
        );
    }
}

#[test]
fn codex_report_names_lines_outside_the_subset() {
    let out = codex();
    let skipped: Vec<usize> = out.skipped().filter_map(|r| r.line).collect();
    assert_eq!(skipped, vec![26, 27, 30, 32], "{:#?}", out.remarks);
    assert!(!out.toml.contains("hello"), "{}", out.toml);
    assert!(!out.toml.contains("make"), "{}", out.toml);
    assert!(!out.complete());
}

#[test]
fn codex_examples_are_judged_by_cordon() {
    let out = codex();
    // Every `match` example whose cordon verdict differs from Codex's decision is
    // reported; the rest agree. Check the agreement directly.
    let (p, fs) = load(&out.toml);
    for (ex, want) in [
        ("git push origin main", Decision::Ask),
        ("git fetch", Decision::Ask),
    ] {
        let differs = out
            .remarks
            .iter()
            .any(|r| r.kind == RemarkKind::Differs && r.item == ex);
        assert_eq!(
            shell(&p, &fs, ex) != want,
            differs,
            "{ex}: {:#?}",
            out.remarks
        );
    }
    for r in out.remarks.iter().filter(|r| r.kind == RemarkKind::Differs) {
        assert!(r.why.contains("Codex decides"), "{r}");
    }
}

#[test]
fn invalid_input_is_refused_with_a_position() {
    for bad in [
        "{ not json",
        "[1, 2]",
        "{\"permissions\": {\"allow\": [true]}}",
    ] {
        let e = claude_settings(bad, &ClaudeSource::default()).unwrap_err();
        assert!(!e.message.is_empty());
    }
    let e = codex_rules("prefix_rule(pattern = [\"git\", \"push\"\n").unwrap_err();
    assert_eq!(e.position, Some((1, 23)), "{e}");
    let e = codex_rules("prefix_rule(pattern = [\"git\"], decision = \"deny\")").unwrap_err();
    assert!(e.message.contains("allow, prompt or forbidden"), "{e}");
    let e = codex_rules("prefix_rule(pattern = \"git\")").unwrap_err();
    assert!(e.message.contains("must be a list"), "{e}");
}
