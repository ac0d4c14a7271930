//! ssh (and git over ssh) from inside the sandbox, through the egress proxy.
//!
//! The sandbox has no network of its own, so ssh cannot dial a host. Unless the run has
//! the host's network, the mount plan gives ssh a configuration of cordon's own: every
//! host is reached through a `ProxyCommand` that is cordon itself (the running binary,
//! read-only, since its own path may be hidden there; where that path is closed to the
//! user, a copy in the state directory, `relay_copy.rs`) in its relay mode
//! ([`SSH_RELAY_ARG`]), which opens a `CONNECT` tunnel through the proxy for `%h %p` and
//! copies bytes between ssh and the tunnel. The proxy judges the destination by the same
//! allowlist as every other connection, and records a refusal like any other. Without a
//! proxy (no host allowlisted) only `/etc/ssh/ssh_config` is replaced, by one whose
//! `ProxyCommand` says in one sentence that there is no network; `/run` stays empty.
//!
//! What this module must never do: write or relax the user's ssh files. The user's
//! `known_hosts` is shown read-only at [`KNOWN_HOSTS_IN_SANDBOX`] and the configuration
//! says `StrictHostKeyChecking yes`, so an unknown host key fails with ssh's own error
//! and nothing run inside can add one. The user's keys stay where the mask of `~/.ssh`
//! hides them; an ssh agent is reachable only when the caller names its socket
//! ([`crate::SandboxBuilder::ssh_agent`]), which is then bound at [`AGENT_IN_SANDBOX`].
//! The user's own `~/.ssh/config` on the host is neither read nor changed.
//!
//! The configuration is written into the sandbox at [`CONFIG_IN_SANDBOX`] and bound over
//! `/etc/ssh/ssh_config` (ssh's system-wide file), so that a plain `ssh` finds it; where
//! that file does not exist, `GIT_SSH_COMMAND` points git at it with `-F`. Only the full
//! tier mounts: in the fallback tier ssh is left as it is (and has no network).

use crate::error::SandboxError;
use crate::plan::MountOp;
use crate::spec::Network;
use cordon_policy::settings::SandboxMode;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};

/// argv\[1\] that makes the `cordon` binary act as ssh's relay to the egress proxy:
/// `cordon __cordon-ssh-relay PROXY_PORT HOST PORT`. Call [`ssh_relay_main`] first thing
/// in `main` when it is given.
pub const SSH_RELAY_ARG: &str = "__cordon-ssh-relay";

/// The directory of cordon's ssh files inside the sandbox.
pub const SSH_DIR_IN_SANDBOX: &str = "/run/cordon/ssh";
/// ssh's configuration inside the sandbox.
pub const CONFIG_IN_SANDBOX: &str = "/run/cordon/ssh/config";
/// The relay (the caller's own binary) inside the sandbox.
pub const RELAY_IN_SANDBOX: &str = "/run/cordon/ssh/cordon";
/// The user's `known_hosts`, read-only, inside the sandbox.
pub const KNOWN_HOSTS_IN_SANDBOX: &str = "/run/cordon/ssh/known_hosts";
/// The ssh agent's socket inside the sandbox, when the caller passed one.
pub const AGENT_IN_SANDBOX: &str = "/run/cordon/ssh/agent.sock";

/// ssh's system-wide client configuration, which cordon's replaces inside.
const SYSTEM_CONFIG: &str = "/etc/ssh/ssh_config";

/// The most a public key file may hold to be read (a public key is a line of a few KiB).
const MAX_PUBLIC_KEY: u64 = 1024 * 1024;
/// The system's known hosts, which ssh also reads (visible read-only, as all of `/etc`).
const SYSTEM_KNOWN_HOSTS: &str = "/etc/ssh/ssh_known_hosts";

/// What the ssh part of the mount plan is made from (host paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SshInputs {
    /// The binary that becomes the relay: the caller's own executable at its path, or
    /// its copy in the state directory (`relay_copy.rs`).
    pub relay: Relay,
    /// The user's `known_hosts`, when it is a file.
    pub known_hosts: Option<PathBuf>,
    /// The in-sandbox port of the proxy's forwarder; `None` when the run has no network:
    /// then only `/etc/ssh/ssh_config` is replaced, by a configuration whose
    /// `ProxyCommand` says so (nothing is added under `/run`, which stays empty).
    pub proxy_port: Option<u16>,
    /// Whether `/etc/ssh/ssh_config` is a regular file that cordon's can be bound over.
    pub system_config: bool,
}

/// Where the relay is bound from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Relay {
    /// The running binary's path, which this user can reach (or, if not, the helper
    /// copies the running image for the run: [`MountOp::OwnBinary`]).
    Running(PathBuf),
    /// A copy of the running binary, made from its image, in cordon's state directory.
    Copy(PathBuf),
}

/// The relay for this process: its own binary where this user can reach it by its path,
/// else a copy in the state directory, else (no copy could be made) the path for the
/// helper to copy from.
fn relay_source() -> Option<Relay> {
    let path = std::env::current_exe().ok()?;
    // The kernel's link to this process's own binary.
    #[allow(clippy::disallowed_methods)]
    let Ok(exe) = std::fs::File::open("/proc/self/exe") else {
        return Some(Relay::Running(path));
    };
    if crate::relay_copy::reachable(&exe, &path) {
        return Some(Relay::Running(path));
    }
    cordon_policy::state_dir::state_dir()
        .and_then(|state| crate::relay_copy::copy_in(&state, &exe))
        .map(Relay::Copy)
        .or(Some(Relay::Running(path)))
}

/// The ssh setup of a run. `None` with the host's network (ssh dials as it does
/// outside), or when the run writes everything (`full-access` shows the host's `/`
/// writable: cordon makes no mount points in it).
///
/// `known_hosts` is the caller's own choice ([`crate::SandboxBuilder::ssh_known_hosts`]),
/// which replaces `~/.ssh/known_hosts`: refused when it is not a known-hosts file cordon
/// may show, or when the run has no setup that would use it (ssh would check keys
/// against another file than the one named). The default is shown only when it is one.
pub(crate) fn inputs(
    mode: SandboxMode,
    network: &Network,
    home: &Path,
    known_hosts: Option<&Path>,
) -> Result<Option<SshInputs>, SandboxError> {
    let proxy_port = match network {
        Network::Proxy { port, .. } => Some(*port),
        Network::None => None,
        Network::Full => None,
    };
    let unused = match (network, mode) {
        (Network::Full, _) => Some("the command has the host's network"),
        (_, SandboxMode::FullAccess) => Some("the sandbox mode is full-access"),
        _ => None,
    };
    if let Some(why) = unused {
        return match known_hosts {
            Some(kh) => Err(SandboxError::invalid(format!(
                "the ssh known_hosts file {} cannot be used: {why}, so ssh inside runs with the user's own configuration and would not read it; drop it, or pass ssh `-o UserKnownHostsFile=FILE` yourself",
                kh.display()
            ))),
            None => Ok(None),
        };
    }
    let known_hosts = match known_hosts {
        Some(kh) => Some(chosen_known_hosts(kh)?),
        None => std::fs::canonicalize(home.join(".ssh/known_hosts"))
            .ok()
            .filter(|p| looks_like_known_hosts(p)),
    };
    // Without a proxy there is no relay to bind: no copy is made for it.
    let relay = match proxy_port {
        Some(_) => relay_source(),
        None => std::env::current_exe().ok().map(Relay::Running),
    };
    let Some(relay) = relay else {
        return Ok(None);
    };
    let system_config = std::fs::symlink_metadata(SYSTEM_CONFIG).is_ok_and(|m| m.is_file());
    Ok(Some(SshInputs {
        relay,
        known_hosts,
        proxy_port,
        system_config,
    }))
}

/// The caller's known-hosts file, canonical, or why it cannot be shown.
fn chosen_known_hosts(kh: &Path) -> Result<PathBuf, SandboxError> {
    let refuse = |why: &str| {
        SandboxError::invalid(format!(
            "the ssh known_hosts file {} cannot be used: {why}",
            kh.display()
        ))
    };
    let canonical = std::fs::canonicalize(kh)
        .map_err(|e| refuse(&format!("{e}; name an existing file of host keys")))?;
    if !canonical.is_file() {
        return Err(refuse("it is not a regular file"));
    }
    if !looks_like_known_hosts(&canonical) {
        return Err(refuse(
            "it is named like a private key or holds one (only public host keys may be shown inside)",
        ));
    }
    Ok(canonical)
}

/// Whether `p` (canonical) may be shown as the known hosts: a regular file that is not
/// named like a secret and holds no private key. `~/.ssh` is masked as a whole, and a
/// `known_hosts` that is a link to a key there must not bring the key back.
fn looks_like_known_hosts(p: &Path) -> bool {
    use cordon_policy::guards::{is_secret_file_name, is_ssh_host_key};
    let named_secret = p
        .file_name()
        .is_none_or(|n| is_secret_file_name(n) || is_ssh_host_key(n));
    p.is_file()
        && !named_secret
        && cordon_fs::read_regular(p, MAX_PUBLIC_KEY)
            .is_ok_and(|b| !b.windows(11).any(|w| w == b"PRIVATE KEY"))
}

/// The environment the setup needs: `GIT_SSH_COMMAND` where ssh would not find the
/// configuration by itself.
pub(crate) fn env(inp: &SshInputs) -> Vec<(OsString, OsString)> {
    if inp.system_config || inp.proxy_port.is_none() {
        Vec::new()
    } else {
        vec![(
            "GIT_SSH_COMMAND".into(),
            format!("ssh -F {CONFIG_IN_SANDBOX}").into(),
        )]
    }
}

/// The `ProxyCommand` of a run without network: one sentence, no connection. It names
/// no `%h` or `%p`, so nothing of the destination reaches a shell.
const NO_NETWORK: &str = "ProxyCommand /bin/sh -c \"echo 'cordon: this sandbox has no network, so ssh cannot reach any host; let the command reach it through the egress proxy with --allow-net HOST:PORT' >&2; exit 255\"";

/// ssh's configuration for a run whose proxy forwarder listens on `proxy_port`.
pub(crate) fn config_text(proxy_port: Option<u16>) -> String {
    let Some(proxy_port) = proxy_port else {
        return format!(
            "# Written by cordon for this sandbox, which has no network.\n\
             Host *\n\
             \x20   {NO_NETWORK}\n\
             \x20   BatchMode yes\n"
        );
    };
    format!(
        "# Written by cordon for this sandbox. ssh reaches hosts only through cordon's\n\
         # egress proxy, and checks their keys against the user's known_hosts (read-only).\n\
         Host *\n\
         \x20   ProxyCommand {RELAY_IN_SANDBOX} {SSH_RELAY_ARG} {proxy_port} %h %p\n\
         \x20   UserKnownHostsFile {KNOWN_HOSTS_IN_SANDBOX}\n\
         \x20   GlobalKnownHostsFile {SYSTEM_KNOWN_HOSTS}\n\
         \x20   StrictHostKeyChecking yes\n\
         \x20   UpdateHostKeys no\n\
         \x20   CheckHostIP no\n\
         \x20   BatchMode yes\n\
         \x20   ConnectTimeout 30\n"
    )
}

/// The mount steps of the setup, after `/run` has been hidden under its tmpfs.
pub(crate) fn ops(inp: &SshInputs) -> Vec<MountOp> {
    let text = config_text(inp.proxy_port);
    if inp.proxy_port.is_none() {
        return match inp.system_config {
            true => vec![MountOp::Text {
                dst: PathBuf::from(SYSTEM_CONFIG),
                text,
            }],
            false => Vec::new(),
        };
    }
    let mut ops = vec![
        MountOp::Text {
            dst: PathBuf::from(CONFIG_IN_SANDBOX),
            text: text.clone(),
        },
        match &inp.relay {
            Relay::Running(src) => MountOp::OwnBinary {
                src: src.clone(),
                dst: PathBuf::from(RELAY_IN_SANDBOX),
            },
            Relay::Copy(src) => MountOp::Bind {
                src: src.clone(),
                dst: PathBuf::from(RELAY_IN_SANDBOX),
                read_only: true,
            },
        },
    ];
    if let Some(kh) = &inp.known_hosts {
        ops.push(MountOp::Bind {
            src: kh.clone(),
            dst: PathBuf::from(KNOWN_HOSTS_IN_SANDBOX),
            read_only: true,
        });
    }
    if inp.system_config {
        ops.push(MountOp::Text {
            dst: PathBuf::from(SYSTEM_CONFIG),
            text,
        });
    }
    ops
}

/// The agent's socket bound at [`AGENT_IN_SANDBOX`], and `SSH_AUTH_SOCK` naming it.
/// In `full-access` the host's `/` is visible as it is: the socket is named at its own
/// path and nothing is mounted.
pub(crate) fn agent(mode: SandboxMode, socket: &Path) -> (Option<MountOp>, OsString) {
    if matches!(mode, SandboxMode::FullAccess) {
        return (None, socket.as_os_str().to_os_string());
    }
    (
        Some(MountOp::Socket {
            src: socket.to_path_buf(),
            dst: PathBuf::from(AGENT_IN_SANDBOX),
        }),
        AGENT_IN_SANDBOX.into(),
    )
}

/// Entry point of the relay, run by ssh inside the sandbox as its `ProxyCommand`. Exits
/// 255 (ssh's own code for a failed connection) with one sentence on stderr when the
/// tunnel cannot be opened.
pub fn ssh_relay_main() -> ! {
    let args: Vec<String> = std::env::args().skip(2).collect();
    match relay(&args) {
        Ok(()) => std::process::exit(0),
        Err(msg) => {
            eprintln!("cordon: {msg}");
            std::process::exit(255)
        }
    }
}

/// A host name or address as ssh passes it: letters, digits, `.`, `-`, `_` and, for
/// IPv6 literals, `:`.
fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':'))
}

fn relay(args: &[String]) -> Result<(), String> {
    let [proxy_port, host, port] = args else {
        return Err(format!(
            "usage: cordon {SSH_RELAY_ARG} PROXY_PORT HOST PORT (ssh runs this as its ProxyCommand)"
        ));
    };
    let port: u16 = port
        .parse()
        .map_err(|_| format!("`{port}` is not a port ssh can reach"))?;
    if !valid_host(host) {
        return Err(format!("`{host}` is not a host name ssh can reach"));
    }
    let target = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let proxy_port: u16 = proxy_port
        .parse()
        .map_err(|_| format!("`{proxy_port}` is not the proxy's port"))?;
    if !Path::new(KNOWN_HOSTS_IN_SANDBOX).is_file() && !Path::new(SYSTEM_KNOWN_HOSTS).is_file() {
        return Err(format!(
            "ssh to {target} was not started: there is no known_hosts to check its host key against (cordon shows the user's ~/.ssh/known_hosts, read-only, and it does not exist); add the host's key to it outside the sandbox, after checking its fingerprint"
        ));
    }
    let mut tunnel = TcpStream::connect(("127.0.0.1", proxy_port)).map_err(|e| {
        format!(
            "ssh to {target} failed: cordon's egress proxy is not reachable in this sandbox ({e})"
        )
    })?;
    write!(
        tunnel,
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    )
    .map_err(|e| format!("ssh to {target} failed: cannot ask the egress proxy ({e})"))?;
    let head = read_head(&mut tunnel)
        .map_err(|e| format!("ssh to {target} failed: the egress proxy did not answer ({e})"))?;
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("");
    if status != "200" {
        return Err(refusal(&mut tunnel, &head, &target));
    }
    pump(tunnel)
}

/// The response head, read a byte at a time so that nothing of the tunnel's first bytes
/// is taken with it.
fn read_head(s: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            return Err(std::io::Error::other("the answer's head is too long"));
        }
        if s.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// One sentence for a refused tunnel: the proxy's own (`cordon: …` in the body) and the
/// block code it sent, with the way to allow the host.
fn refusal(s: &mut TcpStream, head: &str, target: &str) -> String {
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let code = header("x-cordon-block").unwrap_or_else(|| "refused".into());
    let len = header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0)
        .min(2048);
    let mut body = vec![0u8; len];
    let reason = match s.read_exact(&mut body) {
        Ok(()) => String::from_utf8_lossy(&body)
            .trim()
            .trim_start_matches("cordon: ")
            .chars()
            .filter(|c| !c.is_control())
            .collect::<String>(),
        Err(_) => String::new(),
    };
    let hint = if matches!(code.as_str(), "not-allowed" | "port-not-allowed") {
        format!("; to allow it, add {target} to the network allowlist (--allow-net {target})")
    } else {
        String::new()
    };
    if reason.is_empty() {
        format!("the egress proxy refused ssh to {target} ({code}){hint}")
    } else {
        format!("the egress proxy refused ssh to {target}: {reason} ({code}){hint}")
    }
}

/// Copy stdin to the tunnel and the tunnel to stdout until both sides are done.
fn pump(tunnel: TcpStream) -> Result<(), String> {
    let up = tunnel
        .try_clone()
        .map_err(|e| format!("cannot use the tunnel: {e}"))?;
    let sender = std::thread::spawn(move || {
        let mut up = up;
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut up);
        let _ = up.shutdown(Shutdown::Write);
    });
    let mut down = tunnel;
    let mut out = std::io::stdout().lock();
    let mut buf = [0u8; 32 * 1024];
    loop {
        match down.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
        }
    }
    // The server closed the connection: ssh is told by the end of stdout; what it may
    // still be writing has nowhere to go.
    drop(sender);
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn hosts_ssh_may_name() {
        for ok in ["github.com", "127.0.0.1", "::1", "my_host-1.example"] {
            assert!(valid_host(ok), "{ok}");
        }
        for bad in ["", "a b", "a\r\nHost: x", "a/b", "a@b", &"a".repeat(254)] {
            assert!(!valid_host(bad), "{bad}");
        }
    }

    #[test]
    fn a_key_is_never_shown_as_known_hosts() {
        let d = tempfile::tempdir().unwrap();
        let kh = d.path().join("known_hosts");
        std::fs::write(&kh, "[h]:22 ssh-ed25519 AAAA\n").unwrap();
        assert!(looks_like_known_hosts(&kh));
        let key = d.path().join("id_ed25519");
        std::fs::write(&key, "[h]:22 ssh-ed25519 AAAA\n").unwrap();
        assert!(!looks_like_known_hosts(&key));
        let disguised = d.path().join("hosts");
        std::fs::write(&disguised, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
        assert!(!looks_like_known_hosts(&disguised));
        assert!(!looks_like_known_hosts(d.path()));
        let link = d.path().join("kh-link");
        std::os::unix::fs::symlink(&key, &link).unwrap();
        let proxy = Network::Proxy {
            socket: "/x".into(),
            port: 3128,
        };
        let ws = SandboxMode::WorkspaceWrite;
        // Named by the caller: refused with a sentence.
        let e = inputs(ws, &proxy, d.path(), Some(&link)).unwrap_err();
        assert!(e.message.contains("holds one"), "{}", e.message);
        // The default `~/.ssh/known_hosts`, a link to a key: not shown.
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::os::unix::fs::symlink(&key, home.join(".ssh/known_hosts")).unwrap();
        let inp = inputs(ws, &proxy, &home, None).unwrap().unwrap();
        assert_eq!(inp.known_hosts, None);
    }

    #[test]
    fn a_chosen_known_hosts_replaces_the_users_or_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/known_hosts"), "[a]:22 ssh-ed25519 AAAA\n").unwrap();
        let chosen = d.path().join("project_hosts");
        std::fs::write(&chosen, "[b]:22 ssh-ed25519 BBBB\n").unwrap();
        let proxy = Network::Proxy {
            socket: "/x".into(),
            port: 3128,
        };
        let ws = SandboxMode::WorkspaceWrite;
        let inp = inputs(ws, &proxy, &home, Some(&chosen)).unwrap().unwrap();
        assert_eq!(inp.known_hosts, Some(chosen.canonicalize().unwrap()));
        assert!(
            ops(&inp)
                .iter()
                .any(|o| matches!(o, MountOp::Bind { src, dst, read_only: true }
            if dst == Path::new(KNOWN_HOSTS_IN_SANDBOX) && src == &chosen.canonicalize().unwrap()))
        );
        // Missing, a directory, or a run where ssh would not read it: refused.
        let missing = d.path().join("nope");
        for (kh, net, mode, says) in [
            (&missing, &proxy, ws, "No such file"),
            (&d.path().to_path_buf(), &proxy, ws, "not a regular file"),
            (&chosen, &Network::Full, ws, "host's network"),
            (&chosen, &proxy, SandboxMode::FullAccess, "full-access"),
        ] {
            let e = inputs(mode, net, &home, Some(kh)).unwrap_err();
            assert!(e.message.contains(says), "{}", e.message);
            assert!(
                e.message.contains(&kh.display().to_string()),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn the_config_relays_every_host_and_checks_keys_strictly() {
        let text = config_text(Some(3128));
        assert!(text.contains(&format!(
            "ProxyCommand {RELAY_IN_SANDBOX} {SSH_RELAY_ARG} 3128 %h %p"
        )));
        assert!(text.contains("StrictHostKeyChecking yes"));
        assert!(text.contains(&format!("UserKnownHostsFile {KNOWN_HOSTS_IN_SANDBOX}")));
    }

    #[test]
    fn no_setup_with_the_hosts_network_or_in_full_access() {
        let home = Path::new("/nonexistent");
        let ws = SandboxMode::WorkspaceWrite;
        let proxy = Network::Proxy {
            socket: "/x".into(),
            port: 3128,
        };
        assert!(inputs(ws, &Network::Full, home, None).unwrap().is_none());
        assert!(
            inputs(SandboxMode::FullAccess, &proxy, home, None)
                .unwrap()
                .is_none()
        );
        let none = inputs(ws, &Network::None, home, None).unwrap().unwrap();
        assert!(!config_text(none.proxy_port).contains(SSH_RELAY_ARG));
        assert!(
            ops(&none)
                .iter()
                .all(|o| matches!(o, MountOp::Text { dst, .. }
            if dst == Path::new(SYSTEM_CONFIG)))
        );
        let inp = inputs(ws, &proxy, home, None).unwrap().unwrap();
        assert_eq!(inp.known_hosts, None);
        let ops = ops(&inp);
        assert!(ops.iter().any(|o| matches!(o, MountOp::Text { dst, .. }
            if dst == Path::new(CONFIG_IN_SANDBOX))));
        assert!(!ops.iter().any(|o| matches!(o, MountOp::Bind { dst, .. }
            if dst == Path::new(KNOWN_HOSTS_IN_SANDBOX))));
    }
}
