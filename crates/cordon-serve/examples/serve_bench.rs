#![allow(clippy::disallowed_methods)] // a development tool: writes its own output files with std::fs
//! The client of `bench/serve.sh`: latency and throughput of `cordon serve` over its
//! socket with 1 and 8 clients, next to spawning `cordon check` per call, for a file tool
//! (Read inside the workspace) and a Bash call, with the socket round trip to a process
//! that only echoes (the kernel's floor) and of a frame the service answers at once. Prints a
//! Markdown table.
//!
//! ```text
//! serve_bench CORDON SOCKET WORKSPACE [CALLS_SERVE] [CALLS_SPAWN]
//! ```
//! `CORDON` is the binary `cordon check` is spawned from (with this process's
//! environment, `--isolated`, and `--config $CORDON_CHECK_CONFIG` when set); `SOCKET` a
//! running `cordon serve --socket` with the same policy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a bench: fail loudly

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Row {
    case: String,
    clients: usize,
    p50: Duration,
    p99: Duration,
    per_sec: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Run `calls` calls on each of `clients` threads; `one` makes one call and returns
/// its decision.
fn measure(
    clients: usize,
    calls: usize,
    want: &str,
    make: impl Fn() -> Box<dyn FnMut() -> String + Send> + Sync,
) -> (Vec<Duration>, Duration) {
    let start = Instant::now();
    let lat: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let mut one = make();
                s.spawn(move || {
                    let mut v = Vec::with_capacity(calls);
                    for _ in 0..calls {
                        let t = Instant::now();
                        let got = one();
                        v.push(t.elapsed());
                        assert_eq!(got, want, "unexpected decision");
                    }
                    v
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    (lat, start.elapsed())
}

fn row(case: &str, clients: usize, (mut lat, wall): (Vec<Duration>, Duration)) -> Row {
    lat.sort();
    Row {
        case: case.into(),
        clients,
        p50: percentile(&lat, 0.5),
        p99: percentile(&lat, 0.99),
        per_sec: lat.len() as f64 / wall.as_secs_f64(),
    }
}

fn serve_client(
    socket: PathBuf,
    method: &'static str,
    request: Value,
) -> Box<dyn FnMut() -> String + Send> {
    let stream = UnixStream::connect(&socket).expect("connect to cordon serve");
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut id = 0u64;
    let mut line = String::new();
    Box::new(move || {
        id += 1;
        let frame = json!({"jsonrpc":"2.0","id":id,"method":method,"params":request});
        let mut bytes = frame.to_string().into_bytes();
        bytes.push(b'\n');
        writer.write_all(&bytes).unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        v["result"]["decision"]
            .as_str()
            .unwrap_or("error")
            .to_string()
    })
}

/// The kernel's own floor: `serve_bench echo PATH`, a second process that writes every
/// line it reads on a connection straight back. Two blocked processes, like a client and
/// the service, with no work between the read and the write.
fn echo_server(path: &Path) {
    let listener = std::os::unix::net::UnixListener::bind(path).expect("bind the echo socket");
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut writer = stream;
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if writer.write_all(&line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }
}

/// Start [`echo_server`] in a child process on `path`; the child is killed when the
/// returned guard is dropped.
struct Echo(std::process::Child);

impl Echo {
    fn start(path: &Path) -> Echo {
        let _ = std::fs::remove_file(path);
        let echo = Echo(
            Command::new(std::env::current_exe().unwrap())
                .arg("echo")
                .arg(path)
                .spawn()
                .expect("start the echo process"),
        );
        for _ in 0..200 {
            if UnixStream::connect(path).is_ok() {
                return echo;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the echo process did not listen on {}", path.display());
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn echo_client(path: &Path, request: &Value) -> Box<dyn FnMut() -> String + Send> {
    let stream = UnixStream::connect(path).expect("connect to the echo process");
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    let mut bytes = json!({"jsonrpc":"2.0","id":1,"method":"check","params":request})
        .to_string()
        .into_bytes();
    bytes.push(b'\n');
    let mut line = Vec::new();
    Box::new(move || {
        writer.write_all(&bytes).unwrap();
        line.clear();
        reader.read_until(b'\n', &mut line).unwrap();
        if line == bytes { "echo" } else { "error" }.to_string()
    })
}

fn spawn_client(cordon: PathBuf, ws: PathBuf, request: Value) -> Box<dyn FnMut() -> String + Send> {
    let text = request.to_string();
    Box::new(move || {
        let mut cmd = Command::new(&cordon);
        cmd.args(["check", "--isolated", "--workspace"]).arg(&ws);
        if let Some(config) = std::env::var_os("CORDON_CHECK_CONFIG") {
            cmd.arg("--config").arg(config);
        }
        let out = cmd.arg(&text).stdin(Stdio::null()).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        v["decision"].as_str().unwrap_or("error").to_string()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "echo" {
        echo_server(Path::new(&args[2]));
        return;
    }
    if args.len() < 4 {
        eprintln!("usage: serve_bench CORDON SOCKET WORKSPACE [CALLS_SERVE] [CALLS_SPAWN]");
        std::process::exit(2);
    }
    let cordon = PathBuf::from(&args[1]);
    let socket = PathBuf::from(&args[2]);
    let ws = PathBuf::from(&args[3]);
    let calls_serve: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let calls_spawn: usize = args.get(5).and_then(|a| a.parse().ok()).unwrap_or(200);
    let read = json!({"tool":"Read","input":{"file_path": ws.join("src/main.rs")},"cwd": ws});
    let bash = json!({"tool":"Bash","input":{"command":"cargo test --all"},"cwd": ws});
    // `SERVE_BENCH_CASE=Read` (or `Bash`) keeps one case (for profiling the server).
    let only = std::env::var("SERVE_BENCH_CASE").unwrap_or_default();
    let cases: Vec<(&str, &Value)> = [
        ("Read (file tool)", &read),
        ("Bash `cargo test --all`", &bash),
    ]
    .into_iter()
    .filter(|(name, _)| name.starts_with(only.as_str()))
    .collect();

    // Warm up both paths (page cache, the server's first load of each rule).
    for (_, req) in &cases {
        let mut c = serve_client(socket.clone(), "check", (*req).clone());
        for _ in 0..200 {
            c();
        }
    }
    let mut rows = Vec::new();
    // Below any service: a socket round trip to a process that does nothing else.
    let echo_path = socket.with_file_name("bench-echo.sock");
    {
        let _echo = Echo::start(&echo_path);
        for clients in [1, 8] {
            let r = measure(clients, calls_serve / clients, "echo", || {
                echo_client(&echo_path, &read)
            });
            rows.push(row("kernel: echo by another process (floor)", clients, r));
        }
    }
    let _ = std::fs::remove_file(&echo_path);
    // The service's floor: a frame the server answers at once (an unknown method), so the
    // rows below can be read as the round trip plus the decision.
    for clients in [1, 8] {
        let r = measure(clients, calls_serve / clients, "error", || {
            serve_client(socket.clone(), "bench.nop", json!({}))
        });
        rows.push(row("serve: unknown method (round trip)", clients, r));
    }
    for (name, req) in &cases {
        for clients in [1, 8] {
            let per = calls_serve / clients;
            let r = measure(clients, per, "allow", || {
                serve_client(socket.clone(), "check", (*req).clone())
            });
            rows.push(row(&format!("serve: {name}"), clients, r));
        }
        // `CALLS_SPAWN` 0 leaves the spawn rows out (for profiling the server alone).
        for clients in [1, 8].into_iter().filter(|_| calls_spawn > 0) {
            let per = (calls_spawn / clients).max(1);
            let r = measure(clients, per, "allow", || {
                spawn_client(cordon.clone(), ws.clone(), (*req).clone())
            });
            rows.push(row(&format!("spawn `cordon check`: {name}"), clients, r));
        }
    }
    print_table(&rows, &cordon, &socket);
}

fn print_table(rows: &[Row], cordon: &Path, socket: &Path) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("<!-- {} / {} -->", cordon.display(), socket.display());
    println!("| case | clients | p50 | p99 | calls/s | p50 × serve |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let name = r.case.split(": ").nth(1).unwrap_or("");
        let ratio = rows
            .iter()
            .find(|b| b.case == format!("serve: {name}") && b.clients == r.clients)
            .map_or_else(
                || "–".to_string(),
                |b| format!("{:.1}", us(r.p50) / us(b.p50)),
            );
        println!(
            "| {} | {} | {:.1} µs | {:.1} µs | {:.0} | {ratio} |",
            r.case,
            r.clients,
            us(r.p50),
            us(r.p99),
            r.per_sec,
        );
    }
}
