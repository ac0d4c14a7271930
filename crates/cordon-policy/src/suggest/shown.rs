//! The rules "always allow" may save for a pending request, derived by whoever answers it
//! from the request it shows.
//!
//! A pending approval is recorded by the machine that asked; in a shared store that
//! machine may hold only the machine role, or be compromised. The rules it offered beside
//! the request are therefore never what a human saves: the answering side derives them
//! again from the request shown (and the workspace recorded with it), by the same
//! analysis and the same [`Policy::suggestions`](crate::Policy::suggestions) the asking
//! side ran, under the built-in policy. A pending row that offers `Bash` for a request
//! showing `git status` offers `Bash(git status)` and nothing else.

use super::RuleOption;
use crate::config::LoadOptions;
use crate::facts::FakeFs;
use crate::{Policy, Request};
use std::path::{Path, PathBuf};

/// The rules a human answering the pending `request` (with its recorded `verdict`) may
/// save, the exact one first, each answering every operation of the call (which of them
/// the asking machine was asked about is not taken from it); empty when none can be derived from what is shown (no
/// workspace recorded, a request that does not parse, a call no narrow rule covers).
/// `home` is the answering user's home directory (a path rule under it is written `~/…`).
pub fn offered_for_shown(
    request: &serde_json::Value,
    verdict: &serde_json::Value,
    home: &Path,
) -> Vec<RuleOption> {
    let Ok(req) = Request::from_value(request.clone()) else {
        return Vec::new();
    };
    let Some(workspace) = verdict
        .get("workspace")
        .and_then(serde_json::Value::as_str)
        .map(PathBuf::from)
        .filter(|w| w.is_absolute())
    else {
        return Vec::new();
    };
    // No file is read: the built-in policy, and a file system that knows only the
    // workspace and the home directory (paths are judged as written).
    let fs = FakeFs::new().dir(&workspace).dir(home);
    let opts = LoadOptions {
        workspace,
        home: home.to_path_buf(),
        skip_default_files: true,
        ..LoadOptions::default()
    };
    let Ok(policy) = Policy::load(&opts, &fs) else {
        return Vec::new();
    };
    let ops = policy.operations(&req, &fs);
    let mut judged = policy.judge(&ops);
    if judged.decision == crate::Decision::Deny {
        return Vec::new();
    }
    // Which operations the machine was asked about is its word: a rule offered here
    // answers every operation of the call shown.
    for f in &mut judged.findings {
        f.decision = crate::Decision::Ask;
    }
    policy.suggestions(&ops, &judged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn offered(request: serde_json::Value) -> Vec<String> {
        let verdict = json!({"workspace": "/work/project", "decision": "ask"});
        offered_for_shown(&request, &verdict, Path::new("/home/approver"))
            .into_iter()
            .map(|o| o.rule)
            .collect()
    }

    #[test]
    fn the_rules_offered_are_those_of_the_call_shown() {
        let shown = json!({"tool": "Bash", "input": {"command": "git push origin main"}, "cwd": "/work/project"});
        assert_eq!(offered(shown), ["Bash(git push origin main)"]);
        let read = json!({"tool": "Read", "input": {"file_path": "/home/approver/notes/a.txt"}, "cwd": "/work/project"});
        assert_eq!(offered(read), ["Read(~/notes/a.txt)"]);
        // A call the built-in policy would not ask is still offered its rules.
        let status =
            json!({"tool": "Bash", "input": {"command": "git status"}, "cwd": "/work/project"});
        assert_eq!(offered(status), ["Bash(git status)"]);
        // Two programs: no one rule answers both.
        let two = json!({"tool": "Bash", "input": {"command": "git push origin main; make deploy"}, "cwd": "/work/project"});
        assert!(offered(two).is_empty());
    }

    #[test]
    fn nothing_is_offered_without_a_recorded_workspace_or_a_readable_request() {
        let shown = json!({"tool": "Bash", "input": {"command": "git push origin main"}, "cwd": "/work/project"});
        let no_ws = json!({"decision": "ask"});
        assert!(offered_for_shown(&shown, &no_ws, Path::new("/home/a")).is_empty());
        let relative = json!({"workspace": "project"});
        assert!(offered_for_shown(&shown, &relative, Path::new("/home/a")).is_empty());
        assert!(offered(json!({"tool": "Bash"})).is_empty());
        assert!(offered(json!("git status")).is_empty());
    }
}
