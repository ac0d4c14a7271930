//! The sensitive-read guard: credentials under `HOME`, in the system, in `/proc`, and
//! secret file names anywhere.

use super::matching::{lower, name_eq, normal_components, rel_matches, rest_after};
use super::{
    ENV_TEMPLATES, GuardHit, PROC_PER_PROCESS, SENSITIVE_HOME_PATHS, SENSITIVE_SYSTEM_PATHS,
    is_ssh_host_key,
};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Is `name` the file name of a secret wherever it appears (`.env`, `.env.local`,
/// `*.pem`, `id_rsa`, …)? Templates such as `.env.example` are not secrets.
pub fn is_secret_file_name(name: &OsStr) -> bool {
    // Allocation-free and case-insensitive: this runs for every component of every path.
    let n = name.as_encoded_bytes();
    let eq = |s: &str| n.eq_ignore_ascii_case(s.as_bytes());
    let starts = |s: &str| n.len() >= s.len() && n[..s.len()].eq_ignore_ascii_case(s.as_bytes());
    let ends =
        |s: &str| n.len() > s.len() && n[n.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    if ENV_TEMPLATES.iter().any(|t| eq(t)) {
        return false;
    }
    eq(".env")
        || starts(".env.")
        || ends(".pem")
        || ends(".key")
        || ends(".p12")
        || ends(".pfx")
        || starts("id_rsa")
        || starts("id_ed25519")
        || starts("id_ecdsa")
        || starts("id_dsa")
}

/// Does reading `path` touch a credential? `path` must be absolute and lexically clean.
pub fn sensitive_read(path: &Path, home: &Path) -> Option<GuardHit> {
    let comps = normal_components(path);
    sensitive_read_comps(&comps, home)
}

pub(super) fn sensitive_read_comps(comps: &[&OsStr], home: &Path) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "sensitive-read",
            pattern,
        })
    };
    if let Some(rest) = rest_after(comps, home)
        && let Some(rel) = SENSITIVE_HOME_PATHS.iter().find(|r| rel_matches(rest, r))
    {
        return hit(format!("~/{rel}"));
    }
    if let Some(p) = proc_sensitive(comps) {
        return hit(p);
    }
    if let Some(abs) = SENSITIVE_SYSTEM_PATHS
        .iter()
        .find(|a| rel_matches(comps, a.trim_start_matches('/')))
    {
        return hit((*abs).to_string());
    }
    if let [etc, ssh, key] = comps
        && name_eq(etc, "etc")
        && name_eq(ssh, "ssh")
        && is_ssh_host_key(key)
    {
        return hit("/etc/ssh/ssh_host_*_key".into());
    }
    // A secret file name anywhere, or any path beneath a directory with such a name.
    if let Some(c) = comps.iter().find(|c| is_secret_file_name(c)) {
        return hit(format!("secret file name {}", c.to_string_lossy()));
    }
    None
}

/// `/proc/PID/{environ,mem,root,cwd,fd,map_files,…}` read other processes' secrets or
/// step around path checks (`/proc/self/root/home/u/.ssh`).
fn proc_sensitive(comps: &[&OsStr]) -> Option<String> {
    if comps.first().is_some_and(|c| name_eq(c, "proc")) {
        if let Some(entry) = comps.get(2) {
            if PROC_PER_PROCESS.iter().any(|p| name_eq(entry, p)) {
                return Some(format!("/proc/*/{}", lower(entry)));
            }
            // /proc/PID/task/TID/environ and friends.
            if name_eq(entry, "task")
                && let Some(e) = comps.get(4)
                && PROC_PER_PROCESS.iter().any(|p| name_eq(e, p))
            {
                return Some(format!("/proc/*/task/*/{}", lower(e)));
            }
        }
        if comps.get(1).is_some_and(|c| name_eq(c, "kcore")) {
            return Some("/proc/kcore".into());
        }
    }
    None
}

/// Absolute paths the sandbox must mask for this `home`: every entry of
/// [`SENSITIVE_HOME_PATHS`] joined to it (whether or not it exists today).
pub fn sensitive_home_paths(home: &Path) -> Vec<PathBuf> {
    SENSITIVE_HOME_PATHS.iter().map(|r| home.join(r)).collect()
}
