//! Text programs: searching (`grep`, `rg`, `ag`), sorting, `sed` and `awk` (whose
//! scripts can write files and run commands), and structured-data tools.

use super::{Entry, Invocation, Opts, Outcome, inline_code, parse_args};
use crate::model::{Class, Word};

mod awk;
mod sed;
use awk::awk;
use sed::sed;

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
    Entry {
        names: &["sqlite3", "sqlite"],
        classify: sqlite,
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
    // `--pre` and `--hostname-bin` run their values: see `runs::TABLE`.
    let mut o = Outcome::read_only();
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
    // `--pager` runs its value: see `runs::TABLE`.
    let mut o = Outcome::read_only();
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
    // `--compress-program` runs its value: see `runs::TABLE`.
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

/// Options of `sqlite3` that take a value (single dash or double).
const SQLITE_VALUES: &[&str] = &[
    "cmd",
    "init",
    "separator",
    "newline",
    "nullvalue",
    "vfs",
    "mmap",
    "pagecache",
    "lookaside",
    "maxsize",
    "heap",
    "escape",
];

/// `sqlite3 [OPTIONS] [DB [SQL…]]`: the database file is read (and written when the
/// SQL changes it); SQL functions and dot commands read and write files
/// (`readfile`, `writefile`, `.read`, `.output`) and run programs (`.shell`,
/// `.system`, `load_extension`, `edit`). Without SQL it reads statements from
/// standard input, which may hold the same.
fn sqlite(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let mut operands = Vec::new();
    let mut scripts = Vec::new();
    let mut i = 0;
    while i < inv.args.len() {
        let w = &inv.args[i];
        let name = w.value.trim_start_matches('-');
        if w.value.starts_with('-') && w.value.len() > 1 {
            if SQLITE_VALUES.contains(&name) {
                if let Some(v) = inv.args.get(i + 1) {
                    match name {
                        "cmd" => scripts.push(v.clone()),
                        "init" => {
                            o.reads([v]);
                            o.effects.class = Class::Unknown;
                        }
                        _ => {}
                    }
                }
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        operands.push(w.clone());
        i += 1;
    }
    let mut ops = operands.into_iter();
    let db = ops.next();
    scripts.extend(ops);
    if scripts.is_empty() {
        o.run_stdin_code();
    }
    let mut changes = false;
    for sql in &scripts {
        if !sql.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        let lower = sql.value.to_ascii_lowercase();
        changes |= [
            "insert", "update", "delete", "create", "drop", "alter", "replace", "attach", "vacuum",
            "pragma", "reindex",
        ]
        .iter()
        .any(|k| lower.contains(k));
        for line in sql.value.lines().map(str::trim) {
            let Some(dot) = line.strip_prefix('.') else {
                continue;
            };
            let (cmd, arg) = dot.split_once(char::is_whitespace).unwrap_or((dot, ""));
            let arg = Word::literal(arg.trim().trim_matches(['\'', '"']));
            match cmd {
                "shell" | "system" => o.code(inv.name, ".shell", &arg),
                "read" | "import" | "restore" | "open" => o.reads([&arg]),
                "output" | "once" | "backup" | "save" | "dump" if !arg.value.is_empty() => {
                    if arg.value.starts_with('|') {
                        let cmd = Word::literal(arg.value.trim_start_matches('|'));
                        o.code(inv.name, ".output |", &cmd);
                    } else if !arg.value.starts_with('-') {
                        o.writes([&arg]);
                    }
                }
                "load" => o.exec(inv.name, ".load", &arg.value),
                "excel" | "edit" => o.exec(inv.name, cmd, "starts another program"),
                _ => {}
            }
        }
        let reads: Vec<Word> = super::inline::literal_first_args(&sql.value, &["readfile"])
            .into_iter()
            .map(Word::literal)
            .collect();
        o.reads(&reads);
        let writes: Vec<Word> = super::inline::literal_first_args(&sql.value, &["writefile"])
            .into_iter()
            .map(Word::literal)
            .collect();
        o.writes(&writes);
        if lower.contains("load_extension") {
            o.exec(inv.name, "load_extension()", &sql.value);
        }
        if lower.contains("edit(") {
            o.exec(inv.name, "edit()", "starts an editor");
        }
        o.mentions_in_code(sql);
    }
    if let Some(db) = db.filter(|d| !d.value.is_empty() && d.value != ":memory:") {
        o.reads([&db]);
        if changes || scripts.is_empty() {
            o.writes([&db]);
        }
    }
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
