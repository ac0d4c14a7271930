#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs
//! The documentation stays true to the repository and to the binary: every relative link
//! in `README.md` and `docs/` leads to a file (and heading) that exists, and the CLI
//! reference (`docs/reference/cli.md`) lists every subcommand and every long option that
//! the binary under test prints in its `--help`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (the binary crate is `crates/cordon`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md` and every Markdown file under `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text of a Markdown file outside fenced code blocks, and its headings.
fn prose_and_headings(text: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut headings = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(rest) = line.strip_prefix('#') {
            let title = rest.trim_start_matches('#');
            if title.starts_with(' ') {
                headings.push(title.trim().to_string());
            }
        }
        prose.push_str(line);
        prose.push('\n');
    }
    (prose, headings)
}

/// The anchors GitHub gives a file's headings: lower case, only letters, digits, `-` and
/// `_` kept, each space a `-`; a repeated anchor gets `-1`, `-2`, ….
fn anchors(headings: &[String]) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for h in headings {
        let slug: String = h
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// The text with inline code spans cut out (a link written as code is no link).
fn without_code_spans(prose: &str) -> String {
    let mut out = String::new();
    let mut rest = prose;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(ticks);
        let after = &rest[start + ticks..];
        match after.find(&fence) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links (`[text](target)`) of a file's prose.
fn link_targets(prose: &str) -> Vec<String> {
    let text = without_code_spans(prose);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        out.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    out
}

#[test]
fn every_relative_link_in_the_documentation_resolves() {
    let files = markdown_files();
    assert!(
        files.len() > 10,
        "the documentation was not found under {}",
        root().display()
    );
    let mut headings_of: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut prose_of = BTreeMap::new();
    for f in &files {
        let (prose, headings) = prose_and_headings(&std::fs::read_to_string(f).unwrap());
        headings_of.insert(f.canonicalize().unwrap(), anchors(&headings));
        prose_of.insert(f.clone(), prose);
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for (file, prose) in &prose_of {
        for target in link_targets(prose) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let shown = format!(
                "{}: ({target})",
                file.strip_prefix(root()).unwrap_or(file).display()
            );
            let Ok(real) = resolved.canonicalize() else {
                broken.push(format!("{shown}: no such file"));
                continue;
            };
            if let Some(anchor) = anchor {
                match headings_of.get(&real) {
                    Some(anchors) if anchors.contains(anchor) => {}
                    Some(_) => broken.push(format!("{shown}: no heading with that anchor")),
                    None => broken.push(format!(
                        "{shown}: an anchor into a file that is not Markdown"
                    )),
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} relative links were found");
    assert!(
        broken.is_empty(),
        "broken links in the documentation:\n{}",
        broken.join("\n")
    );
}

#[test]
fn a_broken_link_and_a_missing_anchor_are_caught() {
    let (prose, headings) = prose_and_headings(
        "# `cordon check` — the decision contract\n\n## Hook: the per-call cost (`bench/hook.sh`)\n\
         ## Hook: the per-call cost (`bench/hook.sh`)\n\
         see [a](x.md#y) and `[not](a-link.md)`,\n[two\nlines](b.md)\n```\n[code](c.md)\n# no\n```\n",
    );
    assert_eq!(link_targets(&prose), vec!["x.md#y", "b.md"]);
    let a = anchors(&headings);
    assert!(a.contains("cordon-check--the-decision-contract"), "{a:?}");
    assert!(a.contains("hook-the-per-call-cost-benchhooksh"), "{a:?}");
    assert!(a.contains("hook-the-per-call-cost-benchhooksh-1"), "{a:?}");
    assert_eq!(
        a.len(),
        3,
        "a heading inside a code block is no heading: {a:?}"
    );
}

/// `cordon ARGS --help` of the binary under test.
fn help(args: &[&str]) -> String {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "cordon {args:?} --help failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut on = false;
    for line in help.lines() {
        if line == "Commands:" {
            on = true;
            continue;
        }
        if !line.starts_with(' ') {
            on = false;
        }
        if on
            && let Some(name) = line.split_whitespace().next()
            && name != "help"
        {
            out.push(name.to_string());
        }
    }
    out
}

/// The long options a help text names in its option lines (`  -x, --long <V>`).
fn long_options(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in help.lines() {
        let line = line.trim_start();
        let line = match line.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') => match line.split_once(", ") {
                Some((_, long)) => long,
                None => continue,
            },
            _ => line,
        };
        if let Some(rest) = line.strip_prefix("--") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() {
                out.insert(format!("--{name}"));
            }
        }
    }
    out
}

/// Every subcommand path of the binary under test (`["approvals", "list"]`, …).
fn command_paths() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut todo: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|s| vec![s])
        .collect();
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        for sub in subcommands(&help(&args)) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        out.push(path);
    }
    out.sort();
    out
}

/// The CLI reference's sections: the command a heading names (`## \`cordon exec\``) and the
/// text up to the next heading.
fn reference_sections() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("docs/reference/cli.md")).unwrap();
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut fenced = false;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            let title = line.trim_start_matches('#').trim();
            current = title
                .strip_prefix("`cordon ")
                .and_then(|t| t.strip_suffix('`'))
                .map(str::to_string);
            if let Some(c) = &current {
                out.entry(c.clone()).or_default();
            }
            continue;
        }
        if let Some(c) = &current {
            let section = out.get_mut(c).unwrap();
            section.push_str(line);
            section.push('\n');
        }
    }
    out
}

#[test]
fn the_cli_reference_lists_every_subcommand_and_option() {
    let paths = command_paths();
    assert!(
        paths.len() > 40,
        "too few subcommands were found: {paths:?}"
    );
    let sections = reference_sections();
    let mut missing = Vec::new();
    let mut options = 0;
    for path in &paths {
        let name = path.join(" ");
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let Some(section) = sections.get(&name) else {
            missing.push(format!("`cordon {name}`: no section"));
            continue;
        };
        let listed = long_options(section);
        for option in long_options(&help(&args)) {
            options += 1;
            if !listed.contains(&option) {
                missing.push(format!("`cordon {name}`: {option}"));
            }
        }
    }
    let known: BTreeSet<String> = paths.iter().map(|p| p.join(" ")).collect();
    for name in sections.keys() {
        if !known.contains(name) {
            missing.push(format!(
                "`cordon {name}` has a section but is no subcommand"
            ));
        }
    }
    assert!(options > 200, "only {options} options were found");
    assert!(
        missing.is_empty(),
        "docs/reference/cli.md is out of step with `--help` (run ./scripts/cli-reference.sh):\n{}",
        missing.join("\n")
    );
}

#[test]
fn options_are_read_from_help_lines_only() {
    let help = "Usage: cordon x [OPTIONS]\n\nOptions:\n      --config <FILE>\n          \
                An extra config file (see --other)\n  -n, --lines <N>\n  -h, --help\n  -q\n";
    let found: Vec<String> = long_options(help).into_iter().collect();
    assert_eq!(found, vec!["--config", "--help", "--lines"]);
    assert_eq!(
        subcommands("Commands:\n  list  List them\n  help  Print\n\nOptions:\n  -h\n"),
        vec!["list"]
    );
}
