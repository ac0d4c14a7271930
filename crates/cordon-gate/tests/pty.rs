#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The real terminal prompter, driven through a real pseudo-terminal: a child process
//! whose stdin and stderr are the pty's slave side asks; this test answers on the
//! master side like a human at a keyboard would.
// Test helpers outside #[test] functions may unwrap and panic: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cordon_gate::TerminalPrompter;
use cordon_store::{AskContext, Choice, NoHuman, PromptOutcome, Prompter, Question};

/// Not a test: the body of the child process. Asks one question on its terminal and
/// prints the outcome on stdout (a pipe, not the terminal).
#[test]
#[ignore = "child process of the pty tests"]
fn pty_child() {
    if std::env::var_os("CORDON_TEST_PTY_CHILD").is_none() {
        return;
    }
    let Some(mut prompter) = TerminalPrompter::from_stdio() else {
        println!("OUTCOME no-terminal");
        return;
    };
    let ctx = AskContext {
        fingerprint: "fp".into(),
        session: Some("sess-1".into()),
        tool: "Bash".into(),
        tool_kind: "bash".into(),
        target: "npm run test -- --watch \u{1b}[2J".into(),
        consequence: "runs a repository script".into(),
        reason: "no rule allows npm run".into(),
        suggestion: Some("Bash(npm run test:*)".into()),
        ..Default::default()
    };
    let q = Question {
        context: &ctx,
        choices: vec![
            Choice::AllowOnce,
            Choice::AllowSession,
            Choice::AlwaysAllow,
            Choice::Deny,
        ],
    };
    match prompter.ask(&q) {
        Ok(PromptOutcome::Answered(c)) => println!("OUTCOME {c:?}"),
        Ok(PromptOutcome::NoHuman) => println!("OUTCOME nohuman"),
        Ok(PromptOutcome::Edited(m)) => println!("OUTCOME edited {}", serde_json::Value::Object(m)),
        Err(e) => println!("OUTCOME error {e}"),
    }
    let _ = NoHuman::Deny;
}

struct Pty {
    master: File,
    slave: OwnedFd,
}

fn open_pty() -> Pty {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = rustix::fs::open(
        name.as_c_str(),
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .unwrap();
    Pty {
        master: File::from(master),
        slave,
    }
}

/// Run the child on a pty, answer `answer` once "choose [" appears; return what the
/// terminal showed and the outcome line.
fn drive(answer: &str) -> (String, String) {
    let pty = open_pty();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pty_child",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CORDON_TEST_PTY_CHILD", "1")
        .stdin(Stdio::from(pty.slave.try_clone().unwrap()))
        .stderr(Stdio::from(pty.slave.try_clone().unwrap()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone().unwrap();
    let mut writer = pty.master;
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // EIO once every slave copy is closed ends the loop.
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !String::from_utf8_lossy(&screen).contains("choose [") {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => screen.extend(chunk),
            Err(_) => panic!(
                "no prompt appeared; screen: {}",
                String::from_utf8_lossy(&screen)
            ),
        }
    }
    writer.write_all(answer.as_bytes()).unwrap();
    writer.flush().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child.wait().unwrap();
    while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(200)) {
        screen.extend(chunk);
    }
    // libtest may print "test pty_child ... " on the same line first.
    let outcome = out
        .find("OUTCOME")
        .map(|i| out[i..].lines().next().unwrap_or(""))
        .unwrap_or("")
        .to_string();
    (String::from_utf8_lossy(&screen).into_owned(), outcome)
}

#[test]
fn shows_target_consequence_reason_and_the_exact_rule() {
    let (screen, outcome) = drive("d\n");
    assert_eq!(outcome, "OUTCOME Deny", "{screen}");
    for want in [
        "tool:        Bash",
        "consequence: runs a repository script",
        "reason:      no rule allows npm run",
        "[o] allow once",
        "[s] allow for this session (sess-1)",
        "[a] always allow this exact call, saving the rule Bash(npm run test:*)",
        "[d] deny",
    ] {
        assert!(screen.contains(want), "missing {want:?} in:\n{screen}");
    }
    // The escape sequence in the target was shown, not obeyed.
    assert!(screen.contains("--watch \\u{1b}[2J"), "{screen}");
    // cordon's own reset before the question is the only escape sequence written.
    let shown = screen.replace(cordon_policy::terminal::RESET_ATTRIBUTES, "");
    assert!(!shown.contains('\u{1b}'), "raw escape reached the terminal");
}

#[test]
fn each_choice_through_the_terminal() {
    for (typed, want) in [
        ("o\n", "OUTCOME AllowOnce"),
        ("s\n", "OUTCOME AllowSession"),
        ("always\n", "OUTCOME AlwaysAllow"),
        ("d\n", "OUTCOME Deny"),
        ("what\nA\n", "OUTCOME AlwaysAllow"),
    ] {
        let (_screen, outcome) = drive(typed);
        assert_eq!(outcome, want, "typed {typed:?}");
    }
}

#[test]
fn end_of_input_is_an_error_not_an_answer() {
    // Ctrl-D on an empty line: end of file on the terminal.
    let (_screen, outcome) = drive("\u{4}");
    assert!(outcome.starts_with("OUTCOME error"), "{outcome}");
}

#[test]
fn without_a_terminal_nobody_is_asked() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "pty_child",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CORDON_TEST_PTY_CHILD", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("OUTCOME no-terminal"));
}
