//! "Always allow" saves one of the rules offered with the question, and no other: at
//! the terminal (`[a]` the exact call, `[a2]` a generalisation) and for a pending
//! approval answered later (the options are kept with it).
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_store::{
    AskContext, Choice, NoHuman, NoPrompter, PromptOutcome, Prompter, Question, Refusal,
    Resolution, RuleOption, RulePick, Store, resolve_ask,
};
use serde_json::json;

struct Answering(Choice, Vec<Vec<Choice>>);

impl Prompter for Answering {
    fn ask(&mut self, q: &Question<'_>) -> std::io::Result<PromptOutcome> {
        self.1.push(q.choices.clone());
        Ok(PromptOutcome::Answered(self.0))
    }
}

fn store() -> (tempfile::TempDir, Store) {
    let d = tempfile::tempdir().unwrap();
    let s = Store::open(&d.path().join("store.sqlite3")).unwrap();
    (d, s)
}

fn ctx(fp: &str) -> AskContext {
    AskContext {
        fingerprint: fp.into(),
        tool: "Bash".into(),
        tool_kind: "bash".into(),
        target: "git log -5".into(),
        suggestion: Some("Bash(git log -5)".into()),
        suggestions: vec![
            RuleOption::exact("Bash(git log -5)"),
            RuleOption {
                rule: "Bash(git log:*)".into(),
                example: Some("git log -p --all".into()),
            },
        ],
        request: json!({"tool": "Bash", "input": {"command": "git log -5"}}),
        verdict: json!({"decision": "ask"}),
        ..Default::default()
    }
}

fn saved(s: &Store) -> Vec<String> {
    s.rules().unwrap().into_iter().map(|r| r.rule).collect()
}

cordon_store::both_backends! {
fn the_terminal_offers_each_option_and_saves_the_one_picked(b) {
    let s = b.open();
    let mut p = Answering(Choice::AlwaysAllow, Vec::new());
    let r = resolve_ask(&s, &ctx("fp-1"), &mut p, NoHuman::Deny).unwrap();
    assert!(matches!(r, Resolution::Allow(_)), "{r:?}");
    assert_eq!(
        p.1[0],
        [
            Choice::AllowOnce,
            Choice::AlwaysAllow,
            Choice::AlwaysAllowOption(1),
            Choice::Deny
        ]
    );
    assert_eq!(saved(&s), ["Bash(git log -5)"]);

    let (_d, s) = store();
    let mut p = Answering(Choice::AlwaysAllowOption(1), Vec::new());
    let Resolution::Allow(g) = resolve_ask(&s, &ctx("fp-2"), &mut p, NoHuman::Deny).unwrap() else {
        panic!()
    };
    assert_eq!(g.saved_rule(), Some("Bash(git log:*)"));
    assert_eq!(saved(&s), ["Bash(git log:*)"]);

    // An option that was not offered is refused and nothing is saved.
    let (_d, s) = store();
    let mut p = Answering(Choice::AlwaysAllowOption(2), Vec::new());
    let r = resolve_ask(&s, &ctx("fp-3"), &mut p, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::InvalidChoice));
    assert!(saved(&s).is_empty());
    // A list that does not start with the suggestion is not trusted: the suggestion alone.
    let mut odd = ctx("fp-4");
    odd.suggestions.remove(0);
    let mut p = Answering(Choice::AlwaysAllowOption(1), Vec::new());
    let r = resolve_ask(&s, &odd, &mut p, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::InvalidChoice));
    assert_eq!(
        p.1[0],
        [Choice::AllowOnce, Choice::AlwaysAllow, Choice::Deny]
    );
}
}

/// The rules a pending approval offers: derived from the call it shows.
fn rules(p: &cordon_store::Pending) -> Vec<&str> {
    p.suggestions.iter().map(|o| o.rule.as_str()).collect()
}

cordon_store::both_backends! {
fn a_pending_approval_offers_the_rules_of_its_call_and_always_saves_only_one_of_them(b) {
    let s = b.open();
    // Recorded as the gate records it: approving computes its fingerprint again.
    let a = cordon_store::pg_test::asked("git status --short", None, None);
    let asked = AskContext {
        request: a.request,
        verdict: a.verdict,
        ..ctx(&a.fingerprint)
    };
    let Resolution::Pending(id) =
        resolve_ask(&s, &asked, &mut NoPrompter, NoHuman::Pending).unwrap()
    else {
        panic!()
    };
    let listed = s.pending().unwrap();
    assert_eq!(listed[0].suggestion.as_deref(), Some("Bash(git status --short)"));
    assert_eq!(rules(&listed[0]), ["Bash(git status --short)", "Bash(git status:*)"]);

    // A rule that was not offered, or a number past the list: refused, nothing changed.
    for pick in [
        RulePick::Rule("Bash(git:*)".into()),
        RulePick::Rule("Bash(git log -5)".into()),
        RulePick::Number(3),
        RulePick::Number(0),
    ] {
        let e = s.answer_always(id, &pick, "tester").unwrap_err();
        assert!(e.to_string().contains("the rules offered"), "{e}");
        assert!(saved(&s).is_empty());
        assert_eq!(s.pending().unwrap().len(), 1);
    }
    let done = s
        .answer_always(id, &RulePick::parse("2"), "tester")
        .unwrap();
    assert_eq!(done.rule, "Bash(git status:*)");
    assert_eq!(saved(&s), ["Bash(git status:*)"]);
    assert!(s.pending().unwrap().is_empty());
    // Answered: a second answer is refused.
    assert!(s.answer_always(id, &RulePick::Number(1), "tester").is_err());

    // By its text; and a request offered nothing cannot be always allowed.
    let b = cordon_store::pg_test::asked("git log -5", None, None);
    let asked = AskContext {
        request: b.request,
        verdict: b.verdict,
        ..ctx(&b.fingerprint)
    };
    let Resolution::Pending(id) =
        resolve_ask(&s, &asked, &mut NoPrompter, NoHuman::Pending).unwrap()
    else {
        panic!()
    };
    let done = s
        .answer_always(id, &RulePick::parse("Bash(git log -5)"), "tester")
        .unwrap();
    assert_eq!(done.rule, "Bash(git log -5)");
    // A call shown without any rule it can be offered (two programs): approve it once.
    let c = cordon_store::pg_test::asked("git push origin main; make deploy", None, None);
    let asked = AskContext {
        request: c.request,
        verdict: c.verdict,
        ..ctx(&c.fingerprint)
    };
    let Resolution::Pending(id) =
        resolve_ask(&s, &asked, &mut NoPrompter, NoHuman::Pending).unwrap()
    else {
        panic!()
    };
    let e = s
        .answer_always(id, &RulePick::Number(1), "tester")
        .unwrap_err();
    assert!(e.to_string().contains("no narrow rule was offered"), "{e}");
    // Recorded without a workspace or policy version (an earlier cordon): refused before
    // any rule is looked at.
    let Resolution::Pending(id) =
        resolve_ask(&s, &ctx("fp-3"), &mut NoPrompter, NoHuman::Pending).unwrap()
    else {
        panic!()
    };
    let e = s
        .answer_always(id, &RulePick::Number(1), "tester")
        .unwrap_err();
    assert!(e.to_string().contains("nothing was granted"), "{e}");
    assert_eq!(saved(&s), ["Bash(git status:*)", "Bash(git log -5)"]);
}
}

cordon_store::both_backends! {
fn the_rules_an_asking_machine_offers_are_never_what_is_saved(b) {
    let s = b.open();
    // A machine records `git status` offering the tool-wide `Bash`, labelled as the
    // exact call (a machine role may write its own pending rows).
    let a = cordon_store::pg_test::asked("git status", None, None);
    let lying = AskContext {
        request: a.request,
        verdict: a.verdict,
        suggestion: Some("Bash".into()),
        suggestions: vec![RuleOption::exact("Bash"), RuleOption::exact("Bash(git push:*)")],
        ..ctx(&a.fingerprint)
    };
    let Resolution::Pending(id) =
        resolve_ask(&s, &lying, &mut NoPrompter, NoHuman::Pending).unwrap()
    else {
        panic!()
    };
    let shown = s.pending().unwrap();
    assert_eq!(rules(&shown[0]), ["Bash(git status)"]);
    for pick in ["Bash", "Bash(git push:*)"] {
        let e = s
            .answer_always(id, &RulePick::parse(pick), "tester")
            .unwrap_err();
        assert!(e.to_string().contains("the rules offered"), "{e}");
    }
    assert!(saved(&s).is_empty());
    let done = s.answer_always(id, &RulePick::Number(1), "tester").unwrap();
    assert_eq!(done.rule, "Bash(git status)");
    assert_eq!(saved(&s), ["Bash(git status)"]);
}
}

/// A request left waiting by an earlier version (which offered a prefix rule wider than
/// the call, and recorded no workspace) offers no rule after the upgrade: none can be
/// derived from what it shows.
#[test]
fn a_wide_rule_offered_by_an_earlier_version_is_dropped_on_upgrade() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("store.sqlite3");
    let s = Store::open(&path).unwrap();
    for (fp, rule) in [
        ("fp-wide", "Bash(git push:*)"),
        ("fp-exact", "Bash(make test)"),
    ] {
        s.add_pending(
            fp,
            None,
            &json!({"tool": "Bash", "input": {"command": "x"}}),
            &json!({"decision": "ask"}),
            Some(rule),
        )
        .unwrap();
    }
    drop(s);
    // Back to the schema before the offered rules were kept.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "ALTER TABLE pending DROP COLUMN suggestions; DROP TABLE audit_heads; DROP TABLE audit_export; \
             ALTER TABLE pending DROP COLUMN machine; DROP TABLE decisions;
             PRAGMA user_version = 9;",
        )
        .unwrap();
    let s = Store::open(&path).unwrap();
    let p = s.pending().unwrap();
    assert_eq!(
        (p[0].fingerprint.as_str(), p[0].suggestion.as_deref()),
        ("fp-wide", None)
    );
    assert!(p[0].suggestions.is_empty());
    assert_eq!(p[1].suggestion.as_deref(), None);
    assert!(p[1].suggestions.is_empty());
    assert!(
        s.answer_always(p[0].id, &RulePick::Number(1), "tester")
            .is_err()
    );
}
