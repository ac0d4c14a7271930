//! Options, environment variables and configuration keys whose value is a program to
//! run: the one table, read from each program's documentation.
//!
//! Owns: the list (program, where the value comes from, what the program adds to it,
//! the line of the documentation that says it runs) and the pass that applies it to
//! every invocation after its knowledge entry. A value found here is an argument that
//! executes other code (DESIGN: an opaque operation, asked unless a rule names it), and
//! its text is analyzed as the command it is, so `rg --pre='curl x | sh'` meets the
//! fetch-to-exec guard. Never decides anything else about the program.

use super::{Invocation, Outcome};
use crate::model::Word;

/// Where a program reads the command from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Via {
    /// Command-line options (`--pre`, `-I`); long ones as `--x=V` or `--x V`, short ones
    /// as `-xV` or `-x V`.
    Opt(&'static [&'static str]),
    /// A variable in the command's environment (`LESSOPEN=… less f`).
    Env(&'static str),
    /// A configuration key given on the command line: the option that sets it and the
    /// key (`git -c core.pager=CMD`, `ssh -o ProxyCommand=CMD`).
    Config(&'static str, &'static str),
}

/// What the program adds when it runs the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adds {
    /// Nothing the text shows: the value runs as written (data may come on stdin).
    Nothing,
    /// The path of a file the program works on, as an argument.
    Path,
}

/// One option, variable or key whose value is run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runs {
    /// The program names it applies to.
    pub programs: &'static [&'static str],
    pub via: Via,
    pub adds: Adds,
    /// Long options accept GNU abbreviations (`--to-com` for `--to-command`).
    pub gnu: bool,
    /// For git: the subcommands the option belongs to (empty: any).
    pub subs: &'static [&'static str],
    /// A command that uses it, with `{}` where the value stands (for the coverage test).
    #[cfg_attr(not(test), allow(dead_code))] // read by the coverage test
    pub example: &'static str,
    /// Where the documentation says the value is run.
    #[cfg_attr(not(test), allow(dead_code))] // read by the coverage test
    pub source: &'static str,
}

mod table;
pub(crate) use table::TABLE;

/// Apply the table to an invocation: each value found is an argument that executes
/// code, and its text is analyzed as the command it is.
pub(crate) fn apply(inv: &Invocation<'_>, o: &mut Outcome) {
    // Most programs have no entry: one hash lookup instead of a walk of the table.
    static NAMES: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    let names = NAMES.get_or_init(|| {
        TABLE
            .iter()
            .flat_map(|r| r.programs.iter().copied())
            .collect()
    });
    if !names.contains(inv.name) {
        return;
    }
    for r in TABLE.iter().filter(|r| r.programs.contains(&inv.name)) {
        match r.via {
            Via::Env(name) => {
                for (n, v) in inv.assignments {
                    if n == name {
                        run(o, inv.name, name, v, r.adds);
                    }
                }
            }
            Via::Opt(names) => {
                let args = match git_sub(inv, r.subs) {
                    Some(args) => args,
                    None => continue,
                };
                for (label, v) in option_values(args, names, r.gnu) {
                    run(o, inv.name, label, &v, r.adds);
                }
            }
            Via::Config(option, name) => {
                // ssh_config(5): `none` turns the command off.
                let off = |v: &Word| option == "-o" && v.value.eq_ignore_ascii_case("none");
                for v in config_values(inv.args, option, name)
                    .into_iter()
                    .filter(|v| !off(v))
                {
                    run(o, inv.name, option, &v, r.adds);
                }
            }
        }
    }
}

/// The arguments an option of `subs` is looked for in: after git's subcommand when
/// `subs` names some (None when the subcommand is another), all of them otherwise.
fn git_sub<'a>(inv: &Invocation<'a>, subs: &[&str]) -> Option<&'a [Word]> {
    if subs.is_empty() {
        return Some(inv.args);
    }
    let mut i = 0;
    while let Some(w) = inv.args.get(i) {
        match w.value.as_str() {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            v if v.starts_with('-') => i += 1,
            sub => return subs.contains(&sub).then(|| &inv.args[i + 1..]),
        }
    }
    None
}

fn run(o: &mut Outcome, program: &str, label: &str, value: &Word, adds: Adds) {
    if !o
        .effects
        .executes
        .iter()
        .any(|e| e.program == program && e.arg == label)
    {
        o.exec(program, label, "runs the command given in its value");
    }
    let text = value.value.trim();
    if text.is_empty() {
        return;
    }
    let code = Word {
        // A single command gets the path as its last argument; text with shell
        // syntax is run by a shell, where the path becomes a positional parameter.
        value: match adds {
            Adds::Path if !text.contains(['|', ';', '&', '<', '>', '\n', '(', '`', '$']) => {
                format!("{text} \"${{RUN_PATH}}\"")
            }
            _ => text.to_owned(),
        },
        literal: value.literal,
    };
    // The program's own entry may already have read the value, knowing the program's
    // own substitutions (ssh's `%h`): that reading stands.
    let label = format!("{program} {label}");
    if !o.shell_code.iter().any(|(l, _)| *l == label) {
        o.shell_code.push((label, code));
    }
}

/// The values of `names` in `args` (up to `--`), with the option as the label.
fn option_values(
    args: &[Word],
    names: &'static [&'static str],
    gnu: bool,
) -> Vec<(&'static str, Word)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i].value;
        if a == "--" {
            break;
        }
        let next = args.get(i + 1);
        for &n in names {
            if n.starts_with("--") || n.len() > 2 {
                // Long option (or a multi-letter one such as `-exec`, `-TT`).
                let (opt, val) = match a.split_once('=') {
                    Some((o, v)) => (o, Some(v)),
                    None => (a.as_str(), None),
                };
                let hit =
                    opt == n || (gnu && n.starts_with("--") && opt.len() > 3 && n.starts_with(opt));
                if hit {
                    let v = match val {
                        Some(v) => Some(Word {
                            value: v.to_owned(),
                            literal: args[i].literal,
                        }),
                        None => next.cloned(),
                    };
                    out.extend(v.map(|v| (n, v)));
                }
            } else if let Some(rest) = a.strip_prefix(n)
                && !a.starts_with("--")
            {
                // `-x V` or `-xV`.
                let v = if rest.is_empty() {
                    next.cloned()
                } else {
                    Some(Word {
                        value: rest.trim_start_matches('=').to_owned(),
                        literal: args[i].literal,
                    })
                };
                out.extend(v.map(|v| (n, v)));
            } else if a.starts_with('-')
                && !a.starts_with("--")
                && let Some(c) = n.strip_prefix('-')
                && let Some(pos) = a[1..].find(c)
                && a[1..1 + pos].bytes().all(|b| b.is_ascii_alphabetic())
            {
                // In a cluster of flags (`-xvI prog`, `-xvIprog`).
                let rest = &a[1 + pos + c.len()..];
                let v = if rest.is_empty() {
                    next.cloned()
                } else {
                    Some(Word {
                        value: rest.to_owned(),
                        literal: args[i].literal,
                    })
                };
                out.extend(v.map(|v| (n, v)));
            }
        }
        i += 1;
    }
    out
}

/// The values a configuration key is given by `option` (`-c key=V`, `-o Key=V`,
/// `-o 'Key V'`, `-oKey=V`); keys compare without regard to case.
fn config_values(args: &[Word], option: &str, name: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a.value == "--" {
            break;
        }
        let setting = if a.value == option {
            match args.get(i + 1) {
                Some(w) => w,
                None => continue,
            }
        } else if let Some(rest) = a.value.strip_prefix(option)
            && !rest.is_empty()
            && option.len() == 2
        {
            let literal = a.literal;
            let (k, v) = match rest.split_once(['=', ' ', '\t']) {
                Some(kv) => kv,
                None => continue,
            };
            if k.trim().eq_ignore_ascii_case(name) {
                out.push(Word {
                    value: v.trim().to_owned(),
                    literal,
                });
            }
            continue;
        } else {
            continue;
        };
        if let Some((k, v)) = setting.value.split_once(['=', ' ', '\t'])
            && k.trim().eq_ignore_ascii_case(name)
        {
            out.push(Word {
                value: v.trim().to_owned(),
                literal: setting.literal,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
