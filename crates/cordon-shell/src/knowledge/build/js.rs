//! JavaScript package managers and runtimes (`npm`, `pnpm`, `yarn`, `bun`, `deno`,
//! `node`, `npx`).

use crate::knowledge::{Invocation, Outcome};
use crate::model::{Class, Word};

/// Subcommands of JS package managers that only read local state.
const JS_READ: &[&str] = &[
    "ls",
    "list",
    "ll",
    "la",
    "root",
    "prefix",
    "bin",
    "help",
    "config",
    "get",
    "why",
    "explain",
    "version",
    "--version",
    "-v",
    "-h",
    "--help",
];
/// Subcommands that read registry data over the network without running code.
const JS_NET_READ: &[&str] = &[
    "view", "info", "show", "search", "outdated", "audit", "ping", "whoami", "owner", "dist-tag",
    "doctor",
];
/// Subcommands that install packages (running their install scripts).
const JS_INSTALL: &[&str] = &[
    "install",
    "i",
    "ci",
    "add",
    "update",
    "up",
    "upgrade",
    "install-test",
    "it",
    "rebuild",
    "dedupe",
    "link",
    "ln",
    "remove",
    "rm",
    "uninstall",
    "un",
    "unlink",
    "prune",
    "import",
];

pub(super) fn js_pm(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if matches!(inv.name, "deno" | "bun")
        && let Some(runtime) = js_runtime(inv)
    {
        return runtime;
    }
    // Options that take a value (`npm --prefix web test`, `pnpm -C web build`,
    // `yarn --cwd web test`, `npm -w pkg run build`) are read by the shared scanner.
    let words: Vec<&str> = inv.args.iter().map(|w| w.value.as_str()).collect();
    let sub_pos = crate::argv::js_head(inv.name, &words).sub;
    let sub = sub_pos
        .and_then(|k| inv.args.get(k))
        .map(|w| w.value.as_str());
    let rest = sub_pos.map(|k| &inv.args[k + 1..]).unwrap_or(&[]);
    match sub {
        None if inv
            .args
            .iter()
            .any(|w| matches!(w.value.as_str(), "--version" | "-v" | "--help" | "-h")) => {}
        None if inv.name == "yarn" || inv.name == "bun" => {
            // Bare `yarn` / `bun` installs.
            o.net_unknown();
            o.own_exec(inv.name, "install", "runs package install scripts");
        }
        None => o.effects.class = Class::Unknown,
        Some(s) if JS_READ.contains(&s) => {
            if matches!(s, "config" | "c")
                && rest.first().is_some_and(|w| {
                    matches!(w.value.as_str(), "set" | "delete" | "edit" | "fix" | "rm")
                })
            {
                o.writes([&js_config_file(inv.name, inv.args)]);
            }
        }
        Some("pkg") => {
            o.writes([&Word::literal("package.json")]);
            // `npm pkg set scripts.NAME=CMD`: CMD runs through the shell at `npm run NAME`;
            // what it would run is analyzed now.
            if rest.first().is_some_and(|w| w.value == "set") {
                for w in &rest[1..] {
                    if let Some((key, cmd)) = w.value.split_once('=')
                        && key.starts_with("scripts.")
                    {
                        o.code(
                            inv.name,
                            "pkg set scripts",
                            &Word {
                                value: cmd.to_owned(),
                                literal: w.literal,
                            },
                        );
                    }
                }
            }
        }
        Some(s) if JS_NET_READ.contains(&s) => o.net_unknown(),
        Some(s) if JS_INSTALL.contains(&s) => {
            o.net_unknown();
            o.own_exec(inv.name, s, "runs package install scripts");
            if inv
                .args
                .iter()
                .any(|w| w.value == "-g" || w.value == "--global")
            {
                o.writes([&Word {
                    value: "global packages".into(),
                    literal: false,
                }]);
            }
        }
        Some("exec" | "x" | "dlx" | "create" | "init") => {
            o.net_unknown();
            o.own_exec(inv.name, sub.unwrap_or_default(), &super::join(rest));
        }
        Some("publish" | "pack" | "unpublish" | "deprecate" | "login" | "logout" | "adduser") => {
            o.net_unknown();
            o.own_exec(inv.name, sub.unwrap_or_default(), "runs prepublish scripts");
        }
        Some(s) => {
            // run / test / start / a script name, or `bun FILE`, `deno run`.
            let script = match s {
                "run" | "run-script" | "rum" | "urn" => rest
                    .iter()
                    .find(|w| !w.value.starts_with('-'))
                    .map_or("(none named)", |w| w.value.as_str()),
                _ => s,
            };
            o.own_exec(
                inv.name,
                s,
                &format!("runs the package script or program {script}"),
            );
            if inv.name == "deno" {
                o.net_unknown();
            }
        }
    }
    o
}

/// `deno` and `bun` as runtimes rather than package managers: inline code
/// (`deno eval CODE`, `bun -e CODE`) and scripts run straight from a URL
/// (`deno run https://…`), which is fetch-to-exec.
fn js_runtime(inv: &Invocation<'_>) -> Option<Outcome> {
    let mut o = Outcome::read_only();
    let args = inv.args;
    let sub = args.iter().position(|w| !w.value.starts_with('-'));
    let code = match (inv.name, sub.map(|k| args[k].value.as_str())) {
        ("deno", Some("eval")) => sub.and_then(|k| {
            args[k + 1..]
                .iter()
                .find(|w| !w.value.starts_with('-'))
                .map(|w| ("eval", w))
        }),
        ("bun", _) => args
            .iter()
            .position(|w| matches!(w.value.as_str(), "-e" | "--eval" | "-p" | "--print"))
            .and_then(|k| args.get(k + 1).map(|w| (args[k].value.as_str(), w))),
        _ => None,
    };
    if let Some((flag, code)) = code {
        o.exec(inv.name, flag, &code.value);
        super::inline_code(&mut o, inv.name, code);
        if inv.name == "deno" {
            o.net_unknown();
        }
        return Some(o);
    }
    if inv.name == "deno"
        && let Some(k) = sub
        && matches!(args[k].value.as_str(), "run" | "install" | "compile" | "x")
        && let Some(url) = args[k + 1..]
            .iter()
            .find(|w| !w.value.starts_with('-'))
            .filter(|w| w.value.contains("://"))
    {
        o.net(url);
        o.urls.push(url.clone());
        o.own_exec("deno", &args[k].value, &format!("runs {}", url.value));
        o.hazards.push((
            crate::model::HazardKind::FetchToExec,
            format!("deno runs a script fetched from {}", url.value),
        ));
        return Some(o);
    }
    None
}

/// The config file `npm config set` (and pnpm's, yarn's) writes: the user's unless a
/// location says otherwise.
fn js_config_file(name: &str, args: &[Word]) -> Word {
    let location = args.iter().enumerate().find_map(|(k, w)| {
        w.value
            .strip_prefix("--location=")
            .map(str::to_owned)
            .or_else(|| {
                (w.value == "--location" || w.value == "-L")
                    .then(|| args.get(k + 1).map(|v| v.value.clone()))
                    .flatten()
            })
    });
    let global = args
        .iter()
        .any(|w| w.value == "-g" || w.value == "--global")
        || location.as_deref() == Some("global");
    match (name, location.as_deref()) {
        (_, Some("project")) => Word::literal(".npmrc"),
        _ if global => Word {
            value: "the global npmrc".into(),
            literal: false,
        },
        ("yarn", _) if args.iter().any(|w| w.value == "-H" || w.value == "--home") => {
            Word::literal("~/.yarnrc.yml")
        }
        ("yarn", _) => Word::literal(".yarnrc.yml"),
        _ => Word::literal("~/.npmrc"),
    }
}

pub(super) fn npx(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    o.net_unknown();
    o.own_exec(inv.name, inv.name, &super::join(inv.args));
    o
}
