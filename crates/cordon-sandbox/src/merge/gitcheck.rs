//! A git configuration file left by a run, checked with the host's own git as the
//! parser (the one that will read it) against the keys `cordon_policy::gitconfig`
//! refuses.

use super::MAX_GIT_CONFIG;
use cordon_policy::gitconfig::risky_key;
use rustix::fs::{Mode, OFlags};
use std::io::{Read, Write};
use std::os::fd::BorrowedFd;

/// Why the git configuration file `name` in `dir` must stay out, or `None` when `git
/// config` parses it and no key in it runs a program or redirects git.
pub(super) fn check_git_config_at(dir: BorrowedFd<'_>, name: &[u8]) -> Option<String> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => return Some(format!("it cannot be read to be checked ({e})")),
    };
    let mut bytes = Vec::new();
    let read = std::fs::File::from(fd)
        .take(MAX_GIT_CONFIG + 1)
        .read_to_end(&mut bytes);
    if read.is_err() {
        return Some("it cannot be read to be checked".into());
    }
    if bytes.len() as u64 > MAX_GIT_CONFIG {
        return Some("it is too large to be checked as git configuration".into());
    }
    git_config_refusal(&bytes)
}

/// Check `bytes` as a git configuration file, with the host's git as the parser (the
/// one that will read it). `None` when it may be merged.
pub fn git_config_refusal(bytes: &[u8]) -> Option<String> {
    use std::process::{Command, Stdio};
    let child = Command::new("git")
        .args(["config", "--file", "-", "--list", "--null", "--no-includes"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", "/nonexistent")
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        return Some("git is not installed on the host to check this git configuration".into());
    };
    let input = bytes.to_vec();
    let writer = child.stdin.take().map(|mut stdin| {
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let out = child.wait_with_output();
    if let Some(w) = writer {
        let _ = w.join();
    }
    let Ok(out) = out else {
        return Some("git could not check this git configuration".into());
    };
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().next().unwrap_or("").trim();
        return Some(format!("it is not valid git configuration ({why})"));
    }
    for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let text = String::from_utf8_lossy(record);
        let (key, value) = match text.split_once('\n') {
            Some((k, v)) => (k, Some(v)),
            None => (text.as_ref(), None),
        };
        if let Some(why) = risky_key(key, value) {
            return Some(format!("it sets the git key {key}, which {why}"));
        }
    }
    None
}
