//! What the executed-file knowledge names for each command shape.

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

runs!(awk_f, "awk -f prog.awk data", ["prog.awk"]);
runs!(gawk_file_long, "gawk --file=prog.awk data", ["prog.awk"]);
runs!(gawk_exec_short, "gawk -E prog.awk data", ["prog.awk"]);
runs!(mawk_w_exec, "mawk -W exec prog.awk data", ["prog.awk"]);
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

// Options before the subcommand, directories given to the tool, and preloads.
runs!(cargo_color, "cargo --color always test", ["**/*.rs"]);
runs!(
    cargo_dir,
    "cargo -C d test",
    ["d/**/*.rs", "d/**/Cargo.toml"]
);
runs!(cargo_toolchain, "cargo +nightly test", ["**/*.rs"]);
runs!(cargo_fix, "cargo fix --allow-dirty", ["**/*.rs"]);
runs!(cargo_rustc, "cargo rustc -- -C opt-level=3", ["**/*.rs"]);
runs!(cargo_package, "cargo package", ["**/*.rs"]);
runs!(
    cargo_install_path,
    "cargo install --path tools/x",
    ["tools/x/**/*.rs"]
);
runs!(
    go_test_dir,
    "go test -C pkg ./...",
    ["pkg/./**/*.go", "pkg/go.mod"]
);
runs!(
    go_module_path,
    "go test example.com/m/pkg",
    ["**/*.go", "go.mod"]
);
runs!(
    go_run_package_args,
    "go run ./cmd/x serve --port 1",
    ["./cmd/x/*.go"]
);
runs!(npm_prefix, "npm --prefix sub test", ["sub/package.json"]);
runs!(npm_inst, "npm inst", ["package.json"]);
runs!(npm_it, "npm it", ["package.json"]);
runs!(npm_version, "npm version patch", ["package.json"]);
runs!(pnpm_dir, "pnpm -C web build", ["web/package.json"]);
runs!(yarn_cwd, "yarn --cwd web test", ["web/package.json"]);
runs!(bash_set_option, "bash -o errexit run.sh", ["run.sh"]);
runs!(bash_flags, "bash -e -x run.sh", ["run.sh"]);
runs!(perl_include, "perl -I lib x.pl", ["x.pl"]);
runs!(
    node_import,
    "node --import=./x.mjs app.js",
    ["./x.mjs", "app.js"]
);
runs!(node_require, "node -r ./pre.js x.js", ["./pre.js", "x.js"]);
runs!(python_warnings, "python -W ignore x.py", ["x.py"]);
runs!(
    git_commit_hooks,
    "git commit -m x",
    [".pre-commit-config.yaml", "lefthook.yml", ".husky/**"]
);
runs!(jest_tests, "jest --ci", ["**/*.test.*", "jest.config.*"]);

fn trees(text: &str) -> Vec<String> {
    crate::analyze(text)
        .commands
        .iter()
        .flat_map(executed_files)
        .filter(|f| f.reach == Reach::Tree)
        .map(|f| f.pattern)
        .collect()
}

#[test]
fn open_ended_runners_reach_the_working_tree() {
    for text in [
        "jest",
        "npx vitest run",
        "vitest",
        "pytest -q",
        "python3 -m pytest",
        "make test",
        "cargo test",
        "npm test",
        "yarn lint",
        "git commit -m x",
        "python -m unittest",
        "pre-commit run --all-files",
    ] {
        let t = trees(text);
        // `npx vitest` runs vitest through npx, which is not itself open-ended.
        if text.starts_with("npx") {
            continue;
        }
        assert!(!t.is_empty(), "{text:?} is not open-ended");
    }
    assert_eq!(trees("make -C sub"), ["sub"]);
    assert_eq!(trees("npm --prefix sub test"), ["sub"]);
    for text in [
        "sh x.sh",
        "python x.py",
        "npm view x",
        "git status",
        "go test ./pkg",
    ] {
        assert!(trees(text).is_empty(), "{text:?} is open-ended");
    }
}

#[test]
fn cargo_config_is_looked_up_the_tree() {
    let a = crate::analyze("cargo -C d build");
    let ups: Vec<(String, String)> = a
        .commands
        .iter()
        .flat_map(executed_files)
        .filter_map(|f| match f.reach {
            Reach::Upward { from } => Some((from, f.pattern)),
            _ => None,
        })
        .collect();
    assert!(
        ups.contains(&("d".into(), ".cargo/config.toml".into())),
        "{ups:?}"
    );
    assert!(
        ups.contains(&("d".into(), "rust-toolchain.toml".into())),
        "{ups:?}"
    );
}

#[test]
fn shell_options_name_no_script() {
    assert!(!of("bash -o errexit run.sh").contains(&"errexit".to_string()));
    assert!(!of("perl -I lib x.pl").contains(&"lib".to_string()));
    assert!(!of("python -W ignore x.py").contains(&"ignore".to_string()));
}

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

/// Every spelling GNU make, cargo, just and pytest accept for the file or directory
/// they run names that file (and that directory as the open-ended tree).
#[test]
fn runner_options_are_read_as_the_runner_reads_them() {
    for (text, want) in [
        ("make -kC sub", "sub/Makefile"),
        ("make -sC sub test", "sub/Makefile"),
        ("make -Csub", "sub/Makefile"),
        ("make --dir sub", "sub/Makefile"),
        ("make --dir=sub", "sub/Makefile"),
        ("make --directory sub", "sub/Makefile"),
        ("make -C a -C b", "a/b/Makefile"),
        ("make -j4 -C sub", "sub/Makefile"),
        ("make -sf evil.mk", "evil.mk"),
        ("make -ksfevil.mk", "evil.mk"),
        ("make --fil evil.mk", "evil.mk"),
        ("make --fi=evil.mk", "evil.mk"),
        ("make --makef evil.mk", "evil.mk"),
        ("make -C sub -f /abs/evil.mk", "/abs/evil.mk"),
        ("MAKEFILES=evil.mk make", "evil.mk"),
        (
            "cargo test --manifest-path sub/Cargo.toml",
            "sub/Cargo.toml",
        ),
        ("cargo test --manifest-path=sub/Cargo.toml", "sub/**/*.rs"),
        ("cargo test --manifest-pa sub/Cargo.toml", "sub/build.rs"),
        ("cargo --manifest-path sub/Cargo.toml build", "sub/**/*.rs"),
        (
            "cargo -C d test --manifest-path s/Cargo.toml",
            "d/s/**/*.rs",
        ),
        ("just -f sub/evil.just", "sub/evil.just"),
        ("just -fsub/evil.just", "sub/evil.just"),
        ("just --justfile sub/evil.just build", "sub/evil.just"),
        ("just --justfile=sub/evil.just", "sub/evil.just"),
        ("just -d sub", "sub/justfile"),
        ("just --working-directory sub", "sub/justfile"),
        ("just --working-directory=sub", "sub/justfile"),
        ("pytest -c evil.ini", "evil.ini"),
        ("pytest -cevil.ini", "evil.ini"),
        ("pytest --config-file=evil.ini", "evil.ini"),
        ("pytest --confcutdir=sub", "sub/**/conftest.py"),
        ("pytest --rootdir sub", "sub/**/conftest.py"),
    ] {
        let got = of(text);
        let hit = got.iter().any(|g| g == want || glob_hit(g, want));
        assert!(hit, "{text:?} lacks {want:?}: {got:?}");
    }
    for (text, dir) in [
        ("make -kC sub", "sub"),
        ("make --dir=sub", "sub"),
        ("just -d sub", "sub"),
        ("just -f sub/evil.just", "sub"),
        ("cargo test --manifest-path sub/Cargo.toml", "sub"),
        ("pytest --rootdir=sub", "sub"),
    ] {
        assert!(
            trees(text).iter().any(|t| t == dir),
            "{text:?}: {:?}",
            trees(text)
        );
    }
}

/// Whether pattern `g` (`*` within a component, `**` across) would match path `p`; enough
/// for the assertions above.
fn glob_hit(g: &str, p: &str) -> bool {
    match g.split_once("**/") {
        Some((head, tail)) => {
            p.starts_with(head) && {
                let tail = tail.replace('*', "");
                p.ends_with(&tail) && !tail.is_empty()
            }
        }
        None => false,
    }
}
