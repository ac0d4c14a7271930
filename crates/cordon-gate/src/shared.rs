//! Where cordon's state lives, decided in one place for every surface.
//!
//! Two stores: the **local** SQLite file in the state directory (the audit log's anchored
//! head and signing key, export cursors, sandbox slots' records: what belongs to this
//! machine) and the **shared** one (leases, remembered rules, pending approvals, sessions,
//! operation ids, MCP pins, shipped decisions). Without a `[store]` table they are the same
//! file; with one, the shared store is the PostgreSQL database it names. Every surface
//! (check, exec, hooks, serve, the MCP gateway, the console, `approvals`, `sessions`)
//! asks [`locate`], so no two of them can disagree about where a lease is.
//!
//! The password never leaves this module except inside a [`cordon_store::Password`]:
//! it is not in an error, a log line or an audit record, and `cordon exec` scrubs the
//! variable `password_env` names and masks `password_file` in the sandbox
//! ([`StoreLocation::secret_files`], [`StoreLocation::secret_env`]).

use cordon_policy::settings::{MAX_MACHINE_NAME, StorePassword, StoreSettings, valid_machine_name};
use cordon_policy::{LoadOptions, RealFs};
use cordon_store::{MAX_CA_FILE, Password, PgTarget, StoreAt, StoreTls};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The environment variable naming this machine when `[store] machine` does not (before
/// the host name): machines that share one config file (and so one policy version,
/// which leases are bound to) can still be told apart in the console.
pub const MACHINE_VAR: &str = "CORDON_MACHINE";

/// Largest password or key file read.
const MAX_PASSWORD_FILE: u64 = 16 * 1024;

/// Where one surface's stores are.
#[derive(Debug, Clone)]
pub struct StoreLocation {
    /// The local SQLite file (audit anchor, signing key, export cursors, slots).
    pub local: PathBuf,
    /// The shared store (the local file itself unless `[store]` names a database).
    pub shared: std::sync::Arc<StoreAt>,
    /// The `[store]` settings it came from, when any.
    pub settings: Option<StoreSettings>,
}

impl StoreLocation {
    /// The local file only (no `[store]`): what a surface without config uses.
    pub fn local_only(local: PathBuf) -> StoreLocation {
        StoreLocation {
            shared: std::sync::Arc::new(StoreAt::File(local.clone())),
            local,
            settings: None,
        }
    }

    /// Whether the shared state is in a database shared with other machines.
    pub fn is_shared(&self) -> bool {
        matches!(*self.shared, StoreAt::Postgres(_))
    }

    /// Files that hold the store's password: masked in the sandbox like the store.
    pub fn secret_files(&self) -> Vec<PathBuf> {
        let Some(s) = self.settings.as_ref() else {
            return Vec::new();
        };
        let mut files = Vec::new();
        if let Some(StorePassword::File(p)) = &s.password {
            files.push(p.clone());
        }
        // The client certificate's key is a password too.
        if let Some((_, key)) = &s.client_cert {
            files.push(key.clone());
        }
        files
    }

    /// The directories holding the shared store's Unix sockets: masked in the sandbox, so
    /// a command that runs as this user cannot reach the server (peer authentication
    /// would let it in without a password).
    pub fn socket_dirs(&self) -> Vec<PathBuf> {
        let StoreAt::Postgres(t) = &*self.shared else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = t
            .endpoints()
            .0
            .iter()
            .filter_map(|s| s.parent().map(Path::to_path_buf))
            .collect();
        dirs.dedup();
        dirs
    }

    /// Refuses, with one sentence, a sandbox opening that would let the command reach the
    /// shared store: a Unix socket in (or above) its socket directory among
    /// `unix_sockets`, or, when the store listens on loopback TCP, a network policy that
    /// both exempts loopback from the private-address refusal and allows the store's port
    /// (the name in the allowlist does not matter: any name may resolve to loopback), or
    /// the host's own network (`host_network`, `--net full`: the command shares the
    /// host's loopback, where the server may trust every local connection).
    pub fn check_sandbox_reach(
        &self,
        unix_sockets: &[PathBuf],
        net: &cordon_policy::net::NetworkPolicy,
        host_network: bool,
    ) -> Result<(), LocateError> {
        let StoreAt::Postgres(t) = &*self.shared else {
            return Ok(());
        };
        let (sockets, ports) = t.endpoints();
        // Every component resolved; a socket not there yet, through its directory.
        let resolve = |p: &Path| {
            std::fs::canonicalize(p)
                .ok()
                .or_else(|| {
                    let dir = std::fs::canonicalize(p.parent()?).ok()?;
                    Some(dir.join(p.file_name()?))
                })
                .unwrap_or_else(|| p.to_path_buf())
        };
        for allowed in unix_sockets {
            let a = resolve(allowed);
            for socket in &sockets {
                let Some(dir) = socket.parent() else { continue };
                let dir = resolve(dir);
                if a.starts_with(&dir) || dir.starts_with(&a) {
                    return Err(LocateError(format!(
                        "refusing to start: the Unix socket {} is in the shared store's socket directory {}, and the command could reach the store through it",
                        allowed.display(),
                        dir.display()
                    )));
                }
            }
        }
        if host_network && let Some(port) = ports.first() {
            return Err(LocateError(format!(
                "refusing to start: the shared store listens on loopback port {port}, and with the host's network (`--net full`) the command could connect to it; use `--net none` with an allowlist (`--allow-net`), or point `[store] url` at a Unix socket"
            )));
        }
        check_socket_identity(unix_sockets, &sockets)?;
        self.check_net_reach(net)
    }

    /// Refuses, with one sentence, a network policy (a sandbox's, or `cordon proxy`'s)
    /// that would let its client reach the shared store's server on this machine: one
    /// that exempts loopback, in any spelling, from the private-address refusal and
    /// allows a port the server listens on (a loopback host's port, or the port a Unix
    /// socket's name `.s.PGSQL.PORT` gives: the same server listens there on TCP when it
    /// listens on TCP at all). The name in the allowlist does not matter: any name may
    /// resolve to loopback.
    pub fn check_net_reach(
        &self,
        net: &cordon_policy::net::NetworkPolicy,
    ) -> Result<(), LocateError> {
        let StoreAt::Postgres(t) = &*self.shared else {
            return Ok(());
        };
        let (sockets, ports) = t.endpoints();
        let exempt = net
            .allow_private()
            .iter()
            .find(|n| exempts_loopback(n.network(), &|a| n.contains(a)));
        let Some(n) = exempt else {
            return Ok(());
        };
        for port in server_ports(&sockets, ports) {
            let open = net.allow().iter().any(|p| match p.port() {
                Some(q) => q == port,
                None => cordon_policy::net::TUNNEL_DEFAULT_PORTS.contains(&port),
            });
            if open {
                return Err(LocateError(format!(
                    "refusing to start: the shared store listens on loopback port {port}, and the network allowlist with the private-address exemption {n} would let the command reach it"
                )));
            }
        }
        Ok(())
    }

    /// The environment variable holding the store's password: never passed into the
    /// sandbox.
    pub fn secret_env(&self) -> Option<&str> {
        match self.settings.as_ref().and_then(|s| s.password.as_ref()) {
            Some(StorePassword::Env(name)) => Some(name),
            _ => None,
        }
    }
}

/// Whether a private-address exemption (its first address `network`, and whether it
/// `contains` an address) covers an address that reaches this
/// machine's loopback: 127.0.0.0/8 and `::1`, and IPv6 addresses embedding a loopback
/// IPv4 address (`::ffff:127.0.0.1`, `[::ffff:7f00:1]`, NAT64 and 6to4 forms), which the
/// proxy judges by the address they embed. Every test is made on the canonical form.
fn exempts_loopback(
    network: std::net::IpAddr,
    contains: &dyn Fn(&std::net::IpAddr) -> bool,
) -> bool {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let loopback = |a: IpAddr| {
        let a = a.to_canonical();
        a.is_loopback()
            || match a {
                IpAddr::V6(v6) => {
                    cordon_policy::net::embedded_ipv4(v6).is_some_and(|e| e.is_loopback())
                }
                IpAddr::V4(_) => false,
            }
    };
    // A network overlapping a loopback range either lies inside it (its first address is
    // loopback) or holds all of it (then it holds one of these).
    let v4 = Ipv4Addr::LOCALHOST;
    let probes: [IpAddr; 6] = [
        v4.into(),
        Ipv6Addr::LOCALHOST.into(),
        v4.to_ipv6_mapped().into(),
        v4.to_ipv6_compatible().into(),
        IpAddr::V6(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0x7f00, 1)),
        IpAddr::V6(Ipv6Addr::new(0x2002, 0x7f00, 1, 0, 0, 0, 0, 0)),
    ];
    loopback(network) || probes.iter().any(contains)
}

/// Refuses an allowed Unix socket that is, under another name, the store's socket or
/// anything else in its socket directory (a hard link, a bind mount: compared by device
/// and inode, not by path), or that lies in a directory that is the socket directory
/// under another name.
fn check_socket_identity(allowed: &[PathBuf], sockets: &[PathBuf]) -> Result<(), LocateError> {
    let id = |m: &std::fs::Metadata| (m.dev(), m.ino());
    let mut dirs = Vec::new();
    let mut inside = Vec::new();
    for socket in sockets {
        let Some(dir) = socket.parent() else { continue };
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        dirs.push((id(&meta), dir.to_path_buf()));
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if let Ok(m) = std::fs::symlink_metadata(entry.path()) {
                inside.push((id(&m), dir.to_path_buf()));
            }
        }
    }
    for a in allowed {
        let own = std::fs::metadata(a).ok().map(|m| id(&m));
        let parent = a
            .parent()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| id(&m));
        let hit = inside.iter().find(|(i, _)| Some(*i) == own).or_else(|| {
            dirs.iter()
                .find(|(i, _)| Some(*i) == parent || Some(*i) == own)
        });
        if let Some((_, dir)) = hit {
            return Err(LocateError(format!(
                "refusing to start: the Unix socket {} is, under another name, in the shared store's socket directory {}, and the command could reach the store through it",
                a.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The TCP ports the store's server listens on here: `ports` (of its loopback hosts) and
/// the port each Unix socket's name (`.s.PGSQL.PORT`) gives.
fn server_ports(sockets: &[PathBuf], ports: Vec<u16>) -> Vec<u16> {
    let mut all = ports;
    all.extend(sockets.iter().filter_map(|s| {
        s.file_name()?
            .to_str()?
            .strip_prefix(".s.PGSQL.")?
            .parse::<u16>()
            .ok()
    }));
    all.sort_unstable();
    all.dedup();
    all
}

/// Where the stores are, for keeping the shared one out of a command's reach (its
/// password file and variable, its sockets, its loopback port): [`locate`], over the
/// user and managed config files even when `load` skips them. `--isolated` ignores those
/// files for the policy, not for what must stay unreachable: a `[store]` there names a
/// password this user holds and a server that may let this user in.
pub fn locate_for_protection(
    load: &LoadOptions,
    local: Option<&Path>,
) -> Result<StoreLocation, LocateError> {
    if !load.skip_default_files {
        return locate(load, local);
    }
    let refuse = |e: &dyn std::fmt::Display| {
        LocateError(format!(
            "refusing to start: the `[store]` of the user or managed config (read even with --isolated, to keep the shared store out of the command's reach) cannot be used: {e}"
        ))
    };
    let mut all = load.clone();
    all.skip_default_files = false;
    let local = match local {
        Some(p) => p.to_path_buf(),
        None => cordon_store::default_store_path().map_err(|e| refuse(&e))?,
    };
    let settings = cordon_policy::config::store_settings(&all, &RealFs).map_err(|e| refuse(&e))?;
    let Some(settings) = settings else {
        return Ok(StoreLocation::local_only(local));
    };
    // Where the server is and which file and variable hold its password; the password
    // itself is not needed (nothing connects), so an unset variable does not stop the run.
    let mut unsecret = settings.clone();
    unsecret.password = None;
    let target = target_of(&unsecret, &|name| std::env::var_os(name)).map_err(|e| refuse(&e))?;
    Ok(StoreLocation {
        local,
        shared: std::sync::Arc::new(StoreAt::Postgres(target)),
        settings: Some(settings),
    })
}

/// Why the store's location could not be resolved: one sentence, never holding the
/// password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocateError(pub String);

impl std::fmt::Display for LocateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LocateError {}

/// Where the stores are for a surface loading its policy with `load`, whose local store
/// is `local` (`--store`; `None`: the state directory's `store.sqlite3`). Reads only the
/// user and managed config files (the full policy load refuses `[store]` anywhere else).
pub fn locate(load: &LoadOptions, local: Option<&Path>) -> Result<StoreLocation, LocateError> {
    let local = match local {
        Some(p) => p.to_path_buf(),
        None => cordon_store::default_store_path().map_err(|e| LocateError(e.to_string()))?,
    };
    let settings = cordon_policy::config::store_settings(load, &RealFs)
        .map_err(|e| LocateError(format!("invalid config: {e}")))?;
    let Some(settings) = settings else {
        return Ok(StoreLocation::local_only(local));
    };
    let target = target_of(&settings, &|name| std::env::var_os(name))?;
    Ok(StoreLocation {
        local,
        shared: std::sync::Arc::new(StoreAt::Postgres(target)),
        settings: Some(settings),
    })
}

/// The database `[store]` names, with its password read and this machine's name.
pub fn target_of(
    settings: &StoreSettings,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<PgTarget, LocateError> {
    let password = match &settings.password {
        None => None,
        Some(StorePassword::File(p)) => Some(read_password_file(p)?),
        Some(StorePassword::Env(name)) => {
            let value = env(name).ok_or_else(|| {
                LocateError(format!(
                    "the environment variable {name} that `[store] password_env` names is not set"
                ))
            })?;
            let value = value.into_string().map_err(|_| {
                LocateError(format!(
                    "the environment variable {name} that `[store] password_env` names is not UTF-8"
                ))
            })?;
            Some(Password::new(value))
        }
    };
    // One rule for every source of the name: it is stored, shown in the console and
    // matched on, so `CORDON_MACHINE` and the host name may not widen what the config may.
    let machine = match &settings.machine {
        Some(m) => m.clone(),
        None => match env(MACHINE_VAR) {
            Some(v) if !v.is_empty() => {
                let m = v.into_string().unwrap_or_default();
                if !valid_machine_name(&m) {
                    return Err(LocateError(format!(
                        "{MACHINE_VAR} must be 1 to {MAX_MACHINE_NAME} letters, digits, `.`, `-` or `_`"
                    )));
                }
                m
            }
            _ => host_name()?,
        },
    };
    let tls = match &settings.ca_file {
        Some(path) => {
            let pem = read_public_file(path, "CA file")?;
            let tls = match &settings.client_cert {
                None => StoreTls::from_pem(&pem, path),
                Some((cert, key)) => {
                    let cert_pem = read_public_file(cert, "client certificate")?;
                    let key_pem = read_private_file(key, "client key file")?;
                    StoreTls::with_client_cert(&pem, path, &cert_pem, &key_pem, cert)
                }
            };
            Some(tls.map_err(|e| LocateError(e.to_string()))?)
        }
        None => None,
    };
    PgTarget::with_tls(&settings.url, password, &machine, tls).map_err(|e| {
        LocateError(format!(
            "`[store] url` in {} cannot be used: {e}",
            settings.file.display()
        ))
    })
}

/// The password in `path`: a regular file that neither the group nor others may read or
/// write (as libpq asks of `.pgpass`), its first line.
fn read_password_file(path: &Path) -> Result<Password, LocateError> {
    let bytes = read_private_file(path, "password file")?;
    let text = String::from_utf8(bytes).map_err(|_| {
        LocateError(format!(
            "the store's password file {} is not UTF-8 text",
            path.display()
        ))
    })?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(LocateError(format!(
            "the store's password file {} is empty",
            path.display()
        )));
    }
    Ok(Password::new(line.to_string()))
}

/// The bytes of a file holding a secret (`what`: "password file", "client key file"):
/// see [`read_store_file`].
fn read_private_file(path: &Path, what: &str) -> Result<Vec<u8>, LocateError> {
    read_store_file(path, what, true, MAX_PASSWORD_FILE)
}

/// The text of `[store] ca_file` or `cert_file` (`what`): see [`read_store_file`]. Not
/// secret, but whoever can write it chooses which server cordon trusts with the password
/// and the fleet's leases.
fn read_public_file(path: &Path, what: &str) -> Result<Vec<u8>, LocateError> {
    read_store_file(path, what, false, MAX_CA_FILE)
}

/// The one check of every file `[store]` names, read through one open and checked on
/// what was opened: a regular file (a FIFO is refused, never waited on), owned by this
/// user or root, that neither its group nor others may write, in directories that only
/// this user or root may change (a directory others may write is accepted only with the
/// sticky bit, which keeps them from replacing a file they do not own). A `secret` file
/// (a password, a key) may not be read by its group or others either, and has one name
/// (another name could sit outside the sandbox's mask).
fn read_store_file(
    path: &Path,
    what: &str,
    secret: bool,
    limit: u64,
) -> Result<Vec<u8>, LocateError> {
    let fail = |why: &str| LocateError(format!("the store's {what} {} {why}", path.display()));
    let (file, meta) = open_checked(path, &fail)?;
    if secret && meta.mode() & 0o077 != 0 {
        return Err(fail(
            "may be read or written by its group or others; chmod 600 it",
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(fail(
            "may be written by its group or others, who could make cordon trust their server; chmod go-w it",
        ));
    }
    if secret && meta.nlink() > 1 {
        return Err(fail(
            "has more than one name (a hard link), which the sandbox's mask may not cover; use a file with one name",
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me && meta.uid() != 0 {
        return Err(fail(&format!(
            "is owned by user {}, not by this user or root; chown it",
            meta.uid()
        )));
    }
    let real = std::fs::canonicalize(path).map_err(|e| fail(&format!("cannot be read ({e})")))?;
    for dir in real.ancestors().skip(1) {
        let m = std::fs::metadata(dir).map_err(|e| fail(&format!("cannot be read ({e})")))?;
        let sticky = m.mode() & 0o1000 != 0;
        if m.uid() != me && m.uid() != 0 {
            return Err(fail(&format!(
                "is in the directory {}, which user {} owns and may change; keep it in a directory of this user or root",
                dir.display(),
                m.uid()
            )));
        }
        if m.mode() & 0o022 != 0 && !sticky {
            return Err(fail(&format!(
                "is in the directory {}, which its group or others may write (and so replace the file); chmod go-w it",
                dir.display()
            )));
        }
    }
    read_checked(file, &meta, path, limit, &fail)
}

/// `path` opened for reading through cordon-fs's one reader (a FIFO or a device is
/// refused at once, never waited on), with its metadata.
fn open_checked(
    path: &Path,
    fail: &dyn Fn(&str) -> LocateError,
) -> Result<(std::fs::File, std::fs::Metadata), LocateError> {
    cordon_fs::open_regular(path).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::WrongType(_) => fail("is not a regular file"),
        _ => fail(&format!("cannot be read ({e})")),
    })
}

/// The bytes of `file` (opened by [`open_checked`]), at most `limit`.
fn read_checked(
    file: std::fs::File,
    meta: &std::fs::Metadata,
    path: &Path,
    limit: u64,
    fail: &dyn Fn(&str) -> LocateError,
) -> Result<Vec<u8>, LocateError> {
    if meta.len() > limit {
        return Err(fail(&format!("is larger than {limit} bytes")));
    }
    cordon_fs::read_opened(file, meta, path, limit).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::WrongType(_) => fail(&format!("is larger than {limit} bytes")),
        _ => fail(&format!("cannot be read ({e})")),
    })
}

/// This machine's host name (the default `[store] machine`).
#[allow(clippy::disallowed_methods)] // the kernel's files under /proc or /sys: no FIFO there, and small
fn host_name() -> Result<String, LocateError> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name = name.trim();
    if name.is_empty() {
        return Err(LocateError(
            "this machine's host name cannot be read; set `[store] machine`".into(),
        ));
    }
    if !valid_machine_name(name) {
        return Err(LocateError(format!(
            "this machine's host name is not a valid machine name (1 to {MAX_MACHINE_NAME} letters, digits, `.`, `-` or `_`); set `[store] machine`"
        )));
    }
    Ok(name.to_string())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn settings(password: Option<StorePassword>) -> StoreSettings {
        let mut s = cordon_policy::settings::StoreSettings::new(
            "postgres://cordon@localhost/cordon".into(),
            PathBuf::from("/home/u/.config/cordon/policy.toml"),
        );
        s.password = password;
        s.machine = Some("ci-1".into());
        s
    }

    #[test]
    fn a_password_file_others_may_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret-pw\n").unwrap();
        for mode in [0o644, 0o640, 0o604, 0o660] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = target_of(&settings(Some(StorePassword::File(file.clone()))), &|_| {
                None
            })
            .unwrap_err();
            assert!(e.0.contains("group or others"), "{mode:o}: {e}");
            assert!(!e.0.contains("s3cret"), "{e}");
        }
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let t = target_of(&settings(Some(StorePassword::File(file.clone()))), &|_| {
            None
        })
        .unwrap();
        assert_eq!(t.machine(), "ci-1");
        assert!(!format!("{t:?}").contains("s3cret"));
        // A directory (second spelling of "not a password file").
        let e = target_of(
            &settings(Some(StorePassword::File(dir.path().to_path_buf()))),
            &|_| None,
        )
        .unwrap_err();
        assert!(
            e.0.contains("not a regular file") || e.0.contains("cannot be read"),
            "{e}"
        );
    }

    #[test]
    fn a_password_file_with_a_second_name_or_another_owner_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret-pw\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let located =
            |p: &Path| target_of(&settings(Some(StorePassword::File(p.into()))), &|_| None);
        assert!(located(&file).is_ok());
        // A hard link: refused under either name.
        let other = dir.path().join("elsewhere");
        std::fs::hard_link(&file, &other).unwrap();
        for name in [&file, &other] {
            let e = located(name).unwrap_err();
            assert!(e.0.contains("more than one name"), "{e}");
            assert!(!e.0.contains("s3cret"), "{e}");
        }
        std::fs::remove_file(&other).unwrap();
        assert!(located(&file).is_ok());
        // Owned by someone else (only root can hand a file away).
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&file, Some(4242), None).unwrap();
            let e = located(&file).unwrap_err();
            assert!(e.0.contains("owned by user 4242"), "{e}");
        }
    }

    #[test]
    fn every_source_of_the_machine_name_follows_one_rule() {
        let mut s = settings(None);
        s.machine = None;
        for bad in [
            "a b",
            "m\u{1b}[31m",
            "m\n",
            "ü-host",
            &"m".repeat(65),
            " m1 ",
        ] {
            let e = target_of(&s, &|n| (n == MACHINE_VAR).then(|| bad.into())).unwrap_err();
            assert!(e.0.contains(MACHINE_VAR), "{bad:?}: {e}");
        }
        let t = target_of(&s, &|n| (n == MACHINE_VAR).then(|| "ci-7.fleet_a".into())).unwrap();
        assert_eq!(t.machine(), "ci-7.fleet_a");
        // PgTarget applies the same rule to whatever it is handed.
        for bad in ["a b", "x\u{7}", &"m".repeat(65)] {
            assert!(
                PgTarget::new("postgres://c@localhost/c", None, bad).is_err(),
                "{bad:?}"
            );
        }
    }

    /// `[store] ca_file`: read as a regular file that only its owner may write; with it,
    /// a remote host is accepted (TLS, verify-full), without it refused naming the key.
    #[test]
    fn the_ca_file_is_read_carefully_and_allows_a_remote_host() {
        let dir = tempfile::tempdir().unwrap();
        let ca = cordon_store::pg_test::TestCa::new("gate test CA");
        let file = dir.path().join("ca.pem");
        std::fs::write(&file, ca.pem()).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut s = settings(None);
        s.url = "postgres://cordon@db.fleet.example:5432/cordon".into();
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(
            e.0.contains("TLS is not configured: set `[store] ca_file`"),
            "{e}"
        );
        s.ca_file = Some(file.clone());
        let t = target_of(&s, &|_| None).unwrap();
        assert_eq!(t.tls().unwrap().ca_file(), file.as_path());
        // Writable by others: they would choose which server is trusted.
        for mode in [0o664, 0o646, 0o666] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = target_of(&s, &|_| None).unwrap_err();
            assert!(
                e.0.contains("may be written by its group or others"),
                "{mode:o}: {e}"
            );
        }
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        // Not a regular file, missing, not a certificate, too large.
        for (path, says) in [
            (dir.path().to_path_buf(), "not a regular file"),
            (dir.path().join("missing.pem"), "cannot be read"),
            (PathBuf::from("/dev/zero"), "not a regular file"),
        ] {
            s.ca_file = Some(path.clone());
            let e = target_of(&s, &|_| None).unwrap_err();
            assert!(e.0.contains(says), "{}: {e}", path.display());
        }
        // A FIFO (a plain open would wait for a writer for ever) is refused at once.
        let fifo = dir.path().join("fifo.pem");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        s.ca_file = Some(fifo);
        let started = std::time::Instant::now();
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("not a regular file"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        // Owned by another user, or in a directory others may write (no sticky bit):
        // they could swap the CA.
        if rustix::process::geteuid().is_root() {
            std::fs::write(dir.path().join("theirs.pem"), ca.pem()).unwrap();
            let theirs = dir.path().join("theirs.pem");
            std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
            s.ca_file = Some(theirs);
            let e = target_of(&s, &|_| None).unwrap_err();
            assert!(e.0.contains("is owned by user 65534"), "{e}");
        }
        let open_dir = dir.path().join("open");
        std::fs::create_dir(&open_dir).unwrap();
        std::fs::write(open_dir.join("ca.pem"), ca.pem()).unwrap();
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        s.ca_file = Some(open_dir.join("ca.pem"));
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("which its group or others may write"), "{e}");
        std::fs::set_permissions(&open_dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(
            target_of(&s, &|_| None).is_ok(),
            "a sticky directory keeps others' hands off"
        );
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        s.ca_file = Some(junk);
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("holds no certificate"), "{e}");
        let big = dir.path().join("big.pem");
        std::fs::write(&big, ca.pem().repeat(2000)).unwrap();
        s.ca_file = Some(big);
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("is larger than"), "{e}");
    }

    /// `cert_file`/`key_file`: the key is read like the password file (owner only, one
    /// name) and masked in the sandbox like it; the certificate like the CA file.
    #[test]
    fn a_client_key_is_kept_like_a_password() {
        let dir = tempfile::tempdir().unwrap();
        let ca = cordon_store::pg_test::TestCa::new("gate test CA");
        let client = ca.issue_client("ci_7");
        let (ca_file, cert, key) = (
            dir.path().join("ca.pem"),
            dir.path().join("client.pem"),
            dir.path().join("client.key"),
        );
        std::fs::write(&ca_file, ca.pem()).unwrap();
        std::fs::write(&cert, &client.cert_pem).unwrap();
        std::fs::write(&key, &client.key_pem).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut s = settings(None);
        s.url = "postgres://ci_7@db.fleet.example/cordon".into();
        s.ca_file = Some(ca_file);
        s.client_cert = Some((cert.clone(), key.clone()));
        target_of(&s, &|_| None).unwrap();
        let at = StoreLocation {
            local: dir.path().join("store.sqlite3"),
            shared: std::sync::Arc::new(StoreAt::Postgres(target_of(&s, &|_| None).unwrap())),
            settings: Some(s.clone()),
        };
        assert_eq!(at.secret_files(), vec![key.clone()]);
        for mode in [0o640, 0o644, 0o604] {
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = target_of(&s, &|_| None).unwrap_err();
            assert!(
                e.0.contains("client key file") && e.0.contains("group or others"),
                "{mode:o}: {e}"
            );
            assert!(!e.0.contains("PRIVATE KEY"), "{e}");
        }
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("key-link");
        std::fs::hard_link(&key, &link).unwrap();
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("more than one name"), "{e}");
        std::fs::remove_file(&link).unwrap();
        // The key of another certificate.
        std::fs::write(&key, ca.issue_client("ci_7").key_pem).unwrap();
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("do not make a client identity"), "{e}");
    }

    #[test]
    fn a_missing_password_variable_is_named_not_shown() {
        let s = settings(Some(StorePassword::Env("FLEET_PG_PW".into())));
        let e = target_of(&s, &|_| None).unwrap_err();
        assert!(e.0.contains("FLEET_PG_PW"), "{e}");
        let t = target_of(&s, &|n| (n == "FLEET_PG_PW").then(|| "pw-from-env".into())).unwrap();
        assert!(!format!("{t:?}").contains("pw-from-env"));
    }
}

#[cfg(test)]
#[path = "shared_reach_tests.rs"]
mod reach_tests;
