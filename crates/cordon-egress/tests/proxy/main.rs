//! The egress proxy against real upstream servers on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use cordon_egress::{
    Decision, EgressProxy, Limits, ListenAddr, NetCode, Protocol, ProxyConfig, ResolveFuture,
    Resolver, StaticResolver,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod allowed;
mod refusals;
mod robustness;
mod socks;
