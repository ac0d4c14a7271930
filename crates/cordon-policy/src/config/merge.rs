//! Merging the layers into one policy: each layer's settings, rules, presets and
//! credentials checked, and the result bounded by the layers above it.
//!
//! Layers come highest first (managed, then the command line's flags, user, project).
//! A scalar takes the first value set; lists gather from every layer. A layer that is not
//! honoured (a project's file in a workspace the user has not trusted) may only narrow:
//! what it would widen is ignored with a note saying so.

mod checks;

use super::format::{AllowEntry, SandboxField, SandboxTable};
use super::{
    ConfigError, Defaults, Layer, LayerKind, LoadOptions, Merged, Mode, Versions, user_file,
};
use crate::facts::FileFacts;
use crate::presets::Preset;
use crate::rules::{self, Anchors, Rule, RuleOrigin};
use crate::settings::{
    ApprovalPolicy, NetworkSettings, RequiredTier, SandboxMode, SandboxSettings, SlotSettings,
};
use crate::verdict::Decision;
use checks::{check_cidr, check_examples, credentials_of, defaults_table, preset_of};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(super) fn merge(
    opts: &LoadOptions,
    fs: &dyn FileFacts,
    layers: Vec<Layer>,
    workspace: PathBuf,
    home: PathBuf,
    home_resolved: PathBuf,
    version: Versions,
) -> Result<Merged, ConfigError> {
    let mut notes = Vec::new();
    let trusted = workspace_trusted(&layers, fs, &workspace, &home, &mut notes)?;
    let anchors = Anchors {
        workspace: workspace.clone(),
        home: home.clone(),
    };
    let mut m = Merging {
        notes,
        ..Merging::default()
    };
    for l in &layers {
        if l.kind > LayerKind::Managed {
            m.insert_flags(opts);
        }
        let layer = Honoured {
            l,
            ok: l.kind != LayerKind::Project || trusted,
            home: &home,
            workspace: &workspace,
            anchors: &anchors,
        };
        m.layer(&layer, opts)?;
    }
    m.insert_flags(opts);
    m.command_line(opts, &anchors)?;
    Ok(m.finish(
        opts,
        fs,
        &layers,
        workspace,
        home,
        home_resolved,
        trusted,
        version,
    ))
}

/// Whether the user or managed file lists this workspace in `trusted_workspaces`. Trust
/// comes only from those two layers; a lower file's list is ignored with a note.
fn workspace_trusted(
    layers: &[Layer],
    fs: &dyn FileFacts,
    workspace: &Path,
    home: &Path,
    notes: &mut Vec<String>,
) -> Result<bool, ConfigError> {
    let mut trusted = false;
    for l in layers {
        let Some(list) = &l.cfg.trusted_workspaces else {
            continue;
        };
        if !matches!(l.kind, LayerKind::User | LayerKind::Managed) {
            notes.push(format!(
                "{}: `trusted_workspaces` ignored: only the user and managed files may mark a workspace trusted",
                l.file.display()
            ));
            continue;
        }
        for w in list.get_ref() {
            let p = crate::paths::expand_home(w.get_ref(), home);
            if !p.is_absolute() {
                return Err(l.err(
                    w.span(),
                    format!(
                        "trusted workspace `{}` must be an absolute path or start with ~/",
                        w.get_ref()
                    ),
                ));
            }
            if crate::paths::resolve(&p, fs).0 == workspace {
                trusted = true;
            }
        }
    }
    Ok(trusted)
}

/// One layer as the merge reads it: the file and whether its widening settings count.
struct Honoured<'a> {
    l: &'a Layer,
    /// False for a project file in an untrusted workspace: it may only narrow.
    ok: bool,
    home: &'a Path,
    workspace: &'a Path,
    anchors: &'a Anchors,
}

/// What the layers set so far, highest first.
#[derive(Default)]
struct Merging {
    notes: Vec<String>,
    flags_done: bool,
    mode: Option<Mode>,
    sandbox_mode: Option<SandboxMode>,
    approval: Option<ApprovalPolicy>,
    sandbox: SandboxSettings,
    network: NetworkSettings,
    /// `[defaults]` from honoured layers (first wins) and what an untrusted project
    /// tightens.
    defaults_set: BTreeMap<&'static str, Decision>,
    project_defaults: Option<Defaults>,
    /// `[contained]` from the user's and managed files, and what any project tightens.
    contained_set: BTreeMap<&'static str, Decision>,
    project_contained: Option<Defaults>,
    rules: Vec<Rule>,
    ignored_allows: Vec<String>,
    presets: Vec<Preset>,
    mcp: crate::mcp::McpSettings,
    sessions: crate::session::SessionSettings,
    sessions_seen: crate::session::Seen,
    hook_contain: Option<bool>,
    hook_accept_edits: Option<bool>,
    slots: SlotSettings,
    store: Option<crate::settings::StoreSettings>,
}

impl Merging {
    /// The command line's mode, sandbox mode and approval policy rank just below the
    /// managed file: inserted once, before the first lower layer (or at the end).
    fn insert_flags(&mut self, opts: &LoadOptions) {
        if std::mem::replace(&mut self.flags_done, true) {
            return;
        }
        if self.mode.is_none() {
            self.mode = opts.mode;
        }
        if self.sandbox_mode.is_none() {
            self.sandbox_mode = opts.sandbox_mode;
        }
        if self.approval.is_none() {
            self.approval = opts.approval;
        }
    }

    fn ignored(&mut self, layer: &Honoured, what: &str) {
        self.notes.push(format!(
            "{}: {what} ignored: the workspace is not trusted (add it to `trusted_workspaces` in your user config)",
            layer.l.file.display()
        ));
    }

    /// Every table of one layer, in a fixed order (so the first error reported is stable).
    fn layer(&mut self, layer: &Honoured, opts: &LoadOptions) -> Result<(), ConfigError> {
        let l = layer.l;
        // Marking a server untrusted only narrows: every layer may.
        l.cfg
            .mcp
            .merge_into(&mut self.mcp, layer.ok)
            .map_err(|(span, why)| l.err(span, why))?;
        let skipped = l
            .cfg
            .sessions
            .merge_into(
                &mut self.sessions,
                &mut self.sessions_seen,
                layer.ok,
                layer.workspace,
                layer.home,
            )
            .map_err(|(span, why)| l.err(span, why))?;
        for what in skipped {
            self.ignored(layer, &what);
        }
        self.scalars(layer)?;
        self.store(layer)?;
        self.slots(layer)?;
        self.approval(layer)?;
        if let Some(s) = &l.cfg.sandbox {
            self.sandbox_field(layer, s, opts)?;
        }
        self.presets(layer)?;
        self.defaults(layer)?;
        self.network(layer)?;
        self.rules(layer)
    }

    /// `mode`, `[hook] contain` and `[hook] accept_edits`: first set wins; a repository's
    /// own file may choose none of them unless trusted.
    fn scalars(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if let Some(m) = &l.cfg.mode {
            let parsed = m
                .get_ref()
                .parse::<Mode>()
                .map_err(|e| l.err(m.span(), e.to_string()))?;
            if layer.ok {
                self.mode.get_or_insert(parsed);
            } else {
                self.ignored(layer, "`mode`");
            }
        }
        // Containment decides with the `[contained]` table, which asks less: like the
        // mode, a repository's own file may not choose it.
        if let Some(contain) = l.cfg.hook.as_ref().and_then(|h| h.get_ref().contain) {
            if layer.ok {
                self.hook_contain.get_or_insert(contain);
            } else {
                self.ignored(layer, "`[hook] contain`");
            }
        }
        // Widening by the harness's mode is the user's choice, never a repository's.
        if let Some(accept) = l.cfg.hook.as_ref().and_then(|h| h.get_ref().accept_edits) {
            if layer.ok {
                self.hook_accept_edits.get_or_insert(accept);
            } else {
                self.ignored(layer, "`[hook] accept_edits`");
            }
        }
        Ok(())
    }

    /// `[store]`: the highest user or managed file's table; any other file's is an error.
    fn store(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if let Some(t) = &l.cfg.store {
            let s = super::store::store_of(l.kind, &l.file, &l.text, t, layer.home)?;
            if self.store.is_none() {
                self.store = Some(s);
            } else {
                self.notes.push(format!(
                    "{}: `[store]` ignored: the managed file's `[store]` applies",
                    l.file.display()
                ));
            }
        }
        Ok(())
    }

    fn slots(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if let Some(t) = &l.cfg.slots {
            let t = t.get_ref();
            if !layer.ok {
                self.ignored(layer, "`[slots]`");
            } else {
                if let Some(sc) = &t.scope {
                    let parsed =
                        crate::settings::SlotScope::parse(sc.get_ref()).ok_or_else(|| {
                            l.err(
                                sc.span(),
                                format!(
                                    "unknown slot scope `{}`: use session, user, agent or global",
                                    sc.get_ref()
                                ),
                            )
                        })?;
                    self.slots.scope.get_or_insert(parsed);
                }
                if let Some(w) = t.wait_seconds {
                    self.slots.wait_seconds.get_or_insert(w);
                }
                if let Some(tmp) = t.tmp {
                    self.slots.tmp.get_or_insert(tmp);
                }
            }
        }
        Ok(())
    }

    fn approval(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if let Some(a) = &l.cfg.approval {
            let parsed = a
                .get_ref()
                .parse::<ApprovalPolicy>()
                .map_err(|e| l.err(a.span(), e.to_string()))?;
            if layer.ok {
                self.approval.get_or_insert(parsed);
            } else {
                self.ignored(layer, "`approval`");
            }
        }
        Ok(())
    }

    /// `sandbox = "mode"` or a `[sandbox]` table.
    fn sandbox_field(
        &mut self,
        layer: &Honoured,
        s: &toml::Spanned<SandboxField>,
        opts: &LoadOptions,
    ) -> Result<(), ConfigError> {
        let l = layer.l;
        let m = match s.get_ref() {
            SandboxField::Mode(m) => Some(m.as_str()),
            SandboxField::Table(t) => t.mode.as_deref(),
        };
        if let Some(m) = m {
            let parsed = m
                .parse::<SandboxMode>()
                .map_err(|e| l.err(s.span(), e.to_string()))?;
            if layer.ok {
                self.sandbox_mode.get_or_insert(parsed);
            } else {
                self.ignored(layer, "`sandbox` mode");
            }
        }
        let SandboxField::Table(t) = s.get_ref() else {
            return Ok(());
        };
        if let Some(r) = &t.require {
            let parsed = r
                .parse::<RequiredTier>()
                .map_err(|e| l.err(s.span(), e.to_string()))?;
            self.required_tier(layer, parsed, opts);
        }
        let abs = |v: &[String]| -> Result<Vec<PathBuf>, ConfigError> {
            v.iter()
                .map(|p| {
                    let e = crate::paths::expand_home(p, layer.home);
                    if e.is_absolute() {
                        Ok(crate::paths::clean(&e))
                    } else {
                        Err(l.err(
                            s.span(),
                            format!("sandbox path `{p}` must be absolute or start with ~/"),
                        ))
                    }
                })
                .collect()
        };
        // Masks only ever hide more: honoured from every layer. So does holding a run's
        // changes for review, and a lower bound on what they may take.
        self.sandbox.mask.extend(abs(&t.mask)?);
        if t.hold == Some(true) {
            self.sandbox.hold = true;
        }
        if let Some(limit) = t.changes_limit {
            self.sandbox.changes_limit =
                Some(self.sandbox.changes_limit.map_or(limit, |l| l.min(limit)));
        }
        if layer.ok {
            self.sandbox.writable_roots.extend(abs(&t.writable_roots)?);
            self.widen_sandbox(t);
        } else if widens(t) {
            self.ignored(layer, "[sandbox] widening settings");
        }
        Ok(())
    }

    /// `[sandbox] require`. The tier decides what a run may leave for the host's own tools
    /// to run later: the repository whose code runs must not choose it, even trusted (the
    /// user's file or the command line does). `--require` ranks below the managed file.
    fn required_tier(&mut self, layer: &Honoured, parsed: RequiredTier, opts: &LoadOptions) {
        let l = layer.l;
        if l.kind == LayerKind::Project {
            self.notes.push(format!(
                "{}: `[sandbox] require` ignored: only the managed and user files and the command line choose the containment tier",
                l.file.display()
            ));
            return;
        }
        if l.kind > LayerKind::Managed
            && self.sandbox.require.is_none()
            && let Some(flag) = opts.require
        {
            self.sandbox.require = Some(flag);
            self.sandbox.require_source = Some("--require".into());
        }
        if self.sandbox.require.is_none() {
            self.sandbox.require = Some(parsed);
            self.sandbox.require_source = Some(l.file.display().to_string());
        }
    }

    /// The `[sandbox]` settings that widen what a run may see or keep.
    fn widen_sandbox(&mut self, t: &SandboxTable) {
        let sandbox = &mut self.sandbox;
        sandbox.env_allow.extend(t.env_allow.iter().cloned());
        sandbox
            .env_allow_secret
            .extend(t.env_allow_secret.iter().cloned());
        if sandbox.home_readable.is_none()
            && let Some(v) = &t.home_readable
        {
            sandbox.home_readable = Some(v.iter().map(PathBuf::from).collect());
        }
    }

    fn presets(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if l.cfg.preset.is_empty() {
            return Ok(());
        }
        if !layer.ok {
            self.ignored(layer, "`[[preset]]`");
            return Ok(());
        }
        // Later presets of one file win: they go first in the highest-first list.
        let mut mine = l
            .cfg
            .preset
            .iter()
            .map(|p| preset_of(l, p, layer.home))
            .collect::<Result<Vec<_>, _>>()?;
        mine.reverse();
        self.presets.extend(mine);
        Ok(())
    }

    /// `[defaults]` (an untrusted project may only tighten) and `[contained]` (a project,
    /// trusted or not, may only tighten what runs unasked in the sandbox).
    fn defaults(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        if let Some(d) = &l.cfg.defaults {
            for (key, dec) in defaults_table(l, d)? {
                if layer.ok {
                    self.defaults_set.entry(key).or_insert(dec);
                } else if let Some(slot) = self
                    .project_defaults
                    .get_or_insert_with(Defaults::loosest)
                    .slot(key)
                {
                    *slot = dec;
                }
            }
        }
        if let Some(d) = &l.cfg.contained {
            for (key, dec) in defaults_table(l, d)? {
                if l.kind == LayerKind::Project {
                    if let Some(slot) = self
                        .project_contained
                        .get_or_insert_with(Defaults::loosest)
                        .slot(key)
                    {
                        *slot = dec;
                    }
                } else {
                    self.contained_set.entry(key).or_insert(dec);
                }
            }
        }
        Ok(())
    }

    /// Network lists (validated here so errors carry positions) and credentials.
    fn network(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        for v in &l.cfg.network.deny {
            crate::net::HostPattern::parse(v.get_ref())
                .map_err(|e| l.err(v.span(), e.to_string()))?;
            self.network.deny.push(v.get_ref().clone());
        }
        for v in &l.cfg.network.allow {
            let (host, what) = match v.get_ref() {
                AllowEntry::Host(h) => {
                    crate::net::HostPattern::parse(h)
                        .map_err(|e| l.err(v.span(), e.to_string()))?;
                    (h, format!("network allow `{h}`"))
                }
                AllowEntry::Rule(t) => {
                    let spec = crate::net::RequestRuleSpec {
                        host: t.host.clone(),
                        methods: t.methods.clone(),
                        paths: t.paths.clone(),
                        read_only: t.read_only,
                        git_push: t.git_push,
                    };
                    crate::net::RequestRule::parse(&spec)
                        .map_err(|e| l.err(v.span(), e.to_string()))?;
                    if layer.ok {
                        self.network.rules.push(spec);
                    }
                    (&t.host, format!("network rule for `{}`", t.host))
                }
            };
            if layer.ok {
                self.network.allow.push(host.clone());
            } else {
                self.ignored(layer, &what);
            }
        }
        credentials_of(l, layer.home, &mut self.network, &mut self.notes)?;
        for v in &l.cfg.network.allow_private {
            let c = v.get_ref();
            check_cidr(c).map_err(|e| l.err(v.span(), e))?;
            if layer.ok {
                self.network.allow_private.push(c.clone());
            } else {
                self.ignored(layer, &format!("network allow_private `{c}`"));
            }
        }
        Ok(())
    }

    /// `[permissions]` lists and `[[rule]]` tables. An untrusted project's allow rules are
    /// dropped (and listed); its deny and ask rules count.
    fn rules(&mut self, layer: &Honoured) -> Result<(), ConfigError> {
        let l = layer.l;
        let p = &l.cfg.permissions;
        for (action, list) in [
            (Decision::Deny, &p.deny),
            (Decision::Ask, &p.ask),
            (Decision::Allow, &p.allow),
        ] {
            for r in list {
                let matcher = rules::parse_rule(r.get_ref(), layer.anchors)
                    .map_err(|e| l.err(r.span(), e.to_string()))?;
                self.push_rule(layer, action, r.get_ref().clone(), matcher, r.span(), None);
            }
        }
        for t in &l.cfg.rule {
            let action = t
                .action
                .get_ref()
                .parse::<Decision>()
                .map_err(|e| l.err(t.action.span(), e.to_string()))?;
            let (text, span) = match (&t.rule, &t.tool, &t.pattern) {
                (Some(r), None, None) => (r.get_ref().clone(), r.span()),
                (None, Some(tool), Some(p)) => {
                    (format!("{}({})", tool.get_ref(), p.get_ref()), tool.span())
                }
                (None, Some(tool), None) => (tool.get_ref().clone(), tool.span()),
                _ => {
                    return Err(l.err(
                        t.action.span(),
                        "a [[rule]] needs either `rule = \"Tool(pattern)\"` or `tool` (with an optional `pattern`)",
                    ));
                }
            };
            let matcher = rules::parse_rule(&text, layer.anchors)
                .map_err(|e| l.err(span.clone(), e.to_string()))?;
            check_examples(
                l,
                &text,
                &matcher,
                layer.anchors,
                &t.must_match,
                &t.not_match,
            )?;
            self.push_rule(layer, action, text, matcher, span, t.reason.clone());
        }
        Ok(())
    }

    fn push_rule(
        &mut self,
        layer: &Honoured,
        action: Decision,
        text: String,
        matcher: rules::Matcher,
        span: std::ops::Range<usize>,
        reason: Option<String>,
    ) {
        if action == Decision::Allow && !layer.ok {
            self.ignored(layer, &format!("allow rule `{text}`"));
            self.ignored_allows.push(text);
            return;
        }
        self.rules.push(Rule {
            action,
            text,
            matcher,
            origin: layer.l.origin(span),
            reason,
        });
    }

    /// What the command line adds after every file: `--require` where no file above the
    /// flags set a tier, `--allow-net`, `--allow-private`, and the remembered rules of the
    /// approval store. Credentials are checked for ambiguity once all are in.
    fn command_line(&mut self, opts: &LoadOptions, anchors: &Anchors) -> Result<(), ConfigError> {
        if self.sandbox.require.is_none()
            && let Some(flag) = opts.require
        {
            self.sandbox.require = Some(flag);
            self.sandbox.require_source = Some("--require".into());
        }
        crate::credential::check_unambiguous(
            self.network
                .credentials
                .iter()
                .map(|c| (c.name.as_str(), c.destinations.as_slice())),
        )
        .map_err(|e| unplaced(e.to_string()))?;
        for h in &opts.network_allow {
            crate::net::HostPattern::parse(h)
                .map_err(|e| unplaced(format!("--allow-net {h}: {e}")))?;
            self.network.allow.push(h.clone());
        }
        for c in &opts.network_allow_private {
            c.parse::<ipnet::IpNet>()
                .or_else(|_| c.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    unplaced(format!(
                        "--allow-private {c}: not a CIDR such as 10.0.0.0/8"
                    ))
                })?;
            self.network.allow_private.push(c.clone());
        }
        for text in &opts.remembered_rules {
            let matcher = rules::parse_rule(text, anchors).map_err(|e| {
                unplaced(format!(
                    "remembered rule `{text}` in the approval store: {e}"
                ))
            })?;
            self.rules.push(Rule {
                action: Decision::Allow,
                text: text.clone(),
                matcher,
                origin: RuleOrigin {
                    layer: "remembered",
                    ..Default::default()
                },
                reason: None,
            });
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)] // the parts of `Merged` that are not merged
    fn finish(
        self,
        opts: &LoadOptions,
        fs: &dyn FileFacts,
        layers: &[Layer],
        workspace: PathBuf,
        home: PathBuf,
        home_resolved: PathBuf,
        trusted: bool,
        version: Versions,
    ) -> Merged {
        let mut defaults = Defaults::default();
        for (k, v) in &self.defaults_set {
            if let Some(slot) = defaults.slot(k) {
                *slot = *v;
            }
        }
        defaults.tighten(&self.project_defaults.unwrap_or_else(Defaults::loosest));
        let mut contained = Defaults::contained();
        for (k, v) in &self.contained_set {
            if let Some(slot) = contained.slot(k) {
                *slot = *v;
            }
        }
        contained.tighten(&self.project_contained.unwrap_or_else(Defaults::loosest));
        let mut sandbox = self.sandbox;
        sandbox.writable_roots = sandbox
            .writable_roots
            .iter()
            .map(|r| crate::paths::resolve(r, fs).0)
            .collect();
        Merged {
            user_file: user_file(opts, &home),
            workspace,
            home,
            home_resolved,
            mode: self.mode.unwrap_or_default(),
            hook_contain: self.hook_contain.unwrap_or(false),
            hook_accept_edits: self.hook_accept_edits.unwrap_or(false),
            slots: self.slots,
            sandbox_mode: self.sandbox_mode.unwrap_or_default(),
            approval: self.approval.unwrap_or_default(),
            defaults,
            contained,
            rules: self.rules,
            network: self.network,
            sandbox,
            trusted,
            files: layers.iter().map(|l| (l.kind, l.file.clone())).collect(),
            notes: self.notes,
            ignored_allows: self.ignored_allows,
            version: version.full,
            grant_version: version.grants,
            presets: self.presets,
            mcp: self.mcp,
            sessions: self.sessions,
            store: self.store,
        }
    }
}

/// Whether a `[sandbox]` table sets anything that widens what a run may see or keep.
fn widens(t: &SandboxTable) -> bool {
    !t.writable_roots.is_empty()
        || !t.env_allow.is_empty()
        || !t.env_allow_secret.is_empty()
        || t.home_readable.is_some()
}

/// An error of the command line or the approval store: no file, no position.
fn unplaced(message: String) -> ConfigError {
    ConfigError {
        file: None,
        position: None,
        message,
    }
}
