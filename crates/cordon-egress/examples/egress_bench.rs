//! Load tool for `bench/egress.sh`: direct loopback transfer vs through HTTP CONNECT
//! proxies (cordon, tinyproxy) and plain TCP relays (HAProxy in TCP mode, the anchor of
//! what a relay on these cores can do), side by side in one run.
//!
//! It runs its own upstreams on 127.0.0.1 (an echo server on `--echo-port`, a discard
//! sink on `--sink-port`) and measures, for each path: bulk throughput (one connection,
//! `--bytes` uploaded, median of `--runs`), time to a first echoed byte on a new
//! connection (p50/p99 over `--conns`), and the proxy's resident memory with `--idle`
//! concurrent idle tunnels open. Usage:
//!
//! ```text
//! egress_bench --echo-port P --sink-port Q [--proxy NAME=ADDR=PID]...
//!              [--relay NAME=ECHO_FRONT=SINK_FRONT=PID]... [--bytes N]
//! ```
//!
//! A relay is reached without `CONNECT`: it listens on one front address per upstream
//! (`ECHO_FRONT` relays to the echo port, `SINK_FRONT` to the sink port).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
#![allow(clippy::disallowed_methods)] // fixtures are read with std::fs

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

struct Proxy {
    name: String,
    addr: SocketAddr,
    /// For a relay: the front addresses of the echo and the sink upstreams.
    relay: Option<(SocketAddr, SocketAddr)>,
    pid: u32,
}

struct Args {
    echo_port: u16,
    sink_port: u16,
    proxies: Vec<Proxy>,
    bytes: u64,
    runs: usize,
    conns: usize,
    idle: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        echo_port: 0,
        sink_port: 0,
        proxies: Vec::new(),
        bytes: 1 << 30,
        runs: 3,
        conns: 2000,
        idle: 1000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--echo-port" => a.echo_port = value.parse().unwrap(),
            "--sink-port" => a.sink_port = value.parse().unwrap(),
            "--bytes" => a.bytes = value.parse().unwrap(),
            "--runs" => a.runs = value.parse().unwrap(),
            "--conns" => a.conns = value.parse().unwrap(),
            "--idle" => a.idle = value.parse().unwrap(),
            "--proxy" => {
                let mut parts = value.splitn(3, '=');
                let name = parts.next().unwrap().to_owned();
                let addr = parts.next().unwrap().parse().unwrap();
                let pid = parts.next().unwrap().parse().unwrap();
                a.proxies.push(Proxy {
                    name,
                    addr,
                    relay: None,
                    pid,
                });
            }
            "--relay" => {
                let parts: Vec<&str> = value.splitn(4, '=').collect();
                let echo: SocketAddr = parts[1].parse().unwrap();
                let sink: SocketAddr = parts[2].parse().unwrap();
                a.proxies.push(Proxy {
                    name: parts[0].to_owned(),
                    addr: echo,
                    relay: Some((echo, sink)),
                    pid: parts[3].parse().unwrap(),
                });
            }
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

async fn echo_server(port: u16) {
    let l = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move {
        loop {
            let (mut s, _) = l.accept().await.unwrap();
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let (mut r, mut w) = s.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
}

async fn sink_server(port: u16) {
    let l = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move {
        loop {
            let (mut s, _) = l.accept().await.unwrap();
            tokio::spawn(async move {
                // An 8-byte length, then that many bytes; the reply is the count read.
                // (No half-close: not every proxy relays one.)
                let Ok(want) = s.read_u64().await else {
                    return;
                };
                let mut buf = vec![0u8; 256 * 1024];
                let mut total = 0u64;
                while total < want {
                    match s.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => total += n as u64,
                    }
                }
                let _ = s.write_all(&total.to_be_bytes()).await;
            });
        }
    });
}

/// A stream to `target` (a loopback port), directly, through a relay's front for that
/// port, or through a CONNECT proxy.
async fn open(proxy: Option<&Proxy>, port: u16) -> TcpStream {
    match proxy {
        None => {
            let s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Some(Proxy {
            relay: Some((echo, sink)),
            ..
        }) => {
            let front = if port == ECHO_PORT.load(std::sync::atomic::Ordering::Relaxed) {
                *echo
            } else {
                *sink
            };
            let s = TcpStream::connect(front).await.unwrap();
            s.set_nodelay(true).unwrap();
            s
        }
        Some(p) => {
            let mut s = TcpStream::connect(p.addr).await.unwrap();
            s.set_nodelay(true).unwrap();
            let req =
                format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
            s.write_all(req.as_bytes()).await.unwrap();
            // Nothing follows the response until the client speaks, so whole reads are
            // safe (and do not charge the proxy for a syscall per byte).
            let mut head = Vec::with_capacity(256);
            let mut chunk = [0u8; 512];
            while !head.ends_with(b"\r\n\r\n") {
                let n = s.read(&mut chunk).await.unwrap();
                assert!(n > 0, "proxy closed during CONNECT");
                head.extend_from_slice(&chunk[..n]);
            }
            let text = String::from_utf8_lossy(&head);
            assert!(
                text.starts_with("HTTP/1.1 200") || text.starts_with("HTTP/1.0 200"),
                "CONNECT refused: {text}"
            );
            s
        }
    }
}

/// The echo upstream's port, so that a relay's front can be chosen by target port.
static ECHO_PORT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);

async fn throughput(proxy: Option<&Proxy>, port: u16, bytes: u64) -> f64 {
    let s = open(proxy, port).await;
    let (mut r, mut w) = s.into_split();
    let chunk = vec![0x5au8; 256 * 1024];
    let start = Instant::now();
    w.write_u64(bytes).await.unwrap();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        w.write_all(&chunk[..n]).await.unwrap();
        left -= n as u64;
    }
    let mut got = [0u8; 8];
    r.read_exact(&mut got).await.unwrap();
    let elapsed = start.elapsed();
    assert_eq!(u64::from_be_bytes(got), bytes, "bytes lost");
    bytes as f64 / (1024.0 * 1024.0) / elapsed.as_secs_f64()
}

async fn first_byte(proxy: Option<&Proxy>, port: u16) -> Duration {
    let start = Instant::now();
    let mut s = open(proxy, port).await;
    s.write_all(b"x").await.unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).await.unwrap();
    start.elapsed()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx].as_secs_f64() * 1e6
}

/// User + system CPU time of `pid` (all threads), in clock ticks.
fn cpu_ticks_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    // After the command name: state is field 3, utime 14 and stime 15 (1-based).
    let get = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    get(14) + get(15)
}

fn clock_ticks() -> f64 {
    // USER_HZ is 100 on Linux for every architecture cordon supports.
    100.0
}

/// Resident memory of `pid` and its descendants, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let mut pids = vec![pid];
    let mut i = 0;
    while i < pids.len() {
        let parent = pids[i];
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let stat =
                    std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<u32>().ok());
                if ppid == Some(parent) && !pids.contains(&child) {
                    pids.push(child);
                }
            }
        }
        i += 1;
    }
    pids.iter()
        .map(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status"))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

struct Row {
    cpu_s_per_gib: Option<f64>,
    name: String,
    mib_s: f64,
    p50: f64,
    p99: f64,
    rss_before: Option<u64>,
    rss_idle: Option<u64>,
}

async fn idle_memory(p: &Proxy, a: &Args) -> (u64, u64) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib(p.pid);
    let mut open_tunnels = Vec::with_capacity(a.idle);
    for _ in 0..a.idle {
        let mut s = open(Some(p), a.echo_port).await;
        s.write_all(b"x").await.unwrap();
        let mut b = [0u8; 1];
        s.read_exact(&mut b).await.unwrap();
        open_tunnels.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let with_idle = rss_kib(p.pid);
    drop(open_tunnels);
    tokio::time::sleep(Duration::from_millis(500)).await;
    (before, with_idle)
}

/// Every path is measured in turn within each round, so load from elsewhere on the
/// machine falls on all of them alike.
async fn measure_all(a: &Args) -> Vec<Row> {
    let mut paths: Vec<(String, Option<&Proxy>)> = vec![("direct".to_owned(), None)];
    paths.extend(a.proxies.iter().map(|p| (p.name.clone(), Some(p))));
    // Warm up (page cache, allocator, the proxies' runtimes).
    for (_, p) in &paths {
        throughput(*p, a.sink_port, 64 << 20).await;
        for _ in 0..50 {
            first_byte(*p, a.echo_port).await;
        }
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
    let mut cpu_ticks = vec![0u64; paths.len()];
    for _ in 0..a.runs {
        for (i, (_, p)) in paths.iter().enumerate() {
            let before = p.map_or(0, |p| cpu_ticks_of(p.pid));
            rates[i].push(throughput(*p, a.sink_port, a.bytes).await);
            cpu_ticks[i] += p.map_or(0, |p| cpu_ticks_of(p.pid)) - before;
        }
    }
    const ROUNDS: usize = 10;
    let mut lat: Vec<Vec<Duration>> = vec![Vec::new(); paths.len()];
    for _ in 0..ROUNDS {
        for (i, (_, p)) in paths.iter().enumerate() {
            for _ in 0..a.conns / ROUNDS {
                lat[i].push(first_byte(*p, a.echo_port).await);
            }
        }
    }
    let mut rows = Vec::new();
    for (i, (name, p)) in paths.iter().enumerate() {
        rates[i].sort_by(|x, y| x.total_cmp(y));
        lat[i].sort();
        let (rss_before, rss_idle) = match p {
            Some(p) => {
                let (b, i) = idle_memory(p, a).await;
                (Some(b), Some(i))
            }
            None => (None, None),
        };
        let gib = (a.bytes * a.runs as u64) as f64 / f64::from(1u32 << 30);
        rows.push(Row {
            cpu_s_per_gib: p.map(|_| cpu_ticks[i] as f64 / clock_ticks() / gib),
            name: name.clone(),
            mib_s: rates[i][rates[i].len() / 2],
            p50: percentile(&lat[i], 0.5),
            p99: percentile(&lat[i], 0.99),
            rss_before,
            rss_idle,
        });
    }
    rows
}

fn main() {
    let a = parse_args();
    ECHO_PORT.store(a.echo_port, std::sync::atomic::Ordering::Relaxed);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        echo_server(a.echo_port).await;
        sink_server(a.sink_port).await;
        let rows = measure_all(&a).await;
        let direct = (rows[0].mib_s, rows[0].p50, rows[0].p99);
        println!(
            "\n{} MiB upload x {} runs (median), {} sequential new connections, {} idle tunnels; paths interleaved\n",
            a.bytes >> 20,
            a.runs,
            a.conns,
            a.idle
        );
        println!(
            "| path | throughput MiB/s | vs direct | proxy CPU s/GiB | first byte p50 µs | p99 µs | added p50 µs | added p99 µs | RSS before KiB | RSS with idle tunnels KiB | per tunnel KiB |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for r in &rows {
            let mem = match (r.rss_before, r.rss_idle) {
                (Some(b), Some(i)) => format!(
                    "{b} | {i} | {:.1}",
                    (i.saturating_sub(b)) as f64 / a.idle as f64
                ),
                _ => "– | – | –".to_owned(),
            };
            let cpu = r.cpu_s_per_gib.map_or("–".to_owned(), |c| format!("{c:.2}"));
            println!(
                "| {} | {:.0} | {:.0} % | {cpu} | {:.0} | {:.0} | {:+.0} | {:+.0} | {mem} |",
                r.name,
                r.mib_s,
                100.0 * r.mib_s / direct.0,
                r.p50,
                r.p99,
                r.p50 - direct.1,
                r.p99 - direct.2,
            );
        }
    });
}
