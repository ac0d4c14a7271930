#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon exec` where user namespaces cannot be made, so that only the fallback tier
//! (Landlock and seccomp) is left, tested with real processes as root and as `nobody`.
//!
//! The host is made such a host for cordon alone, without touching any sysctl: the test
//! starts cordon in a child that first installs a seccomp filter (`unshare` and `clone`
//! with `CLONE_NEWUSER` fail with `EPERM`, `clone3` with `ENOSYS`, as a kernel without
//! user namespaces answers), which cordon and everything it starts inherit.
//!
//! What is checked is what the host sees: by default nothing runs (exit 125, one
//! sentence with the cause and the fix); accepted with `--require any`, the run prints
//! what it does not protect, cannot read HOME's secrets or cordon's audit log, cannot
//! write the host's `/tmp` or `/dev/shm`, has a private `TMPDIR` that is gone afterwards,
//! and the git hook and `core.fsmonitor` it plants are gone before the host's own `git`
//! runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{ALLOW_ALL, World, bin, is_root, text};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The seccomp filters of the wrapper: `clone3` answers `ENOSYS` (so libc falls back to
/// `clone`, whose flags a filter can read), and `unshare` and `clone` with
/// `CLONE_NEWUSER` answer `EPERM`. Two programs, one per errno; every other call is
/// allowed.
fn no_userns_filters() -> Vec<seccompiler::BpfProgram> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };
    let arch = if cfg!(target_arch = "aarch64") {
        TargetArch::aarch64
    } else {
        TargetArch::x86_64
    };
    let newuser = libc::CLONE_NEWUSER as u64;
    let with_newuser = || {
        vec![
            SeccompRule::new(vec![
                SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(newuser),
                    newuser,
                )
                .unwrap(),
            ])
            .unwrap(),
        ]
    };
    let eperm = SeccompFilter::new(
        [
            (libc::SYS_unshare, with_newuser()),
            (libc::SYS_clone, with_newuser()),
        ]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .unwrap();
    let enosys = SeccompFilter::new(
        [(libc::SYS_clone3, vec![])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .unwrap();
    vec![eperm.try_into().unwrap(), enosys.try_into().unwrap()]
}

/// Make `c` start where no user namespace can be made: its process installs
/// [`no_userns_filters`] before it executes the program (cordon, or `setpriv` on the
/// way to it), and everything it starts inherits them.
fn without_user_namespaces(c: &mut Command) {
    let filters = no_userns_filters();
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the forked child before `execve`, where only
    // async-signal-safe work is sound. It allocates nothing: the programs were built
    // before the fork and are only borrowed, and `apply_filter` makes two system calls
    // (`prctl(PR_SET_NO_NEW_PRIVS)`, `seccomp`) on them; a failure is read from errno.
    unsafe {
        c.pre_exec(move || {
            for f in &filters {
                if seccompiler::apply_filter(f).is_err() {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Landlock is what the fallback tier contains with: without it cordon refuses to run
/// at all, and these tests have nothing to observe.
fn landlock_or_skip(test: &str) -> bool {
    let out = Command::new(bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if v["landlock_abi"].as_i64().unwrap_or(0) > 0 {
        return true;
    }
    assert!(
        std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but Landlock is unavailable"
    );
    eprintln!("skipping {test}: Landlock is unavailable on this host");
    false
}

/// The users to run as: this one, and `nobody` too when the tests run as root.
fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

fn who(nobody: bool) -> &'static str {
    if nobody { "nobody" } else { "the test's user" }
}

/// `cordon exec [extra] -- ./t.sh` in `w`, as `nobody` or not, where no user namespace
/// can be made.
fn run_fallback(w: &World, body: &str, extra: &[&str], nobody: bool) -> Output {
    w.script(body);
    let mut c = if nobody {
        w.command_as_nobody(extra)
    } else {
        w.command(extra)
    };
    without_user_namespaces(&mut c);
    c.output().unwrap()
}

/// What the printed list must name, one phrase per line of it.
const GAPS: &[&str] = &[
    "code the host runs later",
    "not a guarantee",
    "host services on Unix sockets",
    "host processes",
    "the host's network namespace",
    "System V IPC",
    "secrets inside the writable roots",
    "scratch space",
];

#[test]
fn without_user_namespaces_cordon_refuses_by_default_and_runs_nothing() {
    if !landlock_or_skip("without_user_namespaces_cordon_refuses_by_default_and_runs_nothing") {
        return;
    }
    for nobody in users() {
        let w = World::new();
        let o = run_fallback(&w, "echo RAN > ran.txt", &[], nobody);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(125), "{}: {out}\n{err}", who(nobody));
        assert!(
            err.contains(
                "user namespaces are unavailable here (Operation not permitted): cordon refuses to run without them; pass --require any"
            ),
            "{err}"
        );
        assert!(
            err.contains("does not keep code the command plants"),
            "{err}"
        );
        // One sentence: the refusal is one line.
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!w.ws.join("ran.txt").exists(), "{}: it ran", who(nobody));
        // `--require full` says the same, explicitly.
        let o = run_fallback(&w, "echo RAN > ran.txt", &["--require", "full"], nobody);
        assert_eq!(o.status.code(), Some(125));
        assert!(!w.ws.join("ran.txt").exists());
    }
}

#[test]
fn the_accepted_fallback_prints_what_it_does_not_protect_and_keeps_secrets_state_and_tmp() {
    if !landlock_or_skip(
        "the_accepted_fallback_prints_what_it_does_not_protect_and_keeps_secrets_state_and_tmp",
    ) {
        return;
    }
    for nobody in users() {
        let w = World::new();
        std::fs::create_dir_all(w.home.join(".ssh")).unwrap();
        std::fs::write(w.home.join(".ssh/id_ed25519"), "SECRET-SSH-KEY\n").unwrap();
        std::fs::create_dir_all(w.home.join(".aws")).unwrap();
        std::fs::write(w.home.join(".aws/credentials"), "SECRET-AWS\n").unwrap();
        std::fs::write(w.home.join(".netrc"), "SECRET-NETRC\n").unwrap();
        let audit = w.home.join(".local/state/cordon/audit.jsonl");
        let probe = format!(
            "cordon-fallback-probe-{}",
            w.root.file_name().unwrap().to_string_lossy()
        );
        let body = format!(
            r#"echo "TMPDIR=$TMPDIR TMP=$TMP TEMP=$TEMP"
f=$(mktemp) && echo data > "$f" && echo "MKTEMP $f $(cat "$f")"
echo "SCRATCH $(stat -c '%a %u' "$TMPDIR")"
for s in "$HOME/.ssh/id_ed25519" "$HOME/.aws/credentials" "$HOME/.netrc" "{audit}"; do
  if cat "$s" 2>/dev/null; then echo "READ $s"; else echo "DENIED $s"; fi
done
for d in /tmp /var/tmp /dev/shm; do
  if (echo x > "$d/{probe}") 2>/dev/null; then echo "WROTE $d"; else echo "REFUSED $d"; fi
done
head -c 0 /etc/passwd && echo SYSTEM-READ
echo ok > out.txt && echo WORKSPACE-WRITTEN"#,
            audit = audit.display()
        );
        let report = w.root.join("report.json");
        let o = run_fallback(
            &w,
            &body,
            &["--require", "any", "--report", report.to_str().unwrap()],
            nobody,
        );
        let (out, err) = text(&o);
        let ctx = format!("{}: {out}\n{err}", who(nobody));
        assert_eq!(o.status.code(), Some(0), "{ctx}");
        // Said before the command ran, every time: the tier and what it does not protect.
        assert!(err.contains("running in the fallback tier"), "{ctx}");
        for gap in GAPS {
            assert!(err.contains(gap), "{gap} missing: {ctx}");
        }
        let listed = err
            .lines()
            .filter(|l| l.starts_with("cordon:   - "))
            .count();
        assert_eq!(listed, 7, "{ctx}");
        // And recorded in the report.
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(r["tier"], "fallback");
        assert_eq!(r["unprotected"].as_array().unwrap().len(), 7, "{r}");

        // Secrets and cordon's own audit log: unreadable (and the log is there).
        assert!(audit.exists(), "{ctx}");
        for secret in ["SECRET-SSH-KEY", "SECRET-AWS", "SECRET-NETRC", "\"seq\""] {
            assert!(!out.contains(secret), "{secret} read: {ctx}");
        }
        assert_eq!(out.matches("DENIED ").count(), 4, "{ctx}");
        // The host's shared scratch places: not writable, nothing left there.
        for d in ["/tmp", "/var/tmp", "/dev/shm"] {
            assert!(out.contains(&format!("REFUSED {d}")), "{d}: {ctx}");
            assert!(!Path::new(d).join(&probe).exists(), "{d}: {ctx}");
        }
        assert!(
            out.contains("SYSTEM-READ") && out.contains("WORKSPACE-WRITTEN"),
            "{ctx}"
        );
        // A private TMPDIR (the same for TMP and TEMP) that mktemp uses, gone afterwards.
        let line = out.lines().find(|l| l.starts_with("TMPDIR=")).unwrap();
        let tmpdir = PathBuf::from(
            line.split(' ')
                .next()
                .unwrap()
                .trim_start_matches("TMPDIR="),
        );
        assert!(tmpdir.is_absolute(), "{ctx}");
        assert!(
            line.contains(&format!("TMP={}", tmpdir.display()))
                && line.contains(&format!("TEMP={}", tmpdir.display())),
            "{ctx}"
        );
        assert!(
            out.contains(&format!("MKTEMP {}/", tmpdir.display())) && out.contains(" data"),
            "{ctx}"
        );
        let uid = if nobody { nobody_uid() } else { common::uid() };
        assert!(out.contains(&format!("SCRATCH 700 {uid}")), "{ctx}");
        assert!(
            !tmpdir.exists(),
            "{} was left behind: {ctx}",
            tmpdir.display()
        );
    }
}

fn nobody_uid() -> u32 {
    let o = Command::new("id").args(["-u", "nobody"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

/// The review's reproduction: an allowed script plants `.git/hooks/pre-commit` and sets
/// `core.fsmonitor`. Accepted, the fallback tier puts both back before the host's own
/// `git status` and `git commit` run (and says that this is not a guarantee); a protected
/// directory that did not exist (`.vscode`) is removed, as before.
#[test]
fn the_accepted_fallback_undoes_a_planted_hook_and_fsmonitor_before_the_host_runs_git() {
    if !landlock_or_skip(
        "the_accepted_fallback_undoes_a_planted_hook_and_fsmonitor_before_the_host_runs_git",
    ) {
        return;
    }
    for nobody in users() {
        let w = World::new();
        let git = |args: &[&str]| {
            Command::new("git")
                .args(["-c", "safe.directory=*", "-c", "user.name=t"])
                .args(["-c", "user.email=t@example.com"])
                .args(args)
                .current_dir(&w.ws)
                .env_clear()
                .env("HOME", &w.home)
                .env("PATH", "/usr/bin:/bin")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .unwrap()
        };
        assert!(git(&["init", "-q", "."]).status.success());
        let config_before = std::fs::read_to_string(w.ws.join(".git/config")).unwrap();
        let marks = w.root.join("marks");
        std::fs::create_dir_all(&marks).unwrap();
        let body = format!(
            r#"printf '#!/bin/sh\ntouch {m}/hook-ran\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
git config core.fsmonitor "touch {m}/fsmonitor-ran"
mkdir -p .vscode && echo '{{}}' > .vscode/tasks.json
echo ok > work.txt
echo PLANTED"#,
            m = marks.display()
        );
        let report = w.root.join("report.json");
        let o = run_fallback(
            &w,
            &body,
            &["--require", "any", "--report", report.to_str().unwrap()],
            nobody,
        );
        let (out, err) = text(&o);
        let ctx = format!("{}: {out}\n{err}", who(nobody));
        assert_eq!(o.status.code(), Some(0), "{ctx}");
        assert!(out.contains("PLANTED"), "{ctx}");
        assert!(err.contains("not a guarantee"), "{ctx}");
        // What the host has now.
        assert!(!w.ws.join(".git/hooks/pre-commit").exists(), "{ctx}");
        assert_eq!(
            std::fs::read_to_string(w.ws.join(".git/config")).unwrap(),
            config_before,
            "{ctx}"
        );
        assert!(!w.ws.join(".vscode").exists(), "{ctx}");
        assert!(w.ws.join("work.txt").exists(), "ordinary work stays: {ctx}");
        // Each undone path is reported.
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        let blocked = r["blocked"].as_array().unwrap();
        for (path, why) in [
            (".git/hooks/pre-commit", "git hook"),
            (".git/config", "core.fsmonitor"),
            (".vscode", "removed after the run"),
        ] {
            let target = w.ws.join(path).display().to_string();
            assert!(
                blocked.iter().any(|b| b["target"] == target.as_str()
                    && b["detail"].as_str().unwrap().contains(why)),
                "{path}: {r}"
            );
        }
        assert!(err.contains("containment blocked"), "{ctx}");

        // The host's git runs neither.
        assert!(git(&["status", "--short"]).status.success());
        let commit = git(&["commit", "-q", "--allow-empty", "-m", "after the run"]);
        assert!(commit.status.success(), "{:?}", text(&commit));
        assert!(!marks.join("hook-ran").exists(), "the planted hook ran");
        assert!(!marks.join("fsmonitor-ran").exists(), "core.fsmonitor ran");
        // The check itself can see a hook run: one planted by the host does.
        std::fs::write(
            w.ws.join(".git/hooks/pre-commit"),
            format!("#!/bin/sh\ntouch {}/hook-ran\n", marks.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            w.ws.join(".git/hooks/pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(
            git(&["commit", "-q", "--allow-empty", "-m", "control"])
                .status
                .success()
        );
        assert!(
            marks.join("hook-ran").exists(),
            "the control hook did not run"
        );
    }
}

/// `[sandbox] require = "any"` accepts the fallback from the user's file or a
/// `--config` file; a project's own file, even a trusted one, does not.
#[test]
fn only_the_users_config_accepts_the_fallback_never_the_projects() {
    if !landlock_or_skip("only_the_users_config_accepts_the_fallback_never_the_projects") {
        return;
    }
    let w = World::new();
    w.script("echo RAN > ran.txt");
    let xdg = w.root.join("xdg");
    std::fs::create_dir_all(xdg.join("cordon")).unwrap();
    std::fs::create_dir_all(w.ws.join(".cordon")).unwrap();
    let run = |user: &str, project: &str, extra: &[&str]| {
        std::fs::write(xdg.join("cordon/policy.toml"), user).unwrap();
        std::fs::write(w.ws.join(".cordon/policy.toml"), project).unwrap();
        let _ = std::fs::remove_file(w.ws.join("ran.txt"));
        let mut c = Command::new(bin());
        c.arg("exec")
            .arg("--workspace")
            .arg(&w.ws)
            .args(extra)
            .args(["--", "./t.sh"])
            .current_dir(&w.ws)
            .env_clear()
            .env("HOME", &w.home)
            .env("XDG_CONFIG_HOME", &xdg)
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null());
        without_user_namespaces(&mut c);
        let o = c.output().unwrap();
        (o.status.code(), w.ws.join("ran.txt").exists(), text(&o).1)
    };
    let trusted = format!("trusted_workspaces = [\"{}\"]\n{ALLOW_ALL}", w.ws.display());
    let any = "[sandbox]\nrequire = \"any\"\n";
    // The project asks for the fallback: refused, and nothing ran.
    let (code, ran, err) = run(&trusted, any, &[]);
    assert_eq!((code, ran), (Some(125), false), "{err}");
    // The user's file accepts it.
    let (code, ran, err) = run(&format!("{trusted}{any}"), "", &[]);
    assert_eq!((code, ran), (Some(0), true), "{err}");
    assert!(err.contains("running in the fallback tier"), "{err}");
    // The command line outranks the user's file.
    let (code, ran, err) = run(&format!("{trusted}{any}"), "", &["--require", "full"]);
    assert_eq!((code, ran), (Some(125), false), "{err}");
    // A `--config` file accepts it too.
    let extra = w.root.join("extra.toml");
    std::fs::write(&extra, any).unwrap();
    let (code, ran, err) = run(&trusted, "", &["--config", extra.to_str().unwrap()]);
    assert_eq!((code, ran), (Some(0), true), "{err}");
}

#[test]
fn doctor_says_the_fallback_is_refused_and_lists_what_it_does_not_protect() {
    let w = World::new();
    let doctor = |extra: &[&str]| {
        let mut c = Command::new(bin());
        c.args(["doctor", "--isolated"])
            .args(extra)
            .current_dir(&w.ws)
            .env_clear()
            .env("HOME", &w.home)
            .env("PATH", "/usr/bin:/bin");
        without_user_namespaces(&mut c);
        let o = c.output().unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
        text(&o).0
    };
    let out = doctor(&[]);
    assert!(out.contains("tier: fallback"), "{out}");
    assert!(
        out.contains("fallback tier: refused (the default)"),
        "{out}"
    );
    assert!(
        out.contains(
            "this host gets only the fallback tier, so `cordon exec` refuses every run here"
        ),
        "{out}"
    );
    for gap in GAPS {
        assert!(out.contains(gap), "{gap}: {out}");
    }
    let accept = w.root.join("accept.toml");
    std::fs::write(&accept, "[sandbox]\nrequire = \"any\"\n").unwrap();
    let out = doctor(&["--config", accept.to_str().unwrap()]);
    assert!(out.contains("fallback tier: accepted"), "{out}");
    let json = doctor(&["--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["tier"], "fallback");
    assert_eq!(v["fallback_refused"], true);
    assert_eq!(v["required_tier"], "full");
    assert_eq!(v["fallback_unprotected"].as_array().unwrap().len(), 7);
}
