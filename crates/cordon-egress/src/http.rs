//! The HTTP/1.1 side: `CONNECT host:port` tunnels and absolute-form plain HTTP.
//!
//! Plain HTTP is forwarded one request per upstream connection, so every request —
//! including the one a client sends after a redirect — is checked on its own. Redirects
//! are passed back, never followed. Hop-by-hop headers (RFC 9110 §7.6.1) and every
//! `Proxy-*` header are dropped in both directions; `Host` is rewritten to the checked
//! target.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use cordon_policy::net::{Authority, NetCode, Origin, Scheme};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HOST, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::OwnedSemaphorePermit;

use crate::Shared;
use crate::dial::{Block, dial};
use crate::event::{Decision, EgressEvent, Protocol};
use crate::stream::{ClientStream, RelayEnd, Rewind, finish_tunnel, relay, write_all};

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub(crate) type ProxyBody = BoxBody<Bytes, BoxError>;

/// The name of the header that carries a block's code.
pub const BLOCK_HEADER: &str = "x-cordon-block";

pub(crate) async fn serve(io: Rewind, shared: Arc<Shared>, permit: Arc<OwnedSemaphorePermit>) {
    let started = Instant::now();
    let limits = shared.limits.clone();
    let svc_shared = shared.clone();
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let shared = svc_shared.clone();
        let permit = permit.clone();
        async move { Ok::<_, Infallible>(handle(req, shared, permit).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(limits.max_header_bytes)
        .max_buf_size(limits.max_header_bytes.max(8192) + 8192)
        .keep_alive(true);
    let conn = builder
        .serve_connection(TokioIo::new(io), svc)
        .with_upgrades();
    if let Err(err) = conn.await {
        let (code, reason) = if err.is_timeout() {
            (
                NetCode::HeaderTimeout,
                "the client did not send a complete request head in time",
            )
        } else if err.is_parse_too_large() {
            (
                NetCode::HeaderTooLarge,
                "the request head is larger than allowed",
            )
        } else if err.is_parse() {
            (NetCode::Malformed, "the request is not valid HTTP/1.1")
        } else {
            return;
        };
        let mut event = EgressEvent::new(Protocol::Http);
        event.decision = Decision::Error;
        event.code = code;
        event.reason = reason.to_owned();
        shared.events.emit(event.finish(started.elapsed()));
    }
}

async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
) -> Response<ProxyBody> {
    if req.method() == Method::CONNECT {
        connect(req, shared, permit).await
    } else {
        forward(req, shared).await
    }
}

pub(crate) fn block_response(block: &Block) -> Response<ProxyBody> {
    let body = format!("cordon: {}\n", block.reason);
    let mut resp = Response::new(full(body));
    *resp.status_mut() =
        StatusCode::from_u16(block.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(BLOCK_HEADER, HeaderValue::from_static(block.code.as_str()));
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

pub(crate) fn full(body: impl Into<Bytes>) -> ProxyBody {
    Full::new(body.into())
        .map_err(|never: Infallible| -> BoxError { match never {} })
        .boxed()
}

fn refuse(
    shared: &Shared,
    mut event: EgressEvent,
    block: Block,
    started: Instant,
) -> Response<ProxyBody> {
    event.decision = block.decision;
    event.code = block.code;
    event.reason = block.reason.clone();
    event.address = block.address;
    shared.events.emit(event.finish(started.elapsed()));
    block_response(&block)
}

/// The request target as text, bounded, for events about targets that did not parse.
fn raw_target(uri: &Uri) -> String {
    uri.to_string().chars().take(200).collect()
}

async fn connect(
    mut req: Request<Incoming>,
    shared: Arc<Shared>,
    permit: Arc<OwnedSemaphorePermit>,
) -> Response<ProxyBody> {
    let started = Instant::now();
    let mut event = EgressEvent::new(Protocol::Connect);
    let Some(target) = req.uri().authority().map(|a| a.as_str().to_owned()) else {
        event.host = raw_target(req.uri());
        let block = Block::error(400, NetCode::Malformed, "CONNECT needs a host:port target");
        return refuse(&shared, event, block, started);
    };
    let (upstream, addr, authority) = match open_tunnel(&shared, &target, &mut event).await {
        Ok(ok) => ok,
        Err(block) => return refuse(&shared, event, block, started),
    };
    let inspect = shared.inspects(&authority);
    event.address = Some(addr);
    let on_upgrade = hyper::upgrade::on(&mut req);
    let idle = shared.limits.idle_timeout;
    tokio::spawn(async move {
        let _permit = permit;
        event.decision = Decision::Allow;
        event.code = NetCode::Allow;
        match on_upgrade.await {
            Ok(upgraded) => match upgraded.downcast::<TokioIo<Rewind>>() {
                Ok(parts) => {
                    let (replay, client) = parts.io.into_inner().into_parts();
                    let mut early = replay;
                    early.extend_from_slice(&parts.read_buf);
                    if inspect {
                        let client = Rewind::new(early, client);
                        // Boxed: the inspecting server's state is large, and inline it
                        // would be part of every plain tunnel's task too.
                        Box::pin(crate::intercept::serve(
                            client, upstream, authority, shared, event, started,
                        ))
                        .await;
                        return;
                    }
                    if write_all(&upstream, &early).await.is_ok() {
                        let out = relay(&client, &upstream, idle, early.len() as u64).await;
                        event.bytes_up = out.up;
                        event.bytes_down = out.down;
                        if out.end == RelayEnd::Idle {
                            event.reason = "the tunnel was closed after the idle timeout".into();
                        }
                    }
                }
                Err(upgraded) => {
                    // Not reachable with the streams this proxy builds; still relay
                    // correctly through hyper's own type rather than fail.
                    let mut client = TokioIo::new(upgraded);
                    let mut upstream = upstream;
                    let copy = tokio::io::copy_bidirectional(&mut client, &mut upstream);
                    if let Ok(Ok((up, down))) = tokio::time::timeout(idle, copy).await {
                        event.bytes_up = up;
                        event.bytes_down = down;
                    }
                }
            },
            Err(_) => {
                event.reason = "the client went away before the tunnel opened".into();
            }
        }
        shared.events.emit(event.finish(started.elapsed()));
    });
    Response::new(full(Bytes::new()))
}

/// The checks of a `CONNECT target`: parse with the shared host rules, judge, resolve and
/// connect. Fills in the event's host, port and address.
pub(crate) async fn open_tunnel(
    shared: &Shared,
    target: &str,
    event: &mut EgressEvent,
) -> Result<(TcpStream, SocketAddr, Authority), Block> {
    let authority = match Authority::parse(target, 443) {
        Ok(a) => a,
        Err(e) => {
            event.host = target.chars().take(200).collect();
            return Err(Block::deny(e.code(), e.to_string()));
        }
    };
    event.host = authority.host.to_string();
    event.port = authority.port;
    if let Some(block) = Block::from_check(shared.policy.check_tunnel(&authority)) {
        return Err(block);
    }
    let (upstream, addr) = dial(shared, &authority.host, authority.port).await?;
    event.address = Some(addr);
    Ok((upstream, addr, authority))
}

/// A refusal as raw HTTP/1.1 bytes, for the fast path (the connection is closed after it).
fn block_bytes(block: &Block) -> Vec<u8> {
    let body = format!("cordon: {}\n", block.reason);
    let status = StatusCode::from_u16(block.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    format!(
        "HTTP/1.1 {} {}\r\n{BLOCK_HEADER}: {}\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        status.as_str(),
        status.canonical_reason().unwrap_or(""),
        block.code,
        body.len()
    )
    .into_bytes()
}

/// Outcome of looking at a client's first bytes for a plain `CONNECT` head.
pub(crate) enum FastConnect {
    /// A complete, well-formed `CONNECT` head: the target and where the head ends.
    Connect { target: String, head_len: usize },
    /// Anything else: hand everything to the full HTTP server.
    Other,
}

/// Recognize the common case — the whole `CONNECT host:port HTTP/1.x` head in the first
/// read — so a tunnel does not pay for the general HTTP machinery. Anything unusual
/// (incomplete, malformed, too many headers) goes to hyper, which answers it properly.
pub(crate) fn fast_connect(buf: &[u8]) -> FastConnect {
    if !buf.starts_with(b"CONNECT ") {
        return FastConnect::Other;
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(head_len)) => match (req.method, req.path) {
            // Only targets the full server would also read as an authority, so both
            // paths answer the same request the same way.
            (Some("CONNECT"), Some(target)) if is_authority_form(target) => FastConnect::Connect {
                target: target.to_owned(),
                head_len,
            },
            _ => FastConnect::Other,
        },
        _ => FastConnect::Other,
    }
}

fn is_authority_form(target: &str) -> bool {
    target
        .parse::<Uri>()
        .is_ok_and(|u| u.scheme().is_none() && u.authority().is_some_and(|a| a.as_str() == target))
}

/// Serve a tunnel recognized by [`fast_connect`], in this task.
pub(crate) async fn serve_fast_connect(
    client: ClientStream,
    shared: Arc<Shared>,
    target: String,
    early: Vec<u8>,
) {
    let started = Instant::now();
    let mut event = EgressEvent::new(Protocol::Connect);
    // Boxed, and so freed once the tunnel is open: name resolution and the dial are no
    // part of the state an idle tunnel keeps.
    let opened = Box::pin(open_tunnel(&shared, &target, &mut event)).await;
    let (upstream, authority) = match opened {
        Ok((upstream, _, authority)) => (upstream, authority),
        Err(block) => {
            let _ = write_all(&client, &block_bytes(&block)).await;
            let _ = refuse(&shared, event, block, started);
            return;
        }
    };
    if write_all(&client, b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    if shared.inspects(&authority) {
        let client = Rewind::new(early, client);
        // Boxed: see `connect`.
        Box::pin(crate::intercept::serve(
            client, upstream, authority, shared, event, started,
        ))
        .await;
        return;
    }
    finish_tunnel(&shared, &client, &upstream, &early, event, started).await;
}

const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "http2-settings",
];

/// Drop hop-by-hop headers, headers named in `Connection`, and every `Proxy-*` header.
/// Judge a request to a ruled host by the network rules, and also every other method or
/// path it asks the server to use instead: a method-override header or `_method=` query
/// parameter (honoured by many frameworks), and a rewrite header (`X-Original-URL`,
/// `X-Rewrite-URL`). Each must pass, so `POST` with `X-HTTP-Method-Override: DELETE` is
/// refused where `DELETE` is.
pub(crate) fn check_request(
    shared: &crate::Shared,
    host: &cordon_policy::net::Host,
    port: u16,
    method: &str,
    target: &str,
    headers: &HeaderMap,
) -> Result<(), cordon_policy::net::RequestRefusal> {
    let policy = &shared.policy;
    policy.check_request(host, port, method, target)?;
    if !policy.is_ruled(host, port) {
        return Ok(());
    }
    let text = |v: &HeaderValue| String::from_utf8_lossy(v.as_bytes()).trim().to_owned();
    let mut methods: Vec<String> = [
        "x-http-method-override",
        "x-http-method",
        "x-method-override",
    ]
    .iter()
    .flat_map(|name| headers.get_all(*name).iter().map(text))
    .collect();
    if let Some((_, query)) = target.split_once('?') {
        methods.extend(
            query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .filter(|(k, _)| k.eq_ignore_ascii_case("_method"))
                .map(|(_, v)| v.to_owned()),
        );
    }
    for m in methods {
        policy.check_request(host, port, &m.to_ascii_uppercase(), target)?;
    }
    for name in ["x-original-url", "x-rewrite-url"] {
        for v in headers.get_all(name).iter() {
            policy.check_request(host, port, method, &text(v))?;
        }
    }
    Ok(())
}

pub(crate) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let listed: Vec<HeaderName> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in listed {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
    let proxy: Vec<HeaderName> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("proxy-"))
        .cloned()
        .collect();
    for name in proxy {
        headers.remove(name);
    }
}

async fn forward(req: Request<Incoming>, shared: Arc<Shared>) -> Response<ProxyBody> {
    let started = Instant::now();
    let mut event = EgressEvent::new(Protocol::Http);
    event.method = Some(req.method().as_str().chars().take(32).collect());
    if req.uri().scheme().is_none() || req.uri().authority().is_none() {
        event.host = raw_target(req.uri());
        let block = Block::error(
            400,
            NetCode::NotProxyRequest,
            "this is a proxy: send an absolute http:// URL or CONNECT host:port",
        );
        return refuse(&shared, event, block, started);
    }
    let origin = match Origin::parse_url(&req.uri().to_string()) {
        Ok(o) => o,
        Err(e) => {
            event.host = raw_target(req.uri());
            return refuse(
                &shared,
                event,
                Block::deny(e.code(), e.to_string()),
                started,
            );
        }
    };
    event.host = origin.host.to_string();
    event.port = origin.port;
    if origin.scheme != Scheme::Http {
        let block = Block::error(
            400,
            NetCode::UseConnect,
            "https:// URLs go through a CONNECT tunnel, not a plain request",
        );
        return refuse(&shared, event, block, started);
    }
    if let Some(block) = Block::from_check(shared.policy.check_origin(&origin)) {
        return refuse(&shared, event, block, started);
    }
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if let Err(r) = check_request(
        &shared,
        &origin.host,
        origin.port,
        req.method().as_str(),
        &target,
        req.headers(),
    ) {
        event.path = Some(target.chars().take(512).collect());
        return refuse(&shared, event, Block::deny(r.code, r.reason), started);
    }
    event.path = Some(target.chars().take(512).collect());
    // Credentials are never added to plain HTTP; any of them here is a leak, in the
    // head or in the body.
    if let Some(block) = crate::intercept::leak_in_head(
        &shared,
        None,
        &target,
        req.headers(),
        &mut event,
        &origin.authority(),
    ) {
        return refuse(&shared, event, block, started);
    }
    let (mut parts, body) = req.into_parts();
    let body: ProxyBody = if shared.credentials.is_empty() {
        body.map_err(|e| -> BoxError { Box::new(e) }).boxed()
    } else {
        let authority = origin.authority();
        let checked = crate::intercept::checked_body(&shared, None, body, &mut event, &authority);
        match checked.await {
            Ok(b) => b,
            Err(block) => return refuse(&shared, event, block, started),
        }
    };
    let (upstream, addr) = match dial(&shared, &origin.host, origin.port).await {
        Ok(ok) => ok,
        Err(block) => return refuse(&shared, event, block, started),
    };
    event.address = Some(addr);

    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    parts.uri = match path.parse::<Uri>() {
        Ok(u) => u,
        Err(_) => {
            let block = Block::error(400, NetCode::Malformed, "the request path is not valid");
            return refuse(&shared, event, block, started);
        }
    };
    parts.version = hyper::Version::HTTP_11;
    strip_hop_by_hop(&mut parts.headers);
    let host_value = if origin.port == origin.scheme.default_port() {
        origin.host.to_string()
    } else {
        format!("{}:{}", origin.host, origin.port)
    };
    match HeaderValue::from_str(&host_value) {
        Ok(v) => {
            parts.headers.insert(HOST, v);
        }
        Err(_) => {
            let block = Block::error(
                400,
                NetCode::Malformed,
                "the target host is not a valid header",
            );
            return refuse(&shared, event, block, started);
        }
    }
    let up = Arc::new(AtomicU64::new(0));
    let down = Arc::new(AtomicU64::new(0));
    let upstream_req = Request::from_parts(
        parts,
        Counted::new(body, up.clone(), None, shared.limits.idle_timeout),
    );

    let handshake = hyper::client::conn::http1::Builder::new()
        .handshake::<_, Counted>(TokioIo::new(upstream))
        .await;
    let (mut sender, conn) = match handshake {
        Ok(pair) => pair,
        Err(e) => {
            let block = Block::error(
                502,
                NetCode::UpstreamError,
                format!("talking to {origin} failed: {e}"),
            );
            return refuse(&shared, event, block, started);
        }
    };
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let idle = shared.limits.idle_timeout;
    let resp = match tokio::time::timeout(idle, sender.send_request(upstream_req)).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => {
            let block = Block::error(
                502,
                NetCode::UpstreamError,
                format!("talking to {origin} failed: {e}"),
            );
            return refuse(&shared, event, block, started);
        }
        Err(_) => {
            let block = Block::error(
                504,
                NetCode::UpstreamTimeout,
                format!("{origin} did not answer in time"),
            );
            return refuse(&shared, event, block, started);
        }
    };
    let (mut parts, body) = resp.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    event.decision = Decision::Allow;
    event.code = NetCode::Allow;
    event.status = Some(parts.status.as_u16());
    let report = Report {
        shared: shared.clone(),
        event: Some(event),
        started,
        up,
        down: down.clone(),
    };
    let body = Counted::new(
        body.map_err(|e| -> BoxError { Box::new(e) }).boxed(),
        down,
        Some(report),
        shared.limits.idle_timeout,
    );
    Response::from_parts(parts, body.boxed())
}

/// Emits the event of a plain HTTP exchange when the response body is finished or dropped.
struct Report {
    shared: Arc<Shared>,
    event: Option<EgressEvent>,
    started: Instant,
    up: Arc<AtomicU64>,
    down: Arc<AtomicU64>,
}

impl Drop for Report {
    fn drop(&mut self) {
        if let Some(mut event) = self.event.take() {
            event.bytes_up = self.up.load(Ordering::Relaxed);
            event.bytes_down = self.down.load(Ordering::Relaxed);
            self.shared
                .events
                .emit(event.finish(self.started.elapsed()));
        }
    }
}

/// A body that counts the payload bytes passing through it, and fails once no bytes have
/// moved for the idle timeout (a stalled peer cannot hold the connection forever).
struct Counted {
    inner: ProxyBody,
    count: Arc<AtomicU64>,
    report: Option<Report>,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl Counted {
    fn new(
        inner: ProxyBody,
        count: Arc<AtomicU64>,
        report: Option<Report>,
        idle: Duration,
    ) -> Counted {
        Counted {
            inner,
            count,
            report,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        }
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.count.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
                let next = tokio::time::Instant::now() + this.idle;
                this.deadline.as_mut().reset(next);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.report.take();
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.report.take();
                Poll::Ready(None)
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    let reason = "the transfer stalled for longer than the idle timeout";
                    if let Some(event) = this.report.as_mut().and_then(|r| r.event.as_mut()) {
                        event.reason = reason.to_owned();
                    }
                    this.report.take();
                    return Poll::Ready(Some(Err(reason.into())));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_and_proxy_headers_are_dropped() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive, x-secret"),
            ("keep-alive", "timeout=5"),
            ("proxy-authorization", "Basic Zm9vOmJhcg=="),
            ("proxy-connection", "keep-alive"),
            ("proxy-foo", "1"),
            ("te", "trailers"),
            ("trailer", "x"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("x-secret", "1"),
            ("accept", "*/*"),
            ("authorization", "Bearer t"),
        ] {
            h.append(k, HeaderValue::from_static(v));
        }
        strip_hop_by_hop(&mut h);
        let left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        assert_eq!(left, ["accept", "authorization"]);
    }
}
