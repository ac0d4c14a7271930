//! Resolve, check every address, connect to a checked one: the only way out of the proxy.

use std::net::{IpAddr, SocketAddr};

use cordon_policy::net::{Host, NetCheck, NetCode};
use tokio::net::TcpStream;

use crate::Shared;
use crate::event::Decision;

/// Why a request did not get through, with everything the client and the event need.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) status: u16,
    pub(crate) decision: Decision,
    pub(crate) code: NetCode,
    pub(crate) reason: String,
    pub(crate) address: Option<SocketAddr>,
}

impl Block {
    pub(crate) fn deny(code: NetCode, reason: impl Into<String>) -> Block {
        Block {
            status: 403,
            decision: Decision::Deny,
            code,
            reason: reason.into(),
            address: None,
        }
    }

    pub(crate) fn error(status: u16, code: NetCode, reason: impl Into<String>) -> Block {
        Block {
            status,
            decision: Decision::Error,
            code,
            reason: reason.into(),
            address: None,
        }
    }

    /// A refusal from the policy (anything but `Allow`).
    pub(crate) fn from_check(check: NetCheck) -> Option<Block> {
        match check {
            NetCheck::Allow => None,
            other => Some(Block::deny(other.code(), other.reason())),
        }
    }
}

/// Resolve `host` once, refuse if any answer is refused, then connect to the checked
/// addresses in order. The connection returned is to an address that was checked; there
/// is no second lookup.
pub(crate) async fn dial(
    shared: &Shared,
    host: &Host,
    port: u16,
) -> Result<(TcpStream, SocketAddr), Block> {
    let limits = &shared.limits;
    let addrs: Vec<IpAddr> = match host {
        Host::Ip(ip) => vec![*ip],
        _ => {
            let Some(name) = host.domain() else {
                return Err(Block::deny(
                    NetCode::BadHost,
                    format!("{host} is not a host name"),
                ));
            };
            let lookup = shared.resolver.resolve(name, port);
            match tokio::time::timeout(limits.connect_timeout, lookup).await {
                Ok(Ok(addrs)) if !addrs.is_empty() => addrs,
                Ok(Ok(_)) | Ok(Err(_)) => {
                    return Err(Block::error(
                        502,
                        NetCode::ResolveFailed,
                        format!("{name} could not be resolved"),
                    ));
                }
                Err(_) => {
                    return Err(Block::error(
                        504,
                        NetCode::ResolveTimeout,
                        format!("resolving {name} timed out"),
                    ));
                }
            }
        }
    };
    for ip in &addrs {
        if let Some(mut block) = Block::from_check(shared.policy.check_resolved(*ip)) {
            if let Host::Domain(name) = host {
                block.reason = format!("{name} resolves to {ip}: {}", block.reason);
            }
            block.address = Some(SocketAddr::new(*ip, port));
            return Err(block);
        }
    }
    let mut last = None;
    for ip in addrs {
        let target = SocketAddr::new(ip, port);
        match tokio::time::timeout(limits.connect_timeout, connect(target)).await {
            Ok(Ok(stream)) => {
                // Small writes in tunnels (TLS handshakes, interactive protocols) must
                // not wait for Nagle.
                let _ = stream.set_nodelay(true);
                return Ok((stream, target));
            }
            Ok(Err(e)) => {
                let mut b = Block::error(
                    502,
                    NetCode::ConnectFailed,
                    format!("connecting to {host}:{port} ({target}) failed: {e}"),
                );
                b.address = Some(target);
                last = Some(b);
            }
            Err(_) => {
                let mut b = Block::error(
                    504,
                    NetCode::ConnectTimeout,
                    format!("connecting to {host}:{port} ({target}) timed out"),
                );
                b.address = Some(target);
                last = Some(b);
            }
        }
    }
    Err(last.unwrap_or_else(|| {
        Block::error(
            502,
            NetCode::ConnectFailed,
            format!("{host}:{port} has no address"),
        )
    }))
}

/// Connect without a reactor round trip when the handshake is already done: on loopback
/// and other local paths it completes inside connect(2).
async fn connect(target: SocketAddr) -> std::io::Result<TcpStream> {
    use std::os::fd::AsRawFd;
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(target),
        socket2::Type::STREAM.nonblocking(),
        Some(socket2::Protocol::TCP),
    )?;
    match socket.connect(&target.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let stream = TcpStream::from_std(std::net::TcpStream::from(socket))?;
    if !crate::sys::writable_now(stream.as_raw_fd()) {
        stream.writable().await?;
    }
    // Writable with no pending error: the handshake completed.
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    Ok(stream)
}
