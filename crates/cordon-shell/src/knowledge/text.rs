//! Text programs: searching (`grep`, `rg`, `ag`), sorting, `sed` and `awk` (whose
//! scripts can write files and run commands), and structured-data tools.

use super::{Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["grep", "egrep", "fgrep"],
        classify: grep,
    },
    Entry {
        names: &["rg"],
        classify: rg,
    },
    Entry {
        names: &["ag", "ack"],
        classify: ag,
    },
    Entry {
        names: &["sort"],
        classify: sort,
    },
    Entry {
        names: &["uniq"],
        classify: uniq,
    },
    Entry {
        names: &["tr"],
        classify: |_| {
            // Translates characters (rot13, a cipher alphabet): its output is text a
            // reader of the command does not see.
            let mut o = Outcome::read_only();
            o.decodes = true;
            o
        },
    },
    Entry {
        names: &["sed", "gsed"],
        classify: sed,
    },
    Entry {
        names: &["awk", "gawk", "mawk", "nawk"],
        classify: awk,
    },
    Entry {
        names: &["jq", "gojq", "jaq"],
        classify: jq,
    },
    Entry {
        names: &["yq"],
        classify: yq,
    },
];

/// `grep`: the first operand is the pattern unless `-e`/`-f` gave one.
fn grep(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "efmABCD d",
            &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "devices",
                "directories",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "label",
                "binary-files",
                "color",
                "colour",
                "group-separator",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    let explicit = p.has(&["-e", "--regexp", "-f", "--file"]);
    let files = if explicit {
        &p.operands[..]
    } else {
        p.operands.get(1..).unwrap_or(&[])
    };
    o.reads(files);
    o.reads(p.values(&["-f", "--file", "--exclude-from"]));
    if files.is_empty() && p.has(&["-r", "-R", "--recursive", "--dereference-recursive"]) {
        o.reads([&Word::literal(".")]);
    }
    o
}

fn rg(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "efgtTABCmMjEr",
            &[
                "regexp",
                "file",
                "glob",
                "iglob",
                "type",
                "type-not",
                "type-add",
                "type-clear",
                "after-context",
                "before-context",
                "context",
                "max-count",
                "max-columns",
                "threads",
                "encoding",
                "replace",
                "pre",
                "pre-glob",
                "hostname-bin",
                "ignore-file",
                "max-depth",
                "max-filesize",
                "path-separator",
                "sort",
                "sortr",
                "color",
                "colors",
                "context-separator",
                "field-context-separator",
                "field-match-separator",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
                "hyperlink-format",
                "generate",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    for (name, value) in &p.opts {
        if matches!(name.as_str(), "--pre" | "--hostname-bin") {
            let v = value.as_ref().map(|w| w.value.as_str()).unwrap_or("");
            o.exec("rg", name, v);
        }
    }
    let explicit = p.has(&["-e", "--regexp", "-f", "--file"]);
    let mut files: Vec<Word> = if explicit {
        p.operands.clone()
    } else {
        p.operands.get(1..).unwrap_or(&[]).to_vec()
    };
    if p.has(&["--files", "--type-list"]) {
        files = p.operands.clone();
    }
    if files.is_empty() {
        files.push(Word::literal("."));
    }
    o.reads(&files);
    o.reads(p.values(&["-f", "--file", "--ignore-file"]));
    o
}

fn ag(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "ABCGgmp",
            &[
                "after",
                "before",
                "context",
                "file-search-regex",
                "ignore",
                "ignore-dir",
                "max-count",
                "path-to-ignore",
                "depth",
                "pager",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    if let Some(pager) = p.values(&["--pager"]).next() {
        o.exec(inv.name, "--pager", &pager.value);
    }
    let files = p.operands.get(1..).unwrap_or(&[]);
    if files.is_empty() {
        o.reads([&Word::literal(".")]);
    }
    o.reads(files);
    o
}

fn sort(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "kotST",
            &[
                "key",
                "output",
                "field-separator",
                "buffer-size",
                "temporary-directory",
                "compress-program",
                "parallel",
                "files0-from",
                "random-source",
                "batch-size",
                "sort",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    o.reads(p.values(&["--files0-from", "--random-source"]));
    o.writes(p.values(&["-o", "--output"]));
    if let Some(prog) = p.values(&["--compress-program"]).next() {
        o.exec("sort", "--compress-program", &prog.value);
    }
    o
}

/// `uniq [IN [OUT]]`: a second operand is written.
fn uniq(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "fsw",
            &[
                "skip-fields",
                "skip-chars",
                "check-chars",
                "group",
                "all-repeated",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.reads(p.operands.first());
    o.writes(p.operands.get(1));
    o
}

/// `sed`: `-i` edits its files in place; the script's `w`/`W` commands and `s///w`
/// flags write files, `r`/`R` read files, and `e` or `s///e` run commands.
fn sed(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("efl", &["expression", "file", "line-length"]),
    );
    let mut o = Outcome::read_only();
    let mut scripts: Vec<Word> = p.values(&["-e", "--expression"]).cloned().collect();
    let script_files: Vec<Word> = p.values(&["-f", "--file"]).cloned().collect();
    let mut operands = p.operands.clone();
    if scripts.is_empty() && script_files.is_empty() && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    o.reads(&script_files);
    if !script_files.is_empty() {
        // The script is in a file the text does not show: it may write or run anything.
        o.effects.class = Class::Unknown;
    }
    let in_place = p
        .opts
        .iter()
        .any(|(n, _)| n == "-i" || n.starts_with("--in-place"))
        || inv
            .args
            .iter()
            .any(|a| a.value.starts_with("-i") && !a.value.starts_with("--"));
    if in_place {
        o.writes(&operands);
    }
    o.reads(&operands);
    for s in &scripts {
        if !s.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        sed_script(&s.value, &mut o);
    }
    o
}

/// Scan a sed script for commands that write, read or execute.
fn sed_script(script: &str, o: &mut Outcome) {
    let b = script.as_bytes();
    let mut i = 0;
    let mut at_cmd = true;
    while i < b.len() {
        let c = b[i];
        if !at_cmd {
            if matches!(c, b';' | b'\n' | b'{' | b'}') {
                at_cmd = true;
            }
            i += 1;
            continue;
        }
        match c {
            b' ' | b'\t' | b';' | b'\n' | b'{' | b'}' | b'!' => i += 1,
            // Addresses: line numbers, `$`, `/re/`, `\cREc`, ranges and steps.
            b'0'..=b'9' | b'$' | b',' | b'~' | b'+' => i += 1,
            b'/' => i = skip_delimited(b, i + 1, b'/') + 1,
            b'\\' if i + 1 < b.len() => {
                let d = b[i + 1];
                i = skip_delimited(b, i + 2, d) + 1;
            }
            b'I' | b'M' => i += 1,
            b's' | b'y' if i + 1 < b.len() => {
                let d = b[i + 1];
                let mid = skip_delimited(b, i + 2, d);
                let end = skip_delimited(b, mid + 1, d);
                i = end + 1;
                if c == b's' {
                    // Flags until the end of the command.
                    let start = i;
                    while i < b.len() && !matches!(b[i], b';' | b'\n' | b'}') {
                        if b[i] == b'e' {
                            o.exec("sed", "s///e", script);
                        }
                        if b[i] == b'w' {
                            let file = line_rest(script, i + 1);
                            o.writes([&Word::literal(file.trim())]);
                            i = b.len();
                            break;
                        }
                        i += 1;
                    }
                    let _ = start;
                }
                at_cmd = false;
            }
            b'e' => {
                let cmd = line_rest(script, i + 1).trim();
                o.exec(
                    "sed",
                    "e",
                    if cmd.is_empty() { "pattern space" } else { cmd },
                );
                i = skip_line(b, i);
            }
            b'w' | b'W' => {
                o.writes([&Word::literal(line_rest(script, i + 1).trim())]);
                i = skip_line(b, i);
            }
            b'r' | b'R' => {
                o.reads([&Word::literal(line_rest(script, i + 1).trim())]);
                i = skip_line(b, i);
            }
            b'a' | b'i' | b'c' => {
                // Text commands run to the end of the line.
                i = skip_line(b, i);
            }
            b'b' | b't' | b'T' | b':' => {
                // Labels end at `;` or a newline.
                at_cmd = false;
                i += 1;
            }
            _ => {
                at_cmd = false;
                i += 1;
            }
        }
    }
}

fn skip_delimited(b: &[u8], mut i: usize, d: u8) -> usize {
    while i < b.len() && b[i] != d {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b.get(i..)
        .and_then(|r| r.iter().position(|&c| c == b'\n'))
        .map_or(b.len(), |p| i + p + 1)
}

fn line_rest(s: &str, i: usize) -> &str {
    let rest = s.get(i..).unwrap_or("");
    rest.split('\n').next().unwrap_or("")
}

/// `awk`: `system()`, pipes to and from commands, and output redirection inside the
/// program run commands or write files.
fn awk(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "FvfiloWE",
            &[
                "field-separator",
                "assign",
                "file",
                "include",
                "load",
                "dump-variables",
                "profile",
                "exec",
                "source",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    let mut programs: Vec<Word> = p.values(&["--source"]).cloned().collect();
    let files: Vec<Word> = p
        .values(&["-f", "--file", "-i", "--include", "-E", "--exec"])
        .cloned()
        .collect();
    let mut operands = p.operands.clone();
    if files.is_empty() && programs.is_empty() && !operands.is_empty() {
        programs.push(operands.remove(0));
    }
    if !files.is_empty() {
        o.reads(&files);
        o.effects.class = Class::Unknown;
    }
    if p.has(&["-l", "--load"]) {
        o.exec(inv.name, "-l", "loads an extension library");
    }
    // `var=value` operands are assignments, not files.
    let inputs: Vec<Word> = operands
        .into_iter()
        .filter(|w| !w.value.contains('='))
        .collect();
    o.reads(&inputs);
    for prog in &programs {
        if !prog.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        awk_program(&prog.value, inv.name, &mut o);
    }
    o
}

fn awk_program(src: &str, name: &str, o: &mut Outcome) {
    let code = blank_awk_strings(src);
    if code.contains("system(") || code.contains("system (") {
        o.exec(name, "system()", src);
    }
    // `print | "cmd"`, `"cmd" | getline`, `|&` coprocesses: a `|` that is not `||`.
    let bytes = code.as_bytes();
    let piped = bytes.iter().enumerate().any(|(i, &c)| {
        c == b'|'
            && i.checked_sub(1).map(|j| bytes[j]) != Some(b'|')
            && bytes.get(i + 1) != Some(&b'|')
    });
    if piped {
        o.exec(name, "| command", src);
    }
    // `print > "file"` / `>>`: output redirection. A comparison `a > b` looks the same,
    // so only a `>` in a statement starting with print/printf counts.
    let mut start = 0;
    for stmt in code.split([';', '{', '}', '\n']) {
        let offset = start;
        start += stmt.len() + 1;
        let t = stmt.trim_start();
        if !(t.starts_with("print") || t.starts_with("printf")) {
            continue;
        }
        let Some(gt) = stmt.rfind('>') else { continue };
        let after = src.get(offset + gt + 1..).unwrap_or("").trim_start();
        let literal_target = after
            .strip_prefix('"')
            .and_then(|b| b.find('"').map(|e| b.get(..e).unwrap_or("")));
        match literal_target {
            Some(file) => o.writes([&Word::literal(file)]),
            None => {
                let expr = after.split([';', '}', '\n']).next().unwrap_or("").trim();
                o.writes([&Word {
                    value: expr.to_owned(),
                    literal: false,
                }]);
            }
        }
    }
}

/// Replace the contents of string literals with spaces (byte for byte, so offsets
/// still match the source) so that words inside strings are not taken for code.
fn blank_awk_strings(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut in_str = false;
    let mut esc = false;
    for ch in src.chars() {
        if in_str {
            if esc {
                esc = false;
            } else if ch == '\\' {
                esc = true;
            } else if ch == '"' {
                in_str = false;
                out.push('"');
                continue;
            }
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()));
        } else {
            if ch == '"' {
                in_str = true;
            }
            out.push(ch);
        }
    }
    out
}

/// `jq [options] FILTER [FILES…]`.
fn jq(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let args = inv.args;
    let mut operands = Vec::new();
    let mut filter_from_file = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].value.as_str();
        match a {
            "--arg" | "--argjson" => i += 3,
            "--slurpfile" | "--rawfile" => {
                o.reads(args.get(i + 2));
                i += 3;
            }
            "-f" | "--from-file" => {
                o.reads(args.get(i + 1));
                filter_from_file = true;
                i += 2;
            }
            "-L" | "--indent" => i += 2,
            "--args" | "--jsonargs" => {
                // Remaining operands are positional values, not files.
                if operands.is_empty() {
                    operands.extend(args.get(i + 1).cloned());
                }
                break;
            }
            "--" => {
                operands.extend(args[i + 1..].iter().cloned());
                break;
            }
            _ if a.starts_with('-') && a != "-" => i += 1,
            _ => {
                operands.push(args[i].clone());
                i += 1;
            }
        }
    }
    let files = if filter_from_file {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or(&[])
    };
    o.reads(files);
    o
}

fn yq(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "pIo",
            &[
                "input-format",
                "output-format",
                "indent",
                "expression",
                "from-file",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    let operands = p.operands.get(1..).unwrap_or(&[]);
    o.reads(operands);
    if p.has(&["-i", "--inplace"]) {
        o.writes(operands);
    }
    o
}
