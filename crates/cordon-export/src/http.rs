//! One OTLP/HTTP POST through hyper (HTTP/1.1; TLS by rustls with the system's roots for
//! `https://`), on a current-thread runtime of the caller's.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// What the collector answered.
#[derive(Debug)]
pub(crate) enum Sent {
    /// 2xx, with the response body.
    Accepted(Bytes),
    /// Worth retrying: the connection failed, or 429, 502, 503, 504; with the delay the
    /// collector asked for, if any.
    Retry(String, Option<Duration>),
    /// Refused for good (another status): retrying the same request cannot help.
    Refused(String),
}

struct Target {
    tls: bool,
    host: String,
    port: u16,
    authority: String,
    path: String,
}

fn parse(url: &str) -> Result<Target, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(format!("{url:?} is not an http:// or https:// URL"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => match p.parse() {
            Ok(p) => (h, p),
            Err(_) => (authority, if tls { 443 } else { 80 }),
        },
        _ => (authority, if tls { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(format!("{url:?} names no host"));
    }
    Ok(Target {
        tls,
        host: host.to_string(),
        port,
        authority: authority.to_string(),
        path: path.to_string(),
    })
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

async fn exchange<S>(io: S, req: Request<Full<Bytes>>) -> Result<hyper::Response<Incoming>, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await.map_err(|e| e.to_string())
}

/// POST `body` (an encoded `ExportLogsServiceRequest`) to `url`.
pub(crate) async fn post(
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
    timeout: Duration,
) -> Sent {
    let target = match parse(url) {
        Ok(t) => t,
        Err(e) => return Sent::Refused(e),
    };
    let mut req = Request::post(&target.path)
        .header("host", &target.authority)
        .header("content-type", "application/x-protobuf")
        .header("user-agent", concat!("cordon/", env!("CARGO_PKG_VERSION")));
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let req = match req.body(Full::new(Bytes::from(body))) {
        Ok(r) => r,
        Err(e) => return Sent::Refused(format!("the request could not be built: {e}")),
    };
    let send = async {
        let tcp = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", target.authority))?;
        let _ = tcp.set_nodelay(true);
        let response = if target.tls {
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|e| format!("{}: {e}", target.host))?;
            let tls = tokio_rustls::TlsConnector::from(tls_config()?)
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS with {}: {e}", target.authority))?;
            exchange(tls, req).await?
        } else {
            exchange(tcp, req).await?
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = Limited::new(response.into_body(), 1 << 20)
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Ok::<_, String>((status, retry_after, body))
    };
    match tokio::time::timeout(timeout, send).await {
        Err(_) => Sent::Retry(format!("no answer from {url} within {timeout:?}"), None),
        Ok(Err(e)) => Sent::Retry(e, None),
        Ok(Ok((status, _, body))) if status.is_success() => Sent::Accepted(body),
        Ok(Ok((status, retry_after, _))) if matches!(status.as_u16(), 429 | 502 | 503 | 504) => {
            Sent::Retry(format!("the collector answered {status}"), retry_after)
        }
        Ok(Ok((status, _, body))) => Sent::Refused(format!(
            "the collector refused the records: {status} {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn urls() {
        let t = parse("http://127.0.0.1:4318/v1/logs").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str(), t.tls),
            ("127.0.0.1", 4318, "/v1/logs", false)
        );
        let t = parse("https://collector.example/v1/logs").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.tls),
            ("collector.example", 443, true)
        );
        let t = parse("http://[::1]:9/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        assert!(parse("ftp://x").is_err());
        assert!(parse("http:///x").is_err());
    }
}
