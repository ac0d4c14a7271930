//! cordon-egress: the allowlisting egress proxy that stands between a sandboxed command and
//! the network.
//!
//! It owns the network boundary: every connection a sandboxed process makes leaves
//! through here or not at all. One listener (TCP or Unix socket) serves HTTP/1.1 —
//! `CONNECT host:port` tunnels and absolute-form plain HTTP — and SOCKS5, told apart by
//! the first byte (`0x05`). Every request is judged by [`cordon_policy::net`], the same
//! code the policy core uses for `web_fetch`; the proxy then resolves the name itself,
//! refuses if *any* answer is a private, loopback, link-local, CGNAT, metadata or other
//! non-public address (unless an `allow_private` CIDR covers it), and connects only to an
//! address it checked — a resolver that changes its answer cannot redirect the connection.
//!
//! What it must never do: follow redirects, forward `Proxy-*` or hop-by-hop headers, look
//! a name up twice, or let a slow or hostile client hold resources without bound.
//! Refusals are explicit: `403` with `X-Cordon-Block: <code>` and a one-line body (or the
//! SOCKS5 "not allowed" reply), and every decision becomes an [`EgressEvent`].
//!
//! ```
//! use cordon_egress::{EgressProxy, ProxyConfig};
//! use cordon_policy::net::NetworkPolicy;
//!
//! let none: &[&str] = &[];
//! let policy = NetworkPolicy::from_lists(&["github.com", "*.npmjs.org"], none, none)?;
//! let config = ProxyConfig::new(policy).with_sink(|event| eprintln!("{}", event.to_json()));
//! let proxy = EgressProxy::start_tcp(config, "127.0.0.1:0".parse()?)?;
//! let proxy_url = format!("http://{}", proxy.local_addr()); // HTTPS_PROXY, ALL_PROXY, …
//! # let _ = proxy_url;
//! // … run the command …
//! let report = proxy.events(); // every decision, for a report
//! # let _ = report;
//! proxy.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod ca;
mod credential;
mod dial;
mod echo;
mod event;
mod http;
mod inject;
mod intercept;
mod resolve;
mod socks;
mod source;
mod stream;
mod sys;

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cordon_policy::net::NetworkPolicy;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

pub use ca::{RunCa, TlsSetupError, parse_pem_certs, system_roots};
pub use cordon_policy::net::NetCode;
pub use credential::{Credential, CredentialError, check_unambiguous};
pub use event::{Decision, EVENT_HISTORY, EgressEvent, EventSink, Protocol};
pub use http::BLOCK_HEADER;
pub use resolve::{ResolveFuture, Resolver, StaticResolver, SystemResolver};
pub use rustls::pki_types::CertificateDer;

use event::Events;
use stream::{ClientStream, Rewind};

/// Resource limits. The defaults suit one sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Client connections served at once (tunnels included); more are answered `503`.
    pub max_connections: usize,
    /// Largest request head accepted; larger ones are answered `431`.
    pub max_header_bytes: usize,
    /// Time a client has to send a complete request head (or SOCKS5 handshake), and the
    /// longest a kept-alive connection may wait for its next request.
    pub header_timeout: Duration,
    /// Time allowed for resolving a name and for connecting to one address.
    pub connect_timeout: Duration,
    /// A tunnel (or a wait for an upstream's response) with no traffic for this long is
    /// closed.
    pub idle_timeout: Duration,
    /// Threads of the proxy's runtime.
    pub worker_threads: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 1024,
            max_header_bytes: 32 * 1024,
            header_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            worker_threads: 2,
        }
    }
}

/// Everything the proxy needs.
pub struct ProxyConfig {
    /// The compiled `[network]` policy.
    pub policy: NetworkPolicy,
    /// Resource limits.
    pub limits: Limits,
    /// How names are resolved ([`SystemResolver`] unless a test or a pinned setup says
    /// otherwise).
    pub resolver: Arc<dyn Resolver>,
    /// Called with every event as it happens.
    pub sink: Option<EventSink>,
    /// The run's CA, needed to inspect hosts with request rules (without one, their
    /// TLS tunnels are refused).
    pub ca: Option<RunCa>,
    /// Roots trusted for upstreams besides the system's (a private CA, a test's).
    pub extra_upstream_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    /// Credentials the proxy adds to the requests they cover (their hosts are inspected).
    pub credentials: Vec<Credential>,
}

impl ProxyConfig {
    /// A config with default limits, the system resolver and no sink.
    pub fn new(policy: NetworkPolicy) -> ProxyConfig {
        ProxyConfig {
            policy,
            limits: Limits::default(),
            resolver: Arc::new(SystemResolver),
            sink: None,
            ca: None,
            extra_upstream_roots: Vec::new(),
            credentials: Vec::new(),
        }
    }

    /// Replace the limits.
    pub fn with_limits(mut self, limits: Limits) -> ProxyConfig {
        self.limits = limits;
        self
    }

    /// Replace the resolver.
    pub fn with_resolver(mut self, resolver: impl Resolver) -> ProxyConfig {
        self.resolver = Arc::new(resolver);
        self
    }

    /// Inspect hosts with request rules using this CA's certificates.
    pub fn with_ca(mut self, ca: RunCa) -> ProxyConfig {
        self.ca = Some(ca);
        self
    }

    /// Trust these roots for upstreams too, besides the system's.
    pub fn with_extra_upstream_roots(
        mut self,
        roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    ) -> ProxyConfig {
        self.extra_upstream_roots = roots;
        self
    }

    /// Add these credentials to the requests they cover.
    pub fn with_credentials(mut self, credentials: Vec<Credential>) -> ProxyConfig {
        self.credentials = credentials;
        self
    }

    /// Deliver every event to `sink` as well.
    pub fn with_sink(mut self, sink: impl Fn(&EgressEvent) + Send + Sync + 'static) -> ProxyConfig {
        self.sink = Some(Arc::new(sink));
        self
    }
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyConfig")
            .field("policy", &self.policy)
            .field("limits", &self.limits)
            .field("sink", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}

/// Why the proxy could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum EgressError {
    /// Binding the listener failed.
    Bind {
        /// The address or socket path.
        what: String,
        /// The cause.
        source: io::Error,
    },
    /// The Unix socket path already exists (it is never removed on the caller's behalf).
    SocketExists(PathBuf),
    /// The runtime or its thread could not be started.
    Runtime(io::Error),
    /// The limits are unusable.
    BadLimits(&'static str),
    /// TLS interception could not be set up.
    Tls(TlsSetupError),
    /// The credentials cannot be used together (two could be added to one request).
    Credentials(CredentialError),
}

impl fmt::Display for EgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EgressError::Bind { what, source } => {
                write!(f, "the egress proxy could not listen on {what}: {source}")
            }
            EgressError::SocketExists(p) => write!(
                f,
                "the egress proxy socket path {} already exists",
                p.display()
            ),
            EgressError::Runtime(e) => write!(f, "the egress proxy could not start: {e}"),
            EgressError::BadLimits(why) => write!(f, "the egress proxy limits are unusable: {why}"),
            EgressError::Tls(e) => write!(f, "the egress proxy {e}"),
            EgressError::Credentials(e) => write!(f, "the egress proxy cannot start: {e}"),
        }
    }
}

impl std::error::Error for EgressError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EgressError::Bind { source, .. } | EgressError::Runtime(source) => Some(source),
            _ => None,
        }
    }
}

/// Where the proxy listens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListenAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket path.
    Unix(PathBuf),
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddr::Tcp(a) => write!(f, "{a}"),
            ListenAddr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

pub(crate) struct Shared {
    pub(crate) policy: NetworkPolicy,
    pub(crate) limits: Limits,
    pub(crate) resolver: Arc<dyn Resolver>,
    pub(crate) events: Events,
    pub(crate) interception: Option<ca::Interception>,
    pub(crate) credentials: Vec<Credential>,
}

impl Shared {
    /// Whether a tunnel to `authority` must be inspected request by request.
    pub(crate) fn inspects(&self, authority: &cordon_policy::net::Authority) -> bool {
        self.policy.is_ruled(&authority.host, authority.port)
            || self
                .credentials
                .iter()
                .any(|c| c.covers_host(&authority.host, authority.port))
    }
}

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

impl Listener {
    async fn accept(&self) -> io::Result<ClientStream> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept().await?;
                let _ = s.set_nodelay(true);
                Ok(ClientStream::Tcp(s))
            }
            Listener::Unix(l) => Ok(ClientStream::Unix(l.accept().await?.0)),
        }
    }
}

/// The egress proxy. Start it with [`EgressProxy::start_tcp`] or
/// [`EgressProxy::start_unix`].
#[derive(Debug)]
pub struct EgressProxy;

impl EgressProxy {
    /// Listen on a Unix socket at `socket` (which must not exist yet; put it in a private
    /// 0700 directory). Runs on its own runtime thread; returns once listening.
    pub fn start_unix(config: ProxyConfig, socket: &Path) -> Result<EgressHandle, EgressError> {
        if socket.symlink_metadata().is_ok() {
            return Err(EgressError::SocketExists(socket.to_owned()));
        }
        // The socket's directory, opened now: at shutdown the socket is removed from this
        // directory, whatever was renamed or linked at its path meanwhile.
        let parent = match socket.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let socket_dir = cordon_fs::Dir::open_ambient(parent).map_err(|e| EgressError::Bind {
            what: socket.display().to_string(),
            source: e.into(),
        })?;
        let std_listener =
            std::os::unix::net::UnixListener::bind(socket).map_err(|source| EgressError::Bind {
                what: socket.display().to_string(),
                source,
            })?;
        std_listener
            .set_nonblocking(true)
            .map_err(EgressError::Runtime)?;
        let addr = ListenAddr::Unix(socket.to_owned());
        let mut handle = start(config, addr, move || {
            UnixListener::from_std(std_listener).map(Listener::Unix)
        })?;
        handle.socket_dir = Some(socket_dir);
        Ok(handle)
    }

    /// Listen on a TCP address (port 0 picks a free one; see
    /// [`EgressHandle::local_addr`]). Returns once listening.
    pub fn start_tcp(config: ProxyConfig, addr: SocketAddr) -> Result<EgressHandle, EgressError> {
        let std_listener =
            std::net::TcpListener::bind(addr).map_err(|source| EgressError::Bind {
                what: addr.to_string(),
                source,
            })?;
        std_listener
            .set_nonblocking(true)
            .map_err(EgressError::Runtime)?;
        let local = std_listener.local_addr().map_err(EgressError::Runtime)?;
        {
            use std::os::fd::AsRawFd;
            let secs =
                i32::try_from(config.limits.header_timeout.as_secs().max(1)).unwrap_or(i32::MAX);
            sys::defer_accept(std_listener.as_raw_fd(), secs);
        }
        start(config, ListenAddr::Tcp(local), move || {
            TcpListener::from_std(std_listener).map(Listener::Tcp)
        })
    }
}

fn start(
    config: ProxyConfig,
    addr: ListenAddr,
    listener: impl FnOnce() -> io::Result<Listener>,
) -> Result<EgressHandle, EgressError> {
    let limits = config.limits.clone();
    credential::check_unambiguous(&config.credentials).map_err(EgressError::Credentials)?;
    if limits.max_connections == 0 {
        return Err(EgressError::BadLimits("max_connections must be at least 1"));
    }
    if limits.worker_threads == 0 {
        return Err(EgressError::BadLimits("worker_threads must be at least 1"));
    }
    if limits.header_timeout.is_zero()
        || limits.connect_timeout.is_zero()
        || limits.idle_timeout.is_zero()
    {
        return Err(EgressError::BadLimits("timeouts must be longer than zero"));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(limits.worker_threads)
        .thread_name("cordon-egress")
        .enable_all()
        .build()
        .map_err(EgressError::Runtime)?;
    let listener = {
        let _guard = runtime.enter();
        listener().map_err(EgressError::Runtime)?
    };
    let interception = match config.ca {
        Some(ca) => Some(
            ca::Interception::new(ca, &config.extra_upstream_roots).map_err(EgressError::Tls)?,
        ),
        None => None,
    };
    let shared = Arc::new(Shared {
        interception,
        credentials: config.credentials,
        policy: config.policy,
        limits,
        resolver: config.resolver,
        events: Events::new(config.sink),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let rt_handle = runtime.handle().clone();
    let loop_shared = shared.clone();
    let thread = std::thread::Builder::new()
        .name("cordon-egress".into())
        .spawn(move || {
            // The accept loop runs as a worker task, not in `block_on`: a connection's
            // task then starts on the worker that accepted it, without a thread hop.
            let accepting = runtime.spawn(accept_loop(listener, loop_shared, stop_rx));
            let _ = runtime.block_on(accepting);
            // Open tunnels end with the runtime: shutdown is prompt, not graceful.
            runtime.shutdown_timeout(Duration::from_secs(1));
        })
        .map_err(EgressError::Runtime)?;
    Ok(EgressHandle {
        addr,
        shared,
        stop: stop_tx,
        thread: Some(thread),
        rt_handle,
        socket_dir: None,
    })
}

async fn accept_loop(listener: Listener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(shared.limits.max_connections));
    loop {
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = stop.changed() => return,
        };
        let stream = match accepted {
            Ok(s) => s,
            Err(_) => {
                // Out of descriptors or a transient accept error: back off rather than
                // spin; the listener stays up.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        match slots.clone().try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(serve_client(stream, shared.clone(), permit));
            }
            Err(_) => {
                tokio::spawn(refuse_busy(stream, shared.clone()));
            }
        }
    }
}

async fn serve_client(mut stream: ClientStream, shared: Arc<Shared>, permit: OwnedSemaphorePermit) {
    let started = Instant::now();
    let permit = Arc::new(permit);
    // One read tells the protocol: SOCKS5 starts with 0x05; a complete CONNECT head takes
    // the fast path; everything else is replayed into the HTTP server. This task lives as
    // long as a tunnel, and a future is as large as its largest state: the SOCKS and HTTP
    // servers (and, below, the inspecting server) are boxed, so that an idle plain tunnel
    // holds only what its relay needs.
    let mut first = vec![0u8; 4096];
    let read = tokio::time::timeout(shared.limits.header_timeout, stream.read(&mut first)).await;
    let n = match read {
        Ok(Ok(0)) | Ok(Err(_)) => return,
        Ok(Ok(n)) => n,
        Err(_) => {
            let mut event = EgressEvent::new(Protocol::Unknown);
            event.code = NetCode::HeaderTimeout;
            event.reason = "the client sent nothing in time".into();
            shared.events.emit(event.finish(started.elapsed()));
            return;
        }
    };
    first.truncate(n);
    if first[0] == 0x05 {
        let rest = first.split_off(1);
        drop(first);
        Box::pin(socks::serve(Rewind::new(rest, stream), shared, permit)).await;
        return;
    }
    match http::fast_connect(&first) {
        http::FastConnect::Connect { target, head_len } => {
            // The read buffer must not live as long as the tunnel.
            let early = first.split_off(head_len);
            drop(first);
            let _permit = permit;
            http::serve_fast_connect(stream, shared, target, early).await;
        }
        http::FastConnect::Other => {
            Box::pin(http::serve(Rewind::new(first, stream), shared, permit)).await;
        }
    }
}

async fn refuse_busy(stream: ClientStream, shared: Arc<Shared>) {
    let body = "cordon: the egress proxy is at its connection limit\n";
    let resp = format!(
        "HTTP/1.1 503 Service Unavailable\r\n{BLOCK_HEADER}: too-many-connections\r\n\
         Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        stream::write_all(&stream, resp.as_bytes()),
    )
    .await;
    let mut event = EgressEvent::new(Protocol::Unknown);
    event.decision = Decision::Deny;
    event.code = NetCode::TooManyConnections;
    event.reason = format!(
        "the proxy already serves {} connections",
        shared.limits.max_connections
    );
    shared.events.emit(event);
}

/// A running proxy. Dropping it shuts the proxy down too.
pub struct EgressHandle {
    addr: ListenAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
    rt_handle: tokio::runtime::Handle,
    /// The directory of a Unix socket, opened when it was bound.
    socket_dir: Option<cordon_fs::Dir>,
}

impl fmt::Debug for EgressHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EgressHandle")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl EgressHandle {
    /// Where the proxy listens.
    pub fn local_addr(&self) -> &ListenAddr {
        &self.addr
    }

    /// The TCP address, for a proxy started with [`EgressProxy::start_tcp`].
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match &self.addr {
            ListenAddr::Tcp(a) => Some(*a),
            ListenAddr::Unix(_) => None,
        }
    }

    /// The most recent events (at most [`EVENT_HISTORY`]), oldest first. A tunnel's event
    /// is emitted when the tunnel ends.
    pub fn events(&self) -> Vec<EgressEvent> {
        self.shared.events.snapshot()
    }

    /// Block the calling thread until SIGINT or SIGTERM, then shut down. `ready` runs once
    /// the signal handlers are in place (print "listening" there: a signal sent after
    /// that line is seen is handled).
    pub fn serve_until_signal(self, ready: impl FnOnce(&ListenAddr)) -> io::Result<()> {
        let addr = self.addr.clone();
        let waited = self.rt_handle.block_on(async {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate())?;
            let mut int = signal(SignalKind::interrupt())?;
            ready(&addr);
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            Ok::<(), io::Error>(())
        });
        self.shutdown();
        waited
    }

    /// Stop accepting, close every open connection and tunnel, remove the Unix socket, and
    /// wait for the proxy thread to end.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        let _ = self.stop.send(true);
        let _ = thread.join();
        if let (ListenAddr::Unix(path), Some(dir)) = (&self.addr, &self.socket_dir) {
            // Only the socket: whatever else stands at its name now is left alone.
            let name = Path::new(path.file_name().unwrap_or_default());
            let is_socket = dir.stat(name).is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Socket
            });
            if is_socket {
                let _ = dir.remove(name);
            }
        }
    }
}

impl Drop for EgressHandle {
    fn drop(&mut self) {
        self.stop_now();
    }
}
