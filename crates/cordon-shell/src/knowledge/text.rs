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
    let mut o = Outcome::read_only();
    for (name, value) in &p.opts {
        if matches!(name.as_str(), "--pre" | "--hostname-bin") {
            match value {
                Some(cmd) => o.code("rg", name, cmd),
                None => o.exec("rg", name, ""),
            }
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
        o.code(inv.name, "--pager", pager);
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
        o.code("sort", "--compress-program", prog);
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
                // `e COMMAND` runs COMMAND through the shell; a bare `e` runs the
                // pattern space, which only the input decides.
                let cmd = line_rest(script, i + 1).trim();
                if cmd.is_empty() {
                    o.exec("sed", "e", "pattern space");
                } else {
                    o.code("sed", "e", &Word::literal(cmd));
                }
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
    // `system("cmd")`: a literal command line is analyzed as the shell text it is;
    // one built at run time (`system(sprintf(…))`, `system($0)`) cannot be.
    let mut from = 0;
    while let Some(pos) = code[from..].find("system") {
        let at = from + pos;
        from = at + "system".len();
        let after = code[from..].trim_start();
        let Some(args) = after.strip_prefix('(') else {
            continue;
        };
        let open = code.len() - args.len();
        match awk_string_at(src, &code, open) {
            Some((cmd, end)) if code[end..].trim_start().starts_with(')') => {
                o.code(name, "system()", &Word::literal(cmd));
            }
            _ => o.exec(name, "system()", src),
        }
    }
    // `print | "cmd"`, `"cmd" | getline`, `|&` coprocesses: a `|` that is not `||`.
    let bytes = code.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c != b'|'
            || i.checked_sub(1).map(|j| bytes[j]) == Some(b'|')
            || bytes.get(i + 1) == Some(&b'|')
        {
            continue;
        }
        // The command is a literal string on either side of the bar.
        let before = code[..i].trim_end();
        let after_start = i + 1 + usize::from(bytes.get(i + 1) == Some(&b'&'));
        let lit_before = before
            .strip_suffix('"')
            .and_then(|b| b.rfind('"'))
            .and_then(|start| awk_string_at(src, &code, start));
        let skip = code[after_start..].len() - code[after_start..].trim_start().len();
        let lit_after = awk_string_at(src, &code, after_start + skip);
        let getline = code[after_start..].trim_start().starts_with("getline");
        match (lit_before, lit_after) {
            (Some((cmd, _)), _) if getline => o.code(name, "| getline", &Word::literal(cmd)),
            (_, Some((cmd, _))) if !getline => o.code(name, "| command", &Word::literal(cmd)),
            _ => o.exec(name, "| command", src),
        }
    }
    // `getline < "FILE"` / `getline VAR < FILE`: reads a file.
    let mut from = 0;
    while let Some(pos) = code[from..].find("getline") {
        let at = from + pos;
        from = at + "getline".len();
        let rest = &code[from..];
        let Some(lt) = rest.find('<') else { continue };
        let between = rest[..lt].trim();
        if !between.is_empty()
            && !between
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            continue;
        }
        let target_at = from + lt + 1;
        let skip = code[target_at..].len() - code[target_at..].trim_start().len();
        match awk_string_at(src, &code, target_at + skip) {
            Some((file, _)) => o.reads([&Word::literal(file)]),
            None => {
                let expr = code[target_at..]
                    .split([')', ';', '}', '\n'])
                    .next()
                    .unwrap_or("")
                    .trim();
                o.reads([&Word {
                    value: expr.to_owned(),
                    literal: false,
                }]);
            }
        }
    }
    // Any other path named in a string (`while ((getline l < f) > 0)` with `f="…"`),
    // and decoding followed by running (`system(sprintf("%c…", …))`).
    super::inline_code(o, name, &Word::literal(src));
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

/// The awk string literal starting at byte `at` of `src` (where `code`, its blanked
/// copy, has the opening quote): its unescaped text and the byte after its closing
/// quote.
fn awk_string_at(src: &str, code: &str, at: usize) -> Option<(String, usize)> {
    if code.as_bytes().get(at) != Some(&b'"') {
        return None;
    }
    let close = at + 1 + code.get(at + 1..)?.find('"')?;
    let raw = src.get(at + 1..close)?;
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(e) => out.push(e),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Some((out, close + 1))
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
