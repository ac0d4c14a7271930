//! SOCKS5 (RFC 1928), `CONNECT` only, no authentication: the same policy, resolution and
//! relay as the HTTP side. Names are resolved by the proxy (`socks5h://`); an address sent
//! by the client (`socks5://`, the client resolved it) is judged as an address literal.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use cordon_policy::net::{Authority, Host, NetCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::OwnedSemaphorePermit;

use crate::Shared;
use crate::dial::{Block, dial};
use crate::event::{EgressEvent, Protocol};
use crate::stream::{Rewind, finish_tunnel};

const VERSION: u8 = 0x05;
const NO_AUTH: u8 = 0x00;
const NO_ACCEPTABLE: u8 = 0xff;
const CMD_CONNECT: u8 = 0x01;

/// SOCKS5 reply codes.
mod rep {
    pub const SUCCEEDED: u8 = 0x00;
    pub const GENERAL_FAILURE: u8 = 0x01;
    pub const NOT_ALLOWED: u8 = 0x02;
    pub const HOST_UNREACHABLE: u8 = 0x04;
    pub const CONNECTION_REFUSED: u8 = 0x05;
    pub const TTL_EXPIRED: u8 = 0x06;
    pub const COMMAND_NOT_SUPPORTED: u8 = 0x07;
    pub const ADDRESS_NOT_SUPPORTED: u8 = 0x08;
}

enum Handshake {
    Target(Authority),
    /// The reply code to send and the block to report.
    Refused(u8, Block, String),
}

async fn reply(client: &mut Rewind, code: u8, bound: Option<SocketAddr>) {
    let mut out = vec![VERSION, code, 0x00];
    match bound {
        Some(SocketAddr::V6(a)) => {
            out.push(0x04);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_be_bytes());
        }
        Some(SocketAddr::V4(a)) => {
            out.push(0x01);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_be_bytes());
        }
        None => out.extend_from_slice(&[0x01, 0, 0, 0, 0, 0, 0]),
    }
    let _ = client.write_all(&out).await;
}

/// Read the greeting (after its first byte, already consumed) and the request.
async fn handshake(client: &mut Rewind) -> std::io::Result<Handshake> {
    let n_methods = client.read_u8().await?;
    let mut methods = vec![0u8; usize::from(n_methods)];
    client.read_exact(&mut methods).await?;
    if !methods.contains(&NO_AUTH) {
        client.write_all(&[VERSION, NO_ACCEPTABLE]).await?;
        return Ok(Handshake::Refused(
            NO_ACCEPTABLE,
            Block::error(
                400,
                NetCode::SocksAuth,
                "the SOCKS5 client offered no usable method",
            ),
            String::new(),
        ));
    }
    client.write_all(&[VERSION, NO_AUTH]).await?;
    let mut head = [0u8; 4];
    client.read_exact(&mut head).await?;
    let [ver, cmd, _rsv, atyp] = head;
    if ver != VERSION {
        return Ok(Handshake::Refused(
            rep::GENERAL_FAILURE,
            Block::error(
                400,
                NetCode::Malformed,
                "the SOCKS5 request has a wrong version",
            ),
            String::new(),
        ));
    }
    let (host_text, host) = match atyp {
        0x01 => {
            let mut o = [0u8; 4];
            client.read_exact(&mut o).await?;
            let ip = IpAddr::V4(Ipv4Addr::from(o));
            (ip.to_string(), Ok(Host::Ip(ip)))
        }
        0x04 => {
            let mut o = [0u8; 16];
            client.read_exact(&mut o).await?;
            let ip = IpAddr::V6(Ipv6Addr::from(o));
            (format!("[{ip}]"), Ok(Host::Ip(ip)))
        }
        0x03 => {
            let len = client.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            client.read_exact(&mut name).await?;
            let text = String::from_utf8_lossy(&name).into_owned();
            let host = match std::str::from_utf8(&name) {
                Ok(s) => Host::parse(s),
                Err(_) => Err(cordon_policy::net::OriginError::ControlBytes),
            };
            (text, host)
        }
        _ => {
            return Ok(Handshake::Refused(
                rep::ADDRESS_NOT_SUPPORTED,
                Block::error(
                    400,
                    NetCode::Malformed,
                    "the SOCKS5 address type is not supported",
                ),
                String::new(),
            ));
        }
    };
    let port = client.read_u16().await?;
    if cmd != CMD_CONNECT {
        return Ok(Handshake::Refused(
            rep::COMMAND_NOT_SUPPORTED,
            Block::deny(
                NetCode::SocksCommand,
                "only the SOCKS5 CONNECT command is supported (no BIND or UDP ASSOCIATE)",
            ),
            host_text,
        ));
    }
    let host = match host {
        Ok(h) => h,
        Err(e) => {
            return Ok(Handshake::Refused(
                rep::NOT_ALLOWED,
                Block::deny(e.code(), e.to_string()),
                host_text.chars().take(200).collect(),
            ));
        }
    };
    if port == 0 {
        return Ok(Handshake::Refused(
            rep::NOT_ALLOWED,
            Block::deny(NetCode::BadPort, "port 0 is not a destination"),
            host.to_string(),
        ));
    }
    Ok(Handshake::Target(Authority { host, port }))
}

pub(crate) async fn serve(
    mut client: Rewind,
    shared: Arc<Shared>,
    _permit: Arc<OwnedSemaphorePermit>,
) {
    let started = Instant::now();
    let mut event = EgressEvent::new(Protocol::Socks5);
    let refuse = |mut event: EgressEvent, block: Block| {
        event.decision = block.decision;
        event.code = block.code;
        event.reason = block.reason;
        event.address = block.address;
        shared.events.emit(event.finish(started.elapsed()));
    };
    let timed = tokio::time::timeout(shared.limits.header_timeout, handshake(&mut client)).await;
    let authority = match timed {
        Ok(Ok(Handshake::Target(a))) => a,
        Ok(Ok(Handshake::Refused(code, block, host))) => {
            if code != NO_ACCEPTABLE {
                reply(&mut client, code, None).await;
            }
            event.host = host;
            return refuse(event, block);
        }
        Ok(Err(_)) => {
            let block = Block::error(
                400,
                NetCode::Malformed,
                "the SOCKS5 handshake was cut short",
            );
            return refuse(event, block);
        }
        Err(_) => {
            let block = Block::error(
                408,
                NetCode::HeaderTimeout,
                "the SOCKS5 client did not finish its handshake in time",
            );
            return refuse(event, block);
        }
    };
    event.host = authority.host.to_string();
    event.port = authority.port;
    if let Some(block) = Block::from_check(shared.policy.check_tunnel(&authority)) {
        reply(&mut client, rep::NOT_ALLOWED, None).await;
        return refuse(event, block);
    }
    let (upstream, addr) = match dial(&shared, &authority.host, authority.port).await {
        Ok(ok) => ok,
        Err(block) => {
            let code = match block.code {
                NetCode::ConnectTimeout | NetCode::ResolveTimeout => rep::TTL_EXPIRED,
                NetCode::ConnectFailed => rep::CONNECTION_REFUSED,
                NetCode::ResolveFailed => rep::HOST_UNREACHABLE,
                _ => rep::NOT_ALLOWED,
            };
            reply(&mut client, code, None).await;
            return refuse(event, block);
        }
    };
    event.address = Some(addr);
    reply(&mut client, rep::SUCCEEDED, upstream.local_addr().ok()).await;
    if shared.inspects(&authority) {
        // Boxed: the inspecting server's state would otherwise be part of every tunnel.
        Box::pin(crate::intercept::serve(
            client, upstream, authority, shared, event, started,
        ))
        .await;
        return;
    }
    let (early, client) = client.into_parts();
    finish_tunnel(&shared, &client, &upstream, &early, event, started).await;
}
