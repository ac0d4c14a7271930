//! Build tools, package managers and test runners. Running the project's own code
//! (build scripts, package scripts, tests) is their purpose, so those executions are
//! marked `own_purpose`; options that run an extra program (`make --eval`,
//! `go test -exec`, `cargo --config …wrapper`) are not. Installing reaches the network.

use super::{Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

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
    let p = parse_args(
        inv.args,
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

fn js_pm(inv: &Invocation<'_>) -> Outcome {
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

fn npx(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    o.net_unknown();
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

/// Compilers: the sources they read, where they write (`a.out` and object files land
/// in the working directory), and the options that make them run another program
/// (gcc's `-wrapper`, `-B`, `-fplugin=`, `-specs=`; rustc's `-C linker=`; a compiler
/// plugin is code too).
fn compiler(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let rustc = inv.name == "rustc";
    let values: &[&str] = if rustc {
        RUSTC_VALUES
    } else if matches!(inv.name, "javac" | "tsc" | "esbuild") {
        // Their options: `-d DIR`, `--outDir DIR`, `--outfile=F`, `-cp PATH`, `-p FILE`.
        &[
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
        ]
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
        // `-o out`, `-oout`, `--out-dir=d`, `-Clinker=x`.
        let (name, value) = match values.iter().find(|v| a == **v) {
            Some(n) => {
                i += 1;
                (*n, args.get(i).cloned())
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
        };
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
