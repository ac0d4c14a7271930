//! Tests of suggested rules.

use super::*;

fn cmd(line: &str) -> Option<String> {
    let argv = line.split_whitespace().map(String::from).collect();
    suggest_rule(&SuggestTarget::Command { argv }, &Anchors::default())
}

macro_rules! suggests {
    ($($name:ident: $line:expr => $want:expr;)*) => {$(
        #[test]
        fn $name() {
            let want: Option<&str> = $want;
            assert_eq!(cmd($line).as_deref(), want, "{}", $line);
        }
    )*};
}

suggests! {
    npm_run_script_with_flags: "npm run test -- --watch" => Some("Bash(npm run test -- --watch)");
    npm_run_script_exact: "npm run build" => Some("Bash(npm run build)");
    npm_run_colon_script: "npm run test:unit --silent" => Some("Bash(npm run test:unit --silent)");
    cargo_test_package: "cargo test -p foo" => Some("Bash(cargo test -p foo)");
    cargo_test_exact: "cargo test" => Some("Bash(cargo test)");
    cargo_build_release: "cargo build --release" => Some("Bash(cargo build --release)");
    cargo_run_bin: "cargo run --bin cli" => Some("Bash(cargo run --bin cli)");
    git_push_exact: "git push origin main" => Some("Bash(git push origin main)");
    git_push_force: "git push --force origin main" => Some("Bash(git push --force origin main)");
    git_status: "git status" => Some("Bash(git status)");
    git_log_flags: "git log --oneline -5" => Some("Bash(git log --oneline -5)");
    git_checkout_path: "git checkout -- src/main.rs" => Some("Bash(git checkout -- src/main.rs)");
    git_dash_c_dir: "git -C sub status" => Some("Bash(git -C sub status)");
    go_test_path: "go test ./..." => Some("Bash(go test ./...)");
    make_target: "make test" => Some("Bash(make test)");
    make_jobs: "make -j4 test" => Some("Bash(make -j4 test)");
    ls_flags: "ls -la" => Some("Bash(ls -la)");
    ls_alone: "ls" => Some("Bash(ls)");
    rm_rf_exact: "rm -rf build" => Some("Bash(rm -rf build)");
    cat_abs: "cat /etc/hosts" => Some("Bash(cat /etc/hosts)");
    curl_url: "curl https://example.com/x" => Some("Bash(curl https://example.com/x)");
    pytest_path: "pytest -x tests/unit" => Some("Bash(pytest -x tests/unit)");
    docker_ps: "docker ps -a" => Some("Bash(docker ps -a)");
    kubectl_get: "kubectl get pods -n prod" => Some("Bash(kubectl get pods -n prod)");
    long_chain_exact: "aws s3 ls bucket extra more" => Some("Bash(aws s3 ls bucket extra more)");
    npm_install_flags_exact: "npm install -g typescript" => Some("Bash(npm install -g typescript)");
    pip_install_exact: "pip install requests" => Some("Bash(pip install requests)");
    git_config_exact: "git config user.name me" => Some("Bash(git config user.name me)");
    path_program: "./build.sh --fast" => Some("Bash(./build.sh --fast)");
    unsafe_arg_no_rule: "echo $HOME" => None;
    glob_arg_no_rule: "rm *.o" => None;

    // run anything: never
    bash_alone: "bash" => None;
    bash_script: "bash build.sh" => None;
    sh_c: "sh -c ls" => None;
    bash_c: "bash -c make" => None;
    zsh: "zsh -l" => None;
    python_alone: "python" => None;
    python3_script: "python3 manage.py test" => None;
    python_c: "python -c print(1)" => None;
    python_versioned: "python3.12 -m pytest" => None;
    usr_bin_python: "/usr/bin/python3 x.py" => None;
    node_e: "node -e 1" => None;
    node_script: "node server.js" => None;
    perl_e: "perl -e print" => None;
    ruby_e: "ruby -e puts" => None;
    env_cmd: "env FOO=1 make" => None;
    sudo_cmd: "sudo apt update" => None;
    xargs_cmd: "xargs rm" => None;
    git_alone: "git" => None;
    npm_run_alone: "npm run" => None;
    npx_cmd: "npx prettier --check ." => None;
    npm_exec: "npm exec -- tsc" => None;
    eval_cmd: "eval ls" => None;
    exec_cmd: "exec ls" => None;
    nohup_cmd: "nohup make" => None;
    timeout_cmd: "timeout 5 make" => None;
    find_exec: "find . -name x -exec rm {} ;" => None;
    find_plain: "find . -name x" => Some("Bash(find . -name x)");
    fd_exec: "fd -x rm" => None;
    rg_pre: "rg --pre=./x foo" => None;
    git_dash_c_config: "git -c core.pager=sh log" => None;
    tar_to_command: "tar --to-command=sh -xf a.tar" => None;
    docker_run: "docker run ubuntu sh" => None;
    go_run: "go run main.go" => None;
    uv_run: "uv run pytest" => None;
    awk_prog: "awk {print} f" => None;
    sed_script: "sed -n 1p f" => None;
    ssh_host: "ssh host ls" => None;
    git_submodule_foreach: "git submodule foreach ls" => None;
    assignment_first: "FOO=1 make" => None;
}

#[test]
fn banned_prefixes_never_suggested_with_any_arguments() {
    let tails = [
        "",
        " x",
        " -x",
        " run",
        " run x",
        " -- y",
        " a b c d e",
        " ./p",
        " https://h/",
    ];
    let mut heads: Vec<String> = RUNS_ANYTHING.iter().map(|s| (*s).to_string()).collect();
    heads.extend(RUNNER_PREFIXES.iter().map(|p| p.join(" ")));
    for head in &heads {
        for tail in tails {
            let line = format!("{head}{tail}");
            assert_eq!(cmd(&line), None, "{line}");
        }
    }
    for bare in BARE_PREFIXES {
        let head = bare.join(" ");
        assert_eq!(cmd(&head), None, "{head}");
        for tail in tails {
            let got = cmd(&format!("{head}{tail}")).unwrap_or_default();
            assert_ne!(got, format!("Bash({head}:*)"), "{head}{tail}");
        }
    }
}

#[test]
fn never_tool_wide() {
    for line in ["", " ", "*", ":*"] {
        let got = cmd(line);
        assert!(
            got.as_deref().is_none_or(|r| r != "Bash" && r != "Bash(*)"),
            "{line:?} -> {got:?}"
        );
    }
    assert!(is_tool_wide("Bash"));
    assert!(is_tool_wide("Bash(*)"));
    assert!(is_tool_wide("Read(**)"));
    assert!(is_tool_wide("Read"));
    assert!(!is_tool_wide("Read(./a)"));
    assert!(!is_tool_wide("mcp__s__t"));
}

fn path(kind: fn(PathBuf) -> SuggestTarget, p: &str) -> Option<String> {
    let anchors = Anchors {
        workspace: Some(Path::new("/home/u/proj")),
        home: Some(Path::new("/home/u")),
    };
    suggest_rule(&kind(PathBuf::from(p)), &anchors)
}

#[test]
fn paths_are_anchored_and_exact() {
    use SuggestTarget::{ReadPath as R, WritePath as W};
    assert_eq!(
        path(W, "/home/u/proj/src/main.rs").as_deref(),
        Some("Edit(./src/main.rs)")
    );
    assert_eq!(
        path(R, "/home/u/.config/tool/x.toml").as_deref(),
        Some("Read(~/.config/tool/x.toml)")
    );
    assert_eq!(path(R, "/etc/hosts").as_deref(), Some("Read(//etc/hosts)"));
    assert_eq!(
        path(R, "/home/u/proj_evil/x").as_deref(),
        Some("Read(~/proj_evil/x)")
    );
    for broad in [
        "/",
        "/home/u",
        "/home/u/proj",
        "/home/u/proj/",
        "relative/x",
        "/a/../b",
        "/a/./b",
        "/a/*",
        "/a/[x]",
        "/a b",
        "/x(1)",
    ] {
        assert_eq!(path(R, broad), None, "{broad}");
        assert_eq!(path(W, broad), None, "{broad}");
    }
}

#[test]
fn hosts_and_mcp() {
    let host = |h: &str| suggest_rule(&SuggestTarget::Host(h.into()), &Anchors::default());
    assert_eq!(
        host("Example.COM.").as_deref(),
        Some("WebFetch(domain:example.com)")
    );
    assert_eq!(host("[::1]").as_deref(), Some("WebFetch(domain:[::1])"));
    for bad in [
        "",
        "*",
        "*.example.com",
        "a..b",
        "-a.com",
        "a.com/x",
        "user@a.com",
        "a com",
        "a.com:443",
    ] {
        assert_eq!(host(bad), None, "{bad}");
    }
    let mcp = |s: &str, t: &str| {
        suggest_rule(
            &SuggestTarget::Mcp {
                server: s.into(),
                tool: t.into(),
            },
            &Anchors::default(),
        )
    };
    assert_eq!(
        mcp("github", "create_issue").as_deref(),
        Some("mcp__github__create_issue")
    );
    assert_eq!(mcp("github", "*"), None);
    assert_eq!(mcp("", "x"), None);
    assert_eq!(mcp("a__b", "x"), None);
    assert_eq!(mcp("gh", ""), None);
}

#[test]
fn random_commands_never_get_broad_rules() {
    let vocab = [
        "bash",
        "sh",
        "-c",
        "python3",
        "env",
        "sudo",
        "xargs",
        "git",
        "npm",
        "run",
        "exec",
        "test",
        "cargo",
        "-p",
        "foo",
        "--",
        "--watch",
        "./x",
        "/etc/passwd",
        "https://h/",
        "a=b",
        "*",
        "push",
        "origin",
        "find",
        "-exec",
        "rm",
        "-rf",
        "docker",
        "install",
        "config",
        "node",
        "-e",
        "make",
    ];
    let mut state: u64 = 0x5eed;
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % n as u64) as usize
    };
    for _ in 0..5000 {
        let len = 1 + next(6);
        let argv: Vec<String> = (0..len)
            .map(|_| vocab[next(vocab.len())].to_string())
            .collect();
        let options = suggest_options(
            &SuggestTarget::Command { argv: argv.clone() },
            &Anchors::default(),
        );
        for o in options.iter().skip(1) {
            // A generalisation comes from the allowlist, for a call with no flag it
            // must not fold in.
            let head = o
                .rule
                .strip_prefix("Bash(")
                .and_then(|r| r.strip_suffix(":*)"))
                .unwrap_or_else(|| panic!("{argv:?} -> {o:?}"));
            let words: Vec<&str> = head.split(' ').collect();
            assert!(
                GENERALISABLE.iter().any(|(p, _)| p[..] == words[..]),
                "{argv:?} -> {o:?}"
            );
            assert!(!argv.iter().any(|a| never_folded(a)), "{argv:?} -> {o:?}");
            assert!(o.example.as_deref().is_some_and(|e| e.starts_with(head)));
        }
        let Some(rule) = options.first().map(|o| o.rule.clone()) else {
            continue;
        };
        assert_eq!(options[0].example, None, "{argv:?}");
        assert!(!is_tool_wide(&rule), "{argv:?} -> {rule}");
        assert!(!runs_anything(&argv[0]), "{argv:?} -> {rule}");
        assert!(
            !RUNNER_PREFIXES.iter().any(|p| starts_with(&argv, p)),
            "{argv:?} -> {rule}"
        );
        assert!(!carries_code_flag(&argv), "{argv:?} -> {rule}");
        if let Some(prefix) = rule
            .strip_prefix("Bash(")
            .and_then(|r| r.strip_suffix(":*)"))
        {
            let words: Vec<String> = prefix.split(' ').map(String::from).collect();
            assert!(words.len() >= 2, "{argv:?} -> {rule}");
            assert!(
                !BARE_PREFIXES
                    .iter()
                    .any(|p| p.len() == words.len() && starts_with(&words, p)),
                "{argv:?} -> {rule}"
            );
        } else {
            // An exact rule is the command itself.
            assert_eq!(rule, format!("Bash({})", argv.join(" ")), "{argv:?}");
        }
    }
}

fn options(line: &str) -> Vec<String> {
    let argv = line.split_whitespace().map(String::from).collect();
    suggest_options(&SuggestTarget::Command { argv }, &Anchors::default())
        .into_iter()
        .map(|o| o.rule)
        .collect()
}

#[test]
fn generalisations_only_from_the_allowlist_beside_the_exact_call() {
    assert_eq!(
        options("npm run test -- --watch"),
        ["Bash(npm run test -- --watch)"]
    );
    // git diff, log and show: a prefix would let `--output=FILE` and `--no-index A B`
    // through later.
    assert_eq!(
        options("git diff HEAD -- src"),
        ["Bash(git diff HEAD -- src)"]
    );
    assert_eq!(
        options("git status -s"),
        ["Bash(git status -s)", "Bash(git status:*)"]
    );
    assert_eq!(options("go test -v ./pkg"), ["Bash(go test -v ./pkg)"]);
    assert_eq!(options("cargo test -p foo"), ["Bash(cargo test -p foo)"]);
    assert_eq!(
        options("git log --oneline -5"),
        ["Bash(git log --oneline -5)"]
    );
    // An exact call that is the prefix itself needs no generalisation.
    assert_eq!(options("git status"), ["Bash(git status)"]);
    // Not on the allowlist: the exact call only.
    for line in [
        "git push --force origin main",
        "git push origin main --force",
        "git push origin main",
        "git fetch origin",
        "git pull --rebase",
        "git clone https://h/x.git",
        "git remote add evil https://evil.example/x.git",
        "git checkout -- src/main.rs",
        "git checkout main",
        "git restore --source HEAD run.sh",
        "git reset --hard",
        "git merge evil",
        "git cherry-pick abc",
        "git apply p.diff",
        "git switch main",
        "docker ps -a",
        "make -j4 test",
    ] {
        assert_eq!(options(line).len(), 1, "{line}: {:?}", options(line));
    }
    // A flag a prefix must not fold in: the exact call only, even for an allowlisted
    // prefix.
    for line in [
        "git log --output=out.txt",
        "git diff --ext-diff",
        "cargo test --config x=1",
        "go test -exec x ./...",
        "git log -fp",
    ] {
        assert!(options(line).len() <= 1, "{line}: {:?}", options(line));
    }
    // Every generalisation shows an example of what else it allows.
    let argv: Vec<String> = "git status -s".split(' ').map(String::from).collect();
    let all = suggest_options(&SuggestTarget::Command { argv }, &Anchors::default());
    assert_eq!(all[1].example.as_deref(), Some("git status --ignored"));
}
