//! Writes into the user's project: a command (in SKILL.md or a script) that copies,
//! writes or patches a file there that configures what later runs or what the next agent
//! session is told (`.pre-commit-config.yaml`, `CLAUDE.md`, `.vscode/tasks.json`,
//! `conftest.py`, `package.json` …). The knowledge of which files those are is the
//! policy's ([`cordon_policy::obeyed::host_obeyed`], the table of files host tools obey
//! unasked, and [`cordon_policy::guards::protected_write`]), plus the project's own
//! build and test entry points, which the user's next ordinary command runs.
//!
//! Such a write is a review. What is written, when it comes from the package (the
//! source of a `cp`, the files a `git apply`'d patch creates), is read by the review as
//! what it becomes (see `assign`), so a dangerous content refuses the package.

use super::{Cx, HOME, SKILL_DIR};
use crate::report::{Check, Finding, Severity};
use std::path::{Component, Path, PathBuf};

/// The project's own build and test entry points (lower case, last components): the
/// user's next `pytest`, `npm test`, `make`, `pip install .` runs them.
const PROJECT_CODE: &[&str] = &[
    "conftest.py",
    "package.json",
    "makefile",
    "gnumakefile",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    "noxfile.py",
    "pytest.ini",
    "rakefile",
    "gemfile",
    "build.rs",
    "justfile",
    "taskfile.yml",
    // A package's `__init__.py` runs on every import of the package, by the project's
    // code and its tests.
    "__init__.py",
];

/// `target` made absolute (relative to the skill's folder, the review's working
/// directory) and lexically clean.
fn absolute(target: &str) -> PathBuf {
    let full = if target == "~" {
        PathBuf::from(HOME)
    } else if let Some(rest) = target.strip_prefix("~/") {
        Path::new(HOME).join(rest)
    } else if target.starts_with('/') {
        PathBuf::from(target)
    } else {
        Path::new(SKILL_DIR).join(target)
    };
    let mut clean = PathBuf::from("/");
    for c in full.components() {
        match c {
            Component::Normal(n) => clean.push(n),
            Component::ParentDir => {
                clean.pop();
            }
            _ => {}
        }
    }
    clean
}

/// Why writing `target` puts something in the project that later runs or instructs an
/// agent, if it does.
pub(crate) fn control(target: &str) -> Option<String> {
    let clean = absolute(target);
    let root = if clean.starts_with(SKILL_DIR) {
        Path::new(SKILL_DIR)
    } else {
        Path::new("/")
    };
    if let Some(hit) = cordon_policy::obeyed::host_obeyed(&clean, root, Path::new(HOME)) {
        return Some(hit.reason());
    }
    if let Some(hit) = cordon_policy::guards::protected_write(&clean, Path::new(HOME)) {
        return Some(format!(
            "programs are started from or configured there ({})",
            hit.pattern
        ));
    }
    let names: Vec<String> = clean
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
        .collect();
    if names.iter().any(|n| n == ".git") {
        return Some("git runs its hooks and obeys its config from there".into());
    }
    let last = names.last().map(String::as_str).unwrap_or("");
    if PROJECT_CODE.contains(&last) || TEST_CONFIG.iter().any(|p| last.starts_with(p)) {
        return Some(format!(
            "the project's build and test tools run it ({last})"
        ));
    }
    names
        .windows(2)
        .any(|w| {
            matches!(
                (w[0].as_str(), w[1].as_str()),
                (".venv" | "venv", "bin" | "scripts") | ("node_modules", ".bin")
            )
        })
        .then(|| {
            "the project's tools run it in place of the program it names (a virtualenv's \
             bin or node_modules/.bin)"
                .to_string()
        })
}

/// Test runners' configuration, which is code the runner loads (name prefixes, lower
/// case): the user's next test run runs it. Not in the policy's table of files host
/// tools obey unasked (testing runs the project's code anyway); a package that writes
/// one into the project is reviewed all the same.
const TEST_CONFIG: &[&str] = &[
    "jest.config.",
    "jest.setup.",
    "vitest.config.",
    "vitest.workspace.",
    ".mocharc.",
];

/// The shell analysis of `text`, remembered for the review's thread: the same code piece
/// is read for what it runs, what it copies and what it writes.
pub(crate) fn analyzed(text: &str) -> std::rc::Rc<cordon_shell::Analysis> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;
    thread_local! {
        static SEEN: RefCell<HashMap<String, Rc<cordon_shell::Analysis>>> =
            RefCell::new(HashMap::new());
    }
    SEEN.with(|seen| {
        if let Some(a) = seen.borrow().get(text) {
            return a.clone();
        }
        let a = Rc::new(cordon_shell::analyze(text));
        let mut seen = seen.borrow_mut();
        if seen.len() > 4096 {
            seen.clear();
        }
        seen.insert(text.to_string(), a.clone());
        a
    })
}

/// One write a shell command makes: the target, the package file it copies (if any),
/// and whether that file is applied as a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Write {
    pub target: String,
    pub source: Option<String>,
}

/// The writes of `shell` whose content comes from (or whose target is) somewhere the
/// review can name: a copy's destination (and, for a directory destination, the
/// source's name in it), a redirect's target, and each file a package patch changes.
pub(crate) fn writes(
    shell: &str,
    own: &dyn Fn(&str) -> Option<String>,
    text_of: &dyn Fn(&str) -> Option<String>,
) -> Vec<Write> {
    let mut out = Vec::new();
    let a = analyzed(shell);
    for c in &a.commands {
        let mut sources: Vec<String> = c
            .effects
            .reads
            .iter()
            .chain(c.args.iter())
            .chain(
                c.redirects
                    .iter()
                    .filter(|r| !r.kind.writes_file())
                    .map(|r| &r.target),
            )
            .filter(|w| w.literal)
            .filter_map(|w| own(&w.value))
            .collect();
        sources.dedup();
        let mut targets: Vec<&str> = c
            .effects
            .writes
            .iter()
            .chain(c.effects.fills.iter())
            .chain(
                c.redirects
                    .iter()
                    .filter(|r| r.kind.writes_file())
                    .map(|r| &r.target),
            )
            .filter(|w| w.literal)
            .map(|w| w.value.as_str())
            .collect();
        targets.dedup();
        let writes_anything = !targets.is_empty() || c.effects.unnamed_writes.is_some();
        for s in &sources {
            // A patch the command applies: the files it names are what is written.
            if writes_anything
                && let Some(patched) = text_of(s).as_deref().map(patch_targets)
                && !patched.is_empty()
            {
                for t in patched {
                    out.push(Write {
                        target: t,
                        source: Some(s.clone()),
                    });
                }
                continue;
            }
            let base = s.rsplit('/').next().unwrap_or(s);
            for t in &targets {
                if own(t).as_deref() == Some(s.as_str()) {
                    continue;
                }
                out.push(Write {
                    target: (*t).to_string(),
                    source: Some(s.clone()),
                });
                out.push(Write {
                    target: format!("{}/{base}", t.trim_end_matches('/')),
                    source: Some(s.clone()),
                });
            }
        }
        if sources.is_empty() {
            out.extend(targets.iter().map(|t| Write {
                target: (*t).to_string(),
                source: None,
            }));
        }
    }
    out
}

/// The files a unified diff creates or changes (`+++ b/x`, `rename to x`, `copy to x`),
/// without the `a/`/`b/` prefixes; empty when the text is not a patch.
pub(crate) fn patch_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in text.lines() {
        let name = if let Some(r) = l.strip_prefix("+++ ") {
            r.split('\t').next().unwrap_or(r).trim()
        } else if let Some(r) = l
            .strip_prefix("rename to ")
            .or_else(|| l.strip_prefix("copy to "))
        {
            r.trim()
        } else {
            continue;
        };
        if name == "/dev/null" {
            continue;
        }
        let name = name
            .strip_prefix("b/")
            .or_else(|| name.strip_prefix("a/"))
            .unwrap_or(name);
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The added text of each file of a patch: (file, its `+` lines).
pub(crate) fn patch_files(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for l in text.lines() {
        if l.starts_with("+++ ") {
            let t = patch_targets(l);
            if let Some(name) = t.into_iter().next() {
                out.push((name, String::new()));
            }
            continue;
        }
        if let (Some(added), Some((_, body))) = (l.strip_prefix('+'), out.last_mut()) {
            body.push_str(added);
            body.push('\n');
        }
    }
    out
}

/// Review each write of `shell` into a file the project obeys or runs.
pub(crate) fn judge(cx: &Cx<'_>, path: &str, line: usize, shell: &str, out: &mut Vec<Finding>) {
    let own = |w: &str| cx.own_file(w).map(str::to_string);
    let text_of = |p: &str| cx.text_of(p).map(str::to_string);
    let mut seen = Vec::new();
    for w in writes(shell, &own, &text_of) {
        let Some(why) = control(&w.target) else {
            continue;
        };
        if seen.contains(&w.target) {
            continue;
        }
        seen.push(w.target.clone());
        let from = w
            .source
            .as_deref()
            .map(|s| format!(" from the package's {s} (read below as what it becomes)"))
            .unwrap_or_default();
        out.push(Finding::new(
            Check::Persistence,
            Severity::Review,
            Some(path),
            format!(
                "line {line}: writes {}{from} into the project: {why}",
                crate::report::shown(&w.target)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_files_come_from_the_policy_tables_and_the_project_entry_points() {
        for t in [
            ".pre-commit-config.yaml",
            "CLAUDE.md",
            "sub/AGENTS.md",
            ".vscode/tasks.json",
            ".claude/settings.json",
            "conftest.py",
            "tests/conftest.py",
            "package.json",
            "Makefile",
            ".git/hooks/pre-commit",
            ".envrc",
            ".github/workflows/ci.yml",
        ] {
            assert!(control(t).is_some(), "{t}");
        }
        for t in [
            "out/report.pdf",
            "notes.txt",
            "src/main.py",
            "docs/README.md",
        ] {
            assert!(control(t).is_none(), "{t}");
        }
    }

    #[test]
    fn copies_redirects_and_patches_name_their_targets() {
        let own = |w: &str| {
            let w = w.trim_start_matches("./");
            ["assets/a.yaml", "assets/p.patch"]
                .iter()
                .find(|p| w == **p || w.ends_with(&format!("/{p}")))
                .map(|p| p.to_string())
        };
        let text_of = |p: &str| {
            (p == "assets/p.patch")
                .then(|| "--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+x\n".to_string())
        };
        let w = writes(
            "cp ~/.claude/skills/x/assets/a.yaml .pre-commit-config.yaml",
            &own,
            &text_of,
        );
        assert!(
            w.iter().any(|w| w.target == ".pre-commit-config.yaml"
                && w.source.as_deref() == Some("assets/a.yaml")),
            "{w:?}"
        );
        let w = writes("cat assets/a.yaml > .vscode/tasks.json", &own, &text_of);
        assert!(w.iter().any(|w| w.target == ".vscode/tasks.json"), "{w:?}");
        let w = writes("git apply assets/p.patch", &own, &text_of);
        assert!(w.iter().any(|w| w.target == "conftest.py"), "{w:?}");
        let w = writes("patch -p1 < assets/p.patch", &own, &text_of);
        assert!(w.iter().any(|w| w.target == "conftest.py"), "{w:?}");
    }
}

#[cfg(test)]
mod control_tests {
    use super::control;

    /// What the merge does not hold (every install writes it, testing runs the project
    /// anyway) is still project code a package must not write unreviewed.
    #[test]
    fn test_configs_and_install_bins_are_project_code_for_a_package() {
        for target in [
            "vitest.workspace.ts",
            "web/jest.setup.mjs",
            ".mocharc.yml",
            ".venv/Scripts/activate.bat",
            "venv/bin/pytest",
            "app/node_modules/.bin/eslint",
        ] {
            assert!(control(target).is_some(), "{target}");
        }
        for target in [
            "notes/jest.md",
            "bin/tool",
            "src/venv.py",
            "node_modules/x/bin/y",
        ] {
            assert!(control(target).is_none(), "{target}");
        }
    }
}
