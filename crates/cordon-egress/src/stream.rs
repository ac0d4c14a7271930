//! Client streams (TCP or Unix), the one-byte replay used to tell SOCKS5 from HTTP, and the
//! tunnel relay.
//!
//! The relay works on readiness, not on owned buffers: it moves bytes with splice(2)
//! through a pipe (no copy through user space), or, where splice is refused, through a
//! buffer taken only while bytes are waiting. Idle tunnels hold no user-space buffers;
//! a tunnel that has carried data keeps an empty pipe per direction.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use std::os::fd::{AsRawFd, RawFd};

use cordon_policy::net::NetCode;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::sys as splice;

/// A socket that can be driven by readiness from a shared reference.
pub(crate) trait RawIo: Sync {
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    fn shutdown_write(&self);
    fn fd(&self) -> RawFd;
    /// Run a raw read-side syscall; `WouldBlock` clears the read readiness.
    fn try_io_read<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T>;
    /// Run a raw write-side syscall; `WouldBlock` clears the write readiness.
    fn try_io_write<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T>;
}

/// `RawIo` for a tokio stream type, whose inherent methods have the same names.
macro_rules! raw_io {
    ($t:ty) => {
        impl RawIo for $t {
            fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::readable(self)
            }
            fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
                <$t>::writable(self)
            }
            fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                <$t>::try_read(self, buf)
            }
            fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                <$t>::try_write(self, buf)
            }
            fn shutdown_write(&self) {
                // Best effort: the peer may already be gone.
                let _ = socket2::SockRef::from(self).shutdown(std::net::Shutdown::Write);
            }
            fn fd(&self) -> RawFd {
                self.as_raw_fd()
            }
            fn try_io_read<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
                self.try_io(Interest::READABLE, f)
            }
            fn try_io_write<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
                self.try_io(Interest::WRITABLE, f)
            }
        }
    };
}

raw_io!(TcpStream);
raw_io!(UnixStream);

/// A connection from a client of the proxy.
#[derive(Debug)]
pub(crate) enum ClientStream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl RawIo for ClientStream {
    async fn readable(&self) -> io::Result<()> {
        match self {
            ClientStream::Tcp(s) => s.readable().await,
            ClientStream::Unix(s) => s.readable().await,
        }
    }
    async fn writable(&self) -> io::Result<()> {
        match self {
            ClientStream::Tcp(s) => s.writable().await,
            ClientStream::Unix(s) => s.writable().await,
        }
    }
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ClientStream::Tcp(s) => s.try_read(buf),
            ClientStream::Unix(s) => s.try_read(buf),
        }
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            ClientStream::Tcp(s) => s.try_write(buf),
            ClientStream::Unix(s) => s.try_write(buf),
        }
    }
    fn shutdown_write(&self) {
        match self {
            ClientStream::Tcp(s) => RawIo::shutdown_write(s),
            ClientStream::Unix(s) => RawIo::shutdown_write(s),
        }
    }
    fn fd(&self) -> RawFd {
        match self {
            ClientStream::Tcp(s) => s.as_raw_fd(),
            ClientStream::Unix(s) => s.as_raw_fd(),
        }
    }
    fn try_io_read<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        match self {
            ClientStream::Tcp(s) => s.try_io_read(f),
            ClientStream::Unix(s) => s.try_io_read(f),
        }
    }
    fn try_io_write<T>(&self, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        match self {
            ClientStream::Tcp(s) => s.try_io_write(f),
            ClientStream::Unix(s) => s.try_io_write(f),
        }
    }
}

impl AsyncRead for ClientStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            ClientStream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ClientStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            ClientStream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_flush(cx),
            ClientStream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            ClientStream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A client stream whose first byte(s) were already read to detect the protocol; reads
/// return them again before anything new.
#[derive(Debug)]
pub(crate) struct Rewind {
    prefix: Vec<u8>,
    pos: usize,
    inner: ClientStream,
}

impl Rewind {
    pub(crate) fn new(prefix: Vec<u8>, inner: ClientStream) -> Rewind {
        Rewind {
            prefix,
            pos: 0,
            inner,
        }
    }

    /// The stream and any replay bytes not yet read.
    pub(crate) fn into_parts(self) -> (Vec<u8>, ClientStream) {
        let rest = self.prefix.get(self.pos..).unwrap_or_default().to_vec();
        (rest, self.inner)
    }
}

impl AsyncRead for Rewind {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(rest) = this.prefix.get(this.pos..)
            && !rest.is_empty()
        {
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.pos += n;
            if this.pos == this.prefix.len() {
                // Replayed in full: a long-lived connection need not keep the buffer.
                this.prefix = Vec::new();
                this.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Write all of `data` to a readiness-driven socket.
pub(crate) async fn write_all<W: RawIo>(dst: &W, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match dst.try_write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => dst.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

const RELAY_BUF: usize = 64 * 1024;

/// Byte counts of a finished tunnel and why it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RelayOutcome {
    pub(crate) up: u64,
    pub(crate) down: u64,
    pub(crate) end: RelayEnd,
}

/// Why a tunnel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RelayEnd {
    /// Both sides closed.
    Closed,
    /// Nothing moved for the idle timeout.
    Idle,
    /// A socket error (reset, …).
    Error,
}

struct Activity {
    start: Instant,
    last_ms: AtomicU64,
}

impl Activity {
    fn touch(&self) {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }
    fn idle_for(&self) -> Duration {
        let now = self.start.elapsed();
        now.saturating_sub(Duration::from_millis(self.last_ms.load(Ordering::Relaxed)))
    }
}

async fn pump<R: RawIo, W: RawIo>(
    src: &R,
    dst: &W,
    count: &AtomicU64,
    activity: &Activity,
    zero_copy: bool,
) -> io::Result<()> {
    if !zero_copy {
        return pump_copy(src, dst, count, activity).await;
    }
    match pump_splice(src, dst, count, activity).await {
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {
            pump_copy(src, dst, count, activity).await
        }
        other => other,
    }
}

/// Bytes read through a small heap buffer before switching to splice: most interactive
/// messages fit, and they then cost no pipe.
const SMALL: usize = 4096;

/// Zero-copy: socket → pipe → socket with splice(2). Each burst of readiness first reads
/// up to [`SMALL`] bytes the ordinary way; only a burst that fills it (bulk data) goes
/// through a pipe. The pipe is always drained before the next read, so it never holds
/// data while idle; it is kept (and enlarged) while the tunnel moves bulk data and
/// released after a smaller burst, so idle and chatty tunnels hold no pipe. Returns
/// `Unsupported` (with every byte read so far delivered) if splice cannot be used on
/// these sockets.
async fn pump_splice<R: RawIo, W: RawIo>(
    src: &R,
    dst: &W,
    count: &AtomicU64,
    activity: &Activity,
) -> io::Result<()> {
    let mut spliced_any = false;
    let mut kept: Option<splice::Pipe> = None;
    loop {
        src.readable().await?;
        if kept.is_none() {
            let mut small = vec![0u8; SMALL];
            match src.try_read(&mut small) {
                Ok(0) => {
                    dst.shutdown_write();
                    return Ok(());
                }
                Ok(n) => {
                    write_all(dst, &small[..n]).await?;
                    count.fetch_add(n as u64, Ordering::Relaxed);
                    activity.touch();
                    if n < SMALL {
                        continue;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        let pipe = match kept.take() {
            Some(p) => p,
            None => match splice::Pipe::new() {
                Ok(p) => p,
                Err(_) if !spliced_any => return Err(io::ErrorKind::Unsupported.into()),
                Err(e) => return Err(e),
            },
        };
        let mut burst = 0usize;
        loop {
            let n = match src
                .try_io_read(|| splice::splice(src.fd(), pipe.write_fd(), splice::CHUNK))
            {
                Ok(0) => {
                    dst.shutdown_write();
                    return Ok(());
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if !spliced_any && e.raw_os_error() == Some(splice::EINVAL) => {
                    return Err(io::ErrorKind::Unsupported.into());
                }
                Err(e) => return Err(e),
            };
            spliced_any = true;
            burst += n;
            let mut left = n;
            while left > 0 {
                match dst.try_io_write(|| splice::splice(pipe.read_fd(), dst.fd(), left)) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(m) => left -= m,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => dst.writable().await?,
                    Err(e) => return Err(e),
                }
            }
            count.fetch_add(n as u64, Ordering::Relaxed);
            activity.touch();
        }
        if burst >= splice::BULK {
            pipe.grow();
            kept = Some(pipe);
        }
    }
}

async fn pump_copy<R: RawIo, W: RawIo>(
    src: &R,
    dst: &W,
    count: &AtomicU64,
    activity: &Activity,
) -> io::Result<()> {
    loop {
        src.readable().await?;
        // Taken per burst of readiness and released when the socket runs dry.
        let mut buf = vec![0u8; RELAY_BUF];
        loop {
            match src.try_read(&mut buf) {
                Ok(0) => {
                    dst.shutdown_write();
                    return Ok(());
                }
                Ok(n) => {
                    write_all(dst, &buf[..n]).await?;
                    count.fetch_add(n as u64, Ordering::Relaxed);
                    activity.touch();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Relay between a client and an upstream until both sides close, one errors, or nothing
/// moves for `idle`. `up_start`/`down_start` are bytes already relayed (counted in).
pub(crate) async fn relay<C: RawIo, U: RawIo>(
    client: &C,
    upstream: &U,
    idle: Duration,
    already_up: u64,
) -> RelayOutcome {
    relay_with(client, upstream, idle, already_up, true).await
}

async fn relay_with<C: RawIo, U: RawIo>(
    client: &C,
    upstream: &U,
    idle: Duration,
    already_up: u64,
    zero_copy: bool,
) -> RelayOutcome {
    let up = AtomicU64::new(already_up);
    let down = AtomicU64::new(0);
    let activity = Arc::new(Activity {
        start: Instant::now(),
        last_ms: AtomicU64::new(0),
    });
    let transfer = async {
        tokio::try_join!(
            pump(client, upstream, &up, &activity, zero_copy),
            pump(upstream, client, &down, &activity, zero_copy),
        )
    };
    let watchdog = async {
        loop {
            let quiet = activity.idle_for();
            if quiet >= idle {
                return;
            }
            tokio::time::sleep(idle - quiet).await;
        }
    };
    let end = tokio::select! {
        r = transfer => if r.is_ok() { RelayEnd::Closed } else { RelayEnd::Error },
        () = watchdog => RelayEnd::Idle,
    };
    RelayOutcome {
        up: up.load(Ordering::Relaxed),
        down: down.load(Ordering::Relaxed),
        end,
    }
}

/// Send `early` (what the client sent right after its request) upstream, relay the
/// tunnel until it ends, then emit its `allow` event with the bytes moved each way.
pub(crate) async fn finish_tunnel<C: RawIo, U: RawIo>(
    shared: &crate::Shared,
    client: &C,
    upstream: &U,
    early: &[u8],
    mut event: crate::event::EgressEvent,
    started: Instant,
) {
    // Bytes the client sent right after its request belong to the tunnel.
    if write_all(upstream, early).await.is_err() {
        return;
    }
    let early = early.len() as u64;
    let out = relay(client, upstream, shared.limits.idle_timeout, early).await;
    event.decision = crate::event::Decision::Allow;
    event.code = NetCode::Allow;
    event.bytes_up = out.up;
    event.bytes_down = out.down;
    if out.end == RelayEnd::Idle {
        event.reason = "the tunnel was closed after the idle timeout".into();
    }
    shared.events.emit(event.finish(started.elapsed()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    async fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).await.unwrap();
        let (b, _) = l.accept().await.unwrap();
        (a, b)
    }

    async fn relays_both_ways_and_half_closes(zero_copy: bool) {
        // client <-> (c_near | proxy | u_near) <-> upstream
        let (mut client, c_near) = pair().await;
        let (u_near, mut upstream) = pair().await;
        let proxy = tokio::spawn(async move {
            relay_with(&c_near, &u_near, Duration::from_secs(10), 0, zero_copy).await
        });
        let up: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let down: Vec<u8> = (0..2_000_000u32).map(|i| (i % 241) as u8).collect();
        let (up2, down2) = (up.clone(), down.clone());
        let far = tokio::spawn(async move {
            let mut got = Vec::new();
            upstream.write_all(&down2).await.unwrap();
            upstream.shutdown().await.unwrap();
            upstream.read_to_end(&mut got).await.unwrap();
            got
        });
        client.write_all(&up2).await.unwrap();
        client.shutdown().await.unwrap();
        let mut got_down = Vec::new();
        client.read_to_end(&mut got_down).await.unwrap();
        assert!(got_down == down);
        assert!(far.await.unwrap() == up);
        let out = proxy.await.unwrap();
        assert_eq!(out.end, RelayEnd::Closed);
        assert_eq!((out.up, out.down), (up.len() as u64, down.len() as u64));
    }

    #[tokio::test]
    async fn splice_relay_is_exact() {
        relays_both_ways_and_half_closes(true).await;
    }

    #[tokio::test]
    async fn copy_relay_is_exact() {
        relays_both_ways_and_half_closes(false).await;
    }
}
