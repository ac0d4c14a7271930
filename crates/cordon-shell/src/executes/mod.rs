//! Which files a program run executes: the knowledge behind write-then-run.
//!
//! An allow rule for `go test` or `npm run lint` is written about the program; what the
//! program then runs is code in the repository (`_test.go` files, a script in
//! `package.json`, a Makefile). When an agent wrote that code earlier in the same
//! session, the allow rule no longer says what the user thought it said. This module
//! names, for one analyzed command, the files whose contents decide what it runs, as
//! path patterns relative to the command's working directory (or absolute): `*` and `?`
//! match within one path component, `**` matches any number of components.
//!
//! It performs no I/O and decides nothing: the policy resolves the patterns against the
//! working directory and the gate matches them against a session's recorded writes.
//! What it cannot name (a program it does not know, an argument known only at run time)
//! it leaves out; the policy's other steps already ask about unknown and opaque code.

use crate::argv;

pub(crate) mod runners;
use crate::model::SimpleCommand;

/// How a pattern of an [`ExecutedFile`] is placed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reach {
    /// The pattern is relative to the command's working directory, or absolute.
    Path,
    /// The pattern (a relative file name such as `.cargo/config.toml`) is looked up in
    /// `from` (relative to the working directory) and in every directory above it.
    Upward {
        /// Where the lookup starts.
        from: String,
    },
    /// An open-ended runner: it discovers what to run (test files, imported modules,
    /// scripts its recipes or hooks call), so any file of the working tree may run.
    /// The pattern is the runner's directory, relative to the working directory.
    Tree,
}

/// A file (or pattern of files) a command executes or reads as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutedFile {
    /// The path pattern, relative to the command's working directory or absolute.
    pub pattern: String,
    /// What the program does with it, in a few words (`the test files of package ./pkg`).
    pub why: String,
    /// How the pattern is placed.
    pub reach: Reach,
}

fn file(pattern: impl Into<String>, why: impl Into<String>) -> ExecutedFile {
    ExecutedFile {
        pattern: pattern.into(),
        why: why.into(),
        reach: Reach::Path,
    }
}

fn upward(from: &str, name: &str, why: &str) -> ExecutedFile {
    ExecutedFile {
        pattern: name.into(),
        why: why.into(),
        reach: Reach::Upward {
            from: from.trim_end_matches('/').into(),
        },
    }
}

/// An open-ended runner working in `dir`.
fn tree(dir: &str, why: impl Into<String>) -> ExecutedFile {
    let dir = dir.trim_end_matches('/');
    ExecutedFile {
        pattern: if dir.is_empty() {
            ".".into()
        } else {
            dir.into()
        },
        why: why.into(),
        reach: Reach::Tree,
    }
}

/// `dir/` for a directory given to a tool, or nothing.
fn under(dir: Option<&str>) -> String {
    match dir {
        Some(d) if !d.is_empty() => format!("{}/", d.trim_end_matches('/')),
        _ => String::new(),
    }
}

/// The programs cordon treats as open-ended runners ([`Reach::Tree`]), for the docs
/// and tests: after a session wrote any file of the working tree, running one of them
/// counts as running that file.
pub const OPEN_ENDED: &[&str] = &[
    "jest",
    "vitest",
    "mocha",
    "ava",
    "pytest",
    "py.test",
    "python -m pytest",
    "python -m unittest",
    "tox",
    "nox",
    "rspec",
    "phpunit",
    "make",
    "gmake",
    "bmake",
    "cargo (build, test, run and the other compiling subcommands)",
    "npm / pnpm / yarn / bun (scripts, and installs that run lifecycle scripts)",
    "deno test / deno task",
    "just",
    "rake",
    "gradle",
    "mvn",
    "git commit / merge / pull / rebase / am / cherry-pick / revert / push / checkout / switch (hooks)",
    "pre-commit",
    "lefthook",
];

/// The files `cmd` would execute, from the program knowledge base. Empty for a program
/// that runs no file of the working tree as far as cordon knows.
#[must_use]
pub fn executed_files(cmd: &SimpleCommand) -> Vec<ExecutedFile> {
    let Some(program) = &cmd.program else {
        return Vec::new();
    };
    if !program.literal {
        return Vec::new();
    }
    // Only literal arguments name files; a run-time value is the analysis's business.
    let args: Vec<&str> = cmd
        .args
        .iter()
        .take_while(|w| w.literal)
        .map(|w| w.value.as_str())
        .collect();
    let name = program.value.rsplit('/').next().unwrap_or(&program.value);
    let mut out = Vec::new();
    // A program named by a path (`./run.sh`, `scripts/x`) is that file.
    if program.value.contains('/') {
        out.push(file(program.value.as_str(), "the program itself"));
    }
    match name {
        "go" => go(&args, &mut out),
        "npm" | "pnpm" | "yarn" | "bun" => js_package(name, &args, &mut out),
        "npx" | "pnpx" | "bunx" => {
            out.push(file(
                "package.json",
                format!("`{name}` resolves its package there"),
            ));
            out.push(file("node_modules/.bin/*", format!("what `{name}` runs")));
        }
        "make" | "gmake" | "bmake" => {
            let makefiles = cmd
                .assignments
                .iter()
                .find(|(n, _)| n == "MAKEFILES")
                .map(|(_, v)| v.value.as_str());
            runners::make(&args, makefiles, &mut out);
        }
        "cargo" => cargo(&args, &mut out),
        "pytest" | "py.test" => pytest(&args, &mut out),
        "python" | "python2" | "python3" | "pypy" | "pypy3" => python(&args, &mut out),
        "jest" | "vitest" | "mocha" | "ava" => js_tests(name, &mut out),
        "rspec" | "phpunit" => out.push(tree(
            ".",
            format!("`{name}` discovers the test files it loads"),
        )),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "fish" | "perl" | "ruby" | "node" | "php"
        | "lua" | "Rscript" | "tclsh" | "awk" | "gawk" | "mawk" | "nawk" => {
            script(name, &args, &mut out)
        }
        "source" | "." => {
            if let Some(f) = args.first() {
                out.push(file(*f, "sourced into the shell"));
            }
        }
        "deno" => {
            if matches!(args.first(), Some(&"run" | &"test" | &"task")) {
                if let Some(f) = args.iter().skip(1).find(|a| !a.starts_with('-')) {
                    out.push(file(*f, "run by deno"));
                }
                out.push(file("deno.json", "deno's tasks and imports"));
                out.push(file("deno.jsonc", "deno's tasks and imports"));
                if args.first() != Some(&"run") {
                    out.push(tree(".", "deno discovers the tests and tasks it runs"));
                }
            }
        }
        "git" => git(&args, &mut out),
        "pre-commit" | "lefthook" => hooks(name, &mut out),
        "just" => runners::just(&args, &mut out),
        "rake" => runner(&["Rakefile", "rakefile", "Rakefile.rb"], "rake", &mut out),
        "gradle" | "gradlew" => runner(
            &[
                "build.gradle",
                "build.gradle.kts",
                "settings.gradle",
                "settings.gradle.kts",
            ],
            "gradle",
            &mut out,
        ),
        "mvn" | "mvnw" => runner(&["pom.xml"], "maven", &mut out),
        "tox" => runner(&["tox.ini", "pyproject.toml", "setup.py"], "tox", &mut out),
        "nox" => runner(&["noxfile.py"], "nox", &mut out),
        _ => {}
    }
    out
}

/// A build runner whose recipes call whatever they name.
fn runner(files: &[&str], name: &str, out: &mut Vec<ExecutedFile>) {
    for f in files {
        out.push(file(*f, format!("the build {name} runs")));
    }
    out.push(tree(
        ".",
        format!("{name}'s recipes call scripts and programs of the working tree"),
    ));
}

/// Positional arguments, skipping options (and the value of the options in `valued`).
fn positionals<'a>(args: &[&'a str], valued: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut rest = false;
    for a in args {
        if skip {
            skip = false;
        } else if rest || !a.starts_with('-') || *a == "-" {
            out.push(*a);
        } else if *a == "--" {
            rest = true;
        } else if valued.contains(a) {
            skip = true;
        }
    }
    out
}

fn go(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let Some((sub, rest)) = args.split_first() else {
        return;
    };
    match *sub {
        "test" | "run" | "generate" => {}
        _ => return,
    }
    let dir = under(argv::go_dir(rest));
    let valued = [
        "-C",
        "-run",
        "-exec",
        "-o",
        "-tags",
        "-count",
        "-timeout",
        "-bench",
        "-p",
        "-skip",
        "-cpu",
        "-parallel",
        "-coverprofile",
        "-covermode",
        "-coverpkg",
        "-ldflags",
        "-gcflags",
        "-mod",
        "-modfile",
        "-toolexec",
        "-overlay",
        "-pgo",
        "-asmflags",
    ];
    let mut pkgs = positionals(rest, &valued);
    // `go test ./pkg -args …` hands what follows to the test binary.
    pkgs.truncate(
        pkgs.iter()
            .position(|p| *p == "-args")
            .unwrap_or(pkgs.len()),
    );
    if *sub == "run" {
        // `go run ./cmd/x a b`: the first positional is the package, or a list of
        // `.go` files; what follows goes to the program.
        let files: Vec<&str> = pkgs
            .iter()
            .take_while(|p| p.ends_with(".go"))
            .copied()
            .collect();
        if !files.is_empty() {
            for f in files {
                out.push(file(
                    format!("{dir}{f}"),
                    "the program go run compiles and runs",
                ));
            }
            pkgs.clear();
        } else {
            pkgs.truncate(1);
        }
    }
    let explicit = !pkgs.is_empty();
    let pkgs = if explicit { pkgs } else { vec!["."] };
    for p in pkgs {
        let what = match *sub {
            "test" => format!("the tests and sources of package {p}"),
            "generate" => format!("the `//go:generate` lines of package {p}"),
            _ => format!("the sources of package {p}"),
        };
        if let Some(d) = p.strip_suffix("/...").or((p == "...").then_some(".")) {
            out.push(file(format!("{dir}{d}/**/*.go"), what));
        } else if p.ends_with(".go") {
            out.push(file(format!("{dir}{p}"), what));
        } else if p.starts_with('.') || p.starts_with('/') {
            out.push(file(format!("{dir}{p}/*.go"), what));
        }
        // A module path (`example.com/m/pkg`) is resolved by go; the working tree
        // below covers it when it lies in the module.
    }
    out.push(file(
        format!("{dir}go.mod"),
        "the module's requirements and replacements",
    ));
    out.push(file(format!("{dir}go.work"), "the workspace's modules"));
    // The named packages import others of the module (whose `init` functions run), and
    // cgo compiles the C and assembly files beside them. Go reads no other kind of file
    // as code, so it is not an open-ended runner.
    for ext in ["go", "c", "h", "s", "S", "cc", "cpp", "cxx", "m", "syso"] {
        out.push(file(
            format!("{dir}**/*.{ext}"),
            "a package of the module the named ones may import, or its cgo sources",
        ));
    }
}

/// Subcommands of JS package managers that install and run lifecycle scripts.
const JS_LIFECYCLE: &[&str] = &[
    "install",
    "i",
    "in",
    "ins",
    "inst",
    "insta",
    "instal",
    "isnt",
    "isnta",
    "isntal",
    "isntall",
    "ci",
    "clean-install",
    "ic",
    "install-clean",
    "isntall-clean",
    "it",
    "install-test",
    "cit",
    "install-ci-test",
    "add",
    "rebuild",
    "rb",
    "link",
    "ln",
    "pack",
    "publish",
    "update",
    "up",
    "upgrade",
    "dedupe",
    "ddp",
];
/// Subcommands that run scripts or package binaries.
const JS_RUN: &[&str] = &[
    "run",
    "run-script",
    "rum",
    "urn",
    "test",
    "t",
    "tst",
    "start",
    "stop",
    "restart",
    "exec",
    "x",
    "dlx",
    "create",
];
/// Subcommands of yarn, pnpm and bun that are not script names and run nothing.
const JS_QUIET: &[&str] = &[
    "ls",
    "list",
    "ll",
    "la",
    "why",
    "info",
    "view",
    "show",
    "config",
    "help",
    "outdated",
    "audit",
    "bin",
    "root",
    "prefix",
    "cache",
    "search",
    "owner",
    "whoami",
    "login",
    "logout",
    "licenses",
    "store",
    "env",
    "--version",
    "-v",
];

fn js_package(name: &str, args: &[&str], out: &mut Vec<ExecutedFile>) {
    let head = argv::js_head(name, args);
    let sub = head.sub.and_then(|k| args.get(k)).copied();
    let dir = under(head.dir);
    let scripts = format!("the scripts `{name}` runs from package.json");
    let lifecycle = format!("the lifecycle scripts `{name}` runs on install");
    let (manifest_why, runs_bin) = match sub {
        // `yarn` and `bun` alone install.
        None if matches!(name, "yarn" | "bun") => (lifecycle, false),
        None => return,
        // `npm version X` bumps the version and runs the version scripts.
        Some("version") if args.len() > head.sub.unwrap_or(0) + 1 => (scripts, false),
        Some(s) if JS_LIFECYCLE.contains(&s) => (lifecycle, false),
        Some(s) if JS_RUN.contains(&s) => (scripts, true),
        Some(s) if name != "npm" && !JS_QUIET.contains(&s) && s != "version" => (scripts, true),
        Some(_) => return,
    };
    if head.workspace_root {
        out.push(upward(&dir, "package.json", &manifest_why));
    }
    out.push(file(format!("{dir}package.json"), manifest_why));
    if runs_bin {
        out.push(file(
            format!("{dir}node_modules/.bin/*"),
            format!("what `{name}` runs"),
        ));
    }
    out.push(tree(
        &dir,
        format!("package scripts run whatever files they name (`{name}` is an open-ended runner)"),
    ));
}

fn js_tests(name: &str, out: &mut Vec<ExecutedFile>) {
    for f in [
        format!("{name}.config.*"),
        "package.json".into(),
        "**/*.test.*".into(),
        "**/*.spec.*".into(),
        "**/__tests__/**".into(),
    ] {
        out.push(file(
            f,
            format!("the tests and configuration `{name}` loads"),
        ));
    }
    out.push(tree(
        ".",
        format!("`{name}` discovers the test files and the modules they import"),
    ));
}

fn cargo(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let head = argv::cargo_head(args);
    let Some(sub) = head.sub(args) else {
        return;
    };
    let rest = args.get(head.at + 1..).unwrap_or_default();
    let dir = under(head.dir);
    let config = "cargo's configuration (runners, wrappers, build flags)";
    let toolchain = "the toolchain file that chooses the compiler cargo runs";
    let upward_files = |from: &str, out: &mut Vec<ExecutedFile>| {
        out.push(upward(from, ".cargo/config.toml", config));
        out.push(upward(from, ".cargo/config", config));
        out.push(upward(from, "rust-toolchain.toml", toolchain));
        out.push(upward(from, "rust-toolchain", toolchain));
        out.push(file("~/.cargo/config.toml", config));
    };
    let root = match sub {
        "build" | "b" | "test" | "t" | "run" | "r" | "bench" | "check" | "c" | "clippy" | "doc"
        | "d" | "nextest" | "miri" | "fix" | "rustc" | "rustdoc" | "package" | "publish"
        | "llvm-cov" | "tarpaulin" | "expand" => match runners::cargo_manifest(args) {
            // `--manifest-path FILE`: the package beside FILE (relative to `-C`).
            Some(m) => {
                let m = if m.starts_with('/') {
                    m.to_owned()
                } else {
                    format!("{dir}{m}")
                };
                out.push(file(
                    m.as_str(),
                    "the manifest that chooses what cargo builds",
                ));
                match m.rsplit_once('/') {
                    Some(("", _)) => "/".to_owned(),
                    Some((d, _)) => format!("{d}/"),
                    None => String::new(),
                }
            }
            None => dir,
        },
        "install" => {
            // `cargo install NAME` builds a registry crate; only its configuration comes
            // from here. `--path P` builds the tree at P.
            let path = rest.iter().enumerate().find_map(|(k, a)| {
                a.strip_prefix("--path=")
                    .or((*a == "--path").then(|| rest.get(k + 1).copied()).flatten())
            });
            upward_files(&dir, out);
            match path {
                Some(p) => format!("{dir}{}/", p.trim_end_matches('/')),
                None => return,
            }
        }
        _ => return,
    };
    // Build scripts and proc macros run even for `check`; tests, benches and examples
    // are sources too. Every crate of a workspace may be built.
    out.push(file(
        format!("{root}**/*.rs"),
        "the build scripts, macros, sources and tests cargo builds and runs",
    ));
    out.push(file(
        format!("{root}**/Cargo.toml"),
        "the manifests that choose what cargo builds",
    ));
    if sub != "install" {
        upward_files(&root, out);
    }
    out.push(tree(
        &root,
        format!("`cargo {sub}` builds and runs code that may name any file of the working tree (`include!`, build scripts)"),
    ));
}

fn pytest(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let valued = [
        "-k",
        "-m",
        "-c",
        "-p",
        "-o",
        "--rootdir",
        "--confcutdir",
        "--junitxml",
    ];
    let paths = positionals(args, &valued);
    runners::pytest_files(args, out);
    if paths.is_empty() {
        out.push(file("**/test_*.py", "the tests pytest collects"));
        out.push(file("**/*_test.py", "the tests pytest collects"));
    }
    for p in paths {
        let p = p.split("::").next().unwrap_or(p);
        if p.ends_with(".py") {
            out.push(file(p, "the test file pytest runs"));
        } else {
            out.push(file(
                format!("{}/**/*.py", p.trim_end_matches('/')),
                "the tests pytest collects",
            ));
        }
    }
    out.push(upward(".", "conftest.py", "pytest's plugins and fixtures"));
    out.push(file("**/conftest.py", "pytest's plugins and fixtures"));
    for f in ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"] {
        out.push(file(f, "pytest's configuration (plugins, options)"));
    }
    out.push(tree(
        ".",
        "pytest imports the tests it collects and every module they import",
    ));
}

fn python(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-m" {
            let Some(m) = args.get(i + 1) else { return };
            match *m {
                "pytest" | "py.test" => return pytest(&args[i + 2..], out),
                "unittest" => {
                    out.push(file("**/test*.py", "the tests unittest discovers"));
                    out.push(tree(
                        ".",
                        "unittest imports the tests it discovers and every module they import",
                    ));
                    return;
                }
                _ => {}
            }
            let path = m.replace('.', "/");
            out.push(file(format!("{path}.py"), format!("module {m}")));
            out.push(file(format!("{path}/**/*.py"), format!("package {m}")));
            return;
        }
        if a == "-c" {
            return;
        }
        if !a.starts_with('-') {
            out.push(file(a, "the script python runs"));
            return;
        }
        // Options with a value.
        if matches!(a, "-W" | "-X" | "-Q") {
            i += 1;
        }
        i += 1;
    }
}

fn script(name: &str, args: &[&str], out: &mut Vec<ExecutedFile>) {
    // Options that take code: `bash -c CODE` runs text, not a file.
    let (code, valued, preload): (&[&str], &[&str], &[&str]) = match name {
        "node" => (
            &["-e", "--eval", "-p", "--print"],
            &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "-C",
                "--conditions",
                "--env-file",
                "--input-type",
                "--title",
                "--inspect-port",
            ],
            &[
                "-r",
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
            ],
        ),
        "perl" => (&["-e", "-E"], &["-I", "-x"], &[]),
        "ruby" => (&["-e"], &["-I", "-r", "-C", "-E"], &["-r"]),
        "php" => (&["-r"], &["-c", "-d", "-z"], &["-f"]),
        "lua" => (&["-e"], &["-l"], &[]),
        "awk" | "gawk" | "mawk" | "nawk" => return awk(args, out),
        // The shells: `-o OPT` / `+o OPT` and `-O OPT` / `+O OPT` take a name.
        _ => (
            &["-c"],
            &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"],
            &["--rcfile", "--init-file"],
        ),
    };
    let mut i = 0;
    while let Some(a) = args.get(i).copied() {
        if code.contains(&a) {
            return;
        }
        let (opt, attached) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (a, None),
        };
        if a == "--" {
            if let Some(f) = args.get(i + 1) {
                out.push(file(*f, format!("the script {name} runs")));
            }
            return;
        }
        if !a.starts_with('-') && !a.starts_with('+') {
            out.push(file(a, format!("the script {name} runs")));
            return;
        }
        let value = if valued.contains(&opt) {
            attached.or_else(|| {
                i += 1;
                args.get(i).copied()
            })
        } else {
            attached
        };
        if preload.contains(&opt)
            && let Some(v) = value
        {
            out.push(file(
                v,
                format!("code {name} loads before the script ({opt})"),
            ));
        }
        i += 1;
    }
}

/// The program files of an awk run: `-f`, gawk's `-E`/`-i` and their long forms
/// (`--file=F`, `--exec F`, `--include`), mawk's `-W exec F`.
fn awk(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut i = 0;
    while let Some(a) = args.get(i).copied() {
        i += 1;
        let named = match a {
            "-f" | "-E" | "-i" | "--file" | "--exec" | "--include" => {
                i += 1;
                args.get(i - 1).copied()
            }
            "-W" if matches!(args.get(i), Some(&"exec" | &"e")) => {
                i += 2;
                args.get(i - 1).copied()
            }
            _ => ["--file=", "--exec=", "--include=", "-f", "-E", "-i"]
                .iter()
                .find_map(|p| a.strip_prefix(p))
                .filter(|f| !f.is_empty()),
        };
        if let Some(f) = named {
            out.push(file(f, "the awk program named by an option"));
        }
    }
}

/// `git` subcommands that run hooks (`.git/hooks`, or the managers configured in the
/// working tree: pre-commit, lefthook, husky).
fn git(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut i = 0;
    let mut dir = String::new();
    while let Some(a) = args.get(i).copied() {
        match a {
            "-C" => {
                dir = under(args.get(i + 1).copied());
                i += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return };
    if !matches!(
        *sub,
        "commit"
            | "merge"
            | "pull"
            | "rebase"
            | "am"
            | "cherry-pick"
            | "revert"
            | "push"
            | "checkout"
            | "switch"
    ) {
        return;
    }
    for f in [
        ".git/hooks/*",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "lefthook.yml",
        "lefthook.yaml",
        ".lefthook.yml",
        "lefthook-local.yml",
        ".husky/**",
    ] {
        out.push(file(
            format!("{dir}{f}"),
            format!("the hooks `git {sub}` runs"),
        ));
    }
    out.push(tree(
        &dir,
        format!("the hooks `git {sub}` runs call scripts of the working tree"),
    ));
}

fn hooks(name: &str, out: &mut Vec<ExecutedFile>) {
    let config = if name == "lefthook" {
        "lefthook.yml"
    } else {
        ".pre-commit-config.yaml"
    };
    out.push(file(config, format!("the hooks `{name}` runs")));
    out.push(tree(
        ".",
        format!("the hooks `{name}` runs call scripts of the working tree"),
    ));
}

#[cfg(test)]
mod tests;
