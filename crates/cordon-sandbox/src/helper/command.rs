//! The command's process, after the last fork: rlimits, capabilities dropped,
//! `PR_SET_NO_NEW_PRIVS`, Landlock, cordon's go byte, the write observer's listener,
//! seccomp last, then `execve`.
//!
//! It must never fork, and never reach `execve` before every layer is in place and the
//! go byte has arrived: any failure on the way ends the process with a status instead.

use super::fs_rules::{FallbackRules, full_tier_write_paths};
use super::wire::{
    CommandInfo, EXIT_CORDON_FAILED, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, InfoLine, WireError,
    wait_for_go, write_info,
};
use crate::error::{SandboxError, SandboxErrorKind};
use crate::landlock::{self, Rules};
use crate::observe;
use crate::seccomp;
use crate::spec::{Network, SandboxSpec};
use crate::sys;
use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal};
use seccompiler::BpfProgram;
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Find `prog` the way a shell would, in the sandbox's `PATH`.
fn resolve(prog: &OsStr, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if prog.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(prog));
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let cand = dir.join(prog);
        if let Ok(m) = std::fs::metadata(&cand)
            && m.is_file()
            && m.permissions().mode() & 0o111 != 0
        {
            return Some(cand);
        }
    }
    None
}

/// What the helper decided about the limits beyond the spec's own rlimits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// `RLIMIT_NPROC` to set, when it is what holds the process limit.
    pub(super) nproc: Option<u64>,
}

fn set_limits(spec: &SandboxSpec, limits: Limits) -> Result<(), SandboxError> {
    use nix::sys::resource::{Resource, setrlimit};
    let set = |r: Resource, v: Option<u64>, what: &str| -> Result<(), SandboxError> {
        match v {
            Some(v) => setrlimit(r, v, v)
                .map_err(|e| SandboxError::sys(format_args!("cannot limit {what}"), e)),
            None => Ok(()),
        }
    };
    set(Resource::RLIMIT_CORE, Some(0), "core dumps")?;
    set(Resource::RLIMIT_CPU, spec.limits.cpu_seconds, "CPU time")?;
    set(
        Resource::RLIMIT_AS,
        spec.limits.address_space,
        "address space",
    )?;
    set(Resource::RLIMIT_NPROC, limits.nproc, "processes")?;
    set(Resource::RLIMIT_FSIZE, spec.limits.file_size, "file size")?;
    set(
        Resource::RLIMIT_NOFILE,
        spec.limits.open_files,
        "open files",
    )?;
    Ok(())
}

/// The command's process: everything here runs after the last fork and ends in
/// `execve` or an exit status.
pub(super) fn command_main(
    spec: &SandboxSpec,
    fallback: Option<&FallbackRules>,
    info: RawFd,
    go: RawFd,
    filters: &[BpfProgram],
    listener_to: OwnedFd,
    limits: Limits,
) -> i32 {
    let fail = |e: SandboxError| {
        write_info(info, &InfoLine::Error(WireError::from_error(&e)));
        EXIT_CORDON_FAILED
    };
    let _ = SigSet::empty().thread_set_mask();
    if let Err(e) = sys::default_sigpipe() {
        return fail(SandboxError::sys("cannot restore SIGPIPE", e));
    }
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(SandboxError::sys("cannot set the parent-death signal", e));
    }
    if fallback.is_some() {
        if let Err(e) = nix::unistd::setsid() {
            return fail(SandboxError::sys("cannot start a new session", e));
        }
        if let Err(e) = nix::unistd::chdir(&spec.cwd) {
            return fail(SandboxError::sys(
                format_args!("cannot enter {}", spec.cwd.display()),
                e,
            ));
        }
    }
    if let Err(e) = set_limits(spec, limits) {
        return fail(e);
    }
    let Some(prog) = spec.argv.first() else {
        return fail(SandboxError::invalid("no command was given"));
    };
    let Some(path) = resolve(prog, &spec.env) else {
        write_info(
            info,
            &InfoLine::Error(WireError {
                kind: "not-found".into(),
                message: format!("command not found: {}", prog.to_string_lossy()),
            }),
        );
        return EXIT_NOT_FOUND;
    };
    let to_c = |s: &OsStr| CString::new(s.as_bytes()).ok();
    let Some(c_path) = to_c(path.as_os_str()) else {
        return fail(SandboxError::invalid("the command contains a NUL byte"));
    };
    let Some(c_argv) = spec
        .argv
        .iter()
        .map(|a| to_c(a))
        .collect::<Option<Vec<_>>>()
    else {
        return fail(SandboxError::invalid("an argument contains a NUL byte"));
    };
    // The fallback tier mounts nothing: the variables that name the roots bundle name
    // it where it is on the host (its Landlock rules let it be read there).
    let bundle = crate::plan::CA_BUNDLE_IN_SANDBOX;
    let on_host = spec
        .plan
        .ca_bundle_on_host
        .as_ref()
        .filter(|_| fallback.is_some());
    // Nor is there a forwarder on the spec's port: the proxy variables name the port of
    // the fallback forwarder on the host's loopback.
    let proxy_url = |port: u16| OsString::from(format!("http://127.0.0.1:{port}"));
    let proxy_urls = match (&spec.network, fallback.and_then(|f| f.proxy_port)) {
        (Network::Proxy { port, .. }, Some(held)) => Some((proxy_url(*port), proxy_url(held))),
        _ => None,
    };
    // Nor is there a private `/tmp`: the temporary-directory variables name the run's
    // scratch directory, the one place besides the roots that the command may write.
    let scratch_vars = ["TMPDIR", "TMP", "TEMP"];
    let scratch = spec
        .plan
        .fallback_scratch
        .as_ref()
        .filter(|_| fallback.is_some());
    let mut env: Vec<(OsString, OsString)> = spec
        .env
        .iter()
        .filter(|(k, _)| scratch.is_none() || !scratch_vars.iter().any(|n| k == n))
        .cloned()
        .collect();
    if let Some(dir) = scratch {
        env.extend(
            scratch_vars
                .iter()
                .map(|n| (OsString::from(n), dir.as_os_str().to_os_string())),
        );
    }
    let c_env: Vec<CString> = env
        .iter()
        .filter_map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            match (on_host, &proxy_urls) {
                (Some(host), _) if v.as_os_str() == std::ffi::OsStr::new(bundle) => {
                    kv.extend_from_slice(host.as_os_str().as_bytes())
                }
                (_, Some((planned, held))) if v == planned => kv.extend_from_slice(held.as_bytes()),
                _ => kv.extend_from_slice(v.as_bytes()),
            }
            CString::new(kv).ok()
        })
        .collect();

    let mut info_out = CommandInfo::default();
    let full_tier = fallback.is_none();
    match sys::drop_capabilities() {
        Ok(()) => info_out.capabilities_dropped = true,
        Err(e) => return fail(SandboxError::sys("cannot drop capabilities", e)),
    }
    if let Err(e) = nix::sys::prctl::set_no_new_privs() {
        return fail(SandboxError::sys("cannot set no_new_privs", e));
    }
    info_out.no_new_privs = true;
    let (read, write, list) = match fallback {
        None => (
            vec![PathBuf::from("/")],
            full_tier_write_paths(spec),
            Vec::new(),
        ),
        // No mount masks the system secrets here: the fallback rules leave them out.
        Some(rules) => (rules.read.clone(), rules.write.clone(), rules.list.clone()),
    };
    let rules = Rules {
        read: &read,
        list: &list,
        write: &write,
        // At the full tier the network namespace (empty but for its loopback, unless the
        // host's network was asked for) is what contains TCP: binding and connecting on
        // loopback reach only the sandbox itself. Without it, Landlock allows no TCP
        // port at all: with a proxy, the one connection the command may make, to the
        // forwarder, is made for it by its supervisor (`connect_guard.rs`), which
        // Landlock does not restrict.
        restrict_tcp: !full_tier && !matches!(spec.network, Network::Full),
    };
    match landlock::apply(&rules) {
        // Without namespaces, Landlock is the only filesystem containment: refuse to
        // run uncontained.
        Ok(l) if !full_tier && !l.filesystem => {
            return fail(SandboxError::new(
                SandboxErrorKind::TierUnavailable,
                "neither user namespaces nor Landlock are available here; refusing to run the command uncontained",
            ));
        }
        Ok(l) => info_out.landlock = l,
        Err(e) => return fail(e),
    }
    if let Err(e) = sys::cloexec_from(3) {
        return fail(SandboxError::sys("cannot close inherited descriptors", e));
    }
    // Everything is in place; run only once cordon has recorded the run. The supervisor
    // waits for the listener below before it starts the `--timeout` clock, so the wait
    // for the go byte (the audit record, a lock held by another cordon) is not counted.
    if let Err(e) = wait_for_go(go) {
        return fail(e);
    }
    // Hand the supervisor a listener for refused writes (observation only; if it
    // cannot be set up, the run goes on unobserved). In the fallback tier with a proxy
    // it also carries every `connect`, which the supervisor must judge
    // (`connect_guard.rs`): there, no listener means no run.
    let guard = fallback.and_then(|f| f.proxy_port).is_some();
    let handed = observe::install(guard)
        .and_then(|listener| observe::send_fd(listener_to.as_raw_fd(), listener.as_raw_fd()));
    if let (true, Err(e)) = (guard, handed) {
        let why = match e {
            Errno::EBUSY => {
                "another seccomp supervisor already watches this process (cordon inside a sandbox that intercepts system calls)"
            }
            e => e.desc(),
        };
        return fail(SandboxError::setup(format!(
            "cannot check the command's connections to the egress proxy: {why}; without a network namespace (fallback tier) nothing else holds the command to cordon's proxy, so the run is refused; run without a network allowlist, or where user namespaces are available"
        )));
    }
    drop(listener_to);
    info_out.seccomp = true;
    write_info(info, &InfoLine::Enforced(info_out));
    if let Err(e) = seccomp::install(filters) {
        return fail(e);
    }
    let mut err = nix::unistd::execve(&c_path, &c_argv, &c_env).err();
    if err == Some(Errno::ENOEXEC) {
        // A script without `#!`: run it with the shell, as execvp(3) does.
        let mut sh_argv = vec![CString::from(c"/bin/sh"), c_path.clone()];
        sh_argv.extend(c_argv.iter().skip(1).cloned());
        err = nix::unistd::execve(c"/bin/sh", &sh_argv, &c_env).err();
    }
    match err {
        Some(Errno::ENOENT) => {
            write_info(
                info,
                &InfoLine::Error(WireError {
                    kind: "not-found".into(),
                    message: format!("command not found: {}", prog.to_string_lossy()),
                }),
            );
            EXIT_NOT_FOUND
        }
        Some(e) => {
            write_info(
                info,
                &InfoLine::Error(WireError {
                    // Like "not found" for the caller (127): 126 is cordon's "denied by
                    // policy".
                    kind: "not-found".into(),
                    message: format!("cannot execute {}: {}", path.display(), e.desc()),
                }),
            );
            EXIT_NOT_EXECUTABLE
        }
        None => EXIT_CORDON_FAILED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_searches_path() {
        let env = vec![(OsString::from("PATH"), OsString::from("/nonexistent:/bin"))];
        assert_eq!(
            resolve(OsStr::new("sh"), &env),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(resolve(OsStr::new("no-such-program-xyz"), &env), None);
        assert_eq!(resolve(OsStr::new("./x"), &env), Some(PathBuf::from("./x")));
    }
}
