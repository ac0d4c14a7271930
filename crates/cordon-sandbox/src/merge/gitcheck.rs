//! A git configuration file left by a run, checked with the host's own git as the
//! parser (the one that will read it): against the keys `cordon_policy::gitconfig`
//! refuses ([`git_config_refusal`]), or three-way against the host's current file by
//! `cordon_policy::gitallow`'s allowlist ([`git_config_judgement`],
//! [`gitmodules_judgement`]).

use super::MAX_GIT_CONFIG;
use cordon_policy::gitallow::{ConfigPairs, GitConfigVerdict, judge_config, judge_gitmodules};
use cordon_policy::gitconfig::risky_key;
use std::ffi::OsStr;
use std::io::Write;

/// Check `bytes` as a git configuration file, with the host's git as the parser (the
/// one that will read it). `None` when it may be merged.
pub fn git_config_refusal(bytes: &[u8]) -> Option<String> {
    let records = match list_config(OsStr::new("git"), bytes) {
        Ok(records) => records,
        Err(why) => return Some(why),
    };
    for record in &records {
        let (key, value) = split_record(&String::from_utf8_lossy(record));
        if let Some(why) = risky_key(&key, value.as_deref()) {
            return Some(format!("it sets the git key {key}, which {why}"));
        }
    }
    None
}

/// Judge the git configuration file a run left (`run`) against the host's current one
/// (`host`, `None` when the git directory did not exist on the host), both parsed by the
/// host's git, with [`cordon_policy::gitallow::judge_config`].
///
/// A run file git cannot parse (or no git to parse it) is refused; a host file git cannot
/// parse counts as empty, so every key of the run's counts as changed.
pub fn git_config_judgement(run: &[u8], host: Option<&[u8]>) -> GitConfigVerdict {
    judgement(OsStr::new("git"), run, host, judge_config)
}

/// Judge a `.gitmodules` a run left (`run`) against the host's current one (`host`,
/// `None` when the host has none), both parsed by the host's git, with
/// [`cordon_policy::gitallow::judge_gitmodules`]; unparseable files as in
/// [`git_config_judgement`].
pub fn gitmodules_judgement(run: &[u8], host: Option<&[u8]>) -> GitConfigVerdict {
    judgement(OsStr::new("git"), run, host, judge_gitmodules)
}

type Judge = fn(Option<&ConfigPairs>, &ConfigPairs) -> GitConfigVerdict;

fn judgement(git: &OsStr, run: &[u8], host: Option<&[u8]>, judge: Judge) -> GitConfigVerdict {
    if run.len() as u64 > MAX_GIT_CONFIG {
        return GitConfigVerdict::Refuse(
            "it is too large to be checked as git configuration".into(),
        );
    }
    let run = match list_config(git, run) {
        Ok(records) => records,
        Err(why) => return GitConfigVerdict::Refuse(why),
    };
    let host = host.map(|h| {
        if h.len() as u64 > MAX_GIT_CONFIG {
            return Vec::new();
        }
        list_config(git, h).unwrap_or_default()
    });
    let pairs = |records: &[Vec<u8>]| -> Vec<(String, Option<String>)> {
        records.iter().map(|r| exact_pair(r)).collect()
    };
    let run_pairs = pairs(&run);
    let host_pairs = host.as_deref().map(pairs);
    judge(host_pairs.as_deref(), &run_pairs)
}

/// A record as text that tells every distinct record apart, for the policy to compare.
fn exact_pair(record: &[u8]) -> (String, Option<String>) {
    match record.iter().position(|b| *b == b'\n') {
        Some(i) => (exact_text(&record[..i]), Some(exact_text(&record[i + 1..]))),
        None => (exact_text(record), None),
    }
}

/// `bytes` as text, one-to-one: UTF-8 without U+FFFD as it is, anything else as U+FFFD
/// followed by the bytes in hex (which UTF-8 without U+FFFD never spells). A lossy
/// conversion would make a changed value that is not UTF-8 compare equal to the host's.
fn exact_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains('\u{fffd}') => text.to_owned(),
        _ => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("\u{fffd}{hex}")
        }
    }
}

/// One record of `git config --list --null`: the key, then a newline and the value, or
/// the key alone for a key written without `=`.
fn split_record(text: &str) -> (String, Option<String>) {
    match text.split_once('\n') {
        Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
        None => (text.to_owned(), None),
    }
}

/// The records `git` (the program to run) prints for `bytes` as a configuration file,
/// or why it cannot: one sentence.
fn list_config(git: &OsStr, bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    use std::process::{Command, Stdio};
    let child = Command::new(git)
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
        return Err("git is not installed on the host to check this git configuration".into());
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
        return Err("git could not check this git configuration".into());
    };
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().next().unwrap_or("").trim();
        return Err(format!("it is not valid git configuration ({why})"));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

#[cfg(test)]
mod tests;
