//! Checks of one layer's tables while merging: credentials, presets, CIDRs, rule
//! examples and the `[defaults]` / `[contained]` keys.

use super::super::format::PresetTable;
use super::super::{ConfigError, DEFAULT_KEYS, Layer, LayerKind};
use crate::presets::Preset;
use crate::rules::{self, Anchors, Matcher};
use crate::settings::NetworkSettings;
use crate::verdict::Decision;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The `[[credential]]` tables of one layer, checked, into `network` (their hosts
/// allowlisted). A project's tables are never used, trusted or not: a credential runs a
/// command or reads a secret on the host, and sends it where the table says.
pub(super) fn credentials_of(
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
pub(super) fn preset_of(
    l: &Layer,
    p: &Spanned<PresetTable>,
    home: &Path,
) -> Result<Preset, ConfigError> {
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
pub(super) fn check_cidr(c: &str) -> Result<(), String> {
    c.parse::<ipnet::IpNet>()
        .map(|_| ())
        .or_else(|_| c.parse::<std::net::IpAddr>().map(|_| ()))
        .map_err(|_| format!("`{c}` is not a CIDR such as 10.0.0.0/8"))
}

/// A structured rule's `match` / `not_match` examples must behave as written, so a rule that
/// does not do what its author thought fails loudly at load time.
pub(super) fn check_examples(
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
            rules::path_matcher(glob)
                .map_err(|e| e.to_string())?
                .iter()
                .any(|g| g.is_match(&path))
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
pub(super) fn defaults_table(
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
