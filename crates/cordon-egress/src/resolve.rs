//! Name resolution, done by the proxy itself so that the addresses it checks are the
//! addresses it connects to.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

/// The future a [`Resolver`] returns.
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Turns a (normalized, ASCII) host name into addresses. The proxy calls it exactly once
/// per request and connects only to addresses from that answer.
pub trait Resolver: Send + Sync + 'static {
    /// Resolve `host`; `port` is passed for resolvers that need a service context.
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> ResolveFuture<'a>;
}

/// The system resolver (`getaddrinfo` via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> ResolveFuture<'a> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host, port)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A fixed table of names to addresses; unknown names fail to resolve. For tests and for
/// pinning names in a locked-down setup.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> StaticResolver {
        StaticResolver::default()
    }

    /// Map `host` (ASCII, lowercase, no trailing dot) to `addrs`.
    pub fn with(mut self, host: &str, addrs: &[IpAddr]) -> StaticResolver {
        self.table.insert(host.to_owned(), addrs.to_vec());
        self
    }
}

impl Resolver for StaticResolver {
    fn resolve<'a>(&'a self, host: &'a str, _port: u16) -> ResolveFuture<'a> {
        let answer = self.table.get(host).cloned().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"))
        });
        Box::pin(async move { answer })
    }
}
