//! Interception of the tunnels that need it: hosts with method and path rules.
//!
//! The tunnel's client side is served as HTTP/1.1 — over TLS with a certificate from the
//! run's CA when the client starts a TLS handshake, in the clear otherwise — and every
//! request is judged on its own before it is sent on, over one kept-alive upstream
//! connection that is verified against the system's roots. Tunnels to every other
//! allowed host never come here: they are relayed untouched.
//!
//! What this must never do: send a request on before it was judged, trust an upstream
//! whose certificate did not verify, or follow a redirect (responses are passed back as
//! they are, and the next request is judged again).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use cordon_policy::net::{Authority, NetCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HOST, HeaderValue};
use hyper::{Request, Response, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::sync::Mutex;

use crate::Shared;
use crate::credential::Credential;
use crate::dial::{Block, dial};
use crate::event::{Decision, EgressEvent, Protocol};
use crate::http::{BoxError, ProxyBody, block_response, full, strip_hop_by_hop};
use crate::stream::{RawIo, Rewind};

/// One intercepted tunnel's view of its destination.
struct Tunnel {
    shared: Arc<Shared>,
    authority: Authority,
    tls: bool,
    upstream: Mutex<Upstream>,
}

struct Upstream {
    /// The connection opened (and checked) for the tunnel, used by the first request.
    spare: Option<TcpStream>,
    sender: Option<SendRequest<ProxyBody>>,
}

/// Serve an allowed tunnel to `authority` whose requests must be judged one by one.
pub(crate) async fn serve(
    client: Rewind,
    upstream: TcpStream,
    authority: Authority,
    shared: Arc<Shared>,
    mut event: EgressEvent,
    started: Instant,
) {
    let (mut prefix, inner) = client.into_parts();
    if prefix.is_empty() {
        let mut buf = vec![0u8; 1024];
        let read = tokio::time::timeout(shared.limits.header_timeout, async {
            loop {
                inner.readable().await?;
                match inner.try_read(&mut buf) {
                    Ok(n) => return Ok::<usize, std::io::Error>(n),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        match read {
            Ok(Ok(n)) if n > 0 => prefix.extend_from_slice(&buf[..n]),
            _ => {
                event.decision = Decision::Allow;
                event.code = NetCode::Allow;
                event.reason = "the client sent nothing through the tunnel".into();
                shared.events.emit(event.finish(started.elapsed()));
                return;
            }
        }
    }
    // 0x16 opens a TLS handshake record.
    let tls = prefix.first() == Some(&0x16);
    let client = Rewind::new(prefix, inner);
    let tunnel = Arc::new(Tunnel {
        shared: shared.clone(),
        authority,
        tls,
        upstream: Mutex::new(Upstream {
            spare: Some(upstream),
            sender: None,
        }),
    });
    event.decision = Decision::Allow;
    event.code = NetCode::Allow;
    if tls {
        let host = tunnel.authority.host.to_string();
        let config = match shared.interception.as_ref().map(|i| i.server_config(&host)) {
            Some(Ok(c)) => c,
            Some(Err(e)) => return tls_refused(&shared, event, started, e.to_string()),
            None => {
                return tls_refused(
                    &shared,
                    event,
                    started,
                    format!(
                        "{host} has request rules, but this proxy was started without a CA to inspect TLS"
                    ),
                );
            }
        };
        let accept = tokio_rustls::TlsAcceptor::from(config).accept(client);
        match tokio::time::timeout(shared.limits.header_timeout, accept).await {
            Ok(Ok(stream)) => serve_http(TokioIo::new(stream), tunnel).await,
            Ok(Err(e)) => {
                return tls_refused(
                    &shared,
                    event,
                    started,
                    format!("the client's TLS handshake failed (does it trust the run's CA?): {e}"),
                );
            }
            Err(_) => {
                return tls_refused(
                    &shared,
                    event,
                    started,
                    "the client's TLS handshake did not finish in time".into(),
                );
            }
        }
    } else {
        serve_http(TokioIo::new(client), tunnel).await;
    }
    shared.events.emit(event.finish(started.elapsed()));
}

fn tls_refused(shared: &Shared, mut event: EgressEvent, started: Instant, reason: String) {
    event.decision = Decision::Error;
    event.code = NetCode::TlsError;
    event.reason = reason;
    shared.events.emit(event.finish(started.elapsed()));
}

async fn serve_http<I>(io: TokioIo<I>, tunnel: Arc<Tunnel>)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let limits = tunnel.shared.limits.clone();
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let tunnel = tunnel.clone();
        async move { Ok::<_, Infallible>(handle(req, tunnel).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(limits.max_header_bytes)
        .max_buf_size(limits.max_header_bytes.max(8192) + 8192)
        .keep_alive(true);
    let _ = builder.serve_connection(io, svc).await;
}

async fn handle(req: Request<Incoming>, tunnel: Arc<Tunnel>) -> Response<ProxyBody> {
    let started = Instant::now();
    let shared = &tunnel.shared;
    let authority = &tunnel.authority;
    let mut event = EgressEvent::new(Protocol::Intercepted);
    event.host = authority.host.to_string();
    event.port = authority.port;
    event.method = Some(req.method().as_str().chars().take(32).collect());
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    event.path = Some(target.chars().take(512).collect());
    let refuse = |mut event: EgressEvent, block: Block| {
        event.decision = block.decision;
        event.code = block.code;
        event.reason = block.reason.clone();
        shared.events.emit(event.finish(started.elapsed()));
        block_response(&block)
    };
    if let Err(r) = crate::http::check_request(
        shared,
        &authority.host,
        authority.port,
        req.method().as_str(),
        &target,
        req.headers(),
    ) {
        return refuse(event, Block::deny(r.code, r.reason));
    }
    let (mut parts, body) = req.into_parts();
    let method = parts.method.as_str().to_owned();
    let host = &authority.host;
    // The credential that covers this request is added (the proxy refuses to start with
    // two that could cover one request); every other one must not appear in it at all.
    let added = shared
        .credentials
        .iter()
        .find(|c| tunnel.tls && c.covers(host, authority.port, &method, &target));
    if let Some(block) = leak_in_head(
        shared,
        added,
        &target,
        &parts.headers,
        &mut event,
        authority,
    ) {
        return refuse(event, block);
    }
    let body: ProxyBody = if shared
        .credentials
        .iter()
        .any(|c| Some(c.name()) != added.map(|a| a.name()))
    {
        match checked_body(shared, added, body, &mut event, authority).await {
            Ok(b) => b,
            Err(block) => return refuse(event, block),
        }
    } else {
        body.map_err(|e| -> BoxError { Box::new(e) }).boxed()
    };
    let mut sent = target.clone();
    if let Some(cred) = added {
        let (to, injected) = crate::inject::add(cred, &mut parts.headers, &target);
        if injected {
            // The event keeps the target the client sent: never the value.
            event.credential = Some(cred.name().to_owned());
            sent = to;
        }
    }
    parts.uri = match sent.parse::<Uri>() {
        Ok(u) => u,
        Err(_) => {
            return refuse(
                event,
                Block::error(400, NetCode::Malformed, "the request path is not valid"),
            );
        }
    };
    parts.version = hyper::Version::HTTP_11;
    strip_hop_by_hop(&mut parts.headers);
    // A response from a credential's host is checked for echoes of its value whether or
    // not this request carried it: the host may hand back what it was sent before.
    // The added one first: where two hold the same value, the client gets back the
    // placeholder it sent.
    let echoed: Vec<&Credential> = added
        .into_iter()
        .chain(shared.credentials.iter().filter(|c| {
            added.is_none_or(|a| a.name() != c.name()) && c.covers_host(host, authority.port)
        }))
        .collect();
    if !echoed.is_empty() {
        parts.headers.insert(
            hyper::header::ACCEPT_ENCODING,
            hyper::header::HeaderValue::from_static("identity"),
        );
    }
    let default_port = if tunnel.tls { 443 } else { 80 };
    let host_value = if authority.port == default_port {
        authority.host.to_string()
    } else {
        authority.to_string()
    };
    match HeaderValue::from_str(&host_value) {
        Ok(v) => {
            parts.headers.insert(HOST, v);
        }
        Err(_) => {
            return refuse(
                event,
                Block::error(
                    400,
                    NetCode::Malformed,
                    "the target host is not a valid header",
                ),
            );
        }
    }
    let request = Request::from_parts(parts, body);
    let mut upstream = tunnel.upstream.lock().await;
    let sender = match ready_sender(&tunnel, &mut upstream).await {
        Ok(s) => s,
        Err(block) => return refuse(event, block),
    };
    let idle = shared.limits.idle_timeout;
    let resp = match tokio::time::timeout(idle, sender.send_request(request)).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => {
            upstream.sender = None;
            return refuse(
                event,
                Block::error(
                    502,
                    NetCode::UpstreamError,
                    format!("talking to {authority} failed: {e}"),
                ),
            );
        }
        Err(_) => {
            upstream.sender = None;
            return refuse(
                event,
                Block::error(
                    504,
                    NetCode::UpstreamTimeout,
                    format!("{authority} did not answer in time"),
                ),
            );
        }
    };
    drop(upstream);
    let (mut parts, body) = resp.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    event.decision = Decision::Allow;
    event.code = NetCode::Allow;
    event.status = Some(parts.status.as_u16());
    let body: ProxyBody = if echoed.is_empty() {
        body.map_err(|e| -> BoxError { Box::new(e) }).boxed()
    } else {
        let names: Vec<&str> = echoed.iter().map(|c| c.name()).collect();
        let names = names.join(", ");
        if crate::inject::encoded(&parts.headers) {
            let why = format!(
                "{authority} answered with an encoded (compressed) body, which cannot be checked for the value of the credential {names}"
            );
            event.reason = why.clone();
            shared.events.emit(event.finish(started.elapsed()));
            return block_response(&Block::error(502, NetCode::UpstreamError, why));
        }
        // The body is held to be checked; its length is kept, but a held body is sent
        // whole.
        parts.headers.remove(hyper::header::CONTENT_LENGTH);
        let checked = match collect_limited(body, MAX_HELD_BODY).await {
            Ok(bytes) if crate::inject::compressed(&bytes) => Err(crate::echo::EchoError(format!(
                "{authority} answered with a compressed body though no encoding was asked for, which cannot be checked for the value of the credential {names}"
            ))),
            Ok(bytes) => echoed.iter().try_fold(bytes.to_vec(), |bytes, cred| {
                crate::echo::check_head(cred, &parts)?;
                crate::echo::redact_headers(cred, &mut parts.headers)?;
                crate::echo::redact(cred, &bytes)
            }),
            Err(why) => Err(crate::echo::EchoError(why)),
        };
        // The reason phrase was checked; the canonical one stands in for it all the same.
        parts.extensions.remove::<hyper::ext::ReasonPhrase>();
        match checked {
            Ok(bytes) => full(bytes),
            Err(crate::echo::EchoError(why)) => {
                event.reason = why.clone();
                shared.events.emit(event.finish(started.elapsed()));
                return block_response(&Block::error(502, NetCode::UpstreamError, why));
            }
        }
    };
    shared.events.emit(event.finish(started.elapsed()));
    Response::from_parts(parts, body)
}

/// The most of a request or response body held in memory for a credential check.
const MAX_HELD_BODY: usize = 32 * 1024 * 1024;

/// A placeholder or real value of a credential that does not cover this request, in its
/// target or headers: an exfiltration attempt.
pub(crate) fn leak_in_head(
    shared: &Shared,
    added: Option<&Credential>,
    target: &str,
    headers: &hyper::HeaderMap,
    event: &mut EgressEvent,
    authority: &Authority,
) -> Option<Block> {
    for cred in &shared.credentials {
        if added.is_some_and(|a| a.name() == cred.name()) {
            continue;
        }
        let found = [cred.placeholder(), cred.value()].iter().any(|needle| {
            target.contains(needle)
                || headers.values().any(|v| {
                    v.as_bytes()
                        .windows(needle.len())
                        .any(|w| w == needle.as_bytes())
                })
        });
        if found {
            event.credential = Some(cred.name().to_owned());
            return Some(Block::deny(
                NetCode::CredentialLeak,
                format!(
                    "exfiltration attempt: the credential {} (or its placeholder) was sent to {authority}, which it may not reach",
                    cred.name()
                ),
            ));
        }
    }
    None
}

/// Hold the request body and refuse it if it carries a credential that does not cover
/// this request.
pub(crate) async fn checked_body(
    shared: &Shared,
    added: Option<&Credential>,
    body: Incoming,
    event: &mut EgressEvent,
    authority: &Authority,
) -> Result<ProxyBody, Block> {
    let bytes = collect_limited(body, MAX_HELD_BODY)
        .await
        .map_err(|why| Block::error(413, NetCode::CredentialLeak, why))?;
    for cred in &shared.credentials {
        if added.is_some_and(|a| a.name() == cred.name()) {
            continue;
        }
        let hit = [cred.placeholder(), cred.value()]
            .iter()
            .any(|needle| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()));
        if hit {
            event.credential = Some(cred.name().to_owned());
            return Err(Block::deny(
                NetCode::CredentialLeak,
                format!(
                    "exfiltration attempt: the body of a request to {authority} holds the credential {} (or its placeholder), which may not go there",
                    cred.name()
                ),
            ));
        }
    }
    Ok(full(bytes))
}

async fn collect_limited(body: Incoming, limit: usize) -> Result<bytes::Bytes, String> {
    let limited = http_body_util::Limited::new(body, limit);
    limited
        .collect()
        .await
        .map(|c| c.to_bytes())
        .map_err(|e| format!("a body checked for credentials could not be read whole (at most {limit} bytes are held): {e}"))
}

/// The upstream connection, opened (and for TLS, verified) on first use and again
/// whenever the previous one closed.
async fn ready_sender<'a>(
    tunnel: &Tunnel,
    upstream: &'a mut Upstream,
) -> Result<&'a mut SendRequest<ProxyBody>, Block> {
    let usable = match upstream.sender.as_mut() {
        Some(s) => !s.is_closed() && s.ready().await.is_ok(),
        None => false,
    };
    if !usable {
        let shared = &tunnel.shared;
        let authority = &tunnel.authority;
        let tcp = match upstream.spare.take() {
            Some(t) => t,
            None => dial(shared, &authority.host, authority.port).await?.0,
        };
        let sender = if tunnel.tls {
            let Some(interception) = shared.interception.as_ref() else {
                return Err(Block::error(
                    502,
                    NetCode::TlsError,
                    "TLS interception is not set up",
                ));
            };
            let name = ServerName::try_from(authority.host.to_string()).map_err(|_| {
                Block::error(
                    502,
                    NetCode::TlsError,
                    format!("{} is not a valid TLS server name", authority.host),
                )
            })?;
            let connector = tokio_rustls::TlsConnector::from(interception.upstream.clone());
            let connect = connector.connect(name, tcp);
            let stream = match tokio::time::timeout(shared.limits.connect_timeout, connect).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    return Err(Block::error(
                        502,
                        NetCode::TlsError,
                        format!(
                            "the TLS handshake with {authority} failed (its certificate must verify against the system's roots): {e}"
                        ),
                    ));
                }
                Err(_) => {
                    return Err(Block::error(
                        504,
                        NetCode::UpstreamTimeout,
                        format!("the TLS handshake with {authority} did not finish in time"),
                    ));
                }
            };
            handshake(TokioIo::new(stream), authority).await?
        } else {
            handshake(TokioIo::new(tcp), authority).await?
        };
        upstream.sender = Some(sender);
    }
    upstream
        .sender
        .as_mut()
        .ok_or_else(|| Block::error(502, NetCode::UpstreamError, "no upstream connection"))
}

async fn handshake<I>(
    io: TokioIo<I>,
    authority: &Authority,
) -> Result<SendRequest<ProxyBody>, Block>
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::Builder::new()
        .handshake::<_, ProxyBody>(io)
        .await
        .map_err(|e| {
            Block::error(
                502,
                NetCode::UpstreamError,
                format!("talking to {authority} failed: {e}"),
            )
        })?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}
