//! The files and directories build and test runners are told to run from: `make -C DIR
//! -f FILE`, `just -f FILE -d DIR`, `cargo --manifest-path FILE`, `pytest -c FILE`.
//! Options are read as the runner's own parser reads them (clustered short options
//! whose last letter takes the value attached or in the next word; long options by any
//! unambiguous prefix, `=VALUE` or the next word), so a second spelling of the same
//! option names the same file.

use super::{ExecutedFile, file, tree, under, upward};

/// Whether an option takes a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    No,
    /// Attached, or the next word.
    Needs,
    /// Attached only (`-j4`, `--jobs=4`).
    Maybe,
}

/// A runner's options: short letters and long names that take a value (every other
/// short letter is a flag).
struct Spec {
    short: &'static [(char, Arg)],
    long: &'static [(&'static str, Arg)],
}

/// `name` among `spec.long`: itself, or the only name it is a prefix of.
fn long_name(name: &str, spec: &Spec) -> Option<(&'static str, Arg)> {
    if let Some(&(n, a)) = spec.long.iter().find(|(n, _)| *n == name) {
        return Some((n, a));
    }
    let mut found = spec.long.iter().filter(|(n, _)| n.starts_with(name));
    match (found.next(), found.next()) {
        (Some(&(n, a)), None) if !name.is_empty() => Some((n, a)),
        _ => None,
    }
}

/// Options with their values, as `("-C", Some("dir"))` / `("--directory", …)`.
fn getopt<'a>(args: &[&'a str], spec: &Spec) -> Vec<(String, Option<&'a str>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i).copied() {
        i += 1;
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some((n, arg)) = long_name(name, spec) else {
                continue;
            };
            let value = match (arg, attached) {
                (_, Some(v)) => Some(v),
                (Arg::Needs, None) => {
                    i += 1;
                    args.get(i - 1).copied()
                }
                _ => None,
            };
            out.push((format!("--{n}"), value));
            continue;
        }
        let Some(cluster) = a.strip_prefix('-').filter(|c| !c.is_empty()) else {
            continue;
        };
        for (k, c) in cluster.char_indices() {
            let arg = spec
                .short
                .iter()
                .find(|(s, _)| *s == c)
                .map_or(Arg::No, |(_, a)| *a);
            let rest = &cluster[k + c.len_utf8()..];
            match arg {
                Arg::No => out.push((format!("-{c}"), None)),
                Arg::Maybe => {
                    out.push((format!("-{c}"), Some(rest).filter(|r| !r.is_empty())));
                    break;
                }
                Arg::Needs if rest.is_empty() => {
                    out.push((format!("-{c}"), args.get(i).copied()));
                    i += 1;
                    break;
                }
                Arg::Needs => {
                    out.push((format!("-{c}"), Some(rest)));
                    break;
                }
            }
        }
    }
    out
}

/// `base` joined with `p` (`p` itself when absolute).
fn join(base: &str, p: &str) -> String {
    if p.starts_with('/') || base.is_empty() {
        p.to_owned()
    } else {
        format!("{base}{p}")
    }
}

/// GNU make's options (4.4).
const MAKE: Spec = Spec {
    short: &[
        ('C', Arg::Needs),
        ('f', Arg::Needs),
        ('I', Arg::Needs),
        ('o', Arg::Needs),
        ('W', Arg::Needs),
        ('E', Arg::Needs),
        ('j', Arg::Maybe),
        ('l', Arg::Maybe),
        ('O', Arg::Maybe),
    ],
    long: &[
        ("always-make", Arg::No),
        ("assume-new", Arg::Needs),
        ("assume-old", Arg::Needs),
        ("check-symlink-times", Arg::No),
        ("debug", Arg::Maybe),
        ("directory", Arg::Needs),
        ("dry-run", Arg::No),
        ("environment-overrides", Arg::No),
        ("eval", Arg::Needs),
        ("file", Arg::Needs),
        ("help", Arg::No),
        ("ignore-errors", Arg::No),
        ("include-dir", Arg::Needs),
        ("jobs", Arg::Maybe),
        ("jobserver-auth", Arg::Needs),
        ("jobserver-fds", Arg::Needs),
        ("jobserver-style", Arg::Needs),
        ("just-print", Arg::No),
        ("keep-going", Arg::No),
        ("load-average", Arg::Maybe),
        ("makefile", Arg::Needs),
        ("max-load", Arg::Maybe),
        ("new-file", Arg::Needs),
        ("no-builtin-rules", Arg::No),
        ("no-builtin-variables", Arg::No),
        ("no-keep-going", Arg::No),
        ("no-print-directory", Arg::No),
        ("no-silent", Arg::No),
        ("old-file", Arg::Needs),
        ("output-sync", Arg::Maybe),
        ("print-data-base", Arg::No),
        ("print-directory", Arg::No),
        ("question", Arg::No),
        ("quiet", Arg::No),
        ("recon", Arg::No),
        ("shuffle", Arg::Maybe),
        ("silent", Arg::No),
        ("stop", Arg::No),
        ("temp-stdin", Arg::Needs),
        ("touch", Arg::No),
        ("trace", Arg::No),
        ("version", Arg::No),
        ("warn-undefined-variables", Arg::No),
        ("what-if", Arg::Needs),
    ],
};

/// A GNU make long option as make resolves it (`--ev` is `--eval`), with its dashes.
pub(crate) fn make_long(opt: &str) -> Option<String> {
    let name = opt.strip_prefix("--")?;
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    long_name(name, &MAKE).map(|(n, _)| format!("--{n}"))
}

/// `make`: the makefiles it reads (named by `-f`, from `MAKEFILES`, or the default
/// names) in the directory `-C` changes to (`-C a -C b` is `a/b`).
pub(super) fn make(args: &[&str], makefiles: Option<&str>, out: &mut Vec<ExecutedFile>) {
    let mut dir = String::new();
    let mut files = Vec::new();
    for (name, value) in getopt(args, &MAKE) {
        let Some(v) = value else { continue };
        match name.as_str() {
            "-C" | "--directory" => dir = under(Some(&join(&dir, v))),
            "-f" | "--file" | "--makefile" => files.push(v),
            _ => {}
        }
    }
    // `MAKEFILES`: read before the makefiles, in the directory make changed to.
    for f in makefiles.unwrap_or_default().split_whitespace() {
        out.push(file(join(&dir, f), "a makefile named by MAKEFILES"));
    }
    if files.is_empty() {
        for f in ["GNUmakefile", "makefile", "Makefile"] {
            out.push(file(format!("{dir}{f}"), "the rules make runs"));
        }
    }
    for f in files {
        out.push(file(join(&dir, f), "the makefile named by -f"));
    }
    // Included makefiles: the conventional names; an `include` of any other name is
    // read from the Makefile, which is itself covered above.
    out.push(file(
        format!("{dir}**/*.mk"),
        "makefiles included by the rules",
    ));
    out.push(tree(
        &dir,
        "make's recipes call scripts of the working tree",
    ));
}

/// just's options that name a file or a directory (clap: clusters, `=`, no prefixes
/// needed, taken anyway: wider is safe).
const JUST: Spec = Spec {
    short: &[('f', Arg::Needs), ('d', Arg::Needs)],
    long: &[
        ("justfile", Arg::Needs),
        ("working-directory", Arg::Needs),
        ("set", Arg::Needs),
        ("shell", Arg::Needs),
        ("shell-arg", Arg::Needs),
        ("dotenv-filename", Arg::Needs),
        ("dotenv-path", Arg::Needs),
        ("chooser", Arg::Needs),
        ("color", Arg::Needs),
        ("command-color", Arg::Needs),
        ("dump-format", Arg::Needs),
        ("list-heading", Arg::Needs),
        ("list-prefix", Arg::Needs),
        ("show", Arg::Needs),
        ("completions", Arg::Needs),
        ("command", Arg::Needs),
    ],
};

/// `just`: the justfile (`-f`, else the usual names in `-d DIR`, else here) and the
/// directory its recipes run in.
pub(super) fn just(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut dir = String::new();
    let mut files = Vec::new();
    for (name, value) in getopt(args, &JUST) {
        let Some(v) = value else { continue };
        match name.as_str() {
            "-d" | "--working-directory" => dir = under(Some(v)),
            "-f" | "--justfile" => files.push(v.to_owned()),
            _ => {}
        }
    }
    if files.is_empty() {
        // just looks for its justfile here, then in each parent directory.
        for f in ["justfile", "Justfile", ".justfile"] {
            out.push(file(format!("{dir}{f}"), "the build just runs"));
            out.push(upward(&dir, f, "the build just runs, found up the tree"));
        }
    }
    for f in files {
        // A justfile named by `-f` runs its recipes beside it, unless `-d` says where.
        if dir.is_empty()
            && let Some((d, _)) = f.rsplit_once('/')
        {
            out.push(tree(d, "just's recipes call scripts of the working tree"));
        }
        out.push(file(f, "the justfile named by -f"));
    }
    out.push(tree(
        &dir,
        "just's recipes call scripts and programs of the working tree",
    ));
}

/// pytest's options that name a configuration file or a directory it takes plugins
/// and `conftest.py` files from.
const PYTEST: Spec = Spec {
    short: &[
        ('c', Arg::Needs),
        ('k', Arg::Needs),
        ('m', Arg::Needs),
        ('p', Arg::Needs),
        ('o', Arg::Needs),
    ],
    long: &[
        ("config-file", Arg::Needs),
        ("confcutdir", Arg::Needs),
        ("rootdir", Arg::Needs),
        ("junitxml", Arg::Needs),
        ("junit-xml", Arg::Needs),
        ("basetemp", Arg::Needs),
        ("override-ini", Arg::Needs),
        ("import-mode", Arg::Needs),
        ("ignore", Arg::Needs),
        ("ignore-glob", Arg::Needs),
        ("deselect", Arg::Needs),
    ],
};

/// `pytest -c FILE` / `--config-file`: that configuration; `--rootdir`/`--confcutdir
/// DIR`: the `conftest.py` files and modules there.
pub(super) fn pytest_files(args: &[&str], out: &mut Vec<ExecutedFile>) {
    for (name, value) in getopt(args, &PYTEST) {
        let Some(v) = value else { continue };
        match name.as_str() {
            "-c" | "--config-file" => {
                out.push(file(v, "pytest's configuration (plugins, options)"));
            }
            "--rootdir" | "--confcutdir" => {
                let d = under(Some(v));
                out.push(file(
                    format!("{d}**/conftest.py"),
                    "pytest's plugins and fixtures",
                ));
                out.push(tree(&d, "pytest imports the modules it is pointed at"));
            }
            _ => {}
        }
    }
}

/// `cargo … --manifest-path FILE` (or `=FILE`, or a prefix such as `--manifest-pa`):
/// the manifest, whose directory is the package cargo builds.
pub(super) fn cargo_manifest<'a>(args: &[&'a str]) -> Option<&'a str> {
    let mut found = None;
    let mut i = 0;
    while let Some(a) = args.get(i).copied() {
        i += 1;
        if a == "--" {
            break;
        }
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (a, None),
        };
        if name.starts_with("--ma") && "--manifest-path".starts_with(name) {
            found = attached.or_else(|| args.get(i).copied());
        }
    }
    found
}
