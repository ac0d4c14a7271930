//! The approval flow with a scripted prompter: order of evaluation and each choice.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_store::{
    AskContext, Choice, GrantSource, NoHuman, NoPrompter, PromptOutcome, Prompter, Question,
    Refusal, Resolution, Scope, resolve_ask,
};
use serde_json::json;

/// Answers from a script and records what it was asked.
struct Scripted {
    answers: Vec<std::io::Result<PromptOutcome>>,
    asked: Vec<Vec<Choice>>,
}

impl Scripted {
    fn new(answers: Vec<std::io::Result<PromptOutcome>>) -> Self {
        Scripted {
            answers,
            asked: Vec::new(),
        }
    }
    fn answering(c: Choice) -> Self {
        Scripted::new(vec![Ok(PromptOutcome::Answered(c))])
    }
}

impl Prompter for Scripted {
    fn ask(&mut self, q: &Question<'_>) -> std::io::Result<PromptOutcome> {
        self.asked.push(q.choices.clone());
        if self.answers.is_empty() {
            panic!("asked more often than scripted");
        }
        self.answers.remove(0)
    }
}

fn ctx(fp: &str, session: Option<&str>) -> AskContext {
    AskContext {
        fingerprint: fp.into(),
        session: session.map(Into::into),
        tool: "Bash".into(),
        tool_kind: "bash".into(),
        target: "npm run test -- --watch".into(),
        consequence: "runs a repository script".into(),
        reason: "no rule allows npm run".into(),
        suggestion: Some("Bash(npm run test:*)".into()),
        suggestions: Vec::new(),
        request: json!({"tool": "Bash", "input": {"command": "npm run test -- --watch"}}),
        verdict: json!({"decision": "ask"}),
        operation_id: None,
        editable_input: None,
    }
}

cordon_store::both_backends! {
fn offers_all_four_choices_with_session_and_suggestion(b) {
    let s = b.open();
    let mut p = Scripted::answering(Choice::Deny);
    let r = resolve_ask(&s, &ctx("fp", Some("s1")), &mut p, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::Human));
    assert_eq!(
        p.asked,
        vec![vec![
            Choice::AllowOnce,
            Choice::AllowSession,
            Choice::AlwaysAllow,
            Choice::Deny
        ]]
    );
}
}

cordon_store::both_backends! {
fn no_session_no_suggestion_offers_once_or_deny(b) {
    let s = b.open();
    let mut c = ctx("fp", None);
    c.suggestion = None;
    let mut p = Scripted::answering(Choice::AllowSession);
    let r = resolve_ask(&s, &c, &mut p, NoHuman::Deny).unwrap();
    assert_eq!(p.asked, vec![vec![Choice::AllowOnce, Choice::Deny]]);
    assert_eq!(
        r,
        Resolution::Deny(Refusal::InvalidChoice),
        "a choice not offered denies"
    );
    assert!(s.leases().unwrap().is_empty());
}
}

cordon_store::both_backends! {
fn allow_once_asks_again_next_time(b) {
    let s = b.open();
    let mut p = Scripted::new(vec![
        Ok(PromptOutcome::Answered(Choice::AllowOnce)),
        Ok(PromptOutcome::Answered(Choice::Deny)),
    ]);
    let Resolution::Allow(g) =
        resolve_ask(&s, &ctx("fp", Some("s1")), &mut p, NoHuman::Deny).unwrap()
    else {
        panic!()
    };
    assert_eq!(g.scope(), &Scope::Once);
    assert_eq!(g.answer(), "allow-once");
    assert_eq!(g.fingerprint(), "fp");
    let r = resolve_ask(&s, &ctx("fp", Some("s1")), &mut p, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::Human));
    assert_eq!(p.asked.len(), 2);
}
}

cordon_store::both_backends! {
fn allow_session_is_reused_in_that_session_only(b) {
    let s = b.open();
    let mut p = Scripted::answering(Choice::AllowSession);
    let Resolution::Allow(g) =
        resolve_ask(&s, &ctx("fp", Some("s1")), &mut p, NoHuman::Deny).unwrap()
    else {
        panic!()
    };
    assert_eq!(g.scope(), &Scope::Session("s1".into()));
    // Same session: no question, the lease answers.
    let mut silent = Scripted::new(vec![]);
    let Resolution::Allow(again) =
        resolve_ask(&s, &ctx("fp", Some("s1")), &mut silent, NoHuman::Deny).unwrap()
    else {
        panic!()
    };
    assert!(matches!(again.source(), GrantSource::Lease(u) if u.lease == g.lease()));
    // Another session is asked (and here nobody is there).
    let r = resolve_ask(&s, &ctx("fp", Some("s2")), &mut NoPrompter, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::NoHuman));
    // Another invocation in the same session is asked too.
    let r = resolve_ask(
        &s,
        &ctx("fp-other", Some("s1")),
        &mut NoPrompter,
        NoHuman::Deny,
    )
    .unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::NoHuman));
}
}

cordon_store::both_backends! {
fn always_allow_saves_the_exact_rule(b) {
    let s = b.open();
    let mut p = Scripted::answering(Choice::AlwaysAllow);
    let Resolution::Allow(g) =
        resolve_ask(&s, &ctx("fp", Some("s1")), &mut p, NoHuman::Deny).unwrap()
    else {
        panic!()
    };
    assert_eq!(g.saved_rule(), Some("Bash(npm run test:*)"));
    let rules = s.rules().unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!(
        (rules[0].rule.as_str(), rules[0].tool_kind.as_str()),
        ("Bash(npm run test:*)", "bash")
    );
    // The exact invocation is now allowed in any session without asking.
    let r = resolve_ask(
        &s,
        &ctx("fp", Some("s9")),
        &mut Scripted::new(vec![]),
        NoHuman::Deny,
    )
    .unwrap();
    assert!(matches!(r, Resolution::Allow(_)));
}
}

cordon_store::both_backends! {
fn deny_records_nothing(b) {
    let s = b.open();
    let r = resolve_ask(
        &s,
        &ctx("fp", Some("s1")),
        &mut Scripted::answering(Choice::Deny),
        NoHuman::Pending,
    )
    .unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::Human));
    assert!(
        s.leases().unwrap().is_empty()
            && s.rules().unwrap().is_empty()
            && s.pending().unwrap().is_empty()
    );
}
}

cordon_store::both_backends! {
fn prompt_failure_denies(b) {
    let s = b.open();
    let mut p = Scripted::new(vec![Err(std::io::Error::other("terminal hung up"))]);
    let r = resolve_ask(&s, &ctx("fp", None), &mut p, NoHuman::Pending).unwrap();
    assert!(matches!(r, Resolution::Deny(Refusal::PromptFailed(ref m)) if m.contains("hung up")));
    assert!(s.pending().unwrap().is_empty());
}
}

cordon_store::both_backends! {
fn no_human_denies_or_records_pending(b) {
    let s = b.open();
    // The call as the gate records it: its fingerprint is computed again when approved.
    let a = cordon_store::pg_test::asked("npm run test -- --watch", Some("s1"), None);
    let ctx = |_: &str, session: Option<&str>| AskContext {
        fingerprint: a.fingerprint.clone(),
        request: a.request.clone(),
        verdict: a.verdict.clone(),
        ..ctx("fp", session)
    };
    let r = resolve_ask(&s, &ctx("fp", Some("s1")), &mut NoPrompter, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::NoHuman));
    let Resolution::Pending(id) = resolve_ask(
        &s,
        &ctx("fp", Some("s1")),
        &mut NoPrompter,
        NoHuman::Pending,
    )
    .unwrap() else {
        panic!()
    };
    let p = s.get_pending(id).unwrap();
    // The rule offered is derived from the call shown, not from what the asker offered.
    assert_eq!(p.suggestion.as_deref(), Some("Bash(npm run test -- --watch)"));
    assert_eq!(p.request["input"]["command"], "npm run test -- --watch");
    // The harness resumes after a human approved: the same call goes through once.
    p.approve(&s).unwrap();
    let r = resolve_ask(
        &s,
        &ctx("fp", Some("s1")),
        &mut NoPrompter,
        NoHuman::Pending,
    )
    .unwrap();
    assert!(matches!(r, Resolution::Allow(ref g) if matches!(g.source(), GrantSource::Lease(_))));
    let r = resolve_ask(&s, &ctx("fp", Some("s1")), &mut NoPrompter, NoHuman::Deny).unwrap();
    assert_eq!(r, Resolution::Deny(Refusal::NoHuman));
}
}

cordon_store::both_backends! {
fn lease_is_checked_before_the_human(b) {
    let s = b.open();
    s.grant("fp", Scope::Once, None, "earlier").unwrap();
    let r = resolve_ask(
        &s,
        &ctx("fp", None),
        &mut Scripted::new(vec![]),
        NoHuman::Deny,
    )
    .unwrap();
    assert!(matches!(r, Resolution::Allow(_)));
}
}
