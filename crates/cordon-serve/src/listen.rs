//! Where clients come from: stdin/stdout, or a Unix socket only the user can reach.
//!
//! The socket lives in a directory that is the user's own and closed to everyone else
//! (`0700`), is itself `0600`, and every connection's peer is checked with `SO_PEERCRED`
//! and must be in the service's own user namespace (never inside a sandbox).
//! This module must never serve a client of another user, never replace a file that is
//! not a stale socket, and never let one connection hold up another.

use crate::rpc::{self, Frame, RpcError};
use crate::service::{Connection, MAX_LINE, ServeError, Service};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long a write to a client may block before the connection is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Serve one client on `input`/`output` until it closes its side (or sends a line past
/// the cap, which is answered and ends the session).
pub fn serve_stream(conn: &mut Connection<'_>, input: impl BufRead, output: impl Write) {
    let mut input = input;
    let mut out = BufWriter::new(output);
    loop {
        let line = match rpc::read_frame(&mut input, MAX_LINE) {
            Ok(Frame::Line(l)) => l,
            Ok(Frame::End) | Err(_) => return,
            Ok(Frame::TooLong) => {
                let e = RpcError::new(
                    rpc::INVALID_REQUEST,
                    format!(
                        "the line is longer than {MAX_LINE} bytes (a request may be at most {} bytes); the connection is closed",
                        cordon_policy::request::MAX_REQUEST_BYTES
                    ),
                );
                let _ = writeln!(out, "{}", rpc::failure(&serde_json::Value::Null, &e));
                let _ = out.flush();
                return;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // The call is carried out (and recorded) whether or not the client is still
        // there to read the answer.
        if let Some(answer) = conn.handle(&line)
            && (writeln!(out, "{answer}").is_err() || out.flush().is_err())
        {
            return;
        }
    }
}

/// Serve one client on this process's stdin and stdout.
pub fn serve_stdio(service: &Service) {
    let mut conn = service.connect();
    let stdin = std::io::stdin();
    serve_stream(&mut conn, stdin.lock(), std::io::stdout().lock());
}

/// A socket bound where [`bind`] checked it was safe to.
#[derive(Debug)]
pub struct Bound {
    listener: UnixListener,
    path: PathBuf,
}

impl Bound {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn refuse(msg: String) -> ServeError {
    ServeError::Socket(msg)
}

/// Bind the socket at `path`: its directory is created `0700` if missing, and must
/// otherwise be a directory of this user closed to group and others; an existing
/// `path` is replaced only when it is a socket nobody listens on.
pub fn bind(path: &Path) -> Result<Bound, ServeError> {
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| refuse(format!("cannot read the current directory: {e}")))?
            .join(path)
    };
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Err(refuse(format!(
            "the socket path {} has no directory",
            path.display()
        )));
    };
    // The directory is opened once, never through a link at its name (`cordon-fs`);
    // what is checked, removed and tightened below is in that directory.
    let d = cordon_fs::Dir::create_ambient(dir, 0o700).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::Symlink | cordon_fs::FsErrorKind::WrongType(_) => refuse(format!(
            "{} is not a directory (a symbolic link is not accepted); put the socket in a directory of your own with mode 0700",
            dir.display()
        )),
        _ => refuse(format!("cannot create {}: {e}", dir.display())),
    })?;
    let meta = d
        .own_stat()
        .map_err(|e| refuse(format!("cannot read {}: {e}", dir.display())))?;
    let me = rustix::process::geteuid().as_raw();
    if meta.st_uid != me {
        return Err(refuse(format!(
            "the socket directory {} belongs to uid {}, not to you (uid {me}); put the socket in a directory of your own with mode 0700",
            dir.display(),
            meta.st_uid
        )));
    }
    if meta.st_mode & 0o077 != 0 {
        return Err(refuse(format!(
            "the socket directory {} is open to group or others (mode {:o}); run `chmod 700 {}` or choose another directory",
            dir.display(),
            meta.st_mode & 0o7777,
            dir.display()
        )));
    }
    let name = Path::new(path.file_name().unwrap_or_default());
    if let Ok(existing) = d.stat(name) {
        if rustix::fs::FileType::from_raw_mode(existing.st_mode) != rustix::fs::FileType::Socket {
            return Err(refuse(format!(
                "{} exists and is not a socket; remove it or choose another path",
                path.display()
            )));
        }
        if UnixStream::connect(&path).is_ok() {
            return Err(refuse(format!(
                "another server is listening on {}; stop it or choose another path",
                path.display()
            )));
        }
        d.remove(name).map_err(|e| {
            refuse(format!(
                "cannot remove the stale socket {}: {e}",
                path.display()
            ))
        })?;
    }
    let listener = UnixListener::bind(&path)
        .map_err(|e| refuse(format!("cannot listen on {}: {e}", path.display())))?;
    // The directory is closed to others, so nobody can reach the socket before this.
    d.set_mode(name, 0o600)
        .map_err(|e| refuse(format!("cannot make {} private: {e}", path.display())))?;
    Ok(Bound { listener, path })
}

/// Accept clients on `bound` for ever, each on a thread of its own, at most the
/// service's connection limit at once; a client of another user is turned away.
pub fn serve_socket(service: Arc<Service>, bound: Bound) -> std::io::Result<()> {
    let me = rustix::process::geteuid().as_raw();
    for stream in bound.listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            // A client that vanished between connect and accept, or a momentary lack of
            // descriptors, must not stop the service.
            Err(e) => {
                eprintln!("cordon serve: accept failed: {e}");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        match rustix::net::sockopt::socket_peercred(&stream) {
            Ok(cred) if cred.uid.as_raw() == me => {}
            Ok(cred) => {
                eprintln!(
                    "cordon serve: refused a client of uid {} (only uid {me} is served)",
                    cred.uid.as_raw()
                );
                continue;
            }
            Err(e) => {
                eprintln!("cordon serve: refused a client whose identity is unknown: {e}");
                continue;
            }
        }
        // A sandboxed command runs as this very user: it is told apart by its user
        // namespace, and never served (it could answer its own approvals).
        match cordon_sandbox::peer_shares_user_namespace(std::os::fd::AsFd::as_fd(&stream)) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!(
                    "cordon serve: refused a client inside a sandbox (another user namespace)"
                );
                continue;
            }
            Err(e) => {
                eprintln!(
                    "cordon serve: refused a client that cannot be told to be outside every sandbox: {e}"
                );
                continue;
            }
        }
        let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
        let Some(slot) = service.admit() else {
            // A fresh socket's buffer takes one short line without blocking.
            let e = RpcError::new(
                rpc::BUSY,
                format!(
                    "cordon serve is at its limit of {} connections; try again later",
                    service.max_connections()
                ),
            );
            let mut s = &stream;
            let _ = writeln!(s, "{}", rpc::failure(&serde_json::Value::Null, &e));
            continue;
        };
        let spawned = std::thread::Builder::new()
            .name("cordon-serve-conn".into())
            .spawn(move || {
                let Ok(read) = stream.try_clone() else {
                    return;
                };
                let mut conn = slot.service().connect();
                serve_stream(&mut conn, BufReader::new(read), &stream);
            });
        if let Err(e) = spawned {
            eprintln!("cordon serve: cannot start a connection thread: {e}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    #![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
    use super::*;
    use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

    #[test]
    fn the_socket_directory_is_never_reached_through_a_planted_link() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let victim_dir = t.path().join("victim-dir");
        std::fs::create_dir(&victim_dir).unwrap();
        std::fs::set_permissions(&victim_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let unchanged = || {
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
            assert_eq!(
                std::fs::metadata(&victim).unwrap().mode() & 0o777,
                0o644,
                "not chmod-ed through a link"
            );
            assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
        };
        let dir = t.path().join("run");
        // A link at the socket's name: not a socket, refused.
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("serve.sock")).unwrap();
        assert!(bind(&dir.join("serve.sock")).is_err());
        unchanged();
        // The directory moved aside and a link left in its place: refused.
        std::fs::rename(&dir, t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim_dir, &dir).unwrap();
        assert!(bind(&dir.join("serve.sock")).is_err());
        unchanged();
        // A real directory: bound, the socket made private.
        std::fs::remove_file(&dir).unwrap();
        let bound = bind(&dir.join("serve.sock")).unwrap();
        let meta = std::fs::symlink_metadata(dir.join("serve.sock")).unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.mode() & 0o777, 0o600);
        drop(bound);
        unchanged();
    }
}
