#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Regression tests for the smaller containment findings of issue 11 (item 9), with real
//! processes: untrusted text printed with its control characters escaped, `/sys` without
//! the host's network interfaces, no egress proxy without an allowlist under
//! `on-failure`, relative `--writable-root` and `--mask` resolved against the current
//! directory, and `personality` limited to the default persona.
//!
//! Needs user namespaces; skips with a reason when the host has none, unless
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`, which turns the skip into a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;
use common::{World, bin};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Everything the command may do is allowed by policy: containment is what is observed.
const ALLOW_ALL: &str = r#"
mode = "bypass"
[defaults]
read_inside = "allow"
read_outside = "allow"
write_inside = "allow"
write_outside = "allow"
exec = "allow"
network = "allow"
"#;

/// A world whose policy allows everything ([`ALLOW_ALL`]), with a directory outside
/// every root (`outside()`). The sandbox hides the temporary directories and binds the
/// workspace back; `outside` is in HOME, which `--home visible` shows read-only.
fn world() -> World {
    let w = World::made("cordon-findings-", None, Some(ALLOW_ALL));
    std::fs::create_dir_all(w.outside()).unwrap();
    w
}

impl World {
    /// A directory outside every root, in HOME.
    fn outside(&self) -> PathBuf {
        self.home.join("outside")
    }

    /// `cordon exec FLAGS -- sh -c SCRIPT`, from `dir`, with `$OUTSIDE` passed in.
    fn exec_in(&self, dir: &Path, flags: &[&str], script: &str) -> Output {
        self.exec_command(dir, flags, script).output().unwrap()
    }

    /// The command of [`exec_in`](Self::exec_in), not run.
    fn exec_command(&self, dir: &Path, flags: &[&str], script: &str) -> Command {
        let mut c = Command::new(bin());
        c.arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.config)
            .arg("--workspace")
            .arg(&self.ws)
            .args(["--env", "OUTSIDE"])
            .args(flags)
            .args(["--", "sh", "-c", script])
            .current_dir(dir)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("CORDON_STATE_DIR", &self.state)
            .env("OUTSIDE", self.outside())
            .stdin(Stdio::null());
        c
    }

    fn exec(&self, flags: &[&str], script: &str) -> Output {
        self.exec_in(&self.ws, flags, script)
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether this host can give a full sandbox; panics instead when it must.
fn sandbox_available(test: &str) -> bool {
    let w = world();
    let o = w.exec(&["--require", "full"], "true");
    if o.status.success() {
        return true;
    }
    assert!(
        std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_none_or(|v| v != "1"),
        "{test}: CORDON_REQUIRE_SANDBOX_TESTS=1 but the full sandbox is unavailable: {}",
        text(&o)
    );
    eprintln!(
        "skipping {test}: the full sandbox is unavailable here ({})",
        text(&o)
    );
    false
}

macro_rules! need_sandbox {
    ($name:expr) => {
        if !sandbox_available($name) {
            return;
        }
    };
}

/// A file name that would forge a `cordon:` line and recolour the terminal if printed
/// raw, written outside the roots (blocked), then in a directory whose name would set
/// the terminal's title, under `on-failure` (the offered directory is printed).
#[test]
fn issue11_control_characters_in_blocked_paths_are_printed_escaped() {
    need_sandbox!("issue11_control_characters_in_blocked_paths_are_printed_escaped");
    let w = world();
    let o = w.exec(
        &["--home", "visible"],
        // The shell's own complaint is the command's output, not cordon's: silenced.
        r#"{ echo x > "$OUTSIDE/$(printf 'a\ncordon: forged\033[31m')"; } 2>/dev/null; true"#,
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    assert!(err.contains("containment blocked"), "{}", text(&o));
    assert!(
        err.contains("a\\ncordon: forged\\u{1b}[31m"),
        "the name is shown escaped: {}",
        text(&o)
    );
    assert!(!err.contains('\u{1b}'), "no raw ESC: {err:?}");
    assert!(
        !err.lines().any(|l| l.starts_with("cordon: forged")),
        "no forged line: {err:?}"
    );

    let dir = w.outside().join("d\u{1b}]0;pwned\u{7}\ncordon: forged");
    std::fs::create_dir(&dir).unwrap();
    let o = w.exec(
        &["--home", "visible", "--approval", "on-failure", "--pending"],
        r#"{ echo x > "$OUTSIDE/$(printf 'd\033]0;pwned\007\ncordon: forged')/f"; } 2>/dev/null || exit 1"#,
    );
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("needs approval"), "{}", text(&o));
    assert!(
        err.contains("d\\u{1b}]0;pwned\\u{7}\\ncordon: forged"),
        "the offered directory is shown escaped: {}",
        text(&o)
    );
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}'),
        "no raw ESC or BEL: {err:?}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("cordon: forged")),
        "no forged line: {err:?}"
    );
    assert!(!dir.join("f").exists());
}

/// The host's interfaces (other than `lo`) and their MAC addresses, from its `/sys`.
fn host_interfaces() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/sys/class/net").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "lo" {
            continue;
        }
        let mac = std::fs::read_to_string(e.path().join("address"))
            .unwrap_or_default()
            .trim()
            .to_owned();
        out.push((name, mac));
    }
    out
}

/// Lists what `/sys` says about network interfaces, then `END`.
const SYS_PROBE: &str = "ls /sys/class/net /sys/devices/virtual/net; \
    cat /sys/class/net/*/address; \
    find /sys/devices -path '*/net/*' -name address -exec cat {} + 2>/dev/null; \
    find /sys/devices -type d -path '*/net/*' -prune 2>/dev/null; \
    echo END";

/// No host interface name (but `lo`) and no host MAC address in `out`.
fn assert_no_host_interface(out: &str, o: &Output) {
    assert!(out.contains("END"), "{}", text(o));
    let host = host_interfaces();
    eprintln!("host interfaces: {host:?}");
    for (name, mac) in &host {
        assert!(
            !out.split(|c: char| c.is_whitespace() || c == '/')
                .any(|w| w == name),
            "host interface {name} is visible: {out}"
        );
        if !mac.is_empty() && mac != "00:00:00:00:00:00" {
            assert!(
                !out.contains(mac.as_str()),
                "host MAC {mac} is visible: {out}"
            );
        }
    }
}

#[test]
fn issue11_sys_does_not_show_the_hosts_interfaces_or_mac_addresses() {
    need_sandbox!("issue11_sys_does_not_show_the_hosts_interfaces_or_mac_addresses");
    let w = world();
    let o = w.exec(&[], SYS_PROBE);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.lines().any(|l| l == "lo"),
        "the sandbox's own loopback is listed: {}",
        text(&o)
    );
    assert_no_host_interface(&out, &o);
}

/// Where the kernel refuses a fresh sysfs (a host `/sys` partly covered, as in some
/// containers: here `/sys/firmware`, covered in a mount namespace of the test's own), the
/// host's `/sys` is shown with its interface directories masked. Needs root, to cover.
#[test]
fn issue11_sys_masks_the_hosts_interfaces_where_a_fresh_sysfs_is_refused() {
    need_sandbox!("issue11_sys_masks_the_hosts_interfaces_where_a_fresh_sysfs_is_refused");
    if euid() != 0 || !Path::new("/sys/firmware").is_dir() {
        eprintln!("skipping: covering /sys/firmware needs root and a /sys/firmware");
        return;
    }
    let w = world();
    let c = w.exec_command(
        &w.ws,
        &[],
        &format!("stat -f -c 'firmware is %T' /sys/firmware; {SYS_PROBE}"),
    );
    let o = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--"])
        .args([
            "sh",
            "-c",
            "mount -t tmpfs none /sys/firmware && exec \"$@\"",
            "sh",
        ])
        .arg(c.get_program())
        .args(c.get_args())
        .current_dir(&w.ws)
        .env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("firmware is tmpfs"),
        "the host's /sys, not a fresh one: {}",
        text(&o)
    );
    assert_no_host_interface(&out, &o);
}

#[test]
fn issue11_on_failure_without_an_allowlist_starts_no_proxy() {
    need_sandbox!("issue11_on_failure_without_an_allowlist_starts_no_proxy");
    let w = world();
    let probe = "env | grep -i '_proxy=' ; ls /run/cordon 2>&1; echo END";
    let o = w.exec(&["--approval", "on-failure"], probe);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("END"), "{}", text(&o));
    assert!(
        !out.to_ascii_lowercase().contains("_proxy="),
        "{}",
        text(&o)
    );
    assert!(!out.contains("egress.sock"), "{}", text(&o));
    // With an allowlist the proxy is there: the probe above can see it.
    let o = w.exec(
        &["--approval", "on-failure", "--allow-net", "example.com"],
        probe,
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("HTTP_PROXY="), "{}", text(&o));
    assert!(out.contains("http_proxy="), "{}", text(&o));
    assert!(out.contains("egress.sock"), "{}", text(&o));
}

#[test]
fn issue11_relative_writable_roots_and_masks_are_resolved_against_the_current_directory() {
    need_sandbox!(
        "issue11_relative_writable_roots_and_masks_are_resolved_against_the_current_directory"
    );
    let w = world();
    let extra = w.root.join("extra");
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("secret.txt"), "EXTRA-SECRET").unwrap();
    // A same-named directory under HOME, which the old reading would have used.
    std::fs::create_dir(w.home.join("extra")).unwrap();
    let script = format!(
        "echo written > {}/new.txt; cat {}/secret.txt; echo END",
        extra.display(),
        extra.display()
    );
    let o = w.exec_in(
        &w.root,
        &["--writable-root", "extra", "--mask", "extra/secret.txt"],
        &script,
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.contains("END"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(extra.join("new.txt")).unwrap(),
        "written\n",
        "{}",
        text(&o)
    );
    assert!(!out.contains("EXTRA-SECRET"), "the mask held: {}", text(&o));
    assert!(!w.home.join("extra/new.txt").exists());

    let o = w.exec_in(&w.root, &["--writable-root", "missing"], "true");
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("cannot use the writable root missing")
            && err.contains(&w.root.join("missing").display().to_string()),
        "{}",
        text(&o)
    );
}

#[test]
fn issue11_personality_flags_other_than_the_default_are_refused() {
    need_sandbox!("issue11_personality_flags_other_than_the_default_are_refused");
    let w = world();
    let o = w.exec(
        &[],
        "setarch -R true; echo R=$?; setarch -X true; echo X=$?; \
         setarch linux32 true; echo L32=$?; setarch \"$(uname -m)\" true; echo PLAIN=$?",
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    if out.contains("PLAIN=127") {
        eprintln!("skipping the setarch checks: setarch is not installed");
        return;
    }
    for refused in ["R=1", "X=1", "L32=1"] {
        assert!(out.contains(refused), "{refused}: {}", text(&o));
    }
    assert!(out.contains("PLAIN=0"), "{}", text(&o));
}

fn euid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|s| s.parse().ok())
        .unwrap()
}

#[test]
fn issue11_doctor_says_when_it_runs_as_root() {
    // Its own state directory (doctor makes the change sets' place there), never the
    // real user's; `nobody` cannot enter it and falls back to /var/tmp as it would.
    let state = tempfile::tempdir().unwrap();
    let doctor = |as_nobody: bool| {
        let mut c = if as_nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
                .arg(bin());
            c
        } else {
            Command::new(bin())
        };
        let o = c
            .arg("doctor")
            .env("CORDON_STATE_DIR", state.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let root = euid() == 0;
    let out = doctor(false);
    let want = if root { "yes" } else { "no" };
    assert!(
        out.lines().any(|l| l == format!("running as root: {want}")),
        "{out}"
    );
    let caveat = "the kernel does not apply RLIMIT_NPROC to uid 0";
    assert_eq!(out.contains(caveat), root, "{out}");
    if root {
        // The same binary, run by an ordinary user, says so too. (`nobody` must be able
        // to reach the binary: skipped when the target directory is private.)
        let o = Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(bin())
            .arg("--version")
            .output()
            .unwrap();
        if o.status.success() {
            let out = doctor(true);
            assert!(out.lines().any(|l| l == "running as root: no"), "{out}");
            assert!(!out.contains(caveat), "{out}");
        }
    }
    let json: serde_json::Value = serde_json::from_str(&doctor_json()).unwrap();
    assert_eq!(json["running_as_root"], root, "{json}");
    assert!(json["userns_settings"].is_object(), "{json}");
    assert!(json["userns_restrictions"].is_array(), "{json}");
}

fn doctor_json() -> String {
    let o = Command::new(bin())
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A mask named through a symlinked directory hides the file under both of its names,
/// and a mask through a second link spelling (a link to the link) does too.
#[test]
fn mask_through_a_symlinked_directory_hides_the_file_under_every_name() {
    need_sandbox!("mask_through_a_symlinked_directory_hides_the_file_under_every_name");
    let w = world();
    let real = w.ws.join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("secret"), "LINKED-SECRET").unwrap();
    let link = w.ws.join("dirlink");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let link2 = w.ws.join("dirlink2");
    std::os::unix::fs::symlink("dirlink", &link2).unwrap();
    let script = format!(
        "cat {r}/secret; cat {l}/secret; cat {l2}/secret; echo END",
        r = real.display(),
        l = link.display(),
        l2 = link2.display()
    );
    for mask in [link.join("secret"), link2.join("secret")] {
        let mask = mask.display().to_string();
        let o = w.exec(&["--mask", &mask], &script);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{}", text(&o));
        assert!(out.contains("END"), "{}", text(&o));
        assert!(
            !out.contains("LINKED-SECRET"),
            "--mask {mask}: {}",
            text(&o)
        );
    }
    // The same file without a mask is readable: the test sees what it claims to.
    let o = w.exec(&[], &script);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("LINKED-SECRET"),
        "{}",
        text(&o)
    );
}

/// cordon's own files made on first use (the store, the audit log and its signing key)
/// exist before the sandbox is built, so they are masked like every later time: a state
/// directory inside the workspace never shows the command the key that signs the log.
/// A `--store`/`--audit-file` where the command may write is refused outright, and so is
/// a writable root over the places other runs' change sets fall back to.
#[test]
fn own_files_made_on_first_use_are_masked_from_that_first_run() {
    need_sandbox!("own_files_made_on_first_use_are_masked_from_that_first_run");
    let w = world();
    let state = w.ws.join(".state");
    let script = format!(
        "for f in {s}/*; do cat \"$f\"; done 2>/dev/null | od -An -c | head -c 4000; echo END",
        s = state.display()
    );
    let o = w
        .exec_command(&w.ws, &[], &script)
        .env("CORDON_STATE_DIR", &state)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let key = std::fs::read_to_string(state.join("audit.key")).unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("END"), "{}", text(&o));
    assert!(!key.trim().is_empty());
    assert_eq!(
        out.trim(),
        "END",
        "the first run read cordon's state: {}",
        text(&o)
    );

    // A store and a log named on the command line in a directory the command may write:
    // masking the files would not stop it planting a SQLite journal beside them, which
    // cordon would read back into the store. Refused before anything runs.
    let own = w.ws.join("own");
    std::fs::create_dir(&own).unwrap();
    let store = own.join("store.sqlite3");
    let log = own.join("audit.jsonl");
    let flags = [
        "--store",
        store.to_str().unwrap(),
        "--audit-file",
        log.to_str().unwrap(),
    ];
    let o = w.exec(&flags, "echo RAN");
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("RAN"),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("outside the workspace and writable roots"),
        "{}",
        text(&o)
    );
    // Nor may a writable root hold where other runs' change sets and caches fall back.
    let o = w.exec(&["--writable-root", "/var/tmp"], "echo RAN");
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("RAN"),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("other runs' change sets"),
        "{}",
        text(&o)
    );
}
