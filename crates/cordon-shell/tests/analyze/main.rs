//! Table-driven tests of the shell analyzer: one line per command, asserting what the
//! analysis must find. Grouped by the shell classes of attack in
//! docs/security/threat-model.md, plus ordinary commands that must stay read-only so
//! users are not drowned in prompts.

// The shared assertion helpers report a failed expectation by panicking, as asserts do.
#![allow(clippy::panic)]

use cordon_shell::{
    Analysis, Class, Context, CwdChange, HazardKind, RedirectKind, RepoConfigUse, SimpleCommand,
    analyze,
};

/// One expectation about an analysis.
#[derive(Debug)]
enum E {
    /// Every command is read-only with nothing dynamic, executing or networked, and
    /// there are no hazards and no parse error.
    AllRO,
    /// Some command runs this program (after peeling).
    P(&'static str),
    /// The command running this program has this class.
    C(&'static str, Class),
    /// These paths are read (by some command).
    R(&'static [&'static str]),
    /// These paths are written through arguments.
    W(&'static [&'static str]),
    /// These paths are deleted.
    D(&'static [&'static str]),
    /// No command writes or deletes through arguments.
    NoWD,
    /// Some command reaches this network target.
    Net(&'static str),
    /// Some command reaches the network with no literal target.
    NetUnknown,
    /// Some command has an executing argument `(program, arg)`.
    X(&'static str, &'static str),
    /// Some executing argument of this program is its own purpose.
    Own(&'static str),
    /// No executing arguments anywhere.
    NoX,
    /// Some command has a dynamic flag whose debug form starts with this.
    Dy(&'static str),
    /// No command has any dynamic flag.
    NoDy,
    /// This hazard is reported.
    H(HazardKind),
    /// No hazard is reported.
    NoH,
    /// A parse error is reported.
    PErr,
    /// The command running this program has these wrappers.
    Wr(&'static str, &'static [&'static str]),
    /// The command running this program is reached in this context.
    Ctx(&'static str, Context),
    /// The command running this program runs in this directory ("" = unchanged,
    /// "?" = dynamic).
    Cwd(&'static str, &'static str),
    /// The command running this program uses repository configuration so.
    Repo(&'static str, RepoConfigUse),
    /// Some command gains privilege.
    Priv,
    /// Some redirection of this kind targets this word.
    Rd(RedirectKind, &'static str),
    /// Number of commands found.
    N(usize),
    /// Some command exports/assigns this influential variable.
    Env(&'static str),
    /// The command running this program has these arguments.
    Args(&'static str, &'static [&'static str]),
    /// These paths are mentioned inside code the analysis does not follow.
    M(&'static [&'static str]),
    /// No command mentions any path.
    NoM,
    /// This hazard is not reported.
    NoHk(HazardKind),
    /// Some command running this program is reached as shell code (an option's value,
    /// a `bash -c` string).
    Sh(&'static str),
}

use E::*;

fn by_program<'a>(a: &'a Analysis, p: &str) -> Vec<&'a SimpleCommand> {
    a.commands
        .iter()
        .filter(|c| c.program.as_ref().is_some_and(|w| w.value == p))
        .collect()
}

fn one<'a>(a: &'a Analysis, p: &str, text: &str) -> &'a SimpleCommand {
    by_program(a, p)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{text:?}: no command runs {p}: {a:#?}"))
}

fn values(ws: impl Iterator<Item = String>) -> Vec<String> {
    ws.collect()
}

fn check(text: &str, expects: &[E]) {
    let a = analyze(text);
    for e in expects {
        let ok = match e {
            AllRO => {
                a.parse_error.is_none()
                    && a.hazards.is_empty()
                    && !a.commands.is_empty()
                    && a.commands.iter().all(|c| {
                        c.effects.class == Class::ReadOnly
                            && c.dynamic.is_empty()
                            && c.effects.executes.is_empty()
                            && c.effects.network.is_empty()
                            && !c.effects.network_unknown_target
                            && c.effects.writes.is_empty()
                            && c.effects.deletes.is_empty()
                    })
            }
            P(p) => !by_program(&a, p).is_empty(),
            C(p, class) => one(&a, p, text).effects.class == *class,
            R(paths) => {
                let all = values(
                    a.commands
                        .iter()
                        .flat_map(|c| c.effects.reads.iter().map(|w| w.value.clone())),
                );
                paths.iter().all(|p| all.iter().any(|x| x == p))
            }
            W(paths) => {
                let all = values(
                    a.commands
                        .iter()
                        .flat_map(|c| c.effects.writes.iter().map(|w| w.value.clone())),
                );
                paths.iter().all(|p| all.iter().any(|x| x == p))
            }
            D(paths) => {
                let all = values(
                    a.commands
                        .iter()
                        .flat_map(|c| c.effects.deletes.iter().map(|w| w.value.clone())),
                );
                paths.iter().all(|p| all.iter().any(|x| x == p))
            }
            NoWD => a
                .commands
                .iter()
                .all(|c| c.effects.writes.is_empty() && c.effects.deletes.is_empty()),
            Net(t) => a
                .commands
                .iter()
                .any(|c| c.effects.network.iter().any(|n| n.target == *t)),
            NetUnknown => a.commands.iter().any(|c| c.effects.network_unknown_target),
            X(p, arg) => a.commands.iter().any(|c| {
                c.effects
                    .executes
                    .iter()
                    .any(|x| x.program == *p && x.arg == *arg)
            }),
            Own(p) => a.commands.iter().any(|c| {
                c.effects
                    .executes
                    .iter()
                    .any(|x| x.program == *p && x.own_purpose)
            }),
            NoX => a.commands.iter().all(|c| c.effects.executes.is_empty()),
            Dy(tag) => a
                .commands
                .iter()
                .any(|c| c.dynamic.iter().any(|d| format!("{d:?}").starts_with(tag))),
            NoDy => a.commands.iter().all(|c| c.dynamic.is_empty()),
            H(k) => a.hazards.iter().any(|h| h.kind == *k),
            NoH => a.hazards.is_empty(),
            PErr => a.parse_error.is_some(),
            Wr(p, ws) => {
                one(&a, p, text).wrappers == ws.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            }
            Ctx(p, ctx) => by_program(&a, p).iter().any(|c| c.context == *ctx),
            Cwd(p, cwd) => {
                let want = match *cwd {
                    "" => CwdChange::Unchanged,
                    "?" => CwdChange::Dynamic,
                    d => CwdChange::Relative(d.to_string()),
                };
                one(&a, p, text).cwd == want
            }
            Repo(p, r) => one(&a, p, text).effects.runs_repo_config == *r,
            Priv => a.commands.iter().any(|c| c.effects.privilege.is_some()),
            Rd(kind, target) => a.commands.iter().any(|c| {
                c.redirects
                    .iter()
                    .any(|r| r.kind == *kind && r.target.value == *target)
            }),
            N(n) => a.commands.len() == *n,
            Env(name) => a
                .commands
                .iter()
                .any(|c| c.effects.influences_env.iter().any(|x| x == name)),
            M(paths) => {
                let all = values(
                    a.commands
                        .iter()
                        .flat_map(|c| c.effects.mentions.iter().map(|w| w.value.clone())),
                );
                paths.iter().all(|p| all.iter().any(|x| x == p))
            }
            NoM => a.commands.iter().all(|c| c.effects.mentions.is_empty()),
            NoHk(k) => !a.hazards.iter().any(|h| h.kind == *k),
            Sh(p) => by_program(&a, p)
                .iter()
                .any(|c| c.context == Context::ShellString),
            Args(p, args) => {
                one(&a, p, text)
                    .args
                    .iter()
                    .map(|w| w.value.as_str())
                    .collect::<Vec<_>>()
                    == args.to_vec()
            }
        };
        assert!(ok, "{text:?}: expectation {e:?} failed; analysis: {a:#?}");
    }
}

macro_rules! t {
    ($name:ident, $text:expr, [$($e:expr),* $(,)?]) => {
        #[test]
        fn $name() {
            check($text, &[$($e),*]);
        }
    };
}

mod arguments;
mod decode;
mod network;
mod ordinary;
mod parser;
mod sources;
mod structure;
mod values;
