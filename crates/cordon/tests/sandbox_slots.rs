#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! Persistent sandbox slots, tested with real processes: what a run leaves in its slot's
//! HOME is there for the next run of the same scope and key and for no other; runs that
//! share a slot take turns (a read-modify-write from each loses no update); `--no-wait`
//! refuses a busy slot; a SIGKILLed holder's lock is free again; snapshots round-trip and
//! a damaged one is refused with the slot unchanged; and a slot written by a hostile
//! command (symlinks to host files, a `chmod 000` directory) cannot make cordon read,
//! write or fail to remove anything on the host. Each runs as root and, when the tests
//! are root, as `nobody`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, as_nobody, is_root, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A world whose cordon state (and so its slots) lives beside HOME and the workspace.
struct Slots {
    w: World,
    state: PathBuf,
    nobody: bool,
}

impl Slots {
    fn new(nobody: bool) -> Slots {
        Slots::with_state(nobody, |w| w.root.join("state"))
    }

    /// A world whose state directory is where `at` says.
    fn with_state(nobody: bool, at: impl Fn(&World) -> PathBuf) -> Slots {
        let w = World::new();
        let state = at(&w);
        std::fs::create_dir_all(&state).unwrap();
        if nobody {
            Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(&state)
                .status()
                .unwrap();
        }
        if nobody {
            w.give_to_nobody();
        }
        Slots { w, state, nobody }
    }

    fn wrap(&self, mut c: Command) -> Command {
        c.env("CORDON_STATE_DIR", &self.state);
        if self.nobody { as_nobody(&c) } else { c }
    }

    /// `cordon exec [extra] -- /bin/sh -c BODY` in the workspace, with a clean
    /// environment.
    fn exec(&self, body: &str, extra: &[&str]) -> Command {
        let mut c = Command::new(common::bin());
        c.arg("exec")
            .arg("--isolated")
            .arg("--config")
            .arg(&self.w.config)
            .arg("--workspace")
            .arg(&self.w.ws)
            .args(extra)
            .args(["--", "/bin/sh", "-c", body])
            .current_dir(&self.w.ws)
            .env_clear()
            .env("HOME", &self.w.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LANG", "C")
            .stdin(Stdio::null());
        self.wrap(c)
    }

    fn run(&self, body: &str, extra: &[&str]) -> Output {
        self.exec(body, extra).output().unwrap()
    }

    /// `cordon slots ARGS…`.
    fn slots(&self, args: &[&str]) -> Output {
        let mut c = Command::new(common::bin());
        c.arg("slots")
            .args(args)
            .current_dir(&self.w.root)
            .env_clear()
            .env("HOME", &self.w.home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .stdin(Stdio::null());
        self.wrap(c).output().unwrap()
    }
}

fn ok(o: &Output) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "status {:?}\nstdout: {out}\nstderr: {err}",
        o.status
    );
    out
}

fn each_user(test: &str, f: impl Fn(bool)) {
    f(false);
    if is_root() {
        eprintln!("{test}: again as nobody");
        f(true);
    }
}

#[test]
fn state_persists_per_scope_and_key() {
    need_sandbox!("state_persists_per_scope_and_key");
    each_user("state_persists_per_scope_and_key", |nobody| {
        let s = Slots::new(nobody);
        let install = "mkdir -p $HOME/.local/lib/pkg && echo pkg-version-1 > $HOME/.local/lib/pkg/VERSION && echo scratch > /tmp/kept";
        ok(&s.run(install, &["--slot", "py", "--slot-tmp"]));
        let look = "cat $HOME/.local/lib/pkg/VERSION 2>&1; cat /tmp/kept 2>&1; true";
        let again = ok(&s.run(look, &["--slot", "py", "--slot-tmp"]));
        assert!(
            again.contains("pkg-version-1") && again.contains("scratch"),
            "{again}"
        );
        // /tmp is the slot's only when asked.
        let no_tmp = ok(&s.run(look, &["--slot", "py"]));
        assert!(
            no_tmp.contains("pkg-version-1") && !no_tmp.contains("scratch"),
            "{no_tmp}"
        );
        // Another key, another scope, no slot: none of it.
        for extra in [
            &["--slot", "other"][..],
            &["--slot", "py", "--scope", "global"],
            &["--slot", "py", "--scope", "session", "--session", "s1"],
            &["--slot", "py", "--scope", "agent", "--agent", "coder"],
            &[],
        ] {
            let o = ok(&s.run(look, extra));
            // A marker no temporary directory's random name can spell (they print in
            // `cat`'s error when the file is missing).
            assert!(!o.contains("pkg-version-1"), "{extra:?}: {o}");
        }
        // The slot is not the host's HOME.
        assert!(!s.w.home.join(".local/lib/pkg").exists());
        // Scopes that need an id refuse without one.
        for (extra, flag) in [
            (&["--slot", "py", "--scope", "session"][..], "--session"),
            (&["--slot", "py", "--scope", "agent"], "--agent"),
        ] {
            let o = s.run("true", extra);
            let (_, err) = text(&o);
            assert_eq!(o.status.code(), Some(125), "{err}");
            assert!(err.contains(flag), "{err}");
        }
        for bad in ["../x", ".hidden", "a/b", ""] {
            let o = s.run("true", &["--slot", bad]);
            assert_eq!(o.status.code(), Some(125), "{bad}");
        }
        let list = ok(&s.slots(&["list", "--json"]));
        let lines: Vec<serde_json::Value> = list
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let py = lines
            .iter()
            .find(|v| v["key"] == "py" && v["scope"] == "user")
            .unwrap();
        assert_eq!(py["runs"], 3, "{py}");
        assert_eq!(py["last_status"], 0, "{py}");
        let show = ok(&s.slots(&["show", "py"]));
        assert!(show.contains("state    free"), "{show}");
    });
}

fn spawn(c: &mut Command) -> std::process::Child {
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait until the slot `key` is held by `holder` (its `show` says busy). A holder that
/// ended first fails the test with what it printed.
fn wait_busy(s: &Slots, key: &str, holder: &mut std::process::Child) {
    let start = Instant::now();
    loop {
        let o = s.slots(&["show", key, "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        if v["busy"].is_string() {
            return;
        }
        if let Some(status) = holder.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = holder.stderr.take() {
                std::io::Read::read_to_string(&mut e, &mut err).unwrap();
            }
            panic!("the holder ended ({status}) before the slot was seen busy: {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the slot never became busy; the last `show`: {} {}",
            text(&o).0,
            text(&o).1
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn runs_on_one_slot_take_turns() {
    need_sandbox!("runs_on_one_slot_take_turns");
    each_user("runs_on_one_slot_take_turns", |nobody| {
        let s = Slots::new(nobody);
        ok(&s.run("echo 0 > $HOME/n", &["--slot", "c"]));
        // Read, wait, write: two overlapping runs would both write 1.
        let body = "n=$(cat $HOME/n); sleep 2; echo $((n+1)) > $HOME/n";
        let mut a = spawn(&mut s.exec(body, &["--slot", "c"]));
        wait_busy(&s, "c", &mut a);
        let mut b = spawn(&mut s.exec(body, &["--slot", "c", "--slot-wait", "60s"]));
        let refused = s.run("true", &["--slot", "c", "--no-wait"]);
        let (_, err) = text(&refused);
        assert_eq!(refused.status.code(), Some(125), "{err}");
        assert!(err.contains("the slot is busy: held by pid"), "{err}");
        assert!(err.contains("--no-wait"), "{err}");
        // `rm` is refused while a run holds the slot.
        let rm = s.slots(&["rm", "c"]);
        assert_eq!(rm.status.code(), Some(2), "{}", text(&rm).1);
        assert!(text(&rm).1.contains("not removed"), "{}", text(&rm).1);
        assert!(a.wait().unwrap().success());
        assert!(b.wait().unwrap().success());
        let n = ok(&s.run("cat $HOME/n", &["--slot", "c"]));
        assert_eq!(n.trim(), "2", "an update was lost");
        // A short wait gives up with a clear message.
        let mut c = spawn(&mut s.exec("sleep 3", &["--slot", "c"]));
        wait_busy(&s, "c", &mut c);
        let o = s.run("true", &["--slot", "c", "--slot-wait", "200ms"]);
        assert_eq!(o.status.code(), Some(125));
        assert!(text(&o).1.contains("waited 0.2s"), "{}", text(&o).1);
        assert!(c.wait().unwrap().success());
    });
}

#[test]
fn a_killed_holder_frees_the_slot() {
    need_sandbox!("a_killed_holder_frees_the_slot");
    each_user("a_killed_holder_frees_the_slot", |nobody| {
        let s = Slots::new(nobody);
        let mut holder = spawn(&mut s.exec("sleep 60", &["--slot", "k"]));
        wait_busy(&s, "k", &mut holder);
        // SIGKILL cordon itself (as nobody, the child is setpriv, which execs cordon).
        holder.kill().unwrap();
        holder.wait().unwrap();
        let start = Instant::now();
        let o = s.run("echo ran", &["--slot", "k", "--slot-wait", "10s"]);
        assert_eq!(ok(&o).trim(), "ran");
        assert!(start.elapsed() < Duration::from_secs(10));
    });
}

#[test]
fn snapshots_round_trip_and_damage_is_refused() {
    need_sandbox!("snapshots_round_trip_and_damage_is_refused");
    each_user("snapshots_round_trip_and_damage_is_refused", |nobody| {
        let s = Slots::new(nobody);
        ok(&s.run(
            "mkdir -p $HOME/a/b && echo one > $HOME/a/b/f && ln -s b/f $HOME/a/link && chmod 755 $HOME/a",
            &["--slot", "snap"],
        ));
        let file = s.w.root.join("snap.cordon-slot");
        ok(&s.slots(&["snapshot", "snap", "--to", file.to_str().unwrap()]));
        ok(&s.run(
            "echo two > $HOME/a/b/f; touch $HOME/later",
            &["--slot", "snap"],
        ));
        ok(&s.slots(&["restore", "snap", file.to_str().unwrap()]));
        let o = ok(&s.run(
            "cat $HOME/a/link; test -e $HOME/later && echo later; true",
            &["--slot", "snap"],
        ));
        assert_eq!(o.trim(), "one", "{o}");
        // One byte changed in the archive: refused, the slot as it was.
        ok(&s.run("echo three > $HOME/a/b/f", &["--slot", "snap"]));
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 10;
        bytes[at] ^= 0x55;
        let broken = s.w.root.join("broken.cordon-slot");
        std::fs::write(&broken, &bytes).unwrap();
        if nobody {
            s.w.give_to_nobody();
        }
        let o = s.slots(&["restore", "snap", broken.to_str().unwrap()]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("does not match the hash") && err.contains("nothing was changed"),
            "{err}"
        );
        let o = ok(&s.run("cat $HOME/a/b/f", &["--slot", "snap"]));
        assert_eq!(o.trim(), "three");
        // Not a snapshot at all.
        std::fs::write(&broken, "hello").unwrap();
        let o = s.slots(&["restore", "snap", broken.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
    });
}

#[test]
fn a_hostile_slot_cannot_reach_the_host() {
    need_sandbox!("a_hostile_slot_cannot_reach_the_host");
    each_user("a_hostile_slot_cannot_reach_the_host", |nobody| {
        let s = Slots::new(nobody);
        // A host file and directory the slot's links will point at.
        let host = common::visible_dir("cordon-slot-host-");
        let secret = host.path().join("secret");
        std::fs::write(&secret, "HOST-SECRET-CONTENT").unwrap();
        let plant = format!(
            "ln -s {secret} $HOME/leak; ln -s {dir} $HOME/dirlink; ln -s ../../../.. $HOME/up; \
             mkdir -p $HOME/locked/inner && echo x > $HOME/locked/inner/f && chmod 000 $HOME/locked/inner $HOME/locked; \
             mkfifo $HOME/fifo",
            secret = secret.display(),
            dir = host.path().display()
        );
        ok(&s.run(&plant, &["--slot", "evil"]));
        let file = s.w.root.join("evil.cordon-slot");
        let o = s.slots(&["snapshot", "evil", "--to", file.to_str().unwrap()]);
        let (_, err) = text(&o);
        if nobody {
            // The chmod 000 directory cannot be read by its owner: refused, not skipped.
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert!(err.contains("cannot read"), "{err}");
        } else {
            assert!(o.status.success(), "{err}");
            assert!(err.contains("left out 3 symlink(s)"), "{err}");
            // Restored elsewhere, the snapshot holds none of the host's file.
            ok(&s.slots(&["restore", "copy", file.to_str().unwrap()]));
            let o = ok(&s.run("ls -A $HOME; cat $HOME/locked/inner/f", &["--slot", "copy"]));
            assert!(
                !o.contains("leak") && !o.contains("dirlink") && !o.contains("fifo"),
                "{o}"
            );
            assert!(o.contains('x'), "{o}");
        }
        // Sizing does not follow the links either.
        let show: serde_json::Value =
            serde_json::from_str(&ok(&s.slots(&["show", "evil", "--json"]))).unwrap();
        assert!(show["size"].as_u64().unwrap() < 19, "{show}");
        ok(&s.slots(&["rm", "evil"]));
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            "HOST-SECRET-CONTENT"
        );
        assert!(host.path().is_dir());
        let gone = s.slots(&["show", "evil"]);
        assert_eq!(gone.status.code(), Some(2));
    });
}

#[test]
fn a_link_planted_where_cordon_mounts_refuses_the_run() {
    need_sandbox!("a_link_planted_where_cordon_mounts_refuses_the_run");
    each_user(
        "a_link_planted_where_cordon_mounts_refuses_the_run",
        |nobody| {
            let s = Slots::new(nobody);
            let host = common::visible_dir("cordon-slot-target-");
            if nobody {
                Command::new("chown")
                    .args(["-R", "nobody:nogroup"])
                    .arg(host.path())
                    .status()
                    .unwrap();
            }
            let plant = format!("ln -s {} $HOME/.local", host.path().display());
            ok(&s.run(&plant, &["--slot", "m"]));
            // Now HOME has a toolchain directory that the sandbox binds back read-only, at
            // a path beneath the planted link.
            std::fs::create_dir_all(s.w.home.join(".local/bin")).unwrap();
            if nobody {
                s.w.give_to_nobody();
            }
            let o = s.run("true", &["--slot", "m"]);
            let (_, err) = text(&o);
            assert_eq!(o.status.code(), Some(125), "{err}");
            assert!(err.contains("is not a plain directory"), "{err}");
            assert!(
                std::fs::read_dir(host.path()).unwrap().next().is_none(),
                "cordon created something through the planted link"
            );
            let _ = Path::new("");
        },
    );
}

#[test]
fn config_sets_the_slot_defaults() {
    need_sandbox!("config_sets_the_slot_defaults");
    let s = Slots::new(false);
    let base = std::fs::read_to_string(&s.w.config).unwrap();
    std::fs::write(
        &s.w.config,
        format!("{base}\n[slots]\nscope = \"global\"\ntmp = true\nwait_seconds = 1\n"),
    )
    .unwrap();
    ok(&s.run("echo g > $HOME/g; echo t > /tmp/t", &["--slot", "d"]));
    std::fs::write(&s.w.config, &base).unwrap();
    let o = ok(&s.run(
        "cat $HOME/g /tmp/t",
        &["--slot", "d", "--scope", "global", "--slot-tmp"],
    ));
    assert_eq!(o, "g\nt\n");
    std::fs::write(
        &s.w.config,
        format!("{base}\n[slots]\nscope = \"galaxy\"\n"),
    )
    .unwrap();
    let o = s.run("true", &["--slot", "d"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(
        err.contains("unknown slot scope `galaxy`") && err.contains("policy.toml"),
        "{err}"
    );
}

/// A run cannot leave start-up files (shell rc files, tool configs, Python's start-up
/// hooks, programs that shadow the system's) for a later run on the slot to execute:
/// they are reset before each run, `slots show` lists them meanwhile, and
/// `--slot-keep-startup` keeps them for a user who asks. Installed programs stay.
#[test]
fn start_up_files_do_not_outlive_their_run() {
    need_sandbox!("start_up_files_do_not_outlive_their_run");
    each_user("start_up_files_do_not_outlive_their_run", |nobody| {
        let s = Slots::new(nobody);
        let site = "$HOME/.local/lib/python3.99/site-packages";
        let plant = format!(
            "echo 'echo PLANTED-RC' > $HOME/.bashrc; echo 'echo PLANTED-PROFILE' > $HOME/.profile; \
             mkdir -p $HOME/.local/bin $HOME/.config/git {site}; \
             printf '#!/bin/sh\\necho PLANTED-LS\\n' > $HOME/.local/bin/ls; \
             printf '#!/bin/sh\\necho TOOL-RAN\\n' > $HOME/.local/bin/mytool; \
             chmod +x $HOME/.local/bin/ls $HOME/.local/bin/mytool; \
             printf '[alias]\\n\\tst = !echo PLANTED-GIT\\n' > $HOME/.config/git/config; \
             echo 'import os' > {site}/evil.pth; echo /opt/lib > {site}/paths.pth; \
             chmod 555 $HOME/.local/bin {site}; chmod 000 $HOME/.config; chmod 444 $HOME/.local; \
             chmod 000 $HOME"
        );
        // Out of the policy's sight (it refuses a plain `> ~/.bashrc`), as hostile code
        // would write it: containment, not the analysis of the command, must hold.
        s.w.script(&plant);
        if nobody {
            s.w.give_to_nobody();
        }
        ok(&s.run("./t.sh", &["--slot", "rc"]));
        let show: serde_json::Value =
            serde_json::from_str(&ok(&s.slots(&["show", "rc", "--json"]))).unwrap();
        let listed = show["startup_files"].to_string();
        for f in [
            ".bashrc",
            ".profile",
            ".config/git",
            ".local/bin/ls",
            "evil.pth",
        ] {
            assert!(listed.contains(f), "{f} not listed: {listed}");
        }
        assert!(
            !listed.contains("mytool") && !listed.contains("paths.pth"),
            "{listed}"
        );
        let home = PathBuf::from(show["dir"].as_str().unwrap()).join("home");
        assert!(home.join(".bashrc").exists());
        let look = format!(
            "bash -lc true 2>&1; bash -ic true 2>&1; export PATH=$HOME/.local/bin:$PATH; \
             ls -d /; mytool; ls -A $HOME; ls {site}; true"
        );
        let o = ok(&s.run(&look, &["--slot", "rc"]));
        assert!(!o.contains("PLANTED"), "a start-up file ran: {o}");
        assert!(o.contains("TOOL-RAN") && o.contains("paths.pth"), "{o}");
        for gone in [".bashrc", ".profile", ".config/git", ".local/bin/ls"] {
            assert!(!home.join(gone).exists(), "{gone} is still in the slot");
        }
        assert!(home.join(".local/bin/mytool").exists());
        // Kept when asked, and reset again by the next run that does not ask.
        let keep = ["--slot", "rc", "--slot-keep-startup"];
        s.w.script("echo 'echo KEPT-RC' > $HOME/.bashrc");
        ok(&s.run("./t.sh", &keep));
        assert!(ok(&s.run("bash -ic true 2>&1", &keep)).contains("KEPT-RC"));
        let o = ok(&s.run("bash -ic true 2>&1", &["--slot", "rc"]));
        assert!(!o.contains("KEPT-RC"), "{o}");
        assert!(!home.join(".bashrc").exists());
    });
}

/// cordon's state directory (the store, the audit log, the slots and their locks) is
/// hidden in every sandbox: with `--home visible` where it sits under HOME, and with a
/// hidden HOME where `CORDON_STATE_DIR` puts it in view. A sandboxed command can neither
/// list it, read the store, nor take a slot's lock.
#[test]
fn the_state_directory_is_hidden_whatever_home_shows() {
    need_sandbox!("the_state_directory_is_hidden_whatever_home_shows");
    each_user(
        "the_state_directory_is_hidden_whatever_home_shows",
        |nobody| {
            let visible = common::visible_dir("cordon-state-");
            let cases: [(&str, bool, &[&str]); 2] = [
                ("under a visible HOME", true, &["--home", "visible"]),
                ("in view elsewhere", false, &[]),
            ];
            for (what, in_home, extra) in cases {
                let s = Slots::with_state(nobody, |w| {
                    if in_home {
                        w.home.join(".local/state/cordon")
                    } else {
                        visible.path().join("state")
                    }
                });
                std::fs::write(s.w.home.join("marker"), "home-shown").unwrap();
                if nobody {
                    s.w.give_to_nobody();
                }
                ok(&s.run("true", &["--slot", "k"]));
                let lock = std::fs::read_dir(s.state.join("slots/user"))
                    .unwrap()
                    .flatten()
                    .next()
                    .unwrap()
                    .path()
                    .join(".k.lock");
                assert!(lock.exists(), "{what}: {}", lock.display());
                // The lock's path comes from a file: the policy's guard refuses a write
                // it can see into cordon's state directory before the sandbox runs, and
                // the sandbox is what is tested here.
                std::fs::write(s.w.ws.join("lockpath"), lock.to_str().unwrap()).unwrap();
                let body = format!(
                    "cat $HOME/marker 2>/dev/null; echo; echo \"LS[$(ls -A {state} 2>/dev/null)]\"; \
                 head -c 15 {state}/store.sqlite3 2>/dev/null; \
                 flock -n \"$(cat lockpath)\" -c 'echo GOT-THE-LOCK' 2>/dev/null; true",
                    state = s.state.display(),
                );
                let o = ok(&s.run(&body, extra));
                assert!(
                    o.contains("LS[]"),
                    "{what}: the state directory is listed: {o}"
                );
                assert!(
                    !o.contains("SQLite format"),
                    "{what}: the store was read: {o}"
                );
                assert!(
                    !o.contains("GOT-THE-LOCK"),
                    "{what}: a slot lock was taken: {o}"
                );
                if !extra.is_empty() {
                    assert!(o.contains("home-shown"), "{what}: HOME is not visible: {o}");
                }
            }
        },
    );
}
