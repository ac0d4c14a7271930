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

use crate::model::SimpleCommand;

/// A file (or pattern of files) a command executes or reads as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutedFile {
    /// The path pattern, relative to the command's working directory or absolute.
    pub pattern: String,
    /// What the program does with it, in a few words (`the test files of package ./pkg`).
    pub why: String,
}

fn file(pattern: impl Into<String>, why: impl Into<String>) -> ExecutedFile {
    ExecutedFile {
        pattern: pattern.into(),
        why: why.into(),
    }
}

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
        "make" | "gmake" => make(&args, &mut out),
        "cargo" => cargo(&args, &mut out),
        "pytest" | "py.test" => pytest(&args, &mut out),
        "python" | "python2" | "python3" | "pypy" | "pypy3" => python(&args, &mut out),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "fish" | "perl" | "ruby" | "node" | "php"
        | "lua" | "Rscript" | "tclsh" | "awk" | "gawk" => script(name, &args, &mut out),
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
            }
        }
        "just" => out.push(file("justfile", "the recipes just runs")),
        "rake" => out.push(file("Rakefile", "the tasks rake runs")),
        "gradle" | "gradlew" => {
            for f in [
                "build.gradle",
                "build.gradle.kts",
                "settings.gradle",
                "settings.gradle.kts",
            ] {
                out.push(file(f, "the build gradle runs"));
            }
        }
        "mvn" | "mvnw" => out.push(file("pom.xml", "the build maven runs")),
        "tox" => out.push(file("tox.ini", "the commands tox runs")),
        "nox" => out.push(file("noxfile.py", "the sessions nox runs")),
        _ => {}
    }
    out
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
    let valued = [
        "-run", "-exec", "-o", "-tags", "-count", "-timeout", "-bench", "-p",
    ];
    let pkgs = positionals(rest, &valued);
    // `go test ./pkg -args …` hands what follows to the test binary.
    let pkgs: Vec<&str> = pkgs.into_iter().take_while(|p| *p != "-args").collect();
    if *sub == "run"
        && let Some(f) = pkgs.iter().find(|p| p.ends_with(".go"))
    {
        out.push(file(*f, "the program go run compiles and runs"));
        return;
    }
    let pkgs = if pkgs.is_empty() { vec!["."] } else { pkgs };
    for p in pkgs {
        let what = match *sub {
            "test" => format!("the tests and sources of package {p}"),
            "generate" => format!("the `//go:generate` lines of package {p}"),
            _ => format!("the sources of package {p}"),
        };
        if let Some(dir) = p.strip_suffix("/...").or((p == "...").then_some(".")) {
            out.push(file(format!("{dir}/**/*.go"), what));
        } else if p.ends_with(".go") {
            out.push(file(p, what));
        } else if p.starts_with('.') || p.starts_with('/') {
            out.push(file(format!("{p}/*.go"), what));
        }
        // A module path (`example.com/x`) is resolved by go; its directory is unknown here.
    }
    out.push(file("go.mod", "the module's requirements and replacements"));
}

fn js_package(name: &str, args: &[&str], out: &mut Vec<ExecutedFile>) {
    let sub = args.iter().find(|a| !a.starts_with('-')).copied();
    let scripts = format!("the scripts `{name}` runs from package.json");
    match sub {
        // `yarn` alone installs; `yarn X` runs script X.
        None if name == "yarn" => out.push(file("package.json", scripts)),
        None => {}
        Some("install" | "i" | "ci" | "add" | "rebuild" | "link" | "pack" | "publish") => {
            out.push(file(
                "package.json",
                format!("the lifecycle scripts `{name}` runs on install"),
            ));
        }
        Some(
            "run" | "run-script" | "test" | "t" | "start" | "stop" | "restart" | "exec" | "x"
            | "dlx",
        ) => {
            out.push(file("package.json", scripts));
            out.push(file("node_modules/.bin/*", format!("what `{name}` runs")));
        }
        // `yarn lint`, `pnpm lint`, `bun lint`: a script name.
        Some(_) if name != "npm" => {
            out.push(file("package.json", scripts));
            out.push(file("node_modules/.bin/*", format!("what `{name}` runs")));
        }
        Some(_) => {}
    }
}

fn make(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut dir = String::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        let next = args.get(i + 1).copied();
        if (a == "-f" || a == "--file" || a == "--makefile") && next.is_some() {
            files.extend(next);
            i += 1;
        } else if let Some(f) = a.strip_prefix("--file=").or(a.strip_prefix("--makefile=")) {
            files.push(f);
        } else if let Some(f) = a.strip_prefix("-f").filter(|f| !f.is_empty()) {
            files.push(f);
        } else if (a == "-C" || a == "--directory") && next.is_some() {
            dir = format!("{}/", next.unwrap_or_default().trim_end_matches('/'));
            i += 1;
        } else if let Some(d) = a
            .strip_prefix("--directory=")
            .or(a.strip_prefix("-C").filter(|d| !d.is_empty()))
        {
            dir = format!("{}/", d.trim_end_matches('/'));
        }
        i += 1;
    }
    if files.is_empty() {
        for f in ["GNUmakefile", "makefile", "Makefile"] {
            out.push(file(format!("{dir}{f}"), "the rules make runs"));
        }
    }
    for f in files {
        out.push(file(format!("{dir}{f}"), "the makefile named by -f"));
    }
    // Included makefiles: the conventional names; an `include` of any other name is
    // read from the Makefile, which is itself covered above.
    out.push(file(
        format!("{dir}**/*.mk"),
        "makefiles included by the rules",
    ));
}

fn cargo(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-') && !a.starts_with('+'));
    let runs = matches!(
        sub.copied(),
        Some(
            "build"
                | "b"
                | "test"
                | "t"
                | "run"
                | "r"
                | "bench"
                | "check"
                | "c"
                | "clippy"
                | "doc"
                | "d"
                | "install"
                | "nextest"
                | "miri"
        )
    );
    if !runs {
        return;
    }
    // Build scripts and proc macros run even for `check`; tests, benches and examples
    // are sources too. Every crate of a workspace may be built.
    out.push(file(
        "**/*.rs",
        "the build scripts, macros, sources and tests cargo builds and runs",
    ));
    out.push(file(
        "**/Cargo.toml",
        "the manifests that choose what cargo builds",
    ));
    out.push(file(
        ".cargo/config.toml",
        "cargo's configuration (runners, wrappers)",
    ));
    out.push(file(
        ".cargo/config",
        "cargo's configuration (runners, wrappers)",
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
    out.push(file("**/conftest.py", "pytest's plugins and fixtures"));
    for f in ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"] {
        out.push(file(f, "pytest's configuration (plugins, options)"));
    }
}

fn python(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-m" {
            let Some(m) = args.get(i + 1) else { return };
            if *m == "pytest" || *m == "py.test" {
                return pytest(&args[i + 2..], out);
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
    // Options that take code or a value: `bash -c CODE` runs text, not a file.
    let code = match name {
        "node" => ["-e", "--eval", "-p"].as_slice(),
        "perl" | "ruby" => ["-e", "-E"].as_slice(),
        "php" => ["-r"].as_slice(),
        "awk" | "gawk" => return awk(args, out),
        _ => ["-c"].as_slice(),
    };
    for a in args {
        if code.contains(a) {
            return;
        }
        if !a.starts_with('-') && !a.starts_with('+') {
            out.push(file(*a, format!("the script {name} runs")));
            return;
        }
    }
}

fn awk(args: &[&str], out: &mut Vec<ExecutedFile>) {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "-f" {
            if let Some(f) = it.next() {
                out.push(file(*f, "the awk program named by -f"));
            }
        } else if let Some(f) = a.strip_prefix("-f").filter(|f| !f.is_empty()) {
            out.push(file(f, "the awk program named by -f"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Vec<String> {
        let a = crate::analyze(text);
        a.commands
            .iter()
            .flat_map(executed_files)
            .map(|f| f.pattern)
            .collect()
    }

    macro_rules! runs {
        ($name:ident, $text:expr, [$($p:expr),* $(,)?]) => {
            #[test]
            fn $name() {
                let got = of($text);
                for want in [$($p),*] {
                    assert!(got.iter().any(|g| g == want), "{:?} lacks {want:?}: {got:?}", $text);
                }
            }
        };
    }

    runs!(go_test_default_package, "go test", ["./*.go", "go.mod"]);
    runs!(go_test_package, "go test ./pkg", ["./pkg/*.go"]);
    runs!(go_test_tree, "go test -run TestX ./...", ["./**/*.go"]);
    runs!(go_run_file, "go run main.go", ["main.go"]);
    runs!(
        npm_run,
        "npm run lint",
        ["package.json", "node_modules/.bin/*"]
    );
    runs!(npm_install_lifecycle, "npm ci", ["package.json"]);
    runs!(yarn_script, "yarn lint", ["package.json"]);
    runs!(pnpm_run, "pnpm run build", ["package.json"]);
    runs!(npx_bin, "npx eslint .", ["node_modules/.bin/*"]);
    runs!(
        make_default,
        "make test",
        ["Makefile", "GNUmakefile", "makefile", "**/*.mk"]
    );
    runs!(
        make_file_and_dir,
        "make -C sub -f build.mk all",
        ["sub/build.mk"]
    );
    runs!(make_attached_file, "make -fother.mk", ["other.mk"]);
    runs!(
        cargo_test,
        "cargo test -p x",
        ["**/*.rs", "**/Cargo.toml", ".cargo/config.toml"]
    );
    runs!(
        pytest_default,
        "pytest -q",
        ["**/test_*.py", "**/conftest.py"]
    );
    runs!(
        pytest_file,
        "pytest tests/test_a.py::test_b",
        ["tests/test_a.py"]
    );
    runs!(
        python_m_pytest,
        "python3 -m pytest tests",
        ["tests/**/*.py", "**/conftest.py"]
    );
    runs!(python_file, "python -u tool.py --x", ["tool.py"]);
    runs!(
        python_module,
        "python -m pkg.tool",
        ["pkg/tool.py", "pkg/tool/**/*.py"]
    );
    runs!(sh_file, "sh build.sh arg", ["build.sh"]);
    runs!(bash_file_after_options, "bash -e -x run.sh", ["run.sh"]);
    runs!(source_file, "source env.sh", ["env.sh"]);
    runs!(dot_file, ". ./env.sh", ["./env.sh"]);
    runs!(dot_slash_program, "./x.sh a b", ["./x.sh"]);
    runs!(wrapped_program, "timeout 10 go test ./pkg", ["./pkg/*.go"]);
    runs!(in_a_chain, "cd sub && make", ["Makefile"]);

    #[test]
    fn code_given_inline_names_no_file() {
        assert!(of("bash -c 'echo hi'").iter().all(|p| p != "echo hi"));
        assert!(of("python3 -c 'print(1)'").is_empty());
        assert!(of("node -e 1").is_empty());
    }

    #[test]
    fn read_only_programs_execute_nothing() {
        assert!(of("ls -la && cat go.mod && grep -rn x .").is_empty());
        assert!(of("go version").is_empty());
        assert!(of("cargo --version").is_empty());
        assert!(of("npm view lodash").is_empty());
    }
}
