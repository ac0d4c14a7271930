//! Compiler drivers (`gcc`, `clang`, `rustc`, …): the files they read and write and
//! the plugins and linkers they run.

use crate::knowledge::{Invocation, Outcome};
use crate::model::Word;

/// Options of C-family compiler drivers (`gcc`, `clang`, …) that take the next
/// argument as their value when it is not attached. Their options are single-dash
/// long names, never letter clusters.
const CC_VALUES: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-L",
    "-l",
    "-x",
    "-U",
    "-u",
    "-B",
    "-MF",
    "-MT",
    "-MQ",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-isysroot",
    "-Xlinker",
    "-Xclang",
    "-Xassembler",
    "-Xpreprocessor",
    "-wrapper",
    "-target",
    "-arch",
    "-T",
    "-z",
    "--sysroot",
    "-e",
    "-F",
];

/// Options of `rustc` that take a value.
const RUSTC_VALUES: &[&str] = &[
    "-o",
    "-L",
    "-l",
    "-C",
    "-Z",
    "-W",
    "-A",
    "-D",
    "-F",
    "--out-dir",
    "--target",
    "--edition",
    "--crate-type",
    "--crate-name",
    "--emit",
    "--cap-lints",
    "--sysroot",
    "--extern",
    "--cfg",
    "--codegen",
    "--print",
    "--explain",
    "--remap-path-prefix",
    "--error-format",
    "--json",
    "--check-cfg",
    "--force-warn",
];

/// The options of javac, tsc and esbuild that take a value: `-d DIR`, `--outDir DIR`,
/// `--outfile=F`, `-cp PATH`, `-p FILE`.
const JS_JAVA_VALUES: &[&str] = &[
    "-d",
    "-cp",
    "-classpath",
    "-p",
    "--project",
    "--outDir",
    "--outFile",
    "-sourcepath",
    "-processorpath",
    "--out-dir",
    "--outdir",
    "--outfile",
];

/// The option at `args[*i]` and its value, among `values` (the options that take one):
/// `-o out` (`*i` moves to the value), `-oout`, `--out-dir=d`, `-Clinker=x`.
fn option_value<'a>(
    args: &'a [Word],
    i: &mut usize,
    values: &[&'a str],
) -> (&'a str, Option<Word>) {
    let w = &args[*i];
    let a = w.value.as_str();
    match values.iter().find(|v| a == **v) {
        Some(n) => {
            *i += 1;
            (*n, args.get(*i).cloned())
        }
        None => match a.split_once('=').filter(|(n, _)| n.starts_with("--")) {
            Some((n, v)) => (
                n,
                Some(Word {
                    value: v.to_owned(),
                    literal: w.literal,
                }),
            ),
            None => match values
                .iter()
                .find(|v| v.len() == 2 && a.starts_with(**v) && a.len() > 2)
            {
                Some(n) => (
                    *n,
                    Some(Word {
                        value: a[n.len()..].to_owned(),
                        literal: w.literal,
                    }),
                ),
                None => (a, None),
            },
        },
    }
}

/// Compilers: the sources they read, where they write (`a.out` and object files land
/// in the working directory), and the options that make them run another program
/// (gcc's `-wrapper`, `-B`, `-fplugin=`, `-specs=`; rustc's `-C linker=`; a compiler
/// plugin is code too).
pub(super) fn compiler(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let rustc = inv.name == "rustc";
    let values: &[&str] = if rustc {
        RUSTC_VALUES
    } else if matches!(inv.name, "javac" | "tsc" | "esbuild") {
        JS_JAVA_VALUES
    } else {
        CC_VALUES
    };
    let args = inv.args;
    if args
        .iter()
        .all(|w| matches!(w.value.as_str(), "--version" | "-v" | "--help" | "-V"))
        && !args.is_empty()
    {
        return o;
    }
    let mut operands = Vec::new();
    let mut outs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let a = w.value.as_str();
        if !a.starts_with('-') || a == "-" {
            operands.push(w.clone());
            i += 1;
            continue;
        }
        let (name, value) = option_value(args, &mut i, values);
        let v = value.as_ref().map_or("", |w| w.value.as_str());
        match name {
            "-o" | "--out-dir" | "--outDir" | "--outfile" | "--outdir" | "--outFile" | "-d" => {
                outs.extend(value.clone());
            }
            "-wrapper" | "-B" => o.exec(inv.name, name, v),
            "-C" | "--codegen" if v.starts_with("linker") || v.starts_with("link-arg") => {
                o.exec(inv.name, "-C", v)
            }
            "--extern" => {
                if let Some((_, path)) = v.split_once('=') {
                    o.reads([&Word {
                        value: path.to_owned(),
                        literal: value.as_ref().is_some_and(|w| w.literal),
                    }]);
                }
            }
            "-Xclang" if v == "-load" || v == "-plugin" => o.exec(inv.name, name, v),
            _ if name.starts_with("-fplugin")
                || name.starts_with("-specs")
                || name.starts_with("--specs")
                || name.starts_with("-fpass-plugin")
                || name.starts_with("-fuse-ld=/") =>
            {
                o.exec(inv.name, name, name)
            }
            _ => {}
        }
        i += 1;
    }
    o.reads(&operands);
    if outs.is_empty() {
        // `a.out`, object files: beneath the working directory.
        o.writes([&Word::literal(".")]);
    } else {
        o.writes(&outs);
    }
    o
}
