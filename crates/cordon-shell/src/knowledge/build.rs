//! Build tools, package managers and test runners. Running the project's own code
//! (build scripts, package scripts, tests) is their purpose, so those executions are
//! marked `own_purpose`; options that run an extra program (`make --eval`,
//! `go test -exec`, `cargo --config …wrapper`) are not. Installing reaches the network.

use super::{Entry, Invocation, Opts, Outcome, inline_code, join, parse_args};
use crate::model::{Class, Word};

mod compiler;
mod js;
use compiler::compiler;
use js::{js_pm, npx};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["make", "gmake", "bmake"],
        classify: make,
    },
    Entry {
        names: &["cmake"],
        classify: cmake,
    },
    Entry {
        names: &[
            "ninja",
            "meson",
            "scons",
            "bazel",
            "bazelisk",
            "buck",
            "buck2",
            "gradle",
            "mvn",
            "ant",
            "sbt",
            "just",
            "rake",
            "task",
            "xmake",
            "waf",
            "tox",
            "nox",
            "pytest",
            "py.test",
            "jest",
            "vitest",
            "mocha",
            "ava",
            "phpunit",
            "rspec",
            "ctest",
            "dotnet",
            "swift-build",
            "mix",
            "stack",
            "cabal",
            "dune",
            "zig",
        ],
        classify: runner,
    },
    Entry {
        names: &["npm", "pnpm", "yarn", "bun", "deno", "corepack"],
        classify: js_pm,
    },
    Entry {
        names: &["npx", "bunx", "pnpx"],
        classify: npx,
    },
    Entry {
        names: &["cargo"],
        classify: cargo,
    },
    Entry {
        names: &["rustup"],
        classify: rustup,
    },
    Entry {
        names: &["go"],
        classify: go,
    },
    Entry {
        names: &[
            "pip", "pip3", "pipx", "uv", "uvx", "poetry", "pipenv", "conda", "mamba", "gem",
            "bundle", "composer",
        ],
        classify: py_pm,
    },
    Entry {
        names: &[
            "gcc", "cc", "c++", "g++", "clang", "clang++", "rustc", "javac", "tsc", "esbuild",
            "ld", "as",
        ],
        classify: compiler,
    },
    Entry {
        names: &[
            "apt", "apt-get", "aptitude", "dnf", "yum", "zypper", "pacman", "apk", "brew", "snap",
            "flatpak", "port", "dpkg", "rpm",
        ],
        classify: system_pm,
    },
];

fn make(inv: &Invocation<'_>) -> Outcome {
    // Long options by their full names, as make resolves a prefix (`--ev` is `--eval`,
    // `--fil` is `--file`).
    let args: Vec<Word> = inv
        .args
        .iter()
        .map(|w| match crate::executes::runners::make_long(&w.value) {
            Some(full) if w.literal => Word::literal(match w.value.split_once('=') {
                Some((_, v)) => format!("{full}={v}"),
                None => full,
            }),
            _ => w.clone(),
        })
        .collect();
    let p = parse_args(
        &args,
        &Opts::gnu(
            "CfIjloWE",
            &[
                "directory",
                "file",
                "makefile",
                "include-dir",
                "jobs",
                "load-average",
                "old-file",
                "what-if",
                "assume-new",
                "new-file",
                "assume-old",
                "eval",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    if p.has(&["-v", "--version", "-h", "--help"]) {
        return o;
    }
    for v in p.values(&["-E", "--eval"]) {
        o.exec(inv.name, "--eval", &v.value);
    }
    let makefile: Vec<Word> = p.values(&["-f", "--file", "--makefile"]).cloned().collect();
    o.reads(&makefile);
    let targets: Vec<Word> = p
        .operands
        .iter()
        .filter(|w| !w.value.contains('='))
        .cloned()
        .collect();
    o.own_exec(
        inv.name,
        inv.name,
        &format!(
            "runs the recipes of {}",
            if targets.is_empty() {
                "the default target".to_owned()
            } else {
                super::join(&targets)
            }
        ),
    );
    // Variable overrides such as `SHELL=…` or `CC=…` choose the programs recipes run.
    for w in p.operands.iter().filter(|w| w.value.contains('=')) {
        o.exec(inv.name, "VAR=value", &w.value);
    }
    o
}

fn cmake(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let first = inv.args.first().map(|w| w.value.as_str()).unwrap_or("");
    match first {
        "--version" | "--help" | "-h" => {}
        "-E" => {
            // `cmake -E` runs portable file commands (copy, rm, …): not modelled.
            o.effects.class = Class::Unknown;
        }
        "-P" => {
            let script = inv.args.get(1).map(|w| w.value.as_str()).unwrap_or("");
            o.exec("cmake", "-P", script);
        }
        "--build" | "--install" | "--workflow" => o.own_exec("cmake", first, "builds the project"),
        _ => {
            o.own_exec(
                "cmake",
                "configure",
                "configures the project (runs checks and compilers)",
            );
            let p = parse_args(inv.args, &Opts::gnu("SBGTACDUW", &[]));
            o.writes(p.values(&["-B"]));
        }
    }
    o
}

fn runner(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if inv
        .args
        .iter()
        .any(|w| matches!(w.value.as_str(), "--version" | "-V" | "--help"))
        && inv.args.len() == 1
    {
        return o;
    }
    o.own_exec(inv.name, inv.name, &super::join(inv.args));
    o
}

fn cargo(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let words: Vec<&str> = inv.args.iter().map(|w| w.value.as_str()).collect();
    let head = crate::argv::cargo_head(&words);
    for v in &head.config {
        o.exec("cargo", "--config", v);
    }
    let i = head.at;
    let sub = inv.args.get(i).map(|w| w.value.as_str());
    let rest = inv.args.get(i + 1..).unwrap_or(&[]);
    match sub {
        None
        | Some(
            "--version" | "-V" | "--help" | "-h" | "help" | "version" | "--list" | "locate-project"
            | "pkgid" | "read-manifest" | "verify-project" | "metadata" | "tree" | "search"
            | "info",
        ) => {
            if matches!(sub, Some("search" | "info")) {
                o.net_unknown();
            }
        }
        Some(
            "build" | "b" | "check" | "c" | "test" | "t" | "run" | "r" | "bench" | "doc" | "d"
            | "clippy" | "rustc" | "rustdoc" | "fix" | "miri" | "nextest" | "llvm-cov"
            | "tarpaulin" | "expand",
        ) => {
            o.own_exec(
                "cargo",
                sub.unwrap_or_default(),
                "compiles the package and runs its build scripts",
            );
            if sub == Some("fix") || rest.iter().any(|w| w.value == "--fix") {
                // Edits the package's sources, beneath the working directory.
                o.writes([&Word::literal(".")]);
            }
        }
        Some("fmt") => {
            // Rewrites the package's sources, beneath the working directory.
            if !rest.iter().any(|w| w.value == "--check") {
                o.writes([&Word::literal(".")]);
            }
        }
        Some("clean") => o.deletes([&Word::literal("target")]),
        Some("fetch" | "update" | "generate-lockfile") => {
            o.net_unknown();
            o.writes([&Word::literal("Cargo.lock")]);
        }
        Some("add" | "remove" | "rm") => {
            o.writes([&Word::literal("Cargo.toml")]);
            if sub == Some("add") {
                o.net_unknown();
            }
        }
        Some("new" | "init") => {
            let dir = rest
                .iter()
                .find(|w| !w.value.starts_with('-'))
                .cloned()
                .unwrap_or_else(|| Word::literal("."));
            o.writes([&dir]);
        }
        Some("install" | "publish" | "login" | "owner" | "yank" | "package" | "vendor") => {
            o.net_unknown();
            o.own_exec(
                "cargo",
                sub.unwrap_or_default(),
                "builds and installs or uploads the package",
            );
            if sub == Some("install") {
                o.writes([&Word::literal("~/.cargo/bin")]);
            }
        }
        Some(other) => {
            // `cargo foo` runs the external program `cargo-foo`.
            o.effects.class = Class::Unknown;
            o.exec("cargo", other, "runs an external cargo subcommand");
        }
    }
    o
}

fn rustup(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    match inv.args.first().map(|w| w.value.as_str()) {
        Some("show" | "--version" | "-V" | "which" | "help" | "doc") | None => {}
        Some("run") => o.own_exec("rustup", "run", &super::join(inv.args)),
        Some(_) => {
            o.net_unknown();
            o.writes([&Word::literal("~/.rustup")]);
        }
    }
    o
}

fn go(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let sub = inv.args.first().map(|w| w.value.as_str());
    let rest = inv.args.get(1..).unwrap_or(&[]);
    for (k, w) in rest.iter().enumerate() {
        let v = w.value.as_str();
        // `-exec XPROG` runs the built binary through XPROG; `-toolexec CMD` runs every
        // tool of the build through CMD.
        for opt in ["-exec", "-toolexec", "--exec", "--toolexec"] {
            if v == opt {
                if let Some(prog) = rest.get(k + 1) {
                    o.code("go", opt, prog);
                }
            } else if let Some(val) = v.strip_prefix(opt).and_then(|r| r.strip_prefix('=')) {
                o.code(
                    "go",
                    opt,
                    &Word {
                        value: val.to_owned(),
                        literal: w.literal,
                    },
                );
            }
        }
    }
    match sub {
        None | Some("version" | "env" | "doc" | "help" | "list" | "vet") => {
            if sub == Some("env") && rest.iter().any(|w| w.value == "-w" || w.value == "-u") {
                o.writes([&Word::literal("~/.config/go/env")]);
            }
            if sub == Some("vet") {
                o.own_exec("go", "vet", "runs analyzers");
            }
        }
        Some("run" | "test" | "generate" | "build" | "install") => {
            o.own_exec(
                "go",
                sub.unwrap_or_default(),
                "compiles and runs the package's code",
            );
            if sub == Some("install") {
                o.net_unknown();
            }
        }
        Some("get" | "mod" | "work") => {
            o.net_unknown();
            o.writes([&Word::literal("go.mod")]);
        }
        Some("fmt") => o.writes([&Word::literal(".")]),
        Some("clean") => o.deletes([&Word {
            value: ".".into(),
            literal: false,
        }]),
        Some(_) => o.effects.class = Class::Unknown,
    }
    o
}

fn py_pm(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let ops: Vec<&Word> = inv
        .args
        .iter()
        .filter(|w| !w.value.starts_with('-'))
        .collect();
    let sub = ops.first().map(|w| w.value.as_str());
    let reads_local = |o: &mut Outcome| {
        let p = parse_args(
            inv.args,
            &Opts::gnu("rce", &["requirement", "constraint", "editable"]),
        );
        o.reads(p.values(&["-r", "--requirement", "-c", "--constraint"]));
        for e in p.values(&["-e", "--editable"]) {
            o.exec(inv.name, "-e", &e.value);
        }
    };
    match (inv.name, sub) {
        (_, None)
            if inv
                .args
                .iter()
                .any(|w| matches!(w.value.as_str(), "--version" | "-V" | "--help" | "-h")) => {}
        ("uvx" | "pipx", Some("run")) | ("uvx", _) => {
            o.net_unknown();
            o.own_exec(inv.name, "run", &super::join(inv.args));
        }
        (_, Some("config"))
            if ops
                .get(1)
                .is_some_and(|w| matches!(w.value.as_str(), "set" | "unset" | "edit")) =>
        {
            // `pip config set KEY VALUE` writes pip's configuration, which chooses where
            // packages come from.
            let file = match inv.name {
                "pip" | "pip3" if inv.args.iter().any(|w| w.value == "--global") => {
                    Word::literal("/etc/pip.conf")
                }
                "pip" | "pip3" if inv.args.iter().any(|w| w.value == "--site") => Word {
                    value: "the virtual environment's pip.conf".into(),
                    literal: false,
                },
                "pip" | "pip3" => Word::literal("~/.config/pip/pip.conf"),
                "conda" | "mamba" => Word::literal("~/.condarc"),
                "poetry" => Word::literal("~/.config/pypoetry/config.toml"),
                _ => Word {
                    value: format!("{}'s configuration", inv.name),
                    literal: false,
                },
            };
            o.writes([&file]);
        }
        (
            _,
            Some(
                "list" | "show" | "freeze" | "check" | "help" | "config" | "env" | "info"
                | "outdated" | "search" | "inspect" | "debug" | "cache" | "version",
            ),
        ) => {
            if matches!(sub, Some("outdated" | "search")) {
                o.net_unknown();
            }
        }
        ("uv", Some("pip")) => {
            let s2 = ops.get(1).map(|w| w.value.as_str());
            if matches!(s2, Some("list" | "show" | "freeze" | "check" | "tree")) {
                return o;
            }
            o.net_unknown();
            o.own_exec(inv.name, "pip", "installs packages (runs their build code)");
            reads_local(&mut o);
        }
        (
            _,
            Some(
                "install" | "add" | "sync" | "update" | "upgrade" | "lock" | "download" | "wheel"
                | "build" | "uninstall" | "remove" | "publish" | "inject" | "create" | "new"
                | "init",
            ),
        ) => {
            o.net_unknown();
            o.own_exec(
                inv.name,
                sub.unwrap_or_default(),
                "installs packages (runs their build code)",
            );
            reads_local(&mut o);
            // Literal URL requirements name their host.
            for w in &ops[1..] {
                if w.value.contains("://") {
                    o.net(w);
                }
            }
        }
        (_, Some("run" | "exec" | "shell" | "tool" | "venv" | "python")) => {
            o.own_exec(inv.name, sub.unwrap_or_default(), &super::join(inv.args));
        }
        _ => o.effects.class = Class::Unknown,
    }
    o
}

fn system_pm(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let sub = inv
        .args
        .iter()
        .find(|w| !w.value.starts_with('-'))
        .map(|w| w.value.as_str());
    let listing = matches!(
        sub,
        Some(
            "list"
                | "search"
                | "show"
                | "info"
                | "policy"
                | "depends"
                | "rdepends"
                | "madison"
                | "query"
                | "status"
                | "files"
                | "contents"
                | "provides"
                | "whatprovides"
                | "leaves"
                | "deps"
                | "outdated"
                | "doctor"
                | "config"
                | "--version"
        )
    );
    let dpkg_query = matches!(inv.name, "dpkg" | "rpm")
        && inv.args.iter().any(|w| {
            matches!(
                w.value.as_str(),
                "-l" | "-L"
                    | "-s"
                    | "-S"
                    | "-q"
                    | "-qa"
                    | "-ql"
                    | "-qf"
                    | "--list"
                    | "--status"
                    | "--search"
                    | "--listfiles"
            )
        });
    if listing || dpkg_query || sub.is_none() && inv.args.iter().any(|w| w.value == "--version") {
        return o;
    }
    o.net_unknown();
    o.own_exec(
        inv.name,
        sub.unwrap_or(inv.name),
        "installs or changes system packages (runs maintainer scripts)",
    );
    o
}
