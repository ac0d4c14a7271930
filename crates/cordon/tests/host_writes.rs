//! What the host sees after a run, from cordon's own writes and from the merge of the
//! run's changes: the report never written through a link the run left (nor into a
//! parent the run renamed), host files made while the run went on never lost, changes
//! held for review until a human applies them, the run's changes bounded, trees deeper
//! than `PATH_MAX` merged. As the test's user and, as root, as `nobody`.
#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, as_nobody, is_root, text};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Who runs cordon.
#[derive(Clone, Copy, Debug)]
enum Who {
    Me,
    Nobody,
}

fn users() -> Vec<Who> {
    if is_root() {
        vec![Who::Me, Who::Nobody]
    } else {
        vec![Who::Me]
    }
}

fn exec(w: &World, who: Who, body: &str, extra: &[&str]) -> Command {
    w.script(body);
    match who {
        Who::Me => w.command(extra),
        Who::Nobody => w.command_as_nobody(extra),
    }
}

/// `cordon changes ARGS` with the world's HOME (and so its state directory).
fn changes(w: &World, who: Who, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(common::bin());
    c.arg("changes")
        .args(args)
        .env_clear()
        .env("HOME", &w.home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .current_dir(&w.ws);
    let mut c = match who {
        Who::Me => c,
        Who::Nobody => as_nobody(&c),
    };
    c.output().unwrap()
}

fn only_set(w: &World, who: Who) -> String {
    let out = changes(w, who, &["list"]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{e}");
    let ids: Vec<&str> = o.lines().filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(ids.len(), 1, "{o}");
    ids[0].to_string()
}

#[test]
fn the_report_is_never_written_through_what_the_run_left() {
    need_sandbox!("the_report_is_never_written_through_what_the_run_left");
    for who in users() {
        let w = World::new();
        let victim = w.root.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let victim_dir = w.root.join("victim-dir");
        std::fs::create_dir(&victim_dir).unwrap();
        std::fs::create_dir(w.ws.join("out")).unwrap();
        let body = format!(
            "ln -s {} report.json; mv out out.moved; ln -s {} out",
            victim.display(),
            victim_dir.display()
        );
        for report in ["report.json", "out/report.json"] {
            let out = exec(&w, who, &body, &["--report", report])
                .output()
                .unwrap();
            let (_, e) = text(&out);
            assert_eq!(out.status.code(), Some(0), "{who:?} {report}: {e}");
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "precious",
                "{who:?} {report}"
            );
            assert_eq!(
                std::fs::read_dir(&victim_dir).unwrap().count(),
                0,
                "{who:?} {report}"
            );
            // The report is where it was anchored: a file, not a link.
            let at = w.ws.join(report);
            let meta = std::fs::symlink_metadata(&at).unwrap();
            assert!(meta.is_file(), "{who:?} {report}");
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&at).unwrap()).unwrap();
            // The links leading out wait for review; they did not land.
            assert!(
                v["blocked"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| b["kind"] == "held"),
                "{v}"
            );
            let _ = std::fs::remove_dir_all(w.ws.join("out.moved"));
        }
    }
}

#[test]
fn host_files_made_while_the_run_goes_on_survive_its_merge() {
    need_sandbox!("host_files_made_while_the_run_goes_on_survive_its_merge");
    for who in users() {
        let w = World::new();
        std::fs::create_dir(w.ws.join("build")).unwrap();
        std::fs::write(w.ws.join("build/old.o"), "old").unwrap();
        std::fs::write(w.ws.join("notes.txt"), "base").unwrap();
        // Let the fixtures' change times fall before the run's start.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut c = exec(
            &w,
            who,
            "rm -rf build && mkdir build && echo new > build/new.o && echo run >> notes.txt && echo ready && sleep 3",
            &[],
        );
        if matches!(who, Who::Nobody) {
            // The host's own edits below are the test's (root's); nobody must be able to
            // remove them as the merge would.
            w.give_to_nobody();
        }
        let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "{who:?}");
        // While the run goes on: the user's own work.
        std::fs::write(w.ws.join("build/user-notes.txt"), "mine").unwrap();
        std::fs::create_dir(w.ws.join("build/userdir")).unwrap();
        std::fs::write(w.ws.join("build/userdir/y"), "mine").unwrap();
        std::fs::write(w.ws.join("notes.txt"), "host").unwrap();
        let st = child.wait().unwrap();
        assert!(st.success(), "{who:?}");
        let read = |p: &str| std::fs::read_to_string(w.ws.join(p)).unwrap();
        assert_eq!(read("build/new.o"), "new\n", "{who:?}");
        assert!(
            !w.ws.join("build/old.o").exists(),
            "{who:?}: the run saw it"
        );
        assert_eq!(read("build/user-notes.txt"), "mine", "{who:?}");
        assert_eq!(read("build/userdir/y"), "mine", "{who:?}");
        assert_eq!(read("notes.txt"), "host", "{who:?}: the host's edit wins");
        // The run's version of notes.txt waits in its change set.
        let id = only_set(&w, who);
        let shown = changes(&w, who, &["show", &id]);
        let (o, _) = text(&shown);
        assert!(o.contains("notes.txt") && o.contains("conflict"), "{o}");
        let applied = changes(&w, who, &["apply", &id, "--overwrite"]);
        assert!(applied.status.success(), "{}", text(&applied).1);
        assert_eq!(read("notes.txt"), "baserun\n", "{who:?}");
    }
}

#[test]
fn held_changes_land_only_after_review() {
    need_sandbox!("held_changes_land_only_after_review");
    for who in users() {
        let w = World::new();
        std::fs::write(w.ws.join("a.txt"), "one\n").unwrap();
        let out = exec(
            &w,
            who,
            "echo two >> a.txt; echo hi > new.sh; chmod +x new.sh; rm -f gone.txt",
            &["--hold"],
        )
        .output()
        .unwrap();
        let (_, e) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{e}");
        assert!(e.contains("held for review"), "{e}");
        assert_eq!(
            std::fs::read_to_string(w.ws.join("a.txt")).unwrap(),
            "one\n"
        );
        assert!(!w.ws.join("new.sh").exists());
        let id = only_set(&w, who);
        let shown = changes(&w, who, &["show", &id]);
        let (o, _) = text(&shown);
        assert!(o.contains("modify\t") && o.contains("+two"), "{o}");
        assert!(o.contains("new.sh") && o.contains("new executable"), "{o}");
        let applied = changes(&w, who, &["apply", &id]);
        assert!(applied.status.success(), "{}", text(&applied).1);
        assert_eq!(
            std::fs::read_to_string(w.ws.join("a.txt")).unwrap(),
            "one\ntwo\n"
        );
        assert!(w.ws.join("new.sh").exists());
        let listed = changes(&w, who, &["list"]);
        assert!(text(&listed).0.trim().is_empty(), "the set is gone");
    }
}

#[test]
fn a_run_whose_changes_pass_the_limit_is_stopped_and_its_changes_discarded() {
    need_sandbox!("a_run_whose_changes_pass_the_limit_is_stopped_and_its_changes_discarded");
    let w = World::new();
    let out = exec(
        &w,
        Who::Me,
        "dd if=/dev/zero of=big bs=1M count=64 2>/dev/null; sleep 30; touch late",
        &["--changes-limit", "4M"],
    )
    .output()
    .unwrap();
    let (_, e) = text(&out);
    assert_eq!(out.status.code(), Some(125), "{e}");
    assert!(e.contains("limit"), "{e}");
    assert!(!w.ws.join("big").exists(), "nothing merged");
    assert!(!w.ws.join("late").exists(), "the run was stopped");
    // Nothing kept that would hold the disk full.
    assert!(text(&changes(&w, Who::Me, &["list"])).0.trim().is_empty());
}

#[test]
fn a_tree_deeper_than_path_max_merges() {
    need_sandbox!("a_tree_deeper_than_path_max_merges");
    let w = World::new();
    let out = exec(
        &w,
        Who::Me,
        // perl's chdir is relative, where the shell's would build a path too long.
        r#"perl -e 'my $n = "d" x 255; for (1..17) { mkdir $n or exit 8; chdir $n or exit 9 } open(my $f, ">", "f") or exit 10; print $f "deep"'"#,
        &[],
    )
    .output()
    .unwrap();
    let (_, e) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{e}");
    let found = Command::new("find")
        .arg(".")
        .args(["-name", "f", "-type", "f"])
        .current_dir(&w.ws)
        .output()
        .unwrap();
    let (o, _) = text(&found);
    assert_eq!(o.lines().count(), 1, "{o}");
    assert!(o.len() > 4096, "deeper than PATH_MAX");
    let n = "d".repeat(255);
    let _ = cordon_fs_remove(&w.ws, &n);
}

/// The deep tree is removed relative to descriptors (`rm -rf` would do too).
fn cordon_fs_remove(ws: &Path, name: &str) -> std::io::Result<()> {
    let st = Command::new("rm")
        .args(["-rf", name])
        .current_dir(ws)
        .status()?;
    assert!(st.success());
    Ok(())
}
