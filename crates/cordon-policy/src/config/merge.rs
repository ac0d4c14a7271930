//! Merging the layers into one policy: each layer's settings, rules, presets and
//! credentials checked, and the result bounded by the layers above it.

use super::format::{AllowEntry, PresetTable, SandboxField};
use super::{
    ConfigError, DEFAULT_KEYS, Defaults, Layer, LayerKind, LoadOptions, Merged, Mode, Versions,
    user_file,
};
use crate::facts::FileFacts;
use crate::presets::Preset;
use crate::rules::{self, Anchors, Matcher, Rule, RuleOrigin};
use crate::settings::{
    ApprovalPolicy, NetworkSettings, RequiredTier, SandboxMode, SandboxSettings,
};
use crate::verdict::Decision;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    // Trust comes only from the user and managed layers.
    let mut trusted = false;
    for l in &layers {
        if let Some(list) = &l.cfg.trusted_workspaces {
            if !matches!(l.kind, LayerKind::User | LayerKind::Managed) {
                notes.push(format!(
                    "{}: `trusted_workspaces` ignored: only the user and managed files may mark a workspace trusted",
                    l.file.display()
                ));
                continue;
            }
            for w in list.get_ref() {
                let p = crate::paths::expand_home(w.get_ref(), &home);
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
    }
    let honoured = |l: &Layer| l.kind != LayerKind::Project || trusted;

    let anchors = Anchors {
        workspace: workspace.clone(),
        home: home.clone(),
    };

    // Scalars: the first (highest) layer that sets them wins; command-line values belong to
    // the flags layer, which sits below managed.
    let mut mode = None;
    let mut sandbox_mode = None;
    let mut approval = None;
    let mut sandbox = SandboxSettings::default();
    let mut network = NetworkSettings::default();
    let mut defaults_set: BTreeMap<&'static str, Decision> = BTreeMap::new();
    let mut project_defaults = Defaults::loosest();
    let mut contained_set: BTreeMap<&'static str, Decision> = BTreeMap::new();
    let mut project_contained = Defaults::loosest();
    let mut rules = Vec::new();
    let mut ignored_allows = Vec::new();
    let mut presets = Vec::new();
    let mut mcp = crate::mcp::McpSettings::default();
    let mut sessions = crate::session::SessionSettings::default();
    let mut sessions_seen = crate::session::Seen::default();
    let mut hook_contain = None;
    let mut hook_accept_edits = None;
    let mut slots = crate::settings::SlotSettings::default();

    let flags_inserted =
        |mode: &mut Option<Mode>, sm: &mut Option<SandboxMode>, ap: &mut Option<ApprovalPolicy>| {
            if mode.is_none() {
                *mode = opts.mode;
            }
            if sm.is_none() {
                *sm = opts.sandbox_mode;
            }
            if ap.is_none() {
                *ap = opts.approval;
            }
        };
    let mut flags_done = false;

    for l in &layers {
        if l.kind > LayerKind::Managed && !flags_done {
            flags_inserted(&mut mode, &mut sandbox_mode, &mut approval);
            flags_done = true;
        }
        let ok = honoured(l);
        // Marking a server untrusted only narrows: every layer may.
        l.cfg
            .mcp
            .merge_into(&mut mcp, ok)
            .map_err(|(span, why)| l.err(span, why))?;
        for what in l
            .cfg
            .sessions
            .merge_into(&mut sessions, &mut sessions_seen, ok, &workspace, &home)
            .map_err(|(span, why)| l.err(span, why))?
        {
            notes.push(format!(
                "{}: {what} ignored: the workspace is not trusted (add it to `trusted_workspaces` in your user config)",
                l.file.display()
            ));
        }
        let ignored = |what: &str, notes: &mut Vec<String>| {
            notes.push(format!(
                "{}: {what} ignored: the workspace is not trusted (add it to `trusted_workspaces` in your user config)",
                l.file.display()
            ));
        };
        if let Some(m) = &l.cfg.mode {
            let parsed = m
                .get_ref()
                .parse::<Mode>()
                .map_err(|e| l.err(m.span(), e.to_string()))?;
            if ok {
                mode.get_or_insert(parsed);
            } else {
                ignored("`mode`", &mut notes);
            }
        }
        // Containment decides with the `[contained]` table, which asks less: like the
        // mode, a repository's own file may not choose it.
        if let Some(contain) = l.cfg.hook.as_ref().and_then(|h| h.get_ref().contain) {
            if ok {
                hook_contain.get_or_insert(contain);
            } else {
                ignored("`[hook] contain`", &mut notes);
            }
        }
        // Widening by the harness's mode is the user's choice, never a repository's.
        if let Some(accept) = l.cfg.hook.as_ref().and_then(|h| h.get_ref().accept_edits) {
            if ok {
                hook_accept_edits.get_or_insert(accept);
            } else {
                ignored("`[hook] accept_edits`", &mut notes);
            }
        }
        if let Some(t) = &l.cfg.slots {
            let t = t.get_ref();
            if !ok {
                ignored("`[slots]`", &mut notes);
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
                    slots.scope.get_or_insert(parsed);
                }
                if let Some(w) = t.wait_seconds {
                    slots.wait_seconds.get_or_insert(w);
                }
                if let Some(tmp) = t.tmp {
                    slots.tmp.get_or_insert(tmp);
                }
            }
        }
        if let Some(a) = &l.cfg.approval {
            let parsed = a
                .get_ref()
                .parse::<ApprovalPolicy>()
                .map_err(|e| l.err(a.span(), e.to_string()))?;
            if ok {
                approval.get_or_insert(parsed);
            } else {
                ignored("`approval`", &mut notes);
            }
        }
        if let Some(s) = &l.cfg.sandbox {
            let m = match s.get_ref() {
                SandboxField::Mode(m) => Some(m.as_str()),
                SandboxField::Table(t) => t.mode.as_deref(),
            };
            if let Some(m) = m {
                let parsed = m
                    .parse::<SandboxMode>()
                    .map_err(|e| l.err(s.span(), e.to_string()))?;
                if ok {
                    sandbox_mode.get_or_insert(parsed);
                } else {
                    ignored("`sandbox` mode", &mut notes);
                }
            }
            if let SandboxField::Table(t) = s.get_ref() {
                if let Some(r) = &t.require {
                    let parsed = r
                        .parse::<RequiredTier>()
                        .map_err(|e| l.err(s.span(), e.to_string()))?;
                    // The tier decides what a run may leave for the host's own tools to
                    // run later: the repository whose code runs must not choose it, even
                    // trusted (the user's file or the command line does).
                    if l.kind == LayerKind::Project {
                        notes.push(format!(
                            "{}: `[sandbox] require` ignored: only the managed and user files and the command line choose the containment tier",
                            l.file.display()
                        ));
                    } else {
                        if l.kind > LayerKind::Managed
                            && sandbox.require.is_none()
                            && let Some(flag) = opts.require
                        {
                            sandbox.require = Some(flag);
                            sandbox.require_source = Some("--require".into());
                        }
                        if sandbox.require.is_none() {
                            sandbox.require = Some(parsed);
                            sandbox.require_source = Some(l.file.display().to_string());
                        }
                    }
                }
                let abs = |v: &[String]| -> Result<Vec<PathBuf>, ConfigError> {
                    v.iter()
                        .map(|p| {
                            let e = crate::paths::expand_home(p, &home);
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
                // Masks only ever hide more: honoured from every layer. So does holding a
                // run's changes for review, and a lower bound on what they may take.
                sandbox.mask.extend(abs(&t.mask)?);
                if t.hold == Some(true) {
                    sandbox.hold = true;
                }
                if let Some(limit) = t.changes_limit {
                    sandbox.changes_limit =
                        Some(sandbox.changes_limit.map_or(limit, |l| l.min(limit)));
                }
                if ok {
                    sandbox.writable_roots.extend(abs(&t.writable_roots)?);
                    sandbox.env_allow.extend(t.env_allow.iter().cloned());
                    sandbox
                        .env_allow_secret
                        .extend(t.env_allow_secret.iter().cloned());
                    if sandbox.home_readable.is_none()
                        && let Some(v) = &t.home_readable
                    {
                        sandbox.home_readable = Some(v.iter().map(PathBuf::from).collect());
                    }
                } else if !t.writable_roots.is_empty()
                    || !t.env_allow.is_empty()
                    || !t.env_allow_secret.is_empty()
                    || t.home_readable.is_some()
                {
                    ignored("[sandbox] widening settings", &mut notes);
                }
            }
        }
        if !l.cfg.preset.is_empty() {
            if ok {
                // Later presets of one file win: they go first in the highest-first list.
                let mut mine = l
                    .cfg
                    .preset
                    .iter()
                    .map(|p| preset_of(l, p, &home))
                    .collect::<Result<Vec<_>, _>>()?;
                mine.reverse();
                presets.extend(mine);
            } else {
                ignored("`[[preset]]`", &mut notes);
            }
        }
        if let Some(d) = &l.cfg.defaults {
            for (key, dec) in defaults_table(l, d)? {
                if ok {
                    defaults_set.entry(key).or_insert(dec);
                } else if let Some(slot) = project_defaults.slot(key) {
                    // An untrusted project may only tighten.
                    *slot = dec;
                }
            }
        }
        if let Some(d) = &l.cfg.contained {
            for (key, dec) in defaults_table(l, d)? {
                if l.kind == LayerKind::Project {
                    // A project, trusted or not, may only tighten what runs unasked in
                    // the sandbox.
                    if let Some(slot) = project_contained.slot(key) {
                        *slot = dec;
                    }
                } else {
                    contained_set.entry(key).or_insert(dec);
                }
            }
        }
        // Network lists (validated here so errors carry positions).
        let check_host = |v: &Spanned<String>| -> Result<String, ConfigError> {
            crate::net::HostPattern::parse(v.get_ref())
                .map(|_| v.get_ref().clone())
                .map_err(|e| l.err(v.span(), e.to_string()))
        };
        for v in &l.cfg.network.deny {
            network.deny.push(check_host(v)?);
        }
        for v in &l.cfg.network.allow {
            match v.get_ref() {
                AllowEntry::Host(h) => {
                    crate::net::HostPattern::parse(h)
                        .map_err(|e| l.err(v.span(), e.to_string()))?;
                    if ok {
                        network.allow.push(h.clone());
                    } else {
                        ignored(&format!("network allow `{h}`"), &mut notes);
                    }
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
                    if ok {
                        network.allow.push(t.host.clone());
                        network.rules.push(spec);
                    } else {
                        ignored(&format!("network rule for `{}`", t.host), &mut notes);
                    }
                }
            }
        }
        credentials_of(l, &home, &mut network, &mut notes)?;
        for v in &l.cfg.network.allow_private {
            let c = v.get_ref();
            check_cidr(c).map_err(|e| l.err(v.span(), e))?;
            if ok {
                network.allow_private.push(c.clone());
            } else {
                ignored(&format!("network allow_private `{c}`"), &mut notes);
            }
        }
        // Rules.
        let p = &l.cfg.permissions;
        for (action, list) in [
            (Decision::Deny, &p.deny),
            (Decision::Ask, &p.ask),
            (Decision::Allow, &p.allow),
        ] {
            for r in list {
                let matcher =
                    rules::parse_rule(r.get_ref(), &anchors).map_err(|e| l.err(r.span(), e))?;
                if action == Decision::Allow && !ok {
                    ignored(&format!("allow rule `{}`", r.get_ref()), &mut notes);
                    ignored_allows.push(r.get_ref().clone());
                    continue;
                }
                rules.push(Rule {
                    action,
                    text: r.get_ref().clone(),
                    matcher,
                    origin: l.origin(r.span()),
                    reason: None,
                });
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
            let matcher = rules::parse_rule(&text, &anchors).map_err(|e| l.err(span.clone(), e))?;
            check_examples(l, &text, &matcher, &anchors, &t.must_match, &t.not_match)?;
            if action == Decision::Allow && !ok {
                ignored(&format!("allow rule `{text}`"), &mut notes);
                ignored_allows.push(text.clone());
                continue;
            }
            rules.push(Rule {
                action,
                text,
                matcher,
                origin: l.origin(span),
                reason: t.reason.clone(),
            });
        }
    }
    if !flags_done {
        flags_inserted(&mut mode, &mut sandbox_mode, &mut approval);
    }
    // `--require` ranks below the managed file only; a lower file that set it above
    // already yielded to it.
    if sandbox.require.is_none()
        && let Some(flag) = opts.require
    {
        sandbox.require = Some(flag);
        sandbox.require_source = Some("--require".into());
    }
    crate::credential::check_unambiguous(
        network
            .credentials
            .iter()
            .map(|c| (c.name.as_str(), c.destinations.as_slice())),
    )
    .map_err(|m| ConfigError {
        file: None,
        position: None,
        message: m,
    })?;
    let flag_err = |m: String| ConfigError {
        file: None,
        position: None,
        message: m,
    };
    for h in &opts.network_allow {
        crate::net::HostPattern::parse(h).map_err(|e| flag_err(format!("--allow-net {h}: {e}")))?;
        network.allow.push(h.clone());
    }
    for c in &opts.network_allow_private {
        c.parse::<ipnet::IpNet>()
            .or_else(|_| c.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
            .map_err(|_| {
                flag_err(format!(
                    "--allow-private {c}: not a CIDR such as 10.0.0.0/8"
                ))
            })?;
        network.allow_private.push(c.clone());
    }
    for text in &opts.remembered_rules {
        let matcher = rules::parse_rule(text, &anchors).map_err(|e| ConfigError {
            file: None,
            position: None,
            message: format!("remembered rule `{text}` in the approval store: {e}"),
        })?;
        rules.push(Rule {
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

    let user_file = user_file(opts, &home);
    let mut defaults = Defaults::default();
    for (k, v) in &defaults_set {
        if let Some(slot) = defaults.slot(k) {
            *slot = *v;
        }
    }
    defaults.tighten(&project_defaults);
    let mut contained = Defaults::contained();
    for (k, v) in &contained_set {
        if let Some(slot) = contained.slot(k) {
            *slot = *v;
        }
    }
    contained.tighten(&project_contained);

    let mut sandbox_roots = Vec::new();
    for r in &sandbox.writable_roots {
        sandbox_roots.push(crate::paths::resolve(r, fs).0);
    }
    sandbox.writable_roots = sandbox_roots;

    Ok(Merged {
        workspace,
        home,
        home_resolved,
        mode: mode.unwrap_or_default(),
        hook_contain: hook_contain.unwrap_or(false),
        hook_accept_edits: hook_accept_edits.unwrap_or(false),
        slots,
        sandbox_mode: sandbox_mode.unwrap_or_default(),
        approval: approval.unwrap_or_default(),
        defaults,
        contained,
        rules,
        network,
        sandbox,
        trusted,
        files: layers.iter().map(|l| (l.kind, l.file.clone())).collect(),
        notes,
        ignored_allows,
        user_file,
        version: version.full,
        grant_version: version.grants,
        presets,
        mcp,
        sessions,
    })
}

/// The `[[credential]]` tables of one layer, checked, into `network` (their hosts
/// allowlisted). A project's tables are never used, trusted or not: a credential runs a
/// command or reads a secret on the host, and sends it where the table says.
fn credentials_of(
    l: &Layer,
    home: &Path,
    network: &mut NetworkSettings,
    notes: &mut Vec<String>,
) -> Result<(), ConfigError> {
    for (i, t) in l.cfg.credential.iter().enumerate() {
        let span = t.span();
        if l.kind == LayerKind::Project {
            notes.push(format!(
                "{}: a [[credential]] table ignored: credentials come from the user's or the managed config, never a project's",
                l.file.display()
            ));
            continue;
        }
        let spec = t
            .get_ref()
            .check(i, home)
            .map_err(|m| l.err(span.clone(), m))?;
        if network.credentials.iter().any(|c| c.name == spec.name) {
            return Err(l.err(
                span,
                format!(
                    "[[credential]] `{}`: `name`: another credential has this name",
                    spec.name
                ),
            ));
        }
        for d in &spec.destinations {
            network.allow.push(d.authority.to_string());
        }
        network.credentials.push(spec);
    }
    Ok(())
}

/// A `[[preset]]` table, checked.
fn preset_of(l: &Layer, p: &Spanned<PresetTable>, home: &Path) -> Result<Preset, ConfigError> {
    let t = p.get_ref();
    let tool = t.tool.get_ref();
    if tool.is_empty()
        || tool.contains(char::is_whitespace)
        || tool[..tool.len().saturating_sub(1)].contains('*')
    {
        return Err(l.err(
            t.tool.span(),
            "a preset's `tool` is a tool name as the harness calls it, optionally ending in `*`",
        ));
    }
    if t.set.is_empty() && t.cwd.is_none() {
        return Err(l.err(
            p.span(),
            "a preset must `set` at least one field or a `cwd`",
        ));
    }
    let cwd = match &t.cwd {
        None => None,
        Some(c) => {
            let text = c.get_ref();
            let path = match text.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => PathBuf::from(text),
            };
            if !path.is_absolute() {
                return Err(l.err(
                    c.span(),
                    "a preset's `cwd` must be absolute or start with ~/",
                ));
            }
            Some(crate::paths::clean(&path))
        }
    };
    Ok(Preset {
        tool: tool.clone(),
        set: t.set.clone(),
        cwd,
        origin: l.origin(p.span()),
    })
}

/// A CIDR (`10.0.0.0/8`) or a single address, as `allow_private` accepts.
fn check_cidr(c: &str) -> Result<(), String> {
    c.parse::<ipnet::IpNet>()
        .map(|_| ())
        .or_else(|_| c.parse::<std::net::IpAddr>().map(|_| ()))
        .map_err(|_| format!("`{c}` is not a CIDR such as 10.0.0.0/8"))
}

/// A structured rule's `match` / `not_match` examples must behave as written, so a rule that
/// does not do what its author thought fails loudly at load time.
fn check_examples(
    l: &Layer,
    text: &str,
    matcher: &Matcher,
    anchors: &Anchors,
    must: &[Spanned<String>],
    must_not: &[Spanned<String>],
) -> Result<(), ConfigError> {
    for (examples, want) in [(must, true), (must_not, false)] {
        for ex in examples {
            let got =
                example_matches(matcher, ex.get_ref(), anchors).map_err(|e| l.err(ex.span(), e))?;
            if got != want {
                let verb = if want { "does not match" } else { "matches" };
                return Err(l.err(
                    ex.span(),
                    format!("rule `{text}` {verb} its example `{}`", ex.get_ref()),
                ));
            }
        }
    }
    Ok(())
}

fn example_matches(matcher: &Matcher, example: &str, anchors: &Anchors) -> Result<bool, String> {
    Ok(match matcher {
        Matcher::Command(p) => {
            let words: Vec<String> = example.split_whitespace().map(String::from).collect();
            p.matches(&words)
        }
        Matcher::Path { glob, .. } => {
            let path = crate::paths::absolute(
                &crate::paths::expand_home(example, &anchors.home),
                &anchors.workspace,
            );
            let path = crate::paths::clean(&path);
            rules::path_matcher(glob)?.iter().any(|g| g.is_match(&path))
        }
        Matcher::Domain(p) => {
            let (host, port) = match crate::net::Origin::parse_url(example) {
                Ok(o) => (o.host, o.port),
                Err(_) => {
                    let a = crate::net::Authority::parse(example, 443)
                        .map_err(|e| format!("example `{example}`: {e}"))?;
                    (a.host, a.port)
                }
            };
            p.matches_host(&host) && p.port().is_none_or(|x| x == port)
        }
        Matcher::Mcp { server, tool } => {
            let rest = example.strip_prefix("mcp__").unwrap_or(example);
            let (s, t) = rest.split_once("__").unwrap_or((rest, ""));
            s == server && tool.as_deref().is_none_or(|x| x == t)
        }
        Matcher::Tool(_) | Matcher::UnknownTool(_) => {
            return Err("tool-wide rules take no examples".into());
        }
    })
}

/// The entries of a `[defaults]` or `[contained]` table, checked: known keys, decisions.
fn defaults_table(
    l: &Layer,
    table: &BTreeMap<Spanned<String>, Spanned<String>>,
) -> Result<Vec<(&'static str, Decision)>, ConfigError> {
    table
        .iter()
        .map(|(k, v)| {
            let key = DEFAULT_KEYS
                .iter()
                .find(|x| **x == k.get_ref().as_str())
                .ok_or_else(|| {
                    l.err(
                        k.span(),
                        format!(
                            "unknown default `{}`: expected one of {}",
                            k.get_ref(),
                            DEFAULT_KEYS.join(", ")
                        ),
                    )
                })?;
            let dec = v
                .get_ref()
                .parse::<Decision>()
                .map_err(|e| l.err(v.span(), e.to_string()))?;
            Ok((*key, dec))
        })
        .collect()
}
