//! Test fixtures: upstream servers on loopback, a raw HTTP client, proxy start-up.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use cordon_egress::{EgressHandle, EgressProxy, Limits, ProxyConfig, Resolver, StaticResolver};
use cordon_policy::net::NetworkPolicy;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const LOOPBACK: &str = "127.0.0.0/8";

/// An echo server: every byte received is sent back. Counts accepted connections.
pub struct Echo {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicUsize>,
}

pub async fn echo_server(ip: &str, port: u16) -> Echo {
    let listener = TcpListener::bind((ip.parse::<IpAddr>().unwrap(), port))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    Echo { addr, accepted }
}

/// A small HTTP/1.1 upstream (one request per connection, `Connection: close`):
/// - `/hello` → 200 "hello from NAME"
/// - `/echo` → 200 with the request body
/// - `/headers` → 200 with the request headers, one `name: value` per line
/// - `/redirect?to=URL` → 302 with `Location: URL`
pub async fn http_server(ip: &str, port: u16, name: &'static str) -> Echo {
    let listener = TcpListener::bind((ip.parse::<IpAddr>().unwrap(), port))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let _ = serve_one(s, name).await;
            });
        }
    });
    Echo { addr, accepted }
}

async fn serve_one(mut s: TcpStream, name: &str) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut s).await?;
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let target = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = rest;
    while body.len() < len {
        let mut buf = vec![0u8; 65536];
        let n = s.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    let (status, extra, out): (&str, String, Vec<u8>) = if target == "/hello" {
        (
            "200 OK",
            String::new(),
            format!("hello from {name}").into_bytes(),
        )
    } else if target == "/echo" {
        ("200 OK", String::new(), body)
    } else if target == "/headers" {
        let dump: String = headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        ("200 OK", String::new(), dump.into_bytes())
    } else if let Some(to) = target.strip_prefix("/redirect?to=") {
        ("302 Found", format!("Location: {to}\r\n"), Vec::new())
    } else {
        ("404 Not Found", String::new(), Vec::new())
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\nKeep-Alive: timeout=5\r\nProxy-Agent: upstream\r\n{extra}\r\n",
        out.len()
    );
    s.write_all(head.as_bytes()).await?;
    s.write_all(&out).await?;
    s.shutdown().await
}

/// Read up to the end of an HTTP head; returns the head and any bytes after it.
pub async fn read_head<S: AsyncRead + Unpin>(s: &mut S) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(pos + 4);
            return Ok((buf, rest));
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn block(&self) -> Option<&str> {
        self.headers.get("x-cordon-block").map(String::as_str)
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Read one response (Content-Length or close-delimited; chunked is decoded).
pub async fn read_response<S: AsyncRead + Unpin>(s: &mut S, head_only: bool) -> Resp {
    let (head, mut rest) = read_head(s).await.expect("response head");
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: HashMap<String, String> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    if head_only {
        return Resp {
            status,
            headers,
            body: rest,
        };
    }
    if let Some(len) = headers.get("content-length") {
        let len: usize = len.parse().unwrap();
        while rest.len() < len {
            let mut buf = vec![0u8; 65536];
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "body cut short");
            rest.extend_from_slice(&buf[..n]);
        }
        rest.truncate(len);
    } else if headers
        .get("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"))
    {
        let mut raw = rest;
        let mut out = Vec::new();
        loop {
            while !raw.windows(2).any(|w| w == b"\r\n") {
                let mut buf = vec![0u8; 65536];
                let n = s.read(&mut buf).await.unwrap();
                assert!(n > 0);
                raw.extend_from_slice(&buf[..n]);
            }
            let pos = raw.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(
                String::from_utf8_lossy(&raw[..pos])
                    .split(';')
                    .next()
                    .unwrap()
                    .trim(),
                16,
            )
            .unwrap();
            raw.drain(..pos + 2);
            while raw.len() < size + 2 {
                let mut buf = vec![0u8; 65536];
                let n = s.read(&mut buf).await.unwrap();
                assert!(n > 0);
                raw.extend_from_slice(&buf[..n]);
            }
            out.extend_from_slice(&raw[..size]);
            raw.drain(..size + 2);
            if size == 0 {
                break;
            }
        }
        rest = out;
    } else {
        s.read_to_end(&mut rest).await.unwrap();
    }
    Resp {
        status,
        headers,
        body: rest,
    }
}

/// Send raw bytes on a fresh connection to the proxy and read one response.
pub async fn raw(proxy: SocketAddr, request: &[u8]) -> Resp {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.write_all(request).await.unwrap();
    read_response(&mut s, false).await
}

pub async fn get(proxy: SocketAddr, url: &str) -> Resp {
    raw(
        proxy,
        format!("GET {url} HTTP/1.1\r\nHost: ignored.example\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
}

/// Send `CONNECT target`; returns the response head and the open stream.
pub async fn connect(proxy: SocketAddr, target: &str) -> (Resp, TcpStream) {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    s.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let resp = read_response(&mut s, true).await;
    let resp = if resp.status == 200 {
        resp
    } else {
        // Refusals carry a small body; read it.
        let len: usize = resp
            .headers
            .get("content-length")
            .map_or(0, |v| v.parse().unwrap());
        let mut body = resp.body;
        while body.len() < len {
            let mut buf = [0u8; 1024];
            let n = s.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buf[..n]);
        }
        Resp { body, ..resp }
    };
    (resp, s)
}

/// Write `data` and read the same number of bytes back, concurrently.
pub async fn roundtrip<S: AsyncRead + AsyncWrite + Unpin>(s: S, data: &[u8]) -> Vec<u8> {
    let (mut r, mut w) = tokio::io::split(s);
    let send = async {
        w.write_all(data).await.unwrap();
        w.flush().await.unwrap();
        w
    };
    let recv = async {
        let mut got = vec![0u8; data.len()];
        r.read_exact(&mut got).await.unwrap();
        got
    };
    let (_w, got) = tokio::join!(send, recv);
    got
}

pub fn random_bytes(n: usize) -> Vec<u8> {
    use rand::RngCore;
    let mut v = vec![0u8; n];
    rand::rng().fill_bytes(&mut v);
    v
}

pub fn policy(allow: &[&str], deny: &[&str], private: &[&str]) -> NetworkPolicy {
    NetworkPolicy::from_lists(allow, deny, private).unwrap()
}

pub fn fast_limits() -> Limits {
    Limits {
        header_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(30),
        ..Limits::default()
    }
}

pub fn start(policy: NetworkPolicy, resolver: impl Resolver) -> EgressHandle {
    start_with(policy, resolver, fast_limits())
}

pub fn start_with(policy: NetworkPolicy, resolver: impl Resolver, limits: Limits) -> EgressHandle {
    let config = ProxyConfig::new(policy)
        .with_resolver(resolver)
        .with_limits(limits);
    EgressProxy::start_tcp(config, "127.0.0.1:0".parse().unwrap()).unwrap()
}

pub fn resolver(names: &[(&str, &str)]) -> StaticResolver {
    names.iter().fold(StaticResolver::new(), |r, (name, ip)| {
        r.with(name, &[ip.parse().unwrap()])
    })
}

/// Wait until the handle has at least `n` events (tunnel events arrive when the tunnel
/// closes).
pub async fn events(handle: &EgressHandle, n: usize) -> Vec<cordon_egress::EgressEvent> {
    for _ in 0..1000 {
        let ev = handle.events();
        if ev.len() >= n {
            return ev;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("expected {n} events, got {:?}", handle.events());
}
pub mod tls;
