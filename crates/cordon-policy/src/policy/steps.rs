//! The steps of the decision order, each its own function so it can be tested alone.

use super::{Outcome, Policy, RuleSet, ensure_period};
use crate::config::Mode;
use crate::guards;
use crate::judgement::Containment;
use crate::net::{NetCheck, NetCode, NetworkPolicy};
use crate::ops::{OpKind, Operation, Operations, Target};
use crate::paths::{Location, PathFacts};
use crate::request::ToolKind;
use crate::rules::Matcher;
use crate::verdict::{Decision, Source, Step};
use std::path::Path;

impl Policy {
    /// Step 1: a malformed operation is denied with its reason.
    pub fn step_validate(&self, op: &Operation) -> Option<Outcome> {
        op.invalid.as_ref().map(|why| {
            (
                Decision::Deny,
                Source::new(Step::Validate, "malformed"),
                format!("{why}."),
            )
        })
    }

    /// Step 2 under `containment`: at the full tier the writable roots are copy-on-write
    /// and what a run leaves there is judged again when it is merged
    /// (`cordon_policy::planted`), which lets git write its own `.git/config` (`git
    /// config user.email`, `git remote add`) and refuses the keys that run programs. So
    /// that guard, and only that one, is left to the merge there.
    pub fn step_guard_in(&self, op: &Operation, containment: Containment) -> Option<Outcome> {
        if containment.is_full_tier()
            && op.kind == OpKind::Write
            && op.location == Some(Location::Inside)
            && op.hazard.is_none()
            && let Target::Path(f) = &op.target
            && self.path_guard(f, guards::protected_write).is_some()
            && self
                .path_guard(f, |p, h| {
                    guards::protected_write(p, h).filter(|hit| hit.pattern != ".git/config")
                })
                .is_none()
        {
            return None;
        }
        self.step_guard(op)
    }

    /// Step 2: guards that nothing disables.
    pub fn step_guard(&self, op: &Operation) -> Option<Outcome> {
        let deny = |guard: &str, reason: String| {
            Some((
                Decision::Deny,
                Source::new(Step::Guard, guard.to_owned()),
                reason,
            ))
        };
        if let Some((guard, reason)) = &op.hazard {
            return deny(guard, format!("{reason}; this is never allowed."));
        }
        match (&op.kind, &op.target) {
            // A program's own credential file, read by itself: see `step_config`.
            (OpKind::Read, Target::Path(_)) if op.config => {}
            (OpKind::Read | OpKind::List, Target::Path(f)) => {
                if let Some(h) = self.path_guard(f, guards::sensitive_read) {
                    let named = if op.mention {
                        format!("the code it runs names {}, which", f.literal.display())
                    } else {
                        named_path(f)
                    };
                    return deny(
                        &format!("{}: {}", h.guard, h.pattern),
                        format!(
                            "{named} holds credentials ({}); reading it is never allowed.",
                            h.pattern
                        ),
                    );
                }
            }
            (OpKind::Write, Target::Path(f)) => {
                let hit = self.path_guard(f, |p, h| {
                    guards::protected_write(p, h).filter(|hit| {
                        !(op.plain_git_setting && GIT_CONFIG_FILES.contains(&hit.pattern.as_str()))
                    })
                });
                if let Some(h) = hit {
                    let named = if op.mention {
                        format!("the code it runs names {}, which", f.literal.display())
                    } else {
                        named_path(f)
                    };
                    return deny(
                        &format!("{}: {}", h.guard, h.pattern),
                        format!(
                            "{named} is protected ({}): writing it could run code later or expose credentials.",
                            h.pattern
                        ),
                    );
                }
            }
            (OpKind::Delete, Target::Path(f)) => {
                // Deleting one name of a file with several leaves the others: a hard
                // link of a guarded file is not the guarded file here.
                let f = &PathFacts {
                    same_file: None,
                    ..f.clone()
                };
                let ws = &self.workspace;
                let hit = self
                    .path_guard(f, |p, h| guards::critical_delete(p, h, ws))
                    .or_else(|| self.path_guard(f, guards::protected_write));
                if let Some(h) = hit {
                    return deny(
                        &format!("{}: {}", h.guard, h.pattern),
                        format!(
                            "deleting {} is never allowed ({}).",
                            named_path(f),
                            h.pattern
                        ),
                    );
                }
            }
            (OpKind::Network, Target::Net { .. }) => {
                if let NetCheck::Deny { code, reason } = self.net_check(op)
                    && code != NetCode::DeniedHost
                {
                    return deny(&format!("network: {code}"), ensure_period(reason));
                }
            }
            _ => {}
        }
        None
    }

    /// A guard is checked on the literal and the resolved path, against HOME as written
    /// and as resolved.
    fn path_guard(
        &self,
        f: &PathFacts,
        check: impl Fn(&Path, &Path) -> Option<guards::GuardHit>,
    ) -> Option<guards::GuardHit> {
        let resolved = (f.resolved != f.literal).then_some(&f.resolved);
        for h in &self.homes {
            for p in std::iter::once(&f.literal)
                .chain(resolved)
                .chain(f.same_file.as_ref())
            {
                if let Some(hit) = check(p, h) {
                    return Some(hit);
                }
            }
        }
        None
    }

    fn net_check(&self, op: &Operation) -> NetCheck {
        let Target::Net {
            dest: Ok((host, port)),
            origin,
            ..
        } = &op.target
        else {
            return NetCheck::NotListed {
                code: NetCode::Unknown,
                reason: "the destination is not known".into(),
            };
        };
        let check = |n: &NetworkPolicy| match origin {
            Some(o) => n.check_origin(o),
            None => n.check_tunnel(&crate::net::Authority {
                host: host.clone(),
                port: *port,
            }),
        };
        let first = check(&self.network);
        if !first.is_allow() {
            return first;
        }
        for n in &self.network_narrowed {
            let c = check(n);
            if !c.is_allow() {
                return c;
            }
        }
        first
    }

    fn rule_source(&self, step: Step, idx: usize) -> Source {
        let r = &self.rules[idx];
        Source {
            step,
            rule: Some(r.text.clone().into()),
            file: r.origin.file.clone(),
            line: r.origin.file.as_ref().map(|_| r.origin.line),
            column: r.origin.file.as_ref().map(|_| r.origin.column),
        }
    }

    /// The first rule of `set` that matches `op`. Deny and ask rules match a path if either
    /// its literal or its resolved form matches; allow rules need both.
    fn matching_rule(
        &self,
        set: &RuleSet,
        op: &Operation,
        ops: &Operations,
        both: bool,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        if let Target::Path(f) = &op.target {
            let index = match op.kind {
                OpKind::Read | OpKind::List => Some(&set.read_paths),
                OpKind::Write | OpKind::Delete => Some(&set.edit_paths),
                _ => None,
            };
            if let Some(index) = index {
                let lit = index.first_match(&f.literal);
                let res = if f.resolved == f.literal {
                    lit
                } else {
                    index.first_match(&f.resolved)
                };
                let hit = if both {
                    match (lit, res) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    }
                } else {
                    lit.into_iter().chain(res).min()
                };
                best = hit;
            }
        }
        for &i in &set.other {
            if best.is_some_and(|b| b < i) {
                break;
            }
            if self.rule_matches(&self.rules[i].matcher, op, ops) {
                best = Some(best.map_or(i, |b| b.min(i)));
            }
        }
        best
    }

    fn rule_matches(&self, m: &Matcher, op: &Operation, ops: &Operations) -> bool {
        match m {
            Matcher::Tool(kind) => ops.tool_kind == Some(*kind),
            Matcher::UnknownTool(name) => {
                ops.tool_kind == Some(ToolKind::Unknown) && &ops.tool_name == name
            }
            Matcher::Command(p) => op
                .command
                .and_then(|i| ops.commands.get(i))
                .is_some_and(|c| !c.words.is_empty() && p.matches(&c.words)),
            Matcher::Domain(d) => match &op.target {
                Target::Net {
                    dest: Ok((h, port)),
                    ..
                } => d.matches_host(h) && d.port().is_none_or(|p| p == *port),
                _ => false,
            },
            Matcher::Mcp { server, tool } => match &op.target {
                Target::Mcp { server: s, tool: t } => {
                    s == server && tool.as_ref().is_none_or(|x| x == t)
                }
                _ => false,
            },
            Matcher::Path { .. } => false,
        }
    }

    /// Steps 3 and 4: deny rules, then ask rules (any layer).
    pub fn step_rule(&self, op: &Operation, ops: &Operations, action: Decision) -> Option<Outcome> {
        let (set, step) = match action {
            Decision::Deny => (&self.deny, Step::DenyRule),
            Decision::Ask => (&self.ask, Step::AskRule),
            Decision::Allow => return None,
        };
        // Opaque parts are judged by the rules of their sub-command like everything else.
        if let Some(i) = self.matching_rule(set, op, ops, false) {
            let r = &self.rules[i];
            let why = r.reason.clone().unwrap_or_else(|| {
                format!(
                    "the {} rule `{}` matches {} {}",
                    action,
                    r.text,
                    op.kind.as_str(),
                    op.target.display()
                )
            });
            return Some((action, self.rule_source(step, i), ensure_period(why)));
        }
        if action == Decision::Deny
            && op.kind == OpKind::Network
            && let NetCheck::Deny {
                code: NetCode::DeniedHost,
                reason,
            } = self.net_check(op)
        {
            return Some((
                Decision::Deny,
                Source::new(Step::DenyRule, "network.deny"),
                ensure_period(reason),
            ));
        }
        None
    }

    /// Step 5: an operation the analysis cannot see through is asked, unless an allow rule
    /// names its program and its code-executing argument literally.
    pub fn step_opaque(&self, op: &Operation, ops: &Operations) -> Option<Outcome> {
        self.step_opaque_in(op, ops, Containment::None)
    }

    /// Step 5 for a call under `containment`: code the analysis cannot see through runs
    /// inside the sandbox, so a contained call leaves it to step 8's `[contained]` table.
    pub fn step_opaque_in(
        &self,
        op: &Operation,
        ops: &Operations,
        containment: Containment,
    ) -> Option<Outcome> {
        let o = op.opaque.as_ref()?;
        if contained_key(op, containment).is_some() {
            return None;
        }
        if let Some(needs) = &o.needs {
            for &i in &self.allow.other {
                let r = &self.rules[i];
                let named = match &r.matcher {
                    Matcher::Command(p) => {
                        let lit = p.literal_words();
                        self.rule_matches(&r.matcher, op, ops)
                            && needs.iter().all(|n| lit.contains(&n.as_str()))
                    }
                    Matcher::UnknownTool(_) => self.rule_matches(&r.matcher, op, ops),
                    _ => false,
                };
                if named {
                    return None;
                }
            }
        }
        Some((
            Decision::Ask,
            Source::new(Step::Opaque, op.kind.as_str()),
            ensure_period(o.why.clone()),
        ))
    }

    /// Step 6: the permission mode.
    pub fn step_mode(&self, op: &Operation) -> Option<Outcome> {
        match self.mode {
            Mode::Plan if op.kind.modifies() => Some((
                Decision::Deny,
                Source::new(Step::Mode, "plan"),
                format!(
                    "plan mode denies every modification ({} {}).",
                    op.kind.as_str(),
                    op.target.display()
                ),
            )),
            Mode::AcceptEdits
                if op.kind == OpKind::Write && op.location == Some(Location::Inside) =>
            {
                Some((
                    Decision::Allow,
                    Source::new(Step::Mode, "accept-edits"),
                    format!(
                        "accept-edits mode allows writing {} inside the workspace.",
                        op.target.display()
                    ),
                ))
            }
            Mode::Bypass => Some((
                Decision::Allow,
                Source::new(Step::Mode, "bypass"),
                "bypass mode allows what guards, rules and opaque checks left open.".into(),
            )),
            _ => None,
        }
    }

    /// Step 7: allow rules, and the network allowlist.
    pub fn step_allow(&self, op: &Operation, ops: &Operations) -> Option<Outcome> {
        if let Some(i) = self.matching_rule(&self.allow, op, ops, true) {
            let r = &self.rules[i];
            return Some((
                Decision::Allow,
                self.rule_source(Step::AllowRule, i),
                ensure_period(format!(
                    "the allow rule `{}` matches {} {}",
                    r.text,
                    op.kind.as_str(),
                    op.target.display()
                )),
            ));
        }
        if op.kind == OpKind::Network
            && matches!(op.target, Target::Net { .. })
            && self.net_check(op).is_allow()
        {
            return Some((
                Decision::Allow,
                Source::new(Step::AllowRule, "network.allow"),
                format!("{} is on the network allowlist.", op.target.display()),
            ));
        }
        None
    }

    /// Step 8: the configured default for the operation and its location.
    pub fn step_default(&self, op: &Operation) -> Outcome {
        self.step_default_in(op, Containment::None)
    }

    /// Step 8 for a call under `containment`: what containment enforces by itself is
    /// decided by the `[contained]` table (a `deny` in `[defaults]` still holds there: it
    /// says "never", which a sandbox does not change); everything else by `[defaults]`.
    pub fn step_default_in(&self, op: &Operation, containment: Containment) -> Outcome {
        if let Some(key) = contained_key(op, containment) {
            let mut d = self.contained;
            d.tighten(&self.defaults.denials());
            let decision = d.get(key);
            let why = format!(
                "{} {}: it runs contained ({} tier), and the `[contained]` `{key}` default is {decision}.",
                op.kind.as_str(),
                op.target.display(),
                containment.as_str(),
            );
            return (
                decision,
                Source::new(Step::Default, format!("contained.{key}")),
                why,
            );
        }
        let d = &self.defaults;
        let loc = op.location.unwrap_or(Location::Unknown);
        let (decision, key) = match (op.kind, loc) {
            (OpKind::Read | OpKind::List, Location::Inside) => (d.read_inside, "read_inside"),
            (OpKind::Read | OpKind::List, Location::Outside) => (d.read_outside, "read_outside"),
            (OpKind::Read | OpKind::List, _) => (
                d.read_outside.max(Decision::Ask),
                "read_outside (unknown location)",
            ),
            (OpKind::Write | OpKind::Delete, Location::Inside) => (d.write_inside, "write_inside"),
            (OpKind::Write | OpKind::Delete, Location::Outside) => {
                (d.write_outside, "write_outside")
            }
            (OpKind::Write | OpKind::Delete, _) => (
                d.write_outside.max(d.write_inside).max(Decision::Ask),
                "write_outside (unknown location)",
            ),
            (OpKind::Run, _) => (Decision::Allow, "read-only program"),
            (OpKind::Exec, _) => (d.exec, "exec"),
            (OpKind::Network | OpKind::Search, _) => (d.network, "network"),
            (OpKind::Mcp, _) => (d.mcp, "mcp"),
            (OpKind::Opaque, _) => (Decision::Ask, "unclassified"),
        };
        let why = match (op.kind, &op.target) {
            (OpKind::Run, t) => format!("`{}` is a known read-only program.", t.display()),
            (_, Target::Path(f)) if loc == Location::Unknown => format!(
                "{} {} cannot be placed inside or outside the workspace ({}); the `{key}` default applies.",
                op.kind.as_str(),
                f.literal.display(),
                f.problem
                    .clone()
                    .unwrap_or_else(|| format!("it has {} hard links", f.nlink))
            ),
            (_, t) => format!(
                "{} {}: the `{key}` default is {decision}.",
                op.kind.as_str(),
                t.display()
            ),
        };
        (decision, Source::new(Step::Default, key), why)
    }
}

/// The guard patterns of the user's git configuration files, which
/// [`Operation::plain_git_setting`] writes leave alone. (A repository's `.git/config` is
/// left to the merge at the full tier, see [`Policy::step_guard_in`], and stays guarded
/// elsewhere.)
const GIT_CONFIG_FILES: &[&str] = &["~/.gitconfig", "~/.config/git"];

/// The `[contained]` key that decides `kind` under `containment`, when containment
/// enforces that kind of operation by itself: at the full tier everything a shell
/// command does but MCP and web searches; at the fallback tier, which has no network
/// namespace and cannot hide HOME or mask secrets inside readable trees, only program
/// runs, opaque code and writes.
fn contained_key(op: &Operation, containment: Containment) -> Option<&'static str> {
    let reads = containment.contains_reads();
    // The sandbox enforces by the object, so a place it cannot name is judged as outside.
    let inside = op.location == Some(Location::Inside);
    match op.kind {
        _ if !containment.is_contained() => None,
        OpKind::Exec | OpKind::Opaque => Some("exec"),
        OpKind::Write | OpKind::Delete if inside => Some("write_inside"),
        OpKind::Write | OpKind::Delete => Some("write_outside"),
        OpKind::Read | OpKind::List if reads && inside => Some("read_inside"),
        OpKind::Read | OpKind::List if reads => Some("read_outside"),
        OpKind::Network if containment.contains_network() => Some("network"),
        _ => None,
    }
}

/// After the deny rules: a file a program reads by itself on every run (its own
/// configuration, start-up or credential file) is named, and judged by deny rules alone.
/// Asking about it would ask about every run of the program; a credential in it goes
/// only to the server the program talks to, which its network operation judges.
pub(super) fn step_config(op: &Operation) -> Option<Outcome> {
    let Target::Path(f) = &op.target else {
        return None;
    };
    op.config.then(|| {
        (
            Decision::Allow,
            Source::new(Step::Default, "program configuration"),
            format!(
                "{} is a file the program reads by itself on every run.",
                f.literal.display()
            ),
        )
    })
}

/// After the guards and deny rules: a path named inside code (a mention) is judged by
/// nothing else. Whether the code reads or writes it is unknown, so asking about it would
/// ask about every string a script holds; the rest of the call decides the verdict.
pub(super) fn step_mention(op: &Operation) -> Option<Outcome> {
    op.mention.then(|| {
        (
            Decision::Allow,
            Source::new(Step::Default, "mention"),
            format!(
                "{} is only named inside code, which the guards and deny rules judge alone.",
                op.target.display()
            ),
        )
    })
}

/// A path as a guard's reason names it: with the guarded file it is a hard link of.
fn named_path(f: &PathFacts) -> String {
    match &f.same_file {
        Some(t) => format!("{} (a hard link of {})", f.literal.display(), t.display()),
        None => f.literal.display().to_string(),
    }
}
