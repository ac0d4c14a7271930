#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code
//! Issue 36 through the binary: records written by real `cordon check` calls, then an
//! attacker with write access to the log cuts, rolls back or rewrites it, and `cordon
//! audit verify` exits 4 with one sentence. The signing key is masked in the sandbox.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{cordon, run_with_input};
use cordon_store::VerifyReport;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    state: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let (home, ws, state) = (root.join("home"), root.join("ws"), root.join("state"));
        for d in [&home, &ws] {
            std::fs::create_dir_all(d).unwrap();
        }
        Env {
            _tmp: tmp,
            home,
            ws,
            state,
        }
    }

    fn log(&self) -> PathBuf {
        self.state.join("audit.jsonl")
    }

    fn run(&self, args: &[&str], input: &[u8]) -> Output {
        run_with_input(cordon(&self.home, &self.ws, &self.state, args), input)
    }

    /// `n` decisions through `cordon check`, each one audit record.
    fn checks(&self, n: usize) {
        for i in 0..n {
            let req = serde_json::json!({"tool": "Read", "input": {"file_path": self.ws.join(format!("f{i}"))}, "cwd": self.ws});
            let out = self.run(&["check", "--isolated", "-"], req.to_string().as_bytes());
            assert!(out.status.code().is_some(), "{out:?}");
        }
    }

    fn verify(&self, extra: &[&str]) -> (i32, String) {
        let mut args = vec!["audit", "verify"];
        args.extend_from_slice(extra);
        let out = self.run(&args, b"");
        let (stdout, stderr) = common::text(&out);
        (out.status.code().unwrap(), format!("{stdout}{stderr}"))
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn issue_36_cutting_the_last_records_fails_verify_with_exit_4() {
    let e = Env::new();
    e.checks(8);
    let (code, out) = e.verify(&["--key"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("8 records") && out.contains("anchored") && out.contains("signed"),
        "{out}"
    );
    let mut all = lines(&e.log());
    all.truncate(all.len() - 5);
    write_lines(&e.log(), &all);
    let (code, out) = e.verify(&[]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("(truncation)") && out.contains("5 records were cut"),
        "{out}"
    );
}

#[test]
fn a_deleted_log_fails_verify_then_and_after_a_new_one_was_begun() {
    let e = Env::new();
    e.checks(3);
    std::fs::remove_file(e.log()).unwrap();
    let (code, out) = e.verify(&[]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("gone"), "{out}");
    e.checks(2);
    let (code, out) = e.verify(&["--key"]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("deleted or replaced"), "{out}");
}

#[test]
fn a_rolled_back_log_fails_verify_even_after_more_decisions() {
    let e = Env::new();
    e.checks(3);
    let old = std::fs::read(e.log()).unwrap();
    e.checks(2);
    std::fs::write(e.log(), &old).unwrap();
    assert_eq!(e.verify(&[]).0, 4);
    // Writers go on (the log must keep working) and pass the anchored seq; the store
    // kept what the first of them found.
    e.checks(3);
    let (code, out) = e.verify(&[]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("older copy"), "{out}");
    // A human who has looked re-anchors; then it verifies again.
    let out = e.run(&["audit", "reanchor"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(e.verify(&["--key"]).0, 0);
}

#[test]
fn issue_36_a_rewrite_with_the_chain_recomputed_needs_the_key_to_be_found() {
    let e = Env::new();
    e.checks(4);
    let pubkey = common::text(&e.run(&["audit", "pubkey"], b"")).0;
    assert!(pubkey.starts_with("cordon-audit-ed25519:"), "{pubkey}");
    // A third party's copy (no anchor there) verifies with the public key alone.
    let copy = e.home.join("copy.jsonl");
    std::fs::copy(e.log(), &copy).unwrap();
    let (code, out) = e.verify(&["--file", copy.to_str().unwrap(), "--key", pubkey.trim()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("not anchored"), "{out}");
    // Rewrite record 2 and recompute the chain, then re-anchor as an attacker who can
    // write the store too.
    let mut all = lines(&e.log());
    all[2] = all[2].replace("f1", "zz");
    for i in 1..all.len() {
        let prev = blake3::hash(all[i - 1].as_bytes()).to_hex().to_string();
        let at = all[i].find("\"prev\":\"").unwrap() + 8;
        all[i].replace_range(at..at + 64, &prev);
    }
    write_lines(&e.log(), &all);
    assert_eq!(e.verify(&[]).0, 4, "the anchor catches it first");
    // `reanchor` checks the signatures with the local key: it refuses the rewrite.
    let out = e.run(&["audit", "reanchor"], b"");
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(
        common::text(&out).0.contains("nothing was anchored"),
        "{out:?}"
    );
    // An attacker who can write the store too anchors the file as it is.
    let VerifyReport::Ok { records, head } = cordon_store::verify(&e.log()).unwrap() else {
        panic!("the rewritten chain verifies")
    };
    let store = cordon_store::Store::open(&e.state.join("store.sqlite3")).unwrap();
    store
        .reanchor_audit(
            &cordon_store::anchor_key(&e.log()),
            &cordon_store::AuditHead {
                log_id: blake3::hash(all[0].as_bytes()).to_hex().to_string(),
                seq: records,
                hash: head,
            },
            std::fs::metadata(e.log()).unwrap().len(),
        )
        .unwrap();
    let (code, out) = e.verify(&[]);
    assert_eq!(code, 0, "without the key a full rewrite passes: {out}");
    let (code, out) = e.verify(&["--key"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out.contains("(bad signature)") && out.contains("record 2"),
        "{out}"
    );
    // The same with the public key given as a file.
    let keyfile = e.home.join("pub.txt");
    std::fs::write(&keyfile, &pubkey).unwrap();
    assert_eq!(e.verify(&["--key", keyfile.to_str().unwrap()]).0, 4);
}

#[test]
fn the_signing_key_is_masked_inside_the_sandbox() {
    if !common::full_tier_or_skip("the_signing_key_is_masked_inside_the_sandbox") {
        return;
    }
    let e = Env::new();
    e.checks(1);
    let key = e.state.join("audit.key");
    let secret = std::fs::read_to_string(&key).unwrap();
    let config = e.home.join("policy.toml");
    std::fs::write(&config, common::ALLOW_ALL).unwrap();
    // A file in the workspace is the control: the same command reads it, so a refusal
    // of the whole run cannot pass for masking.
    std::fs::write(e.ws.join("control.txt"), "CONTROL-OK").unwrap();
    for home in ["hidden", "visible"] {
        // The path comes from a file, so that the policy's guard on key file names does
        // not refuse the command first: the sandbox is what is tested.
        std::fs::write(e.ws.join("where.txt"), key.to_str().unwrap()).unwrap();
        let script = "cat control.txt; cat \"$(cat where.txt)\"".to_string();
        let out = e.run(
            &[
                "exec",
                "--isolated",
                "--config",
                config.to_str().unwrap(),
                "--home",
                home,
                "--",
                "sh",
                "-c",
                &script,
            ],
            b"",
        );
        let (stdout, stderr) = common::text(&out);
        assert!(
            stdout.contains("CONTROL-OK"),
            "--home {home}: {stdout} {stderr}"
        );
        assert!(
            !stdout.contains(secret.trim()),
            "--home {home}: the key leaked"
        );
        assert_ne!(
            out.status.code(),
            Some(0),
            "--home {home}: cat of the key succeeded"
        );
    }
}

#[test]
fn the_signing_key_in_the_default_state_directory_is_masked_too() {
    if !common::full_tier_or_skip("the_signing_key_in_the_default_state_directory_is_masked_too") {
        return;
    }
    // Second spelling: no CORDON_STATE_DIR, the key under ~/.local/state/cordon, HOME shown.
    let e = Env::new();
    let config = e.home.join("policy.toml");
    std::fs::write(&config, common::ALLOW_ALL).unwrap();
    std::fs::write(e.ws.join("control.txt"), "CONTROL-OK").unwrap();
    let key = e.home.join(".local/state/cordon/audit.key");
    std::fs::write(e.ws.join("where.txt"), key.to_str().unwrap()).unwrap();
    let run = |args: &[&str]| {
        let mut c = cordon(&e.home, &e.ws, &e.state, args);
        c.env_remove("CORDON_STATE_DIR");
        run_with_input(c, b"")
    };
    let out = run(&["audit", "pubkey"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let secret = std::fs::read_to_string(&key).unwrap();
    let out = run(&[
        "exec",
        "--isolated",
        "--config",
        config.to_str().unwrap(),
        "--home",
        "visible",
        "--",
        "sh",
        "-c",
        "cat control.txt; cat \"$HOME/.local/state/cordon/\"*; cat \"$(cat where.txt)\"",
    ]);
    let (stdout, stderr) = common::text(&out);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(!stdout.contains(secret.trim()), "the key leaked: {stdout}");
}

#[test]
fn the_signing_key_beside_a_store_outside_the_state_directory_is_masked() {
    if !common::full_tier_or_skip(
        "the_signing_key_beside_a_store_outside_the_state_directory_is_masked",
    ) {
        return;
    }
    // Outside review of issue 36, F4: with --store elsewhere the key lived beside it, in
    // plain view of `cordon exec --store … -- python3 -c "open(…)"`.
    let e = Env::new();
    let ks = e.home.join("ks");
    std::fs::create_dir_all(&ks).unwrap();
    let store = ks.join("store.sqlite3");
    let store_arg = store.to_str().unwrap();
    let req =
        serde_json::json!({"tool": "Read", "input": {"file_path": e.ws.join("f")}, "cwd": e.ws});
    let out = e.run(
        &["check", "--isolated", "--store", store_arg, "-"],
        req.to_string().as_bytes(),
    );
    assert!(out.status.code().is_some(), "{out:?}");
    let key = ks.join("audit.key");
    let secret = std::fs::read_to_string(&key).unwrap();
    let config = e.home.join("policy.toml");
    std::fs::write(&config, common::ALLOW_ALL).unwrap();
    std::fs::write(e.ws.join("control.txt"), "CONTROL-OK").unwrap();
    for (target, what) in [(&key, "key"), (&ks.join("audit.jsonl"), "log")] {
        std::fs::write(e.ws.join("where.txt"), target.to_str().unwrap()).unwrap();
        let out = e.run(
            &[
                "exec",
                "--isolated",
                "--store",
                store_arg,
                "--config",
                config.to_str().unwrap(),
                "--home",
                "visible",
                "--",
                "sh",
                "-c",
                "cat control.txt; cat \"$(cat where.txt)\"",
            ],
            b"",
        );
        let (stdout, stderr) = common::text(&out);
        assert!(stdout.contains("CONTROL-OK"), "{what}: {stdout} {stderr}");
        // A masked file reads as nothing (or not at all): neither the key nor a record.
        assert!(!stdout.contains(secret.trim()), "the key leaked");
        assert!(
            !stdout.contains("cordon_audit"),
            "{what}: the log was read: {stdout}"
        );
    }
}

/// The second spelling: `--audit-file` alone (no `--store`) names a log outside the state
/// directory; the command may neither read it nor append to it.
#[test]
fn a_log_named_with_audit_file_alone_is_masked() {
    if !common::full_tier_or_skip("a_log_named_with_audit_file_alone_is_masked") {
        return;
    }
    let e = Env::new();
    let elsewhere = e.home.join("logs");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let log = elsewhere.join("audit.jsonl");
    let config = e.home.join("policy.toml");
    std::fs::write(&config, common::ALLOW_ALL).unwrap();
    std::fs::write(e.ws.join("control.txt"), "CONTROL-OK").unwrap();
    std::fs::write(e.ws.join("where.txt"), log.to_str().unwrap()).unwrap();
    let run = || {
        e.run(
            &[
                "exec",
                "--isolated",
                "--audit-file",
                log.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--home",
                "visible",
                "--",
                "sh",
                "-c",
                "cat control.txt; cat \"$(cat where.txt)\"; echo FORGED >>\"$(cat where.txt)\"",
            ],
            b"",
        )
    };
    let _ = run(); // the first run creates the log
    let out = run();
    let (stdout, stderr) = common::text(&out);
    assert!(stdout.contains("CONTROL-OK"), "{stdout} {stderr}");
    assert!(
        !stdout.contains("cordon_audit"),
        "the log was read: {stdout}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    // Records quote the command (which spells FORGED); an appended line would stand alone.
    assert!(
        !text.lines().any(|l| l.trim() == "FORGED"),
        "the command appended to the log: {text}"
    );
}

#[test]
fn a_sparse_hole_at_the_end_of_the_log_never_lets_a_hook_call_through() {
    // Outside review of issue 36, F2: `truncate -s +64G audit.jsonl` made every writer
    // allocate the file's size; the hook aborted with 134, which harnesses let through.
    let e = Env::new();
    e.checks(3);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(e.log())
        .unwrap();
    f.set_len(f.metadata().unwrap().len() + (64 << 30)).unwrap();
    drop(f);
    let payload = serde_json::json!({
        "session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf ~/important"}, "cwd": e.ws, "tool_use_id": "t1",
    });
    let ws = e.ws.to_str().unwrap();
    let out = e.run(
        &["hook", "claude-code", "--workspace", ws],
        payload.to_string().as_bytes(),
    );
    let (stdout, stderr) = common::text(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 2)),
        "{out:?} {stdout} {stderr}"
    );
    assert!(
        !stdout.trim().is_empty() || out.status.code() == Some(2),
        "{stderr}"
    );
    // Second spelling: `cordon check`, then verify, both answer.
    e.checks(1);
    let (code, text) = e.verify(&[]);
    assert_eq!(code, 4, "{text}");
    // The decision was recorded after the hole, with the writer's own note of it.
    let mut f = std::fs::File::open(e.log()).unwrap();
    let len = f.metadata().unwrap().len();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len - 8192)).unwrap();
    let mut tail = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, 8192), &mut tail).unwrap_or(0);
    assert!(tail.contains("\"event\":\"break\""), "{tail}");
    assert!(tail.contains("rm -rf"), "{tail}");
}
