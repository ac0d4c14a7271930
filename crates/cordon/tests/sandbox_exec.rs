#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon exec` containment of the file system, tested with real processes: every test
//! runs the built binary on a temporary workspace with a fake HOME ([`SecretWorld`]), and
//! checks what the command could and could not read or write, inside and on the host
//! afterwards. Processes, signals, the network and the exit contract are in
//! `sandbox_exec_process.rs`.
//!
//! Tests that need user namespaces skip with a printed reason when the host cannot
//! create them, unless `CORDON_REQUIRE_SANDBOX_TESTS=1` (set in CI), which turns the
//! skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::secret_world::SecretWorld;
use common::{bin, is_root, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn writes_outside_roots_fail_and_inside_succeed() {
    need_sandbox!("writes_outside_roots_fail_and_inside_succeed");
    let w = SecretWorld::new();
    let o = w.run(
        r#"echo x > /usr/cordon-escape && echo WROTE-USR
echo x > "$OUTSIDE/new.txt" && echo WROTE-OUTSIDE
echo x >> "$OUTSIDE/target.txt" && echo APPENDED-OUTSIDE
echo x > "$HOME/planted"
echo inside > inside.txt && echo WROTE-INSIDE
echo tmp > /tmp/t && cat /tmp/t"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(!out.contains("WROTE-USR"), "{out}");
    assert!(!out.contains("WROTE-OUTSIDE"), "{out}");
    assert!(!out.contains("APPENDED-OUTSIDE"), "{out}");
    assert!(out.contains("WROTE-INSIDE"), "{out}");
    assert!(out.contains("tmp"), "{out}");
    assert!(!Path::new("/usr/cordon-escape").exists());
    assert!(err.contains("containment blocked"), "{err}");
    assert!(!w.outside.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(w.outside.join("target.txt")).unwrap(),
        "ORIGINAL"
    );
    // The hidden HOME is a private, throwaway tmpfs: nothing reaches the host's.
    assert!(!w.home.join("planted").exists());
    assert_eq!(
        std::fs::read_to_string(w.ws.join("inside.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn read_only_mode_makes_the_workspace_read_only() {
    need_sandbox!("read_only_mode_makes_the_workspace_read_only");
    let w = SecretWorld::new();
    let o = w.run(
        "cat t.sh > /dev/null && echo READ; echo x > new.txt && echo WROTE",
        &["--sandbox", "read-only"],
    );
    let (out, err) = text(&o);
    assert!(out.contains("READ"), "{out}\n{err}");
    assert!(!out.contains("WROTE"), "{out}");
    assert!(!w.ws.join("new.txt").exists());
}

#[test]
fn protected_paths_can_be_neither_written_nor_created() {
    need_sandbox!("protected_paths_can_be_neither_written_nor_created");
    let w = SecretWorld::new();
    let report = w.ws.parent().unwrap().join("report.json");
    let o = w.run(
        r#"echo evil > .git/hooks/pre-commit && echo WROTE-HOOK
echo '[core] fsmonitor = evil' >> .git/config && echo WROTE-GITCONFIG
mkdir -p .vscode && echo '{}' > .vscode/tasks.json
echo '{}' > .mcp.json
mkdir -p .claude && echo '{}' > .claude/settings.json
exit 0"#,
        &["--report", report.to_str().unwrap()],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    // Inside, the copy-on-write workspace takes the writes; none reaches the host.
    assert!(out.contains("WROTE-HOOK"), "{out}");
    assert!(!w.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    for p in [".vscode", ".mcp.json", ".claude"] {
        assert!(!w.ws.join(p).exists(), "{p} survived the run");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let targets: Vec<String> = r["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "not-merged")
        .map(|b| b["target"].as_str().unwrap().to_string())
        .collect();
    for p in [
        ".vscode",
        ".mcp.json",
        ".claude",
        ".git/hooks/pre-commit",
        ".git/config",
    ] {
        assert!(
            targets.iter().any(|t| t.ends_with(p)),
            "{p} not reported: {targets:?}"
        );
    }
    // Writes inside the roots are not reported.
    assert!(!targets.iter().any(|t| t.ends_with("t.sh")), "{targets:?}");
    assert_eq!(r["tier"], "full");
    assert!(r["landlock_abi"].is_number());
    assert_eq!(r["enforced"]["seccomp"], true);
}

#[test]
fn protected_paths_created_inside_never_reach_the_host() {
    need_sandbox!("protected_paths_created_inside_never_reach_the_host");
    let w = SecretWorld::new();
    let o = w.run(
        r#"mkdir .vscode && echo '{}' > .vscode/tasks.json && echo MADE-DIR
echo '{}' > .mcp.json && echo MADE-FILE
ln -s /etc/passwd .cursor && echo MADE-LINK
mkdir ordinary && echo MADE-ORDINARY
exit 0"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    for want in ["MADE-DIR", "MADE-FILE", "MADE-LINK", "MADE-ORDINARY"] {
        assert!(out.contains(want), "{want} missing: {out}\n{err}");
    }
    for p in [".vscode", ".mcp.json", ".cursor"] {
        assert!(
            std::fs::symlink_metadata(w.ws.join(p)).is_err(),
            "{p} reached the host"
        );
    }
    assert!(w.ws.join("ordinary").is_dir());
    assert!(err.contains("not merged"), "{err}");
}

#[test]
fn a_protected_path_that_is_a_symlink_refuses_to_start() {
    need_sandbox!("a_protected_path_that_is_a_symlink_refuses_to_start");
    let w = SecretWorld::new();
    std::os::unix::fs::symlink(&w.outside, w.ws.join(".vscode")).unwrap();
    let o = w.run("echo RAN", &[]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
    assert!(!out.contains("RAN"));
    assert!(err.contains("symlink") && err.contains(".vscode"), "{err}");
}

#[test]
fn masked_secrets_read_as_empty_or_fail() {
    need_sandbox!("masked_secrets_read_as_empty_or_fail");
    let w = SecretWorld::new();
    let body = r#"cat "$HOME/.ssh/id_rsa" "$HOME/.aws/credentials" "$HOME/.netrc" .env "$HOME/other/.env" 2>&1; ls -a "$HOME/.ssh" 2>&1; (echo planted >> .env) 2>/dev/null && echo WROTE-MASK; echo END"#;
    for home in ["hidden", "visible"] {
        let o = w.run(body, &["--home", home]);
        let (out, err) = text(&o);
        assert!(out.contains("END"), "{out}\n{err}");
        for secret in [
            "PRIVATE-KEY-MATERIAL",
            "AWS-SECRET",
            "NETRC-SECRET",
            "WORKSPACE-SECRET",
        ] {
            assert!(
                !out.contains(secret),
                "--home {home}: {secret} leaked: {out}"
            );
        }
        // A masked file is read-only, not a sink that swallows writes.
        assert!(!out.contains("WROTE-MASK"), "--home {home}: {out}");
        if home == "hidden" {
            // A sibling project's .env under HOME is invisible, not just masked.
            assert!(!out.contains("SIBLING-SECRET"), "{out}");
        }
    }
    // The host's files are untouched.
    assert_eq!(
        std::fs::read_to_string(w.ws.join(".env")).unwrap(),
        "WORKSPACE-SECRET"
    );
}

/// The sandbox's PID 1 is cordon's own helper, forked from cordon (not executed again):
/// its `/proc/1/cmdline`, which every process inside may read, and its `environ` show
/// nothing of cordon's command line or environment; neither does any other process the
/// command can see. As root and as an unprivileged user.
#[test]
fn system_secrets_stay_unreadable_even_as_root() {
    need_sandbox!("system_secrets_stay_unreadable_even_as_root");
    // Run as root, the command is uid 0 in its namespace: without the masks, the owner's
    // bits would let it read password hashes and private keys.
    if !is_root() {
        eprintln!("system_secrets_stay_unreadable_even_as_root: runs only as root");
        return;
    }
    let mut secrets: Vec<PathBuf> = ["/etc/shadow", "/etc/gshadow"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for dir in ["/etc/ssl/private", "/etc/ssh"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if dir == "/etc/ssl/private"
                || (name.starts_with("ssh_host_") && name.ends_with("_key"))
            {
                secrets.push(e.path());
            }
        }
    }
    let w = SecretWorld::new();
    let mut tested = 0;
    for p in &secrets {
        let host = std::fs::read_to_string(p).unwrap_or_default();
        let Some(line) = host.lines().find(|l| l.len() > 8) else {
            continue;
        };
        tested += 1;
        // What the host can read must not come out of the sandbox.
        let o = w.run(&format!("cat {} 2>&1; echo END", p.display()), &[]);
        let (out, err) = text(&o);
        assert!(out.contains("END"), "{}: {err}", p.display());
        // Never print the secret itself, not even in a failing test's log.
        assert!(
            !out.contains(line),
            "{} leaked out of the sandbox",
            p.display()
        );
    }
    assert!(tested > 0, "no system secret to test on this host");
}

#[test]
fn symlinks_in_the_workspace_do_not_allow_writing_outside() {
    need_sandbox!("symlinks_in_the_workspace_do_not_allow_writing_outside");
    let w = SecretWorld::new();
    std::os::unix::fs::symlink(w.outside.join("target.txt"), w.ws.join("link")).unwrap();
    std::os::unix::fs::symlink(&w.outside, w.ws.join("dirlink")).unwrap();
    let o = w.run(
        r#"echo evil > link && echo WROTE-FILE-LINK
echo evil > dirlink/new.txt && echo WROTE-DIR-LINK
cat link"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(!out.contains("WROTE-FILE-LINK"), "{out}\n{err}");
    assert!(!out.contains("WROTE-DIR-LINK"), "{out}");
    assert!(
        out.contains("ORIGINAL"),
        "reading through the link works: {out}"
    );
    assert_eq!(
        std::fs::read_to_string(w.outside.join("target.txt")).unwrap(),
        "ORIGINAL"
    );
    assert!(!w.outside.join("new.txt").exists());
}

#[test]
fn a_tool_call_chosen_cwd_does_not_widen_roots() {
    need_sandbox!("a_tool_call_chosen_cwd_does_not_widen_roots");
    let w = SecretWorld::new();
    w.script("echo x > here.txt && echo WROTE; pwd");
    let o = Command::new(bin())
        .arg("exec")
        .arg("--isolated")
        .arg("--config")
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--cwd")
        .arg(&w.outside)
        .arg("--")
        .arg(w.ws.join("t.sh"))
        .env_clear()
        .env("HOME", &w.home)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    // The policy may refuse the absolute script path; either way nothing is written.
    assert!(!out.contains("WROTE"), "{out}\n{err}");
    assert!(!w.outside.join("here.txt").exists());
}

#[test]
fn hard_links_to_files_outside_the_roots_cannot_be_created() {
    need_sandbox!("hard_links_to_files_outside_the_roots_cannot_be_created");
    let w = SecretWorld::new();
    let o = w.run(
        r#"ln "$OUTSIDE/target.txt" hl && echo LINKED
ln /etc/passwd hl2 && echo LINKED2
echo done"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(out.contains("done"), "{out}\n{err}");
    assert!(!out.contains("LINKED"), "{out}");
    assert!(!w.ws.join("hl").exists() && !w.ws.join("hl2").exists());
}

/// Without network, the full tier's IP sockets live in a namespace of their own: they
/// can be made (a test suite's local server, see `sandbox_net.rs`), but nothing
/// answers there, and a netlink socket, which could reconfigure it, cannot be made.
#[test]
fn unprivileged_user_gets_the_same_containment() {
    need_sandbox!("unprivileged_user_gets_the_same_containment");
    if !is_root() {
        // Already unprivileged: the other tests cover this case.
        return;
    }
    let w = SecretWorld::new();
    let o = w.run_as_nobody(
        r#"id -u
echo x > "$OUTSIDE/new.txt" && echo WROTE-OUTSIDE
cat "$HOME/.ssh/id_rsa" .env 2>/dev/null
echo ok > inside.txt && echo WROTE-INSIDE
ls /proc | grep -c '^[0-9]'
"$PROBE" netlink; "$PROBE" ptrace-parent; exit 0"#,
        &[],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "65534", "{out}\n{err}");
    assert!(!out.contains("WROTE-OUTSIDE"), "{out}");
    assert!(
        !out.contains("PRIVATE-KEY") && !out.contains("WORKSPACE-SECRET"),
        "{out}"
    );
    assert!(out.contains("WROTE-INSIDE"), "{out}");
    assert!(
        lines.iter().filter(|l| l.starts_with("ERR")).count() == 2,
        "{out}"
    );
    assert!(!w.outside.join("new.txt").exists());
}

#[test]
fn read_only_holds_on_host_submounts() {
    need_sandbox!("read_only_holds_on_host_submounts");
    if !is_root() {
        eprintln!("skipping read_only_holds_on_host_submounts: mounting a host tmpfs needs root");
        return;
    }
    let w = SecretWorld::new();
    // A writable host mount beneath a visible, read-only directory.
    let sub = w.outside.join("submount");
    std::fs::create_dir(&sub).unwrap();
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0777", "tmpfs"])
        .arg(&sub)
        .status()
        .unwrap();
    assert!(st.success(), "mount failed");
    std::fs::write(sub.join("probe"), "host").unwrap();
    let o = w.run(
        "echo x > \"$OUTSIDE/submount/new\" && echo WROTE-NEW; echo x >> \"$OUTSIDE/submount/probe\" && echo WROTE-OLD; cat \"$OUTSIDE/submount/probe\"",
        &[],
    );
    let new_exists = sub.join("new").exists();
    let probe = std::fs::read_to_string(sub.join("probe")).unwrap();
    let _ = Command::new("umount").arg(&sub).status();
    let (out, err) = text(&o);
    assert!(
        out.contains("host"),
        "the submount is visible: {out}\n{err}"
    );
    assert!(
        !out.contains("WROTE-NEW") && !out.contains("WROTE-OLD"),
        "{out}"
    );
    assert!(!new_exists);
    assert_eq!(probe, "host");
}

#[test]
fn host_mounts_made_during_the_run_do_not_appear() {
    need_sandbox!("host_mounts_made_during_the_run_do_not_appear");
    if !is_root() {
        eprintln!("skipping host_mounts_made_during_the_run_do_not_appear: mounting needs root");
        return;
    }
    let w = SecretWorld::new();
    let late = w.outside.join("late");
    std::fs::create_dir(&late).unwrap();
    w.script(
        r#"i=0; while [ ! -e "$OUTSIDE/late/ready" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
echo x > "$OUTSIDE/late/new" && echo WROTE"#,
    );
    let child = w.command(&[]).stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0777", "tmpfs"])
        .arg(&late)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(late.join("ready"), "").unwrap();
    let o = child.wait_with_output().unwrap();
    let wrote = late.join("new").exists();
    let _ = Command::new("umount").arg(&late).status();
    let (out, err) = text(&o);
    assert!(!out.contains("WROTE"), "{out}\n{err}");
    assert!(!wrote);
}
