//! Presets: input fields the framework controls, merged over the model's input.
//!
//! ```toml
//! [[preset]]
//! tool = "Bash"                      # a tool name as called; `mcp__github__*` ends in `*`
//! set = { timeout = 120000 }         # fields that replace the model's, at any depth
//!
//! [[preset]]
//! tool = "mcp__github__create_issue"
//! set = { repo = "acme/site" }
//! cwd = "~/src/site"                 # the call's working directory
//! ```
//!
//! A preset is applied before the call is judged, so the policy judges what will run, and
//! the merged input is what the harness receives back. Objects merge key by key; any other
//! value (a string, a number, a list) replaces the model's value whole. When two presets
//! set the same field, the higher layer wins (managed over flags over user over a trusted
//! project); within a file, the later preset wins. A project file's presets are ignored
//! unless the workspace is trusted: a preset can change what runs.

use crate::Request;
use crate::rules::RuleOrigin;
use serde_json::{Map, Value};
use std::path::PathBuf;

/// One `[[preset]]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The tool name it applies to; a trailing `*` matches any name with that prefix.
    pub tool: String,
    /// The fields to set.
    pub set: Map<String, Value>,
    /// A working directory to set (absolute, `~` expanded).
    pub cwd: Option<PathBuf>,
    /// Where it was written.
    pub origin: RuleOrigin,
}

impl Preset {
    /// Whether the preset applies to a call of `tool`.
    pub fn applies_to(&self, tool: &str) -> bool {
        match self.tool.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => tool == self.tool,
        }
    }
}

/// Apply `presets` (highest precedence first) to `request`; returns the paths of the fields
/// that were set (`timeout`, `arguments.repo`, `cwd`), in order, without duplicates.
pub fn apply(presets: &[Preset], request: &mut Request) -> Vec<String> {
    let mut changed = Vec::new();
    // Lowest precedence first, so that the highest is written last and wins.
    for p in presets.iter().rev().filter(|p| p.applies_to(&request.tool)) {
        merge(&mut request.input, &p.set, "", &mut changed);
        if let Some(cwd) = &p.cwd
            && request.cwd.as_ref() != Some(cwd)
        {
            request.cwd = Some(cwd.clone());
            push_unique(&mut changed, "cwd".to_string());
        }
    }
    changed
}

fn merge(
    into: &mut Map<String, Value>,
    set: &Map<String, Value>,
    at: &str,
    changed: &mut Vec<String>,
) {
    for (key, value) in set {
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        match (into.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(sub)) => merge(inner, sub, &path, changed),
            (Some(old), _) if old == value => {}
            _ => {
                into.insert(key.clone(), value.clone());
                push_unique(changed, path);
            }
        }
    }
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn preset(tool: &str, set: Value, layer: &'static str) -> Preset {
        let Value::Object(set) = set else {
            panic!("set must be an object")
        };
        Preset {
            tool: tool.into(),
            set,
            cwd: None,
            origin: RuleOrigin {
                layer,
                ..RuleOrigin::default()
            },
        }
    }

    fn bash(input: Value) -> Request {
        let mut r = Request::shell("ls", None);
        r.tool = "Bash".into();
        if let Value::Object(m) = input {
            r.input = m;
        }
        r
    }

    #[test]
    fn preset_values_win_over_the_models() {
        let mut r = bash(json!({"command": "make", "timeout": 1}));
        let changed = apply(
            &[preset("Bash", json!({"timeout": 120000}), "user")],
            &mut r,
        );
        assert_eq!(r.input["timeout"], 120000);
        assert_eq!(r.input["command"], "make");
        assert_eq!(changed, ["timeout"]);
    }

    #[test]
    fn objects_merge_and_the_higher_layer_wins() {
        let mut r = Request::shell("x", None);
        r.tool = "mcp__github__create_issue".into();
        r.input = json!({"arguments": {"repo": "evil/repo", "title": "t"}})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let presets = [
            preset(
                "mcp__github__*",
                json!({"arguments": {"repo": "acme/site"}}),
                "managed",
            ),
            preset(
                "mcp__github__create_issue",
                json!({"arguments": {"repo": "me/x"}}),
                "user",
            ),
        ];
        let changed = apply(&presets, &mut r);
        assert_eq!(r.input["arguments"]["repo"], "acme/site");
        assert_eq!(r.input["arguments"]["title"], "t");
        assert_eq!(changed, ["arguments.repo"]);
    }

    #[test]
    fn a_value_already_in_place_is_no_change() {
        let mut r = bash(json!({"command": "ls", "timeout": 5}));
        assert!(apply(&[preset("Bash", json!({"timeout": 5}), "user")], &mut r).is_empty());
    }

    #[test]
    fn other_tools_are_untouched() {
        let mut r = bash(json!({"command": "ls"}));
        r.tool = "Read".into();
        let before = r.clone();
        assert!(apply(&[preset("Bash", json!({"timeout": 5}), "user")], &mut r).is_empty());
        assert_eq!(r, before);
    }

    #[test]
    fn a_scalar_replaces_an_object_whole() {
        let mut r = bash(json!({"command": "ls", "env": {"A": "1"}}));
        apply(&[preset("Bash", json!({"env": "none"}), "user")], &mut r);
        assert_eq!(r.input["env"], "none");
    }
}
