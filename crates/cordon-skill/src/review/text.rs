//! Text that may or may not be shell: inline code, indented and HTML code, fences of
//! other languages, and sentences of prose. What it holds is judged for what the guards
//! refuse (and what takes code from outside a registry), never for the reviews a
//! declared shell block gets.

use super::{Cx, facts, judge_shell};
use crate::report::{Check, Finding, Severity};
use std::collections::HashSet;

/// Judge shell text. `strict` for text that is shell by declaration (a shell fence, a
/// shell script): every finding counts. Otherwise (inline code, an indented block, HTML
/// code, a fence of another language) the text may not be shell at all, so only what
/// the guards refuse counts, judged on the whole text and on each line (a block that does
/// not parse as a whole still has lines that do).
pub(crate) fn judge_shell_text(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    text: &str,
    strict: bool,
    out: &mut Vec<Finding>,
) {
    if strict {
        judge_shell(cx, path, line, text, true, out);
        return;
    }
    let mut found = Vec::new();
    if looks_like_command(text) || prose_shell_shape(text) {
        judge_shell(cx, path, line, text, false, &mut found);
        super::project::judge(cx, path, line, text, &mut found);
    }
    if text.contains('\n') {
        for (i, l) in text.lines().enumerate() {
            if looks_like_command(l) || prose_shell_shape(l) {
                judge_shell(cx, path, line + i, l, false, &mut found);
            }
        }
    }
    // A comment in code is prose an agent reads: `// first run curl … | sh`.
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        let comment = ["#", "//", "--", "/*", "*", ";", "<!--"]
            .iter()
            .any(|m| t.starts_with(m));
        if comment && prose_shell_shape(t) {
            judge_prose(cx, path, line + i, t, &mut found);
        }
    }
    out.extend(found.into_iter().filter(kept_when_unsure));
}

/// Of what text that may not be shell produced: refusals, the review of code taken
/// from outside a package registry (an instruction to run it, however it is written),
/// and the review of a write into the user's project of a file that configures what
/// runs there or what an agent is told (`cp style.txt CLAUDE.md` in an inline span).
pub(super) fn kept_when_unsure(f: &Finding) -> bool {
    f.verdict == Severity::Refuse || matches!(f.check, Check::DownloadExec | Check::Persistence)
}

/// Code that is not declared as a language (a `text` fence, a fence without a
/// language, an indented block, inline or HTML code) but parses cleanly as Python,
/// JavaScript or Ruby is judged as that code, for what would refuse it. An info string
/// must not make code invisible.
pub(super) fn code_candidates(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    text: &str,
    out: &mut Vec<Finding>,
) {
    use crate::script::Lang;
    for lang in [Lang::Python, Lang::JavaScript, Lang::Ruby] {
        let facts = crate::script::analyze(lang, text, line);
        if facts.parse_errors > 0 || facts.is_empty() {
            continue;
        }
        let mut found = Vec::new();
        facts::judge(cx, path, &facts, &mut HashSet::new(), &mut found);
        out.extend(found.into_iter().filter(|f| f.verdict == Severity::Refuse));
    }
}

/// A sentence may carry a command after some words ("To set up, run curl … | bash"),
/// wrapped in quotes or brackets, or followed by a comma: every command candidate a
/// reader sees in it ([`super::reader`]) is judged for what the guards refuse.
pub(super) fn judge_prose(
    cx: &Cx<'_>,
    path: &str,
    line: usize,
    text: &str,
    out: &mut Vec<Finding>,
) {
    let mut found = Vec::new();
    let lower = text.to_lowercase();
    for (dl, cand) in super::reader::candidates(text) {
        let mut got = Vec::new();
        judge_shell(cx, path, line + dl, &cand, false, &mut got);
        // A sentence read from a path on (`~/.aws/credentials or … into a chat`) "runs"
        // a credential file only as shell; in words the file is named, not read. What
        // the words ask for is a human's to see.
        if cand.trim_start().starts_with(['~', '/']) || forbidden(&lower, &cand) {
            for g in &mut got {
                if g.check == Check::SensitiveRead && g.verdict == Severity::Refuse {
                    g.verdict = Severity::Review;
                    g.message.push_str(" (named in the instructions)");
                }
            }
        }
        found.append(&mut got);
    }
    found.retain(kept_when_unsure);
    found.sort_by_key(|f| std::cmp::Reverse(f.verdict));
    found.dedup_by(|a, b| a.check == b.check);
    out.extend(found.into_iter().take(1));
}

/// Is the candidate's first word forbidden by the words right before it in the text
/// (`lower`, lowercased): "never paste the contents of `~/.aws/credentials`", "do not
/// cat …"? Such a sentence names what not to do; it is still a human's to read, so it
/// is a review, not a refusal.
fn forbidden(lower: &str, cand: &str) -> bool {
    let Some(first) = cand.split_whitespace().next() else {
        return false;
    };
    let first = first.to_lowercase();
    ["never", "not", "don't", "dont", "nor", "avoid", "without"]
        .iter()
        .any(|n| lower.contains(&format!("{n} {first} ")))
}

/// Does a line of prose carry a shell shape worth judging: a pipe, a substitution, a
/// chain, a URL or a path in the home folder or `/etc`? English that happens to hold a
/// program's name ("pass through", "; pass it as …") does not.
pub(super) fn prose_shell_shape(line: &str) -> bool {
    ["|", "$(", "`", "&&", "://", "~/", "$HOME", "/etc/", "<("]
        .iter()
        .any(|m| line.contains(m))
}

/// Could text that is not declared shell be a command line? It must have an argument,
/// and its first word (after `$ ` prompts and `VAR=value` assignments) must be a plain
/// program name or path; code spans like `pass` (Python's statement), `??`, `{name}` or
/// `a -> b` are not commands.
pub(super) fn looks_like_command(text: &str) -> bool {
    if text.split_whitespace().count() < 2 {
        return false;
    }
    let mut words = text
        .trim_start()
        .trim_start_matches("$ ")
        .split_whitespace();
    let first = loop {
        match words.next() {
            Some(w) if w.contains('=') && !w.starts_with('=') => continue,
            other => break other,
        }
    };
    first.is_some_and(|w| {
        w.chars().any(|c| c.is_ascii_alphabetic())
            && w.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~' | '+')
            })
    })
}

/// The shell text of a file, with the line each piece starts on.
pub(super) fn shell_texts(path: &str, text: &str, declared: bool) -> Vec<(usize, String)> {
    let lower = path.to_ascii_lowercase();
    let first = text.lines().next().unwrap_or("");
    let shebang_shell = first.starts_with("#!")
        && ["sh", "bash", "zsh", "dash"]
            .iter()
            .any(|s| first.ends_with(&format!("/{s}")) || first.ends_with(&format!(" {s}")));
    let by_ext = [".sh", ".bash", ".zsh"].iter().any(|e| lower.ends_with(e));
    let no_ext_script = declared
        && !lower.rsplit('/').next().unwrap_or("").contains('.')
        && !first.starts_with("#!");
    if shebang_shell || by_ext || no_ext_script {
        vec![(1, text.to_string())]
    } else {
        Vec::new()
    }
}

pub(super) fn strip_prompts(block: &str) -> String {
    block
        .lines()
        .map(|l| l.strip_prefix("$ ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}
