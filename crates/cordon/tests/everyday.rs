#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Everyday use through the real binary: a `cargo build` inside the sandbox reports no
//! blocked write, a commit's identity from the environment reaches git inside, help
//! written for users, a guard's refusal that says nothing can allow it, and `--explain`
//! readable on a terminal.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, bin, text};
use std::path::Path;
use std::process::{Command, Stdio};

/// The toolchain's own `cargo` (not rustup's proxy, which needs a writable home) and the
/// directory that also holds its `rustc`.
fn toolchain_bin() -> Option<std::path::PathBuf> {
    let cargo = std::path::PathBuf::from(std::env::var_os("CARGO")?);
    let out = Command::new(&cargo)
        .args(["--version"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    drop(out);
    // Under rustup, CARGO may be the proxy; the toolchain's directory holds both tools.
    let rustc = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8(rustc.stdout).ok()?;
    let dir = Path::new(sysroot.trim()).join("bin");
    dir.join("cargo")
        .is_file()
        .then_some(dir)
        .or_else(|| cargo.parent().map(Path::to_path_buf))
}

#[test]
fn cargo_build_inside_reports_no_blocked_write() {
    need_sandbox!("cargo_build_inside_reports_no_blocked_write");
    if !common::is_root() {
        // The toolchain lives under root's home, which another user cannot read.
        eprintln!("skipped: the toolchain under /root is readable only by root");
        return;
    }
    let dir = toolchain_bin().expect("the toolchain's bin directory (cargo and rustc)");
    let w = World::new();
    std::fs::create_dir_all(w.ws.join("src")).unwrap();
    std::fs::write(
        w.ws.join("Cargo.toml"),
        "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(w.ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    // Two jobs: cargo hands its jobserver pipe to rustc, which reopens it as /dev/fd/N.
    // The sandbox shows HOME (read-only) and hides the other homes: run with the home
    // the toolchain is installed in.
    let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    assert!(
        dir.starts_with(&home),
        "the toolchain ({}) must be under HOME ({}) for this test",
        dir.display(),
        home.display()
    );
    w.script(&format!(
        "export PATH={}:$PATH CARGO_HOME=$PWD/.cargo-home\ncargo build --offline -j2 && echo BUILT",
        dir.display()
    ));
    let o = w.command(&[]).env("HOME", &home).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("BUILT"), "{out}\n{err}");
    assert!(w.ws.join("target/debug/t").is_file(), "{err}");
    assert!(!err.contains("containment blocked"), "{err}");
}

#[test]
fn a_commit_identity_from_the_environment_reaches_git_inside() {
    need_sandbox!("a_commit_identity_from_the_environment_reaches_git_inside");
    let w = World::new();
    w.script(
        "git init -q . && git commit -q --allow-empty -m first && git log -1 --format='%an|%ae|%cn|%ce' && echo \"EMAIL=$EMAIL\"",
    );
    let o = w
        .command(&[])
        .env("GIT_AUTHOR_NAME", "Ada Author")
        .env("GIT_AUTHOR_EMAIL", "ada@example.org")
        .env("GIT_COMMITTER_NAME", "Cy Committer")
        .env("GIT_COMMITTER_EMAIL", "cy@example.org")
        .env("EMAIL", "mail@example.org")
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("Ada Author|ada@example.org|Cy Committer|cy@example.org"),
        "{out}\n{err}"
    );
    assert!(out.contains("EMAIL=mail@example.org"), "{out}\n{err}");
}

/// The first line of `cordon SUB --help`.
fn help_about(sub: &str) -> String {
    let o = Command::new(bin())
        .args([sub, "--help"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{sub}: {o:?}");
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn subcommand_help_is_written_for_users() {
    let cases = [
        ("exec", "Run a command inside the sandbox"),
        ("check", "Judge one tool call"),
        ("serve", "Serve decisions to a harness"),
        ("doctor", "Report what containment this machine can give"),
        ("mcp-gateway", "Put an MCP server (stdio) behind cordon"),
        ("ui", "Serve the local web console"),
        ("review-action", "Review a structured action request"),
        ("run-action", "Run an allowed (or approved) action request"),
        ("label", "Wrap stdin as untrusted content"),
        ("proxy", "Run the allowlisting egress proxy"),
        ("review-toolset", "Report which combinations"),
        ("setup", "Set cordon up for a harness"),
        ("completions", "Print the completion script of a shell"),
        ("man", "Write man pages for cordon and every subcommand"),
    ];
    let top = Command::new(bin()).arg("--help").output().unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    for (sub, start) in cases {
        let about = help_about(sub);
        assert!(about.starts_with(start), "{sub}: {about:?}");
        assert!(!about.contains("Arguments of"), "{sub}: {about:?}");
        // The list of subcommands shows the same sentence.
        assert!(
            top.lines()
                .any(|l| l.trim_start().starts_with(sub) && l.contains(start)),
            "{sub} in cordon --help:\n{top}"
        );
    }
}

/// A workspace and HOME holding an SSH key, for `cordon check`.
fn check(args: &[&str]) -> (Option<i32>, String, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let ws = home.join("proj");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    let o = Command::new(bin())
        .arg("check")
        .args(args)
        .current_dir(&ws)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .env("CORDON_STATE_DIR", tmp.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        tmp,
    )
}

#[test]
fn a_guard_refusal_says_nothing_can_allow_it() {
    let (code, err, _tmp) = check(&[r#"{"tool":"Bash","input":{"command":"cat ~/.ssh/id_rsa"}}"#]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains(
            "cordon: hint: nothing can allow it: a guard refused it, and no rule, mode, flag or approval turns a guard off"
        ),
        "{err}"
    );
    assert!(!err.contains("to allow it: this is a guard"), "{err}");
}

#[test]
fn explain_prints_the_shell_structure_on_lines_of_its_own() {
    let (_, err, _tmp) = check(&[
        "--explain",
        r#"{"tool":"Bash","input":{"command":"ls | wc -l"}}"#,
    ]);
    let start = err
        .find("parsed shell structure:")
        .unwrap_or_else(|| panic!("{err}"));
    let structure = &err[start..];
    assert!(!structure.contains("\\n"), "{structure}");
    assert!(structure.lines().count() > 5, "{structure}");
}

/// Look names up with Python's resolver (glibc's) and print the error number: -2
/// (`EAI_NONAME`, a definite answer) rather than -3 (`EAI_AGAIN`, which programs retry).
const LOOKUP_PY: &str = r#"
import socket, sys
for name in sys.argv[1:]:
    try:
        socket.getaddrinfo(name, 443)
        print(name, "RESOLVED")
    except socket.gaierror as e:
        print(name, "GAIERROR", e.errno)
"#;

#[test]
fn a_lookup_without_network_fails_at_once_and_says_how_to_allow_it() {
    need_sandbox!("a_lookup_without_network_fails_at_once_and_says_how_to_allow_it");
    let w = World::new();
    std::fs::write(w.ws.join("lookup.py"), LOOKUP_PY).unwrap();
    let report = w.root.join("report.json");
    let o = w.run(
        "python3 lookup.py registry.npmjs.org crates.io",
        &["--report", report.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert!(
        out.contains("registry.npmjs.org GAIERROR -2"),
        "{out}\n{err}"
    );
    assert!(out.contains("crates.io GAIERROR -2"), "{out}\n{err}");
    assert!(
        err.contains(
            "cordon: network: registry.npmjs.org was looked up, and registry.npmjs.org:443 cannot be reached: no network destination is allowed; to allow it, add `allow = [\"registry.npmjs.org\"]` under `[network]` in the policy file (or pass `--allow-net registry.npmjs.org` to `cordon exec`)"
        ),
        "{err}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let looked: Vec<&str> = r["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "lookup")
        .filter_map(|b| b["target"].as_str())
        .collect();
    assert_eq!(looked, ["registry.npmjs.org", "crates.io"], "{r}");
}

#[test]
fn with_an_allowlist_a_direct_lookup_says_to_use_the_proxy() {
    need_sandbox!("with_an_allowlist_a_direct_lookup_says_to_use_the_proxy");
    let w = World::new();
    std::fs::write(w.ws.join("lookup.py"), LOOKUP_PY).unwrap();
    let o = w.run(
        "python3 lookup.py example.com other.example",
        &["--allow-net", "example.com"],
    );
    let (out, err) = text(&o);
    assert!(out.contains("example.com GAIERROR -2"), "{out}\n{err}");
    assert!(
        err.contains("cordon: network: example.com was looked up inside the sandbox, where no name resolves; example.com is allowed only through cordon's proxy, which this program did not use"),
        "{err}"
    );
    assert!(
        err.contains("cordon: network: other.example was looked up, and other.example is not on the network allowlist; to allow it, add `allow = [\"other.example\"]`"),
        "{err}"
    );
}

#[test]
fn the_lookup_stub_answers_for_an_unprivileged_user_too() {
    need_sandbox!("the_lookup_stub_answers_for_an_unprivileged_user_too");
    if !common::is_root() {
        eprintln!("skipped: needs root to run as nobody");
        return;
    }
    let w = World::new();
    std::fs::write(w.ws.join("lookup.py"), LOOKUP_PY).unwrap();
    let o = w.run_as_nobody("python3 lookup.py pypi.org", &[]);
    let (out, err) = text(&o);
    assert!(out.contains("pypi.org GAIERROR -2"), "{out}\n{err}");
    assert!(
        err.contains("cordon: network: pypi.org was looked up, and pypi.org:443 cannot be reached"),
        "{err}"
    );
}
