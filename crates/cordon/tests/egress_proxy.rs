#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon proxy` through the real binary: flags become policy, refusals are explicit,
//! `--verbose` prints events, SIGTERM ends it cleanly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::bin;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

struct Proxy {
    child: Child,
    addr: SocketAddr,
    stderr: BufReader<ChildStderr>,
}

// The child is waited for in `Proxy::stop`.
#[allow(clippy::zombie_processes)]
fn spawn(args: &[&str]) -> Proxy {
    let mut child = Command::new(bin())
        .arg("proxy")
        .args(["--listen", "127.0.0.1:0", "--verbose", "--isolated"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "proxy exited early"
        );
        if let Some(addr) = line.trim().strip_prefix("cordon proxy: listening on ") {
            let addr = addr.parse().unwrap();
            return Proxy {
                child,
                addr,
                stderr,
            };
        }
    }
}

impl Proxy {
    fn connect(&self, target: &str) -> (String, TcpStream) {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(s.read(&mut byte).unwrap(), 1, "connection closed early");
            head.push(byte[0]);
        }
        (String::from_utf8(head).unwrap().to_ascii_lowercase(), s)
    }

    /// Send SIGTERM, wait, return the exit status and the rest of stderr.
    fn stop(mut self) -> (i32, String) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        (code, rest)
    }
}

#[test]
fn refuses_and_allows_by_flags_and_reports_events() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = upstream.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in upstream.incoming() {
            let mut s = s.unwrap();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    let proxy = spawn(&[
        "--allow",
        &format!("127.0.0.1:{port}"),
        "--allow",
        "*.example.test",
        "--deny",
        "bad.example.test",
        "--allow-private",
        "127.0.0.1/32",
    ]);

    let (head, mut s) = proxy.connect(&format!("127.0.0.1:{port}"));
    assert!(head.starts_with("http/1.1 200"), "{head}");
    s.write_all(b"through the proxy").unwrap();
    let mut got = [0u8; 17];
    s.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"through the proxy");
    drop(s);

    let (head, _) = proxy.connect(&format!("127.0.0.2:{port}"));
    assert!(head.starts_with("http/1.1 403"), "{head}");
    assert!(head.contains("x-cordon-block: loopback"), "{head}");
    let (head, _) = proxy.connect("example.test:443");
    assert!(head.contains("x-cordon-block: not-allowed"), "{head}");
    let (head, _) = proxy.connect("bad.example.test:443");
    assert!(head.contains("x-cordon-block: denied-host"), "{head}");

    std::thread::sleep(Duration::from_millis(200));
    let (code, stderr) = proxy.stop();
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<serde_json::Value> = stderr
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let codes: Vec<&str> = events.iter().map(|e| e["code"].as_str().unwrap()).collect();
    for want in ["allow", "loopback", "not-allowed", "denied-host"] {
        assert!(codes.contains(&want), "{want} missing: {stderr}");
    }
    let allowed = events.iter().find(|e| e["code"] == "allow").unwrap();
    assert_eq!(allowed["bytes_up"], 17);
    assert_eq!(allowed["address"], format!("127.0.0.1:{port}"));
}

#[test]
fn the_network_table_of_a_config_file_applies() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("policy.toml");
    std::fs::write(
        &cfg,
        "[network]\nallow = [\"*.cfg.test\"]\ndeny = [\"bad.cfg.test\"]\nallow_private = [\"10.9.0.0/16\"]\n",
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap();
    let proxy = spawn(&["--config", cfg, "--deny", "flag.cfg.test"]);
    // Allowed by the file: judged, then not resolvable here (`.test` names never are;
    // a resolver that does not answer gives resolve-timeout instead).
    let (head, _) = proxy.connect("ok.cfg.test:443");
    assert!(head.contains("x-cordon-block: resolve-"), "{head}");
    let (head, _) = proxy.connect("bad.cfg.test:443");
    assert!(head.contains("x-cordon-block: denied-host"), "{head}");
    let (head, _) = proxy.connect("flag.cfg.test:443");
    assert!(head.contains("x-cordon-block: denied-host"), "{head}");
    let (head, _) = proxy.connect("cfg.test:443");
    assert!(head.contains("x-cordon-block: not-allowed"), "{head}");
    let (code, _) = proxy.stop();
    assert_eq!(code, 0);

    std::fs::write(
        dir.path().join("bad.toml"),
        "[network]\nallow = [\"bad..host\"]\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["proxy", "--isolated", "--config"])
        .arg(dir.path().join("bad.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bad.toml"), "{err}");
}

#[test]
fn bad_flags_exit_2_with_one_sentence() {
    for args in [
        &["--allow", "bad..example"][..],
        &["--allow", "https://example.com"],
        &["--allow-private", "10.0.0.0/33"],
        &["--allow", "ok.example", "--max-connections", "0"],
    ] {
        let out = Command::new(bin())
            .args(["proxy", "--isolated"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("cordon: "), "{err}");
    }
}

#[test]
fn unix_socket_mode_listens_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("p.sock");
    let mut child = Command::new(bin())
        .args(["proxy", "--isolated", "--unix"])
        .arg(&sock)
        .args(["--allow", "example.test"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("listening on unix:"), "{line}");
    let mut s = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    s.write_all(b"CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
    assert!(head.contains("x-cordon-block: private"), "{head}");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(!sock.exists());
}
