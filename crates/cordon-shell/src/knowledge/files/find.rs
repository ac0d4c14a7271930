//! `find` and `fd`, with the commands their executing actions run.

use crate::knowledge::{Invocation, Opts, Outcome, parse_args};
use crate::model::Word;

/// Primaries of `find` that take one argument.
const FIND_ONE_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-used",
    "-links",
    "-inum",
    "-samefile",
    "-lname",
    "-ilname",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-context",
    "-regextype",
    "-printf",
    "-newerXY",
    "-files0-from",
];

pub(super) fn find(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let args = inv.args;
    let mut i = 0;
    // Leading options and starting points.
    while i < args.len()
        && matches!(
            args[i].value.as_str(),
            "-H" | "-L" | "-P" | "-O0" | "-O1" | "-O2" | "-O3"
        )
    {
        i += 1;
    }
    if args.get(i).is_some_and(|a| a.value == "-D") {
        i += 2;
    }
    let mut roots = Vec::new();
    while i < args.len() {
        let v = &args[i].value;
        if v.starts_with('-') || v == "(" || v == "!" {
            break;
        }
        roots.push(args[i].clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(Word::literal("."));
    }
    o.reads(&roots);
    while i < args.len() {
        let a = args[i].value.as_str();
        match a {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && args[end].value != ";" && args[end].value != "+" {
                    end += 1;
                }
                let argv = args[start..end.min(args.len())].to_vec();
                o.exec("find", a, &super::join(&argv));
                o.exec_argv.push(("find ".to_owned() + a, argv));
                i = end + 1;
            }
            "-delete" => {
                // The matched entries under each starting point, not the point itself
                // (find cannot remove `.`); which ones is only known at run time.
                let matched: Vec<Word> = roots
                    .iter()
                    .map(|r| Word {
                        value: format!("{}/*", r.value.trim_end_matches('/')),
                        literal: false,
                    })
                    .collect();
                o.deletes(&matched);
                i += 1;
            }
            "-fprint" | "-fprint0" | "-fls" => {
                o.writes(args.get(i + 1));
                i += 2;
            }
            "-fprintf" => {
                o.writes(args.get(i + 1));
                i += 3;
            }
            _ if FIND_ONE_ARG.contains(&a) || a.starts_with("-newer") => {
                if a == "-files0-from" {
                    o.reads(args.get(i + 1));
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    o
}

pub(super) fn fd(inv: &Invocation<'_>) -> Outcome {
    let spec = Opts::gnu(
        "tedEcjSoxX",
        &[
            "type",
            "extension",
            "max-depth",
            "min-depth",
            "exact-depth",
            "exclude",
            "color",
            "threads",
            "size",
            "changed-within",
            "changed-before",
            "owner",
            "base-directory",
            "path-separator",
            "search-path",
            "max-results",
            "ignore-file",
            "and",
            "format",
            "hyperlink",
            "batch-size",
            "exec",
            "exec-batch",
        ],
    );
    let mut o = Outcome::read_only();
    let args = inv.args;
    // Everything after -x/-X/--exec/--exec-batch up to `;` (or the end) is the command.
    let mut i = 0;
    let mut before = Vec::new();
    while i < args.len() {
        let a = args[i].value.as_str();
        if matches!(a, "-x" | "-X" | "--exec" | "--exec-batch") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end].value != ";" {
                end += 1;
            }
            let argv = args[start..end.min(args.len())].to_vec();
            o.exec("fd", a, &super::join(&argv));
            o.exec_argv.push((format!("fd {a}"), argv));
            i = end + 1;
        } else {
            before.push(args[i].clone());
            i += 1;
        }
    }
    let p = parse_args(&before, &spec);
    // First operand is the pattern, the rest are search paths.
    let mut paths: Vec<Word> = p.operands.get(1..).unwrap_or(&[]).to_vec();
    paths.extend(p.values(&["--search-path", "--base-directory"]).cloned());
    if paths.is_empty() {
        paths.push(Word::literal("."));
    }
    o.reads(&paths);
    o.reads(p.values(&["--ignore-file"]));
    o
}
