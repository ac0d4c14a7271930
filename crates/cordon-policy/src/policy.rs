//! The compiled policy and the eight-step decision order.
//!
//! `decide` = `operations` (facts gathered through [`FileFacts`]) + `judge` (pure). Each step
//! is its own function so it can be tested alone; per operation the first step that returns
//! an outcome decides, and the call's verdict is the most restrictive over its operations.
//! Nothing here stops early on a long call: every operation is judged.

use crate::config::{self, ConfigError, Defaults, LoadOptions, Merged, Mode};
use crate::errors::AttenuationError;
use crate::facts::FileFacts;
use crate::judgement::{Containment, Judgement};
use crate::net::NetworkPolicy;
use crate::ops::{self, OpKind, Operation, Operations, Target};
use crate::request::{Request, ToolKind};
use crate::rules::{Matcher, PathIndex, PathTool, Rule};
use crate::settings::{ApprovalPolicy, NetworkSettings, SandboxMode, SandboxSettings};
use crate::verdict::{Decision, Finding, Source, Step, Verdict};
use std::path::{Path, PathBuf};

mod steps;
use steps::{step_config, step_mention};

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
        let err = |e: crate::rules::PathGlobError| ConfigError {
            file: None,
            position: None,
            message: e.to_string(),
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
    hook_accept_edits: bool,
    slots: crate::settings::SlotSettings,
    store: Option<crate::settings::StoreSettings>,
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
            hook_accept_edits: m.hook_accept_edits,
            slots: m.slots,
            store: m.store,
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

    /// This policy in `accept-edits` mode, for a harness that reports its own
    /// `acceptEdits` mode: only when the user or managed config opted in (`[hook]
    /// accept_edits = true`) and the configured mode is `default` (a stricter or other
    /// chosen mode stays).
    pub fn accepting_harness_edits(&self) -> Option<Policy> {
        (self.hook_accept_edits && self.mode == Mode::Default).then(|| {
            let mut p = self.clone();
            p.mode = Mode::AcceptEdits;
            p
        })
    }
    /// `[store]`: where the shared state lives (`None`: the local SQLite file).
    pub fn store(&self) -> Option<&crate::settings::StoreSettings> {
        self.store.as_ref()
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
        // A request always names its tool and the verdict below always carries the
        // workspace and the version, so this never fails; an empty fingerprint would
        // be refused by the store.
        crate::fingerprint::approval_fingerprint(&req.canonical_json(), &self.fingerprint_verdict())
            .unwrap_or_default()
    }

    /// What a recorded verdict must carry for its fingerprint to be computed again
    /// (see [`crate::fingerprint`]): the workspace and this policy's version.
    pub fn fingerprint_verdict(&self) -> serde_json::Value {
        serde_json::json!({
            "workspace": self.workspace.display().to_string(),
            "grant_version": self.grant_version,
        })
    }

    /// The narrowest rule that would allow every asking operation of `ops` again, when one
    /// rule can: the exact call (the first of [`Policy::suggestions`]).
    pub fn suggestion(&self, ops: &Operations, verdict: &Verdict) -> Option<String> {
        self.suggestions(ops, verdict)
            .into_iter()
            .next()
            .map(|o| o.rule)
    }

    /// The rules "always allow" may save for this call, the exact one first, each of
    /// which allows every asking operation of `ops` again (see [`crate::suggest`]);
    /// empty when no rule can. No rule names a program run by another program's
    /// argument (`git -c core.pager=evil log`): the human was shown the program that
    /// runs it.
    pub fn suggestions(
        &self,
        ops: &Operations,
        verdict: &Verdict,
    ) -> Vec<crate::suggest::RuleOption> {
        use crate::suggest::{Anchors, SuggestTarget, suggest_options};
        let anchors = Anchors {
            workspace: Some(&self.workspace),
            home: Some(&self.homes[0]),
        };
        let mut out: Option<Vec<crate::suggest::RuleOption>> = None;
        for (op, f) in ops.ops.iter().zip(&verdict.findings) {
            if f.decision != Decision::Ask {
                continue;
            }
            let target = match (op.command.and_then(|i| ops.commands.get(i)), &op.target) {
                (Some(c), _) if c.in_code => return Vec::new(),
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
                _ => return Vec::new(),
            };
            let options = suggest_options(&target, &anchors);
            // Keep only the rules that answer every asking operation, in the first's order.
            out = Some(match out {
                None => options,
                Some(prev) => prev
                    .into_iter()
                    .filter(|o| options.iter().any(|n| n.rule == o.rule))
                    .collect(),
            });
            if out.as_ref().is_some_and(Vec::is_empty) {
                return Vec::new();
            }
        }
        out.unwrap_or_default()
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
            guarded: std::cell::OnceCell::new(),
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
        let steps: [(&str, &dyn Fn() -> Option<Outcome>); 10] = [
            ("validate", &|| self.step_validate(op)),
            ("guard", &|| self.step_guard_in(op, containment)),
            ("deny-rule", &|| self.step_rule(op, ops, Decision::Deny)),
            ("mention", &|| step_mention(op)),
            ("config", &|| step_config(op)),
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
mod tests;
