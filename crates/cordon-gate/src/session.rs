//! Sessions: a call is judged with what its session already did.
//!
//! Two checks run after the policy's evaluation order, for every surface, when the
//! request names a session:
//!
//! * **write-then-run**: a call that would execute a file the session wrote (`go test`
//!   after writing `x_test.go`, `npm run lint` after editing `package.json`) is not
//!   covered by the rule or default that allowed the program: it is asked (or denied,
//!   or allowed only when it runs contained, as `[sessions] write_then_run` says), and
//!   the reason names the file and the call that wrote it;
//! * **the rule of two**: a call that would give the session the third leg of the
//!   lethal trifecta (private data, untrusted input, external communication) is asked
//!   (or denied), and the reason names the three calls.
//!
//! Both only ever tighten a judgement. What a permitted call did is then recorded in the
//! store. Fails closed: a session that cannot be read means the check cannot be made,
//! and the call is asked (or denied where nobody can be asked); a call whose effects
//! cannot be recorded is not permitted.

use crate::bound::{SessionRuns, session_runs};
use crate::flow::{Gate, Outcome};
use cordon_policy::ops::Operations;
use cordon_policy::session::{
    Leg, PathPattern, RuleOfTwo, SessionFacts, WriteThenRun, components, pattern_prefix,
};
use cordon_policy::{Decision, Judgement, Request, Source, Step};
use cordon_store::{
    CallRef, EventKind, SessionEvent, SessionLimits, SessionRecord, SessionView, format_time,
};

/// How long a call's rendering in a session record may be.
const CALL_TEXT: usize = 200;

impl Gate {
    /// The judgement made stricter by what the request's session already did, with the
    /// session facts of the call (to record once it is permitted) and the session's
    /// writes the call would run (to bind an approval to). Nothing to do for a call
    /// without a session or one already denied.
    pub(crate) fn judge_session(
        &self,
        request: &Request,
        ops: &Operations,
        fs: &dyn cordon_policy::FileFacts,
        judgement: Judgement,
    ) -> (Judgement, Option<SessionFacts>, SessionRuns) {
        let Some(session) = request.session.as_deref() else {
            return (judgement, None, SessionRuns::default());
        };
        if judgement.decision() == Decision::Deny {
            return (judgement, None, SessionRuns::default());
        }
        let settings = self.policy().sessions();
        let mut facts = self.policy().session_facts(request, ops, fs);
        if judgement.containment().is_full_tier() {
            // The run's merge lists every path it wrote: that is what is recorded
            // (`record_landed`), not a guess.
            facts.unseen = None;
        }
        let check_run = settings.write_then_run != WriteThenRun::Off && !facts.executes.is_empty();
        let check_legs = settings.rule_of_two != RuleOfTwo::Off && !facts.legs.is_empty();
        if !check_run && !check_legs {
            return (judgement, Some(facts), SessionRuns::default());
        }
        let prefixes: Vec<&str> = if check_run {
            facts
                .executes
                .iter()
                .map(|e| pattern_prefix(&e.pattern))
                .collect()
        } else {
            Vec::new()
        };
        let view = self.held.with_store(
            || self.open_store(),
            |s| s.session_view(session, &prefixes, settings.expire_after),
        );
        let view = match view {
            Ok(v) => v,
            Err(e) => {
                let why = format!(
                    "what session `{session}` already did cannot be read ({e}), so this call cannot be checked against it"
                );
                let j = judgement.tighten(
                    Decision::Ask,
                    why,
                    Source::new(Step::Session, "session-store"),
                );
                return (j, Some(facts), SessionRuns::default());
            }
        };
        let runs = if check_run {
            session_runs(&facts.executes, &view)
        } else {
            SessionRuns::default()
        };
        let mut found: Vec<(Decision, String, &'static str)> = Vec::new();
        if check_run && let Some(why) = write_then_run(session, &facts, &view, settings.max_events)
        {
            let d = match settings.write_then_run {
                WriteThenRun::Deny => Some(Decision::Deny),
                WriteThenRun::Contain if judgement.containment().is_contained() => None,
                WriteThenRun::Contain | WriteThenRun::Ask => Some(Decision::Ask),
                _ => None,
            };
            if let Some(d) = d {
                found.push((d, why, "write-then-run"));
            }
        }
        if check_legs
            && let Some(d) = settings.rule_of_two.decision()
            && let Some(why) = third_leg(session, &facts, &view)
        {
            found.push((d, why, "rule-of-two"));
        }
        let Some(decision) = found.iter().map(|f| f.0).max() else {
            return (judgement, Some(facts), runs);
        };
        let rule = found
            .iter()
            .filter(|f| f.0 == decision)
            .map(|f| f.2)
            .collect::<Vec<_>>()
            .join(", ");
        let reason = found
            .into_iter()
            .map(|f| f.1)
            .collect::<Vec<_>>()
            .join("; ");
        let j = judgement.tighten(decision, reason, Source::new(Step::Session, rule));
        (j, Some(facts), runs)
    }

    /// Record what a permitted call did in its session. A call whose effects cannot be
    /// recorded is refused: later checks of the session would not see it.
    pub(crate) fn remember_session(
        &self,
        outcome: Outcome,
        facts: Option<SessionFacts>,
    ) -> Outcome {
        if !matches!(outcome, Outcome::Permitted(_) | Outcome::Trial(_)) {
            return outcome;
        }
        let (Some(facts), Some(session)) = (facts, outcome.decided().request.session.clone())
        else {
            return outcome;
        };
        let Err(e) = self.record_facts(
            &session,
            &outcome.decided().request,
            &outcome.decided().ops,
            &facts,
        ) else {
            return outcome;
        };
        let mut d = match outcome {
            Outcome::Permitted(p) => p.into_parts().0,
            Outcome::Trial(t) => t.decided().clone(),
            other => return other,
        };
        let why = format!(
            "what this call does cannot be recorded in session `{session}` ({e}), so it is not permitted; fix the store or run without a session"
        );
        d.verdict.decision = Decision::Deny;
        d.verdict.reason = why.clone();
        d.verdict.source = Source::new(Step::Session, "session-store");
        d.answer = Some(why);
        self.refuse(d)
    }

    /// Record a call that ran (a harness's post-tool event): what it wrote and the legs
    /// it added, as the policy reads them off the call. Nothing to do without a session.
    pub fn record_session_call(
        &self,
        request: &Request,
        fs: &dyn cordon_policy::FileFacts,
    ) -> Result<(), cordon_store::StoreError> {
        let Some(session) = request.session.as_deref() else {
            return Ok(());
        };
        let mut request = request.clone();
        self.policy().apply_presets(&mut request);
        let ops = self.policy().operations(&request, fs);
        let facts = self.policy().session_facts(&request, &ops, fs);
        self.record_facts(session, &request, &ops, &facts)
    }

    /// Record in its session what a contained run's merge landed on the host: each file
    /// and symlink written, each directory created (as filled); when more landed than
    /// the report lists, the workspace as written by code whose writes cannot be read.
    /// Deletions add nothing. Nothing to do without a session; a run at the fallback
    /// tier, which writes the host directly, was recorded when it was decided.
    pub(crate) fn record_landed(
        &self,
        decided: &crate::flow::Decided,
        report: &cordon_sandbox::DenialReport,
    ) -> Result<(), cordon_store::StoreError> {
        let Some(session) = decided.request.session.as_deref() else {
            return Ok(());
        };
        let changes = &report.changes;
        let mut rec = SessionRecord::default();
        for l in &changes.landed {
            let path = l.path.display().to_string();
            match l.change.as_str() {
                "delete" => {}
                "dir" => rec.trees.push(path),
                _ => rec.writes.push((path, None)),
            }
        }
        if changes.unlisted > 0 {
            rec.unseen
                .push(self.policy().workspace().display().to_string());
        }
        if rec.is_empty() {
            return Ok(());
        }
        self.store_record(session, &decided.request, &decided.ops, &rec)
    }

    fn record_facts(
        &self,
        session: &str,
        request: &Request,
        ops: &Operations,
        facts: &SessionFacts,
    ) -> Result<(), cordon_store::StoreError> {
        let rec = SessionRecord {
            writes: facts
                .writes
                .iter()
                .filter(|w| !w.tree)
                .map(|w| (w.path.display().to_string(), w.hash.clone()))
                .collect(),
            trees: facts
                .writes
                .iter()
                .filter(|w| w.tree)
                .map(|w| w.path.display().to_string())
                .collect(),
            unseen: facts
                .unseen
                .iter()
                .map(|u| u.dir.display().to_string())
                .collect(),
            legs: facts
                .legs
                .iter()
                .map(|l| (l.leg, l.target.clone()))
                .collect(),
        };
        if rec.is_empty() {
            return Ok(());
        }
        self.store_record(session, request, ops, &rec)
    }

    fn store_record(
        &self,
        session: &str,
        request: &Request,
        ops: &Operations,
        rec: &SessionRecord,
    ) -> Result<(), cordon_store::StoreError> {
        let settings = self.policy().sessions();
        let by = CallRef {
            tool: request.tool.clone(),
            call: call_text(request, ops),
            operation_id: request.operation_id.clone(),
        };
        let limits = SessionLimits {
            max_writes: settings.max_events,
            expire_after: settings.expire_after,
        };
        self.held.with_store(
            || self.open_store(),
            |s| s.record_session(session, &by, rec, limits),
        )
    }
}

/// A short rendering of a call: its shell text, else what its operations act on.
fn call_text(request: &Request, ops: &Operations) -> String {
    let text = if ops.commands.is_empty() {
        ops.ops
            .iter()
            .map(|o| o.target.display())
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        ops.commands
            .iter()
            .map(|c| c.text.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let text = if text.is_empty() {
        request.tool.clone()
    } else {
        text
    };
    match text.char_indices().nth(CALL_TEXT) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// "`Write` /w/x_test.go at 2026-…, operation toolu_1".
fn describe(ev: &SessionEvent) -> String {
    let op = match &ev.by.operation_id {
        Some(id) => format!(", operation {id}"),
        None => String::new(),
    };
    format!(
        "`{}` {} at {} (session record #{}{op})",
        ev.by.tool,
        ev.by.call,
        format_time(ev.at),
        ev.seq
    )
}

/// The reason a call may not run as allowed: it executes files the session wrote.
fn write_then_run(
    session: &str,
    facts: &SessionFacts,
    view: &SessionView,
    max_events: u64,
) -> Option<String> {
    // A long session holds thousands of writes: each pattern is parsed once and each
    // written path split once. Hits are listed pattern by pattern, in the session's order.
    let patterns: Vec<PathPattern> = facts
        .executes
        .iter()
        .map(|ex| PathPattern::new(&ex.pattern))
        .collect();
    let mut per_pattern: Vec<Vec<&SessionEvent>> = vec![Vec::new(); patterns.len()];
    for w in &view.writes {
        if !matches!(
            w.kind,
            EventKind::Write | EventKind::Tree | EventKind::Unseen
        ) {
            continue;
        }
        let comps = components(&w.target);
        for (pattern, found) in patterns.iter().zip(per_pattern.iter_mut()) {
            let hit = match w.kind {
                EventKind::Write => pattern.matches_components(&comps),
                _ => pattern.reaches_beneath_components(&comps),
            };
            if hit {
                found.push(w);
            }
        }
    }
    let mut hits: Vec<(_, &SessionEvent)> = facts
        .executes
        .iter()
        .zip(per_pattern)
        .flat_map(|(ex, found)| found.into_iter().map(move |w| (ex, w)))
        .collect();
    // A write the session made itself says more than code that may have written
    // anything: it is named first.
    hits.sort_by_key(|h| h.1.kind == EventKind::Unseen);
    if let Some((ex, w)) = hits.first() {
        // One filled directory can match several patterns (`Makefile`, `makefile`…):
        // what the session did is counted once.
        let events: std::collections::BTreeSet<i64> = hits.iter().map(|h| h.1.seq).collect();
        let more = match events.len() {
            1 => String::new(),
            n => format!(" (and {} more file(s) the session wrote)", n - 1),
        };
        let what = match w.kind {
            EventKind::Tree | EventKind::Unseen => format!(
                "files beneath {}/ (matching {})",
                w.target.trim_end_matches('/'),
                ex.pattern
            ),
            _ => w.target.clone(),
        };
        let wrote = match w.kind {
            EventKind::Tree => "filled that directory",
            EventKind::Unseen => {
                "ran code there whose writes cordon cannot read (so it may have written them)"
            }
            _ => "wrote it",
        };
        return Some(format!(
            "`{}` would execute {what} ({}), and session `{session}` {wrote} earlier with {}{more}; a rule or default that allows the program does not cover code the agent wrote itself",
            ex.command,
            ex.why,
            describe(w)
        ));
    }
    if let Some(ex) = facts.executes.iter().find(|e| e.unresolved.is_some()) {
        return Some(format!(
            "`{}` would execute {} ({}), whose path in the workspace cannot be resolved ({}), so cordon counts it as possibly written by session `{session}`",
            ex.command,
            ex.pattern,
            ex.why,
            ex.unresolved.as_deref().unwrap_or_default()
        ));
    }
    if view.overflowed.is_some() {
        let ex = facts.executes.first()?;
        return Some(format!(
            "`{}` executes files of the working tree ({}), and session `{session}` wrote more than {max_events} files, more than cordon remembers, so it cannot tell whether the agent wrote them; end the session (`cordon sessions end {session}`) or raise `[sessions] max_events`",
            ex.command, ex.why
        ));
    }
    None
}

/// The reason a call may not add the third leg of the lethal trifecta.
fn third_leg(session: &str, facts: &SessionFacts, view: &SessionView) -> Option<String> {
    let held = |leg: Leg| view.legs.iter().find(|e| e.kind == EventKind::Leg(leg));
    let adds_new = facts.legs.iter().any(|l| held(l.leg).is_none());
    let all = Leg::ALL
        .iter()
        .all(|leg| held(*leg).is_some() || facts.has(*leg));
    if !adds_new || !all {
        return None;
    }
    let parts: Vec<String> = Leg::ALL
        .iter()
        .map(|leg| match held(*leg) {
            Some(ev) => format!("{} ({}: {})", leg.describe(), ev.target, describe(ev)),
            None => {
                let target = facts
                    .legs
                    .iter()
                    .find(|l| l.leg == *leg)
                    .map(|l| l.target.as_str())
                    .unwrap_or_default();
                format!("{} ({target}: this call)", leg.describe())
            }
        })
        .collect();
    Some(format!(
        "this call would give session `{session}` all three legs of the lethal trifecta: {}; never all three in one session (the rule of two), so a human must approve it",
        parts.join(", ")
    ))
}
