//! The compiled policy and the eight-step decision order.
//!
//! `decide` = `operations` (facts gathered through [`FileFacts`]) + `judge` (pure). Each step
//! is its own function so it can be tested alone; per operation the first step that returns
//! an outcome decides, and the call's verdict is the most restrictive over its operations.
//! Nothing here stops early on a long call: every operation is judged.

use crate::config::{self, ConfigError, Defaults, LoadOptions, Merged, Mode};
use crate::errors::AttenuationError;
use crate::facts::FileFacts;
use crate::guards;
use crate::judgement::{Containment, Judgement};
use crate::net::{NetCheck, NetCode, NetworkPolicy};
use crate::ops::{self, OpKind, Operation, Operations, Target};
use crate::paths::{Location, PathFacts};
use crate::request::{Request, ToolKind};
use crate::rules::{Matcher, PathIndex, PathTool, Rule};
use crate::settings::{ApprovalPolicy, NetworkSettings, SandboxMode, SandboxSettings};
use crate::verdict::{Decision, Finding, Source, Step, Verdict};
use std::path::{Path, PathBuf};

/// Rules of one action, bucketed by what they match.
#[derive(Debug, Clone)]
struct RuleSet {
    read_paths: PathIndex,
    edit_paths: PathIndex,
    /// Every rule that is not a path rule (indices into `Policy::rules`).
    other: Vec<usize>,
}

impl RuleSet {
    fn build(rules: &[Rule], action: Decision) -> Result<RuleSet, ConfigError> {
        let mut read = Vec::new();
        let mut edit = Vec::new();
        let mut other = Vec::new();
        for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.action == action) {
            match &r.matcher {
                Matcher::Path {
                    tool: PathTool::Read,
                    glob,
                } => read.push((i, glob.as_str())),
                Matcher::Path {
                    tool: PathTool::Edit,
                    glob,
                } => edit.push((i, glob.as_str())),
                _ => other.push(i),
            }
        }
        let err = |m: String| ConfigError {
            file: None,
            position: None,
            message: m,
        };
        Ok(RuleSet {
            read_paths: PathIndex::build(&read).map_err(err)?,
            edit_paths: PathIndex::build(&edit).map_err(err)?,
            other,
        })
    }
}

/// A loaded, compiled policy. Cheap to share; `decide` takes `&self`.
#[derive(Debug, Clone)]
pub struct Policy {
    workspace: PathBuf,
    roots: Vec<PathBuf>,
    homes: Vec<PathBuf>,
    mode: Mode,
    sandbox_mode: SandboxMode,
    approval: ApprovalPolicy,
    defaults: Defaults,
    contained: Defaults,
    rules: Vec<Rule>,
    deny: RuleSet,
    ask: RuleSet,
    allow: RuleSet,
    network: NetworkPolicy,
    /// Extra allowlists from attenuation: a destination must pass every one of them.
    network_narrowed: Vec<NetworkPolicy>,
    network_settings: NetworkSettings,
    sandbox: SandboxSettings,
    no_human: bool,
    version: String,
    grant_version: String,
    files: Vec<(config::LayerKind, PathBuf)>,
    notes: Vec<String>,
    ignored_allows: Vec<String>,
    user_file: PathBuf,
    trusted: bool,
    presets: Vec<crate::presets::Preset>,
    mcp: crate::mcp::McpSettings,
    sessions: crate::session::SessionSettings,
    hook_contain: bool,
    slots: crate::settings::SlotSettings,
}

/// A narrowing for a sub-agent: only ever more deny/ask, stricter defaults and modes, and a
/// smaller network.
#[derive(Debug, Clone, Default)]
pub struct Attenuation {
    /// Extra deny rules (Claude syntax).
    pub deny: Vec<String>,
    /// Extra ask rules (Claude syntax).
    pub ask: Vec<String>,
    /// Defaults to tighten towards (each slot becomes the stricter of the two).
    pub defaults: Option<Defaults>,
    /// A stricter mode: `plan` or `dont-ask` (anything else is refused).
    pub mode: Option<Mode>,
    /// When set, network destinations must also be on this allowlist.
    pub network_allow: Option<Vec<String>>,
}

impl Policy {
    /// Load the layered config and compile it.
    pub fn load(opts: &LoadOptions, fs: &dyn FileFacts) -> Result<Policy, ConfigError> {
        let merged = config::load(opts, fs)?;
        Policy::compile(merged, opts.no_human)
    }

    /// Compile merged settings.
    pub fn compile(m: Merged, no_human: bool) -> Result<Policy, ConfigError> {
        let err = |msg: String| ConfigError {
            file: None,
            position: None,
            message: msg,
        };
        let network = NetworkPolicy::from_settings(&m.network).map_err(|e| err(e.to_string()))?;
        let mut roots = vec![m.workspace.clone()];
        roots.extend(m.sandbox.writable_roots.iter().cloned());
        let mut homes = vec![m.home.clone()];
        if m.home_resolved != m.home {
            homes.push(m.home_resolved.clone());
        }
        Ok(Policy {
            deny: RuleSet::build(&m.rules, Decision::Deny)?,
            ask: RuleSet::build(&m.rules, Decision::Ask)?,
            allow: RuleSet::build(&m.rules, Decision::Allow)?,
            workspace: m.workspace,
            roots,
            homes,
            mode: m.mode,
            sandbox_mode: m.sandbox_mode,
            approval: m.approval,
            defaults: m.defaults,
            contained: m.contained,
            rules: m.rules,
            network,
            network_narrowed: Vec::new(),
            network_settings: m.network,
            sandbox: m.sandbox,
            no_human,
            version: m.version,
            grant_version: m.grant_version,
            files: m.files,
            notes: m.notes,
            ignored_allows: m.ignored_allows,
            user_file: m.user_file,
            trusted: m.trusted,
            presets: m.presets,
            mcp: m.mcp,
            sessions: m.sessions,
            hook_contain: m.hook_contain,
            slots: m.slots,
        })
    }

    /// The `[mcp.servers.NAME]` settings.
    pub fn mcp(&self) -> &crate::mcp::McpSettings {
        &self.mcp
    }

    /// The `[sessions]` settings.
    pub fn sessions(&self) -> &crate::session::SessionSettings {
        &self.sessions
    }

    /// What one call means for its session: the files it writes and executes, and the
    /// trifecta legs it adds.
    pub fn session_facts(
        &self,
        req: &Request,
        ops: &Operations,
        fs: &dyn FileFacts,
    ) -> crate::session::SessionFacts {
        let place = crate::session::Place {
            workspace: &self.workspace,
            home: &self.homes[0],
            fs,
        };
        self.sessions.facts(req, ops, &place, &self.mcp)
    }

    /// The presets, highest precedence first.
    pub fn presets(&self) -> &[crate::presets::Preset] {
        &self.presets
    }

    /// Merge the presets that apply into `request` (before it is judged); returns the
    /// fields they set.
    pub fn apply_presets(&self, request: &mut Request) -> Vec<String> {
        crate::presets::apply(&self.presets, request)
    }

    /// The resolved workspace.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }
    /// HOME as configured.
    pub fn home(&self) -> &Path {
        &self.homes[0]
    }
    /// The permission mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// `[hook] contain`: whether a harness hook rewrites shell calls to run contained.
    pub fn hook_contain(&self) -> bool {
        self.hook_contain
    }
    /// The `[slots]` settings: defaults of `cordon exec --slot`.
    pub fn slots(&self) -> &crate::settings::SlotSettings {
        &self.slots
    }
    /// The sandbox mode.
    pub fn sandbox_mode(&self) -> SandboxMode {
        self.sandbox_mode
    }
    /// The approval policy.
    pub fn approval(&self) -> ApprovalPolicy {
        self.approval
    }
    /// The defaults of step 8.
    pub fn defaults(&self) -> &Defaults {
        &self.defaults
    }
    /// The `[contained]` table: step 8 for calls that run contained.
    pub fn contained_defaults(&self) -> &Defaults {
        &self.contained
    }
    /// The `[sandbox]` settings.
    pub fn sandbox(&self) -> &SandboxSettings {
        &self.sandbox
    }
    /// The `[network]` settings.
    pub fn network(&self) -> &NetworkSettings {
        &self.network_settings
    }
    /// The compiled network policy.
    pub fn network_policy(&self) -> &NetworkPolicy {
        &self.network
    }
    /// Every rule, highest layer first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
    /// A fingerprint of everything that shaped this policy: a changed config file changes it.
    pub fn version(&self) -> &str {
        &self.version
    }
    /// The config files that were read.
    pub fn files(&self) -> &[(config::LayerKind, PathBuf)] {
        &self.files
    }
    /// Settings that were ignored, and why.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Allow rules of the project file ignored because the workspace is not trusted.
    pub fn ignored_allows(&self) -> &[String] {
        &self.ignored_allows
    }
    /// The user's config file, where allow rules and `trusted_workspaces` go.
    pub fn user_file(&self) -> &Path {
        &self.user_file
    }
    /// Whether the project layer was trusted.
    pub fn trusted(&self) -> bool {
        self.trusted
    }

    /// Mark that no human can be asked: every remaining ask becomes deny.
    pub fn set_no_human(&mut self, no_human: bool) {
        self.no_human = no_human;
    }

    /// Derive a policy that can only be narrower. Allow rules cannot be added; modes can
    /// only move to `plan` or `dont-ask`; defaults only tighten; the network only shrinks.
    pub fn attenuate(&self, a: &Attenuation) -> Result<Policy, AttenuationError> {
        let mut p = self.clone();
        let anchors = crate::rules::Anchors {
            workspace: self.workspace.clone(),
            home: self.homes[0].clone(),
        };
        for (action, list) in [(Decision::Deny, &a.deny), (Decision::Ask, &a.ask)] {
            for text in list {
                let matcher = crate::rules::parse_rule(text, &anchors).map_err(|why| {
                    AttenuationError::Rule {
                        rule: text.clone(),
                        why,
                    }
                })?;
                p.rules.push(Rule {
                    action,
                    text: text.clone(),
                    matcher,
                    origin: crate::rules::RuleOrigin {
                        layer: "attenuation",
                        ..Default::default()
                    },
                    reason: None,
                });
            }
        }
        let rebuild = |rules: &[Rule], d| {
            RuleSet::build(rules, d).map_err(|e| AttenuationError::Rules(e.message))
        };
        p.deny = rebuild(&p.rules, Decision::Deny)?;
        p.ask = rebuild(&p.rules, Decision::Ask)?;
        if let Some(d) = &a.defaults {
            p.defaults.tighten(d);
            p.contained.tighten(d);
        }
        match a.mode {
            None => {}
            Some(Mode::Plan) => p.mode = Mode::Plan,
            Some(Mode::DontAsk) if p.mode != Mode::Plan => p.mode = Mode::DontAsk,
            Some(Mode::DontAsk) => {}
            Some(m) => {
                return Err(AttenuationError::Mode(m));
            }
        }
        if let Some(allow) = &a.network_allow {
            let n = NetworkPolicy::from_lists(allow, &Vec::<String>::new(), &Vec::<String>::new())
                .map_err(AttenuationError::Network)?;
            p.network_narrowed.push(n);
        }
        Ok(p)
    }

    /// The fingerprint an approval is bound to: the tool kind, the canonical input, the
    /// cwd, the workspace and this policy's version. Any change to one of them (another
    /// argument, another directory, an edited config file) yields another fingerprint;
    /// a remembered rule saved or forgotten does not (it only adds or removes an allow,
    /// and must not void the leases a human gave).
    pub fn fingerprint(&self, req: &Request) -> String {
        let mut h = blake3::Hasher::new();
        let mut field = |name: &str, value: &[u8]| {
            h.update(name.as_bytes());
            h.update(&(value.len() as u64).to_le_bytes());
            h.update(value);
        };
        field("kind", format!("{:?}", req.kind()).as_bytes());
        field("tool", req.tool.as_bytes());
        // serde_json's map is ordered by key, so this serialization is canonical.
        field(
            "input",
            serde_json::Value::Object(req.input.clone())
                .to_string()
                .as_bytes(),
        );
        let cwd = req
            .cwd
            .as_deref()
            .map(crate::paths::clean)
            .unwrap_or_else(|| self.workspace.clone());
        field("cwd", cwd.as_os_str().as_encoded_bytes());
        field("workspace", self.workspace.as_os_str().as_encoded_bytes());
        field("policy", self.grant_version.as_bytes());
        h.finalize().to_hex().to_string()
    }

    /// The narrowest rule that would allow every asking operation of `ops` again, when one
    /// rule can (see [`crate::suggest`]).
    pub fn suggestion(&self, ops: &Operations, verdict: &Verdict) -> Option<String> {
        use crate::suggest::{Anchors, SuggestTarget, suggest_rule};
        let anchors = Anchors {
            workspace: Some(&self.workspace),
            home: Some(&self.homes[0]),
        };
        let mut out: Option<String> = None;
        for (op, f) in ops.ops.iter().zip(&verdict.findings) {
            if f.decision != Decision::Ask {
                continue;
            }
            let target = match (op.command.and_then(|i| ops.commands.get(i)), &op.target) {
                (Some(c), _) => SuggestTarget::Command {
                    argv: c.words.clone(),
                },
                (None, Target::Path(p)) if matches!(op.kind, OpKind::Read | OpKind::List) => {
                    SuggestTarget::ReadPath(p.resolved.clone())
                }
                (None, Target::Path(p)) => SuggestTarget::WritePath(p.resolved.clone()),
                (
                    None,
                    Target::Net {
                        dest: Ok((h, _)), ..
                    },
                ) => SuggestTarget::Host(h.to_string()),
                (None, Target::Mcp { server, tool }) => SuggestTarget::Mcp {
                    server: server.clone(),
                    tool: tool.clone(),
                },
                _ => return None,
            };
            let rule = suggest_rule(&target, &anchors)?;
            match &out {
                Some(r) if *r != rule => return None,
                _ => out = Some(rule),
            }
        }
        out
    }

    /// Judge one request: gather its operations through `fs`, then run the decision order.
    pub fn decide(&self, req: &Request, fs: &dyn FileFacts) -> Verdict {
        let ops = self.operations(req, fs);
        self.judge(&ops)
    }

    /// The operations of a request, with their facts.
    pub fn operations(&self, req: &Request, fs: &dyn FileFacts) -> Operations {
        let ctx = ops::Context {
            roots: &self.roots,
            home: &self.homes[0],
            workspace: &self.workspace,
            fs,
        };
        ops::operations(req, &ctx)
    }

    /// Run the decision order over operations whose facts are already resolved.
    pub fn judge(&self, ops: &Operations) -> Verdict {
        self.judge_traced(ops, false)
    }

    /// Like [`Policy::judge`], recording the evaluation trail in `Verdict::trail` when
    /// `trace` is set (`--explain`).
    pub fn judge_traced(&self, ops: &Operations, trace: bool) -> Verdict {
        self.judge_with(ops, Containment::None, trace)
            .into_verdict()
    }

    /// Run the decision order for a call that will run under `containment`, and seal the
    /// result. Containment applies to shell calls only; any other call is judged as
    /// uncontained whatever is passed. Only this function makes a [`Judgement`].
    pub fn judge_with(&self, ops: &Operations, containment: Containment, trace: bool) -> Judgement {
        let containment = if ops.tool_kind == Some(ToolKind::Bash) {
            containment
        } else {
            Containment::None
        };
        let verdict = self.judge_in(ops, containment, trace);
        Judgement::new(verdict, containment, self.approval)
    }

    fn judge_in(&self, ops: &Operations, containment: Containment, trace: bool) -> Verdict {
        let mut findings = Vec::with_capacity(ops.ops.len());
        let mut trail = Vec::new();
        let mut worst: Option<usize> = None;
        for op in &ops.ops {
            let (decision, source, reason) =
                self.judge_op(op, ops, containment, trace.then_some(&mut trail));
            let (target, resolved) = match &op.target {
                Target::Path(f) => (
                    f.literal.display().to_string(),
                    (f.resolved != f.literal).then(|| f.resolved.display().to_string()),
                ),
                t => (t.display(), None),
            };
            findings.push(Finding {
                op: op.kind,
                target,
                resolved,
                location: op.location,
                decision,
                source,
                reason,
                command: op
                    .command
                    .and_then(|i| ops.commands.get(i))
                    .map(|c| c.text.clone()),
            });
            let i = findings.len() - 1;
            if worst.is_none_or(|w| findings[w].decision < decision) {
                worst = Some(i);
            }
        }
        let Some(w) = worst else {
            // A call with nothing to do (a bare assignment): nothing to refuse.
            return Verdict {
                decision: Decision::Allow,
                reason: "the call performs no operation".into(),
                source: Source::new(Step::Default, "no operation"),
                findings,
                contained: containment.is_contained(),
                trail,
            };
        };
        let f = &findings[w];
        let mut verdict = Verdict {
            decision: f.decision,
            reason: f.reason.clone(),
            source: f.source.clone(),
            findings: Vec::new(),
            contained: containment.is_contained(),
            trail: Vec::new(),
        };
        if verdict.decision == Decision::Ask && (self.mode == Mode::DontAsk || self.no_human) {
            let why = if self.mode == Mode::DontAsk {
                "dont-ask mode"
            } else {
                "no human can be asked"
            };
            trail.push(format!("ask becomes deny: {why}"));
            verdict.reason = format!(
                "{} (denied: {why}, so the ask cannot be put to anyone)",
                verdict.reason
            );
            verdict.decision = Decision::Deny;
            verdict.source = Source {
                step: Step::NoHuman,
                rule: Some(why.into()),
                ..verdict.source
            };
        }
        verdict.findings = findings;
        verdict.trail = trail;
        verdict
    }

    fn judge_op(
        &self,
        op: &Operation,
        ops: &Operations,
        containment: Containment,
        mut trail: Option<&mut Vec<String>>,
    ) -> (Decision, Source, String) {
        let label = if trail.is_some() {
            format!("{} {}", op.kind.as_str(), op.target.display())
        } else {
            String::new()
        };
        let steps: [(&str, &dyn Fn() -> Option<Outcome>); 9] = [
            ("validate", &|| self.step_validate(op)),
            ("guard", &|| self.step_guard_in(op, containment)),
            ("deny-rule", &|| self.step_rule(op, ops, Decision::Deny)),
            ("mention", &|| step_mention(op)),
            ("ask-rule", &|| self.step_rule(op, ops, Decision::Ask)),
            ("opaque", &|| self.step_opaque_in(op, ops, containment)),
            ("mode", &|| self.step_mode(op)),
            ("allow-rule", &|| self.step_allow(op, ops)),
            ("default", &|| Some(self.step_default_in(op, containment))),
        ];
        for (name, step) in steps {
            let outcome = step();
            if let Some(t) = trail.as_deref_mut() {
                match &outcome {
                    Some(o) => t.push(format!("{label}: {name} -> {} ({})", o.0, o.2)),
                    None => t.push(format!("{label}: {name} -> no decision")),
                }
            }
            if let Some(o) = outcome {
                return o;
            }
        }
        // `step_default` always decides; this is unreachable in practice and fails closed.
        (
            Decision::Deny,
            Source::new(Step::Default, "no step decided"),
            "no step decided".into(),
        )
    }

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
            (OpKind::Read | OpKind::List, Target::Path(f)) => {
                if let Some(h) = self.path_guard(f, guards::sensitive_read) {
                    let named = if op.mention {
                        format!("the code it runs names {}, which", f.literal.display())
                    } else {
                        f.literal.display().to_string()
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
                if let Some(h) = self.path_guard(f, guards::protected_write) {
                    let named = if op.mention {
                        format!("the code it runs names {}, which", f.literal.display())
                    } else {
                        f.literal.display().to_string()
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
                let ws = &self.workspace;
                let hit = self
                    .path_guard(f, |p, h| guards::critical_delete(p, h, ws))
                    .or_else(|| self.path_guard(f, guards::protected_write));
                if let Some(h) = hit {
                    return deny(
                        &format!("{}: {}", h.guard, h.pattern),
                        format!(
                            "deleting {} is never allowed ({}).",
                            f.literal.display(),
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
            for p in std::iter::once(&f.literal).chain(resolved) {
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

/// After the guards and deny rules: a path named inside code (a mention) is judged by
/// nothing else. Whether the code reads or writes it is unknown, so asking about it would
/// ask about every string a script holds; the rest of the call decides the verdict.
fn step_mention(op: &Operation) -> Option<Outcome> {
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

/// What a step decided: the decision, its source and one sentence.
pub type Outcome = (Decision, Source, String);

fn ensure_period(mut s: String) -> String {
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    //! Each step of the order on its own, on hand-built operations.
    use super::*;
    use crate::facts::FakeFs;
    use crate::ops::{Opaque, SubCommand};

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
}
