//! Which program runs a file: its shebang (any form: flags, `env -S`, `uv run`), or the
//! interpreter a SKILL.md command runs it with (`bash scripts/x.txt`, `python3 helper`),
//! whatever the file's extension says.

use crate::script::Lang;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// The program that reads a runnable file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Interp {
    /// A POSIX-style shell.
    Shell,
    /// A language cordon parses.
    Lang(Lang),
    /// Another program (perl, php, lua, pwsh …): cordon cannot read it.
    Other(String),
}

/// The interpreter a program name stands for; `None` for a program that does not run
/// its argument as code (`cat`, `less`).
fn of_program(word: &str) -> Option<Interp> {
    let base = word.rsplit('/').next().unwrap_or(word);
    // `python3.12` is `python`; `.` (the shell's `source`) stays itself.
    let stem = match base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
        "" => base,
        s => s,
    };
    Some(match stem {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "busybox" | "source" | "."
        | "fish" => Interp::Shell,
        "python" | "pypy" | "uv" | "uvx" | "pipx" | "ipython" => Interp::Lang(Lang::Python),
        "node" | "nodejs" | "deno" | "bun" => Interp::Lang(Lang::JavaScript),
        "ts-node" | "tsx" => Interp::Lang(Lang::TypeScript),
        "ruby" | "irb" => Interp::Lang(Lang::Ruby),
        "perl" | "php" | "lua" | "luajit" | "pwsh" | "powershell" | "tclsh" | "wish" | "awk"
        | "gawk" | "osascript" | "Rscript" | "julia" | "expect" | "csh" | "tcsh" | "rc"
        | "elixir" | "escript" | "guile" | "racket" | "sbcl" | "groovy" | "java" | "jshell"
        | "scala" | "kotlin" | "dotnet" | "swift" | "go" | "raku" | "nu" | "xonsh" => {
            Interp::Other(stem.to_string())
        }
        _ => return None,
    })
}

/// The interpreter a shebang line names, skipping `env` and its options and a runner's
/// subcommand (`uv run --script`).
pub(crate) fn of_shebang(first: &str) -> Option<Interp> {
    let rest = first.strip_prefix("#!")?;
    let mut words = rest.split_whitespace().peekable();
    let mut prog = words.next()?;
    if prog.rsplit('/').next() == Some("env") {
        loop {
            let w = words.next()?;
            if w.starts_with('-') || w.contains('=') {
                continue;
            }
            prog = w;
            break;
        }
    }
    Some(
        of_program(prog)
            .unwrap_or_else(|| Interp::Other(prog.rsplit('/').next().unwrap_or(prog).to_string())),
    )
}

/// Files of `candidates` that a SKILL.md command runs, with the interpreter it runs them
/// with (`bash scripts/x.txt`, `python3 helper.txt`, `./scripts/setup`).
pub(crate) fn executed_in_markdown(
    texts: &[(String, String)],
    candidates: &BTreeSet<String>,
) -> BTreeMap<String, Interp> {
    let mut out = BTreeMap::new();
    for (path, text) in texts {
        let lower = path.to_ascii_lowercase();
        if !(lower.ends_with(".md") || lower.ends_with(".markdown")) {
            continue;
        }
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for code in crate::markdown::code(text) {
            // A sentence is scanned word by word only; code is also read as the shell.
            let parse = code.kind != crate::markdown::CodeKind::Prose && !other_language(&code);
            executed_in_text(dir, &code.text, parse, candidates, &mut out);
        }
    }
    out
}

/// Is a piece of Markdown code a fence of a language cordon parses (Python, JavaScript,
/// Ruby …)? Its text is that language's, not the shell's.
pub(crate) fn other_language(code: &crate::markdown::Code) -> bool {
    code.kind == crate::markdown::CodeKind::Fenced && Lang::of_fence(&code.lang).is_some()
}

/// Files of `candidates` that command text (a Markdown code piece, a shell script, a
/// script's spawned command line) runs, with the interpreter; relative names are tried
/// against `dir` and the package root, and a name after a run-time part
/// (`"$(dirname "$0")/lib.dat"`) by what follows it.
pub(crate) fn executed_in_text(
    dir: &str,
    text: &str,
    parse: bool,
    candidates: &BTreeSet<String>,
    out: &mut BTreeMap<String, Interp>,
) {
    let find = |w: &str| {
        let bare = w.trim_start_matches("./");
        // What follows a run-time part: `$(dirname "$0")/lib.dat`, `${DIR}/x`.
        let tail = w
            .rsplit_once([')', '}'])
            .map_or(bare, |(_, t)| t)
            .trim_start_matches('/');
        let mut names = Vec::new();
        for n in [bare, tail] {
            if !dir.is_empty() {
                names.push(format!("{dir}/{n}"));
            }
            names.push(n.to_string());
        }
        names.into_iter().find(|n| candidates.contains(n))
    };
    // As the shell reads it: each command's program and the files among its arguments.
    let analysis = parse.then(|| super::project::analyzed(text));
    for c in analysis.iter().flat_map(|a| a.commands.iter()) {
        let Some(program) = &c.program else { continue };
        // A path in command position runs; a document name there is only being named
        // (`templates/viewer.html`).
        if let Some(f) = find(&program.value).filter(|f| {
            program.value.starts_with("./") || !f.rsplit('/').next().unwrap_or("").contains('.')
        }) {
            out.entry(f).or_insert(Interp::Shell);
        }
        let Some(interp) = of_program(&program.value) else {
            continue;
        };
        for w in &c.args {
            if let Some(f) = find(&w.value) {
                out.insert(f, interp.clone());
            }
        }
    }
    let words: Vec<&str> = text
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ';' | '&' | '|' | '(' | ')' | '`' | '"' | '\'' | ',' | '[' | ']'
                )
        })
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let bare = w.trim_start_matches("./");
        let tail = w
            .rsplit_once(['}', '$'])
            .map_or(bare, |(_, t)| t)
            .trim_start_matches(['/', '0']);
        let mut names = Vec::new();
        for n in [bare, tail] {
            if !dir.is_empty() {
                names.push(format!("{dir}/{n}"));
            }
            names.push(n.to_string());
        }
        let Some(file) = names.into_iter().find(|n| candidates.contains(n)) else {
            continue;
        };
        // The program before it, past its options (`bash -e x`, `uv run x`).
        let mut j = i;
        let mut interp = None;
        while j > 0 {
            j -= 1;
            let prev = words[j];
            if prev.starts_with('-') || matches!(prev, "run" | "--script" | "exec") {
                continue;
            }
            interp = of_program(prev);
            break;
        }
        // A path in command position runs; a bare document name there is only
        // being named (`templates/viewer.html`).
        let command_like =
            w.starts_with("./") || !file.rsplit('/').next().unwrap_or("").contains('.');
        let first_word = command_like
            && (i == 0
                || words.get(i - 1).is_some_and(|p| {
                    matches!(
                        *p,
                        "then" | "do" | "exec" | "sudo" | "env" | "nohup" | "time"
                    )
                }));
        match (interp, first_word) {
            (Some(it), _) => {
                out.insert(file, it);
            }
            (None, true) => {
                out.entry(file).or_insert(Interp::Shell);
            }
            _ => {}
        }
    }
}

/// Text that CPython splits or decodes differently from tree-sitter-python: a coding
/// cookie other than UTF-8/ASCII, a lone carriage return, a form feed.
pub(crate) fn python_text_disagreement(text: &str) -> Option<&'static str> {
    static COOKIE: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)").ok());
    for line in text.split(['\n', '\r']).take(2) {
        if let Some(c) = COOKIE.as_ref().and_then(|re| re.captures(line))
            && let Some(enc) = c.get(1)
        {
            let enc = enc.as_str().to_ascii_lowercase().replace('_', "-");
            if !matches!(
                enc.as_str(),
                "utf-8" | "utf8" | "ascii" | "us-ascii" | "utf-8-sig"
            ) {
                return Some("a coding cookie names an encoding other than UTF-8");
            }
        }
    }
    let bytes = text.as_bytes();
    if bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
    {
        return Some("a carriage return stands alone as a line break");
    }
    if text.contains('\u{c}') {
        return Some("a form feed is in the text");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_text_cpython_reads_differently_is_flagged() {
        assert!(python_text_disagreement("# -*- coding: utf-7 -*-\n#+AAo-import os\n").is_some());
        assert!(python_text_disagreement("# notes\rimport os; os.system('x')\n").is_some());
        assert!(python_text_disagreement("x = 1\n\u{c}y = 2\n").is_some());
        assert!(python_text_disagreement("# -*- coding: utf-8 -*-\r\nx = 1\r\n").is_none());
    }

    #[test]
    fn shebangs_of_every_form_name_their_interpreter() {
        assert_eq!(of_shebang("#!/bin/bash -e"), Some(Interp::Shell));
        assert_eq!(of_shebang("#!/bin/sh -eu"), Some(Interp::Shell));
        assert_eq!(
            of_shebang("#!/usr/bin/env -S uv run --script"),
            Some(Interp::Lang(Lang::Python))
        );
        assert_eq!(
            of_shebang("#!/usr/bin/env -S PATH=/x node --no-warnings"),
            Some(Interp::Lang(Lang::JavaScript))
        );
        assert_eq!(
            of_shebang("#!/usr/bin/perl -w"),
            Some(Interp::Other("perl".into()))
        );
        assert_eq!(
            of_shebang("#!/opt/x/weird"),
            Some(Interp::Other("weird".into()))
        );
    }

    #[test]
    fn markdown_commands_name_the_interpreter_of_any_file() {
        let md = "Run `bash scripts/setup.txt` then `python3 helper.txt`.\n\n```\n./scripts/go\nperl tool.dat\n```\nRead `templates/viewer.html` and `cat notes.txt`.\n";
        let texts = vec![("SKILL.md".to_string(), md.to_string())];
        let cands: BTreeSet<String> = [
            "scripts/setup.txt",
            "helper.txt",
            "scripts/go",
            "tool.dat",
            "templates/viewer.html",
            "notes.txt",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let got = executed_in_markdown(&texts, &cands);
        assert_eq!(got.get("scripts/setup.txt"), Some(&Interp::Shell));
        assert_eq!(got.get("helper.txt"), Some(&Interp::Lang(Lang::Python)));
        assert_eq!(got.get("scripts/go"), Some(&Interp::Shell));
        assert_eq!(got.get("tool.dat"), Some(&Interp::Other("perl".into())));
        assert_eq!(got.get("templates/viewer.html"), None);
        assert_eq!(got.get("notes.txt"), None);
    }
}
