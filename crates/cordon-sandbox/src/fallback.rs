//! What the fallback tier does not protect, in the words cordon prints at every run of
//! it, in its report and in `cordon doctor`; and the sentence that refuses a run which
//! required the full tier where the host cannot give it.
//!
//! The fallback tier is what is left without user namespaces: Landlock and seccomp, no
//! mount, no PID, IPC or network namespace of its own. It keeps reads to an allowlist and
//! writes to the writable roots and a private scratch directory (see `plan.rs`,
//! `helper/fs_rules.rs`, `scratch.rs`), but some promises of the full tier need what it
//! does not have. Those are listed here, one sentence each, so that a user who accepts
//! the fallback (`--require any`) is told exactly what they accepted, every time.
//!
//! This module only words things: it must never decide a tier or grant anything.

use crate::spec::Network;

/// What the fallback tier does not protect on a host whose Landlock ABI is
/// `landlock_abi`, for a run with `network` (`None`: any run, as `cordon doctor` says
/// it). One sentence each.
pub fn fallback_gaps(landlock_abi: i32, network: Option<&Network>) -> Vec<String> {
    vec![
        "code the host runs later: the command writes the workspace in place, so what it plants there (git hooks and config such as core.fsmonitor or core.hooksPath, editor, agent and direnv files such as .vscode, .claude, .mcp.json and .envrc, CI files such as .github/workflows, build files and sources) is what the host's git, editor, agents and CI run next; cordon removes the protected paths the run created and puts back the protected paths it changed (git hooks and config, editor and agent files, .envrc) after the run, which is not a guarantee: a cordon killed before that skips it (where Landlock does not scope signals, the command itself can kill it), and CI files, build files and sources are not checked at all".to_string(),
        format!(
            "host services on Unix sockets: every socket file this user can reach may be connected to, such as the session bus under /run/user (through which `systemd-run --user` starts any program outside the sandbox), Docker's socket or an ssh-agent's; cordon's Landlock rules do not restrict connecting{}",
            if landlock_abi >= 6 {
                "; abstract sockets outside the sandbox are refused (Landlock scopes)"
            } else {
                ", and abstract sockets are reachable too (Landlock scopes them from ABI 6)"
            }
        ),
        format!(
            "host processes: the command sees every process of the host in /proc (command lines included){}, and what it started keeps running if cordon itself is killed (no PID namespace ends with it)",
            if landlock_abi >= 6 {
                "; Landlock scopes keep it from signalling any process outside the sandbox"
            } else {
                ", and can signal every process of this user, cordon's own included (Landlock scopes signals from ABI 6)"
            }
        ),
        network_gap(network),
        "System V IPC and POSIX message queues: no IPC namespace, so the shared memory, semaphores and queues of this user's processes are reachable".to_string(),
        "secrets inside the writable roots (.env, *.pem and other key files) are readable and writable: Landlock cannot leave one file out of a tree the command may write, and nothing masks them".to_string(),
        "scratch space: the host's /tmp, /var/tmp and /dev/shm are not writable, and TMPDIR, TMP and TEMP name a private directory on disk that --tmp-size does not bound; programs that write /tmp by name, or use POSIX shared memory, fail".to_string(),
    ]
}

fn network_gap(network: Option<&Network>) -> String {
    const FORWARDER: &str = "seccomp allows Unix and TCP sockets only, Landlock refuses every TCP bind and connect, and the one connection allowed, to cordon's forwarder on a port of the host's loopback, is made by the command's supervisor; any process of this user can use that forwarder (and the allowlist and credentials behind it) while the run lasts";
    match network {
        Some(Network::None) => "the host's network namespace: no IP socket can be created (seccomp allows Unix sockets only), but the host's interfaces and addresses are visible in /proc/net and /sys/class/net".into(),
        Some(Network::Proxy { .. }) => format!("the host's network namespace: {FORWARDER}"),
        Some(Network::Full) => "the host's network, unfiltered (--net full)".into(),
        None => format!(
            "the host's network namespace: its interfaces and addresses are visible; without an allowlist seccomp allows Unix sockets only; with one, {FORWARDER}; with --net full, the host's network unfiltered"
        ),
    }
}

/// The refusal of a run that required the full tier where `what` (`user namespaces are
/// unavailable`) for `detail` (the kernel's error), one sentence: the cause and the fix.
/// `full_tier_for` names what needs the full tier when the caller did not require it
/// (then accepting the fallback would not help).
pub(crate) fn refusal(what: &str, detail: &str, full_tier_for: Option<&str>) -> String {
    match full_tier_for {
        Some(needs) => format!(
            "{what} here ({detail}), and {needs} needs the full tier: nothing was run; run it where user namespaces are available (`cordon doctor` says why they are not here)"
        ),
        None => format!(
            "{what} here ({detail}): cordon refuses to run without them; pass --require any (or set `require = \"any\"` in the [sandbox] table of your user config) to accept the fallback tier, which does not keep code the command plants in the workspace (git hooks and config, editor and agent files) from running on the host, nor host services' Unix sockets out of its reach (`cordon doctor` lists everything it does not protect)"
        ),
    }
}

/// The lines printed on stderr when a run falls back: why, and [`fallback_gaps`].
pub(crate) fn notice(why: &str, gaps: &[String]) -> String {
    let mut out = format!(
        "cordon: {why}; running in the fallback tier (Landlock and seccomp only), as `--require any` or `[sandbox] require = \"any\"` allows; it does not protect against:\n"
    );
    for g in gaps {
        out.push_str("cordon:   - ");
        out.push_str(g);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gaps_follow_the_kernel_and_the_network() {
        let old = fallback_gaps(5, Some(&Network::None));
        let new = fallback_gaps(7, Some(&Network::None));
        assert_eq!(old.len(), new.len());
        assert!(old.iter().any(|g| g.contains("can signal every process")));
        assert!(new.iter().any(|g| g.contains("keep it from signalling")));
        assert!(old[0].contains("not a guarantee"), "{}", old[0]);
        let full = fallback_gaps(7, Some(&Network::Full));
        assert!(full.iter().any(|g| g.contains("unfiltered")));
        // One sentence each: no line breaks inside.
        for g in fallback_gaps(7, None) {
            assert!(!g.contains('\n'), "{g}");
        }
        let n = notice("user namespaces are unavailable (EPERM)", &new);
        assert_eq!(n.lines().count(), new.len() + 1);
    }

    #[test]
    fn the_refusal_names_the_fix_only_when_it_helps() {
        let own = refusal("user namespaces are unavailable", "EPERM", None);
        assert!(own.contains("pass --require any"), "{own}");
        let slot = refusal("user namespaces are unavailable", "EPERM", Some("a slot"));
        assert!(!slot.contains("--require any"), "{slot}");
        assert!(slot.contains("a slot needs the full tier"), "{slot}");
    }
}
