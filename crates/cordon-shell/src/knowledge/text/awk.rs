//! `awk` (gawk, mawk, nawk, busybox awk): its options read as each awk reads them, and
//! its program lexed ([`lex`]) for what runs code or touches files: `system()`, pipes
//! to and from commands (`print | "cmd"`, `"cmd" | getline`, gawk's `|&`), `getline <
//! FILE`, output redirections (`print > FILE`, `>>`), gawk's `@load`/`@include` and
//! indirect calls, and gawk's `/inet/…` network files.
//!
//! A command that is one constant string is analyzed as the shell text it is; one built
//! at run time (`system(cmd)`, `"ls " dir | getline`) is code the analysis cannot see
//! (asked). A program that does not lex is asked about too.

mod lex;

use crate::knowledge::{Invocation, Outcome};
use crate::model::{Class, Word};
use lex::Tok;

/// Long options of gawk that take a value, in the next word or after `=`.
const LONG_VALUE: &[&str] = &[
    "field-separator",
    "assign",
    "file",
    "exec",
    "include",
    "load",
    "source",
];

/// Long options of gawk whose value is optional and only given after `=`.
const LONG_OPTIONAL: &[&str] = &["dump-variables", "debug", "lint", "pretty-print", "profile"];

/// Long options of gawk (and mawk, busybox) without a value.
const LONG_FLAGS: &[&str] = &[
    "characters-as-bytes",
    "traditional",
    "compat",
    "copyright",
    "copyleft",
    "gen-pot",
    "gen-po",
    "help",
    "usage",
    "bignum",
    "use-lc-numeric",
    "non-decimal-data",
    "optimize",
    "no-optimize",
    "posix",
    "re-interval",
    "sandbox",
    "lint-old",
    "version",
    "csv",
    "persist",
];

/// The command line of one awk run, read as gawk reads it (mawk, nawk and busybox awk
/// take a subset): what program it runs and what else its options do.
#[derive(Default)]
struct Args {
    /// Program texts (`-e`, `--source`, or the first operand).
    programs: Vec<Word>,
    /// Program files (`-f`, `-E`, `-i`, mawk's `-W exec`): code the text does not show.
    files: Vec<Word>,
    /// Files written by gawk's profile, pretty-print and variable dumps.
    writes: Vec<Word>,
    /// An extension library loaded (`-l`).
    loads: bool,
    /// An option the table does not know: the program may be hidden behind it.
    unknown: Option<String>,
    operands: Vec<Word>,
}

fn parse(args: &[Word]) -> Args {
    let mut out = Args::default();
    let mut i = 0;
    let value_at = |i: usize| args.get(i).cloned();
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        i += 1;
        if a == "--" {
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        // A word known only at run time may be an option or the program: either way
        // the program is not visible (see `awk` below).
        if !a.starts_with('-') || a == "-" || !w.literal {
            out.operands.push(w.clone());
            // Options end at the program text: what follows is operands.
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        let attached = |v: &str| Word {
            value: v.to_owned(),
            literal: w.literal,
        };
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(attached(v))),
                None => (long, None),
            };
            let all = LONG_VALUE.iter().chain(LONG_OPTIONAL).chain(LONG_FLAGS);
            let matches: Vec<&&str> = all.clone().filter(|l| l.starts_with(name)).collect();
            let full = match all.clone().find(|l| **l == name) {
                Some(l) => *l,
                None if matches.len() == 1 => matches[0],
                _ => {
                    out.unknown = Some(a.to_owned());
                    continue;
                }
            };
            let value = if LONG_VALUE.contains(&full) && value.is_none() {
                i += 1;
                value_at(i - 1)
            } else {
                value
            };
            long_option(&mut out, full, value);
            continue;
        }
        // A cluster of short options: `-vx=1`, `-fprog.awk`, `-bo`.
        let cluster: Vec<char> = a[1..].chars().collect();
        for (k, c) in cluster.iter().enumerate() {
            let rest: String = cluster[k + 1..].iter().collect();
            match c {
                'f' | 'F' | 'v' | 'E' | 'i' | 'l' | 'e' | 'W' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        value_at(i - 1)
                    } else {
                        Some(attached(&rest))
                    };
                    // mawk's `-W exec FILE`: the program is read from FILE.
                    if *c == 'W'
                        && value
                            .as_ref()
                            .is_some_and(|v| matches!(v.value.as_str(), "exec" | "e"))
                    {
                        i += 1;
                        long_option(&mut out, "exec", value_at(i - 1));
                        break;
                    }
                    short_option(&mut out, *c, value);
                    break;
                }
                // Optional values, attached only.
                'd' | 'D' | 'o' | 'p' | 'L' => {
                    let value = (!rest.is_empty()).then(|| attached(&rest));
                    let long = match c {
                        'd' => "dump-variables",
                        'D' => "debug",
                        'o' => "pretty-print",
                        'p' => "profile",
                        _ => "lint",
                    };
                    long_option(&mut out, long, value);
                    break;
                }
                'b' | 'c' | 'C' | 'g' | 'h' | 'k' | 'M' | 'N' | 'n' | 'O' | 'P' | 'r' | 's'
                | 'S' | 't' | 'V' | 'Y' | 'I' => {}
                _ => {
                    out.unknown = Some(a.to_owned());
                    break;
                }
            }
        }
    }
    if out.programs.is_empty() && out.files.is_empty() && !out.operands.is_empty() {
        out.programs.push(out.operands.remove(0));
    }
    out
}

fn short_option(out: &mut Args, c: char, value: Option<Word>) {
    match c {
        'f' => long_option(out, "file", value),
        'E' => long_option(out, "exec", value),
        'i' => long_option(out, "include", value),
        'l' => long_option(out, "load", value),
        'e' => long_option(out, "source", value),
        'W' => {
            // `-W long-option[=value]` (gawk), `-W exec file` and `-W version` (mawk).
            let Some(v) = value else { return };
            match v.value.split_once('=') {
                Some(("source" | "s", text)) => out.programs.push(Word {
                    value: text.to_owned(),
                    literal: v.literal,
                }),
                None if matches!(v.value.as_str(), "version" | "v" | "usage" | "help") => {}
                _ => out.unknown = Some(format!("-W {}", v.value)),
            }
        }
        _ => {}
    }
}

fn long_option(out: &mut Args, name: &str, value: Option<Word>) {
    match name {
        "file" | "exec" | "include" => match value {
            Some(f) => out.files.push(f),
            None => out.unknown = Some(format!("--{name}")),
        },
        "source" => match value {
            Some(p) => out.programs.push(p),
            None => out.unknown = Some("--source".into()),
        },
        "load" => out.loads = true,
        // gawk's debugger reads its commands (which may run programs) from the file.
        "debug" => out.unknown = Some("--debug".into()),
        "dump-variables" => out
            .writes
            .push(value.unwrap_or_else(|| Word::literal("awkvars.out"))),
        "pretty-print" | "profile" => out
            .writes
            .push(value.unwrap_or_else(|| Word::literal("awkprof.out"))),
        _ => {}
    }
}

/// `awk`: what its program does, read from its options and its program text.
pub(super) fn awk(inv: &Invocation<'_>) -> Outcome {
    let name = inv.name;
    let p = parse(inv.args);
    let mut o = Outcome::read_only();
    if let Some(opt) = &p.unknown {
        o.exec(
            name,
            opt,
            "an option the analysis does not know (it may name the program)",
        );
    }
    if !p.files.is_empty() {
        o.reads(&p.files);
        o.effects.class = Class::Unknown;
    }
    if p.loads {
        o.exec(name, "-l", "loads an extension library");
    }
    o.writes(&p.writes);
    // `var=value` operands are assignments, not files.
    let inputs: Vec<Word> = p
        .operands
        .into_iter()
        .filter(|w| !is_assignment(&w.value))
        .collect();
    o.reads(&inputs);
    for prog in &p.programs {
        if !prog.literal {
            o.effects.class = Class::Unknown;
            continue;
        }
        program(&prog.value, name, &mut o);
    }
    o
}

/// `NAME=…` with NAME an awk identifier: an assignment operand, not a file.
fn is_assignment(s: &str) -> bool {
    s.split_once('=').is_some_and(|(n, _)| {
        n.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The effects of one awk program text.
fn program(src: &str, name: &str, o: &mut Outcome) {
    // Paths named in strings, and decoding followed by running
    // (`system(sprintf("%c…", …))`).
    super::inline_code(o, name, &Word::literal(src));
    let toks = match lex::lex(src) {
        Ok(t) => t,
        Err(why) => {
            o.exec(
                name,
                "program",
                &format!("a program the analysis cannot read ({why})"),
            );
            return;
        }
    };
    let end = |k: usize| matches!(toks.get(k), None | Some(Tok::Op(";" | "\n" | "}" | ")")));
    for (k, t) in toks.iter().enumerate() {
        match t {
            Tok::Name(n) if n == "system" && toks.get(k + 1) == Some(&Tok::Op("(")) => {
                match (toks.get(k + 2), toks.get(k + 3)) {
                    (Some(Tok::Str { text, exact: true }), Some(Tok::Op(")"))) => {
                        o.code(name, "system()", &Word::literal(text.clone()));
                    }
                    _ => o.exec(name, "system()", "a command line built at run time"),
                }
            }
            Tok::Regex {
                bracket_slash: true,
                ..
            } => o.exec(
                name,
                "program",
                "a regular expression that awks end in different places (`/[/]/`)",
            ),
            Tok::At => match toks.get(k + 1) {
                // gawk's typed regular expression `@/re/`.
                Some(Tok::Regex { .. }) => {}
                Some(Tok::Name(d)) if d == "load" => {
                    o.exec(name, "@load", "loads an extension library")
                }
                Some(Tok::Name(d)) if d == "include" => {
                    if let Some(Tok::Str { text, .. }) = toks.get(k + 2) {
                        o.reads([&Word::literal(text.clone())]);
                    }
                    o.effects.class = Class::Unknown;
                }
                Some(Tok::Name(d)) if d == "namespace" => {}
                _ => o.exec(
                    name,
                    "@",
                    "an indirect call (the function is named by the program's data)",
                ),
            },
            Tok::Op(bar @ ("|" | "|&")) => {
                if toks.get(k + 1) == Some(&Tok::Name("getline".into())) {
                    // `CMD | getline`: CMD is the value before the bar; a constant when
                    // it is one string not joined to what precedes it.
                    let before = k.checked_sub(1).and_then(|j| toks.get(j));
                    let joined = k
                        .checked_sub(2)
                        .and_then(|j| toks.get(j))
                        .is_some_and(Tok::ends_value);
                    match before {
                        Some(Tok::Str { text, exact: true }) if !joined => {
                            pipe(o, name, bar, text, "| getline")
                        }
                        _ => o.exec(name, "| getline", "a command line built at run time"),
                    }
                } else {
                    // `print … | CMD`: CMD is the value after the bar.
                    match toks.get(k + 1) {
                        Some(Tok::Str { text, exact: true }) if end(k + 2) => {
                            pipe(o, name, bar, text, "| command")
                        }
                        _ => o.exec(name, "| command", "a command line built at run time"),
                    }
                }
            }
            Tok::Name(n) if n == "getline" => getline_file(&toks, k, o),
            Tok::Name(n) if n == "print" || n == "printf" => redirection(&toks, k, o),
            _ => {}
        }
    }
}

/// A constant command behind a pipe: shell text, or for gawk's two-way `|&` a network
/// special file (`/inet/tcp/0/HOST/PORT`).
fn pipe(o: &mut Outcome, name: &str, bar: &str, cmd: &str, what: &str) {
    if bar == "|&" && inet(o, cmd) {
        return;
    }
    o.code(name, what, &Word::literal(cmd.to_owned()));
}

/// gawk's `/inet/PROTO/LPORT/HOST/RPORT` (and `/inet4/`, `/inet6/`): a connection.
fn inet(o: &mut Outcome, file: &str) -> bool {
    let Some(rest) = ["/inet/", "/inet4/", "/inet6/"]
        .iter()
        .find_map(|p| file.strip_prefix(p))
    else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [_, _, host, port] if !host.is_empty() && *host != "0" => {
            o.net(&Word::literal(format!("{host}:{port}")))
        }
        _ => o.net_unknown(),
    }
    true
}

/// The names awks give the standard streams: the process's own input and output.
const STANDARD_FILES: &[&str] = &[
    "-",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// `getline [VAR] < FILE`: FILE is read.
fn getline_file(toks: &[Tok], k: usize, o: &mut Outcome) {
    let mut j = k + 1;
    // The optional variable: a name (with a subscript) or a field.
    match toks.get(j) {
        Some(Tok::Name(_)) => {
            j += 1;
            if toks.get(j) == Some(&Tok::Op("[")) {
                j = skip_group(toks, j);
            }
        }
        Some(Tok::Op("$")) => {
            j += 1;
            j = match toks.get(j) {
                Some(Tok::Op("(")) => skip_group(toks, j),
                Some(_) => j + 1,
                None => j,
            };
        }
        _ => {}
    }
    if toks.get(j) != Some(&Tok::Op("<")) {
        return;
    }
    match toks.get(j + 1) {
        Some(Tok::Str { text, exact: true }) => {
            if !inet(o, text) && !STANDARD_FILES.contains(&text.as_str()) {
                o.reads([&Word::literal(text.clone())]);
            }
        }
        other => o.reads([&Word {
            value: other.map_or_else(String::new, describe),
            literal: false,
        }]),
    }
}

/// `print … > FILE` / `>> FILE` in a print or printf statement: FILE is written. A `>`
/// inside parentheses is a comparison.
fn redirection(toks: &[Tok], k: usize, o: &mut Outcome) {
    let mut depth = 0usize;
    let mut j = k + 1;
    while let Some(t) = toks.get(j) {
        match t {
            Tok::Op("(" | "[") => depth += 1,
            Tok::Op(")" | "]") => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return,
            },
            Tok::Op(";" | "}") => return,
            Tok::Op("\n") if depth == 0 => return,
            Tok::Op(">" | ">>") if depth == 0 => {
                let one = matches!(toks.get(j + 2), None | Some(Tok::Op(";" | "\n" | "}")));
                match toks.get(j + 1) {
                    Some(Tok::Str { text, exact: true }) if one => {
                        if !inet(o, text) && !STANDARD_FILES.contains(&text.as_str()) {
                            o.writes([&Word::literal(text.clone())]);
                        }
                    }
                    other => o.writes([&Word {
                        value: other.map_or_else(String::new, describe),
                        literal: false,
                    }]),
                }
                return;
            }
            _ => {}
        }
        j += 1;
    }
}

/// The index after the bracketed group opening at `toks[j]`.
fn skip_group(toks: &[Tok], mut j: usize) -> usize {
    let mut depth = 0usize;
    while let Some(t) = toks.get(j) {
        match t {
            Tok::Op("(" | "[") => depth += 1,
            Tok::Op(")" | "]") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// A token as an explanation names a value only known at run time.
fn describe(t: &Tok) -> String {
    match t {
        Tok::Str { text, .. } => text.clone(),
        Tok::Name(n) => n.clone(),
        _ => "an expression".into(),
    }
}
