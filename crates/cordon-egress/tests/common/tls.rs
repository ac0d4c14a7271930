//! TLS fixtures: a test CA, an HTTPS upstream that echoes what it saw, and a client that
//! talks HTTP/1.1 over TLS through a `CONNECT` tunnel.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::net::{TcpListener, TcpStream};

/// A CA made for a test, and leaves it signs.
pub struct TestCa {
    pub cert: CertificateDer<'static>,
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        TestCa {
            cert: cert.der().clone(),
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA certificate as PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    pub fn server_config(&self, names: &[&str]) -> rustls::ServerConfig {
        let key = KeyPair::generate().unwrap();
        let params =
            CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let pk = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], pk)
        .unwrap()
    }
}

/// An HTTPS server on loopback for `names`. Every request is answered with a body that
/// lists its method, path and headers; `/redirect?to=URL` answers 302 to URL, and
/// `/echo-header?name=N` answers with header N's value as the whole body.
pub async fn https_upstream(ca: &TestCa, names: &[&str]) -> SocketAddr {
    https_upstream_seen(ca, names).await.0
}

/// What an upstream saw: one text per request (the echoed body).
pub type Seen = Arc<std::sync::Mutex<Vec<String>>>;

/// [`https_upstream`], also keeping what every request looked like.
pub async fn https_upstream_seen(ca: &TestCa, names: &[&str]) -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let config = Arc::new(ca.server_config(names));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(config.clone());
            let log = log.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let log = log.clone();
                    async move {
                        let method = req.method().to_string();
                        let target = req.uri().to_string();
                        let mut text = format!("{method} {target}\n");
                        for (k, v) in req.headers() {
                            text.push_str(&format!(
                                "{k}: {}\n",
                                String::from_utf8_lossy(v.as_bytes())
                            ));
                        }
                        let body = req
                            .into_body()
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        text.push_str(&format!("body: {}\n", String::from_utf8_lossy(&body)));
                        log.lock().unwrap().push(text.clone());
                        let mut resp = Response::new(Full::new(Bytes::from(text)));
                        if let Some(to) = target.split("/redirect?to=").nth(1) {
                            *resp.status_mut() = hyper::StatusCode::FOUND;
                            resp.headers_mut().insert("location", to.parse().unwrap());
                        }
                        Ok::<_, std::convert::Infallible>(resp)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    (addr, seen)
}

/// The answer of one request.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub block: Option<String>,
    pub location: Option<String>,
    pub body: String,
}

/// An HTTP/1.1 connection over TLS through a proxy's `CONNECT` tunnel, trusting `root`.
pub struct TlsClient {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl TlsClient {
    /// `None` when the TLS handshake fails.
    pub async fn connect(
        proxy: SocketAddr,
        host: &str,
        port: u16,
        root: &CertificateDer<'static>,
    ) -> Result<TlsClient, String> {
        let (resp, tcp): (_, TcpStream) = super::connect(proxy, &format!("{host}:{port}")).await;
        if resp.status != 200 {
            return Err(format!("CONNECT answered {}", resp.status));
        }
        let mut roots = rustls::RootCertStore::empty();
        roots.add(root.clone()).unwrap();
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = ServerName::try_from(host.to_string()).unwrap();
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        Ok(TlsClient { sender })
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Answer {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "ignored");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(Bytes::from(body.to_string()))).unwrap();
        let resp = self.sender.send_request(req).await.unwrap();
        let status = resp.status().as_u16();
        let h = |n: &str| {
            resp.headers()
                .get(n)
                .map(|v| v.to_str().unwrap().to_string())
        };
        let block = h("x-cordon-block");
        let location = h("location");
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            block,
            location,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }
}
