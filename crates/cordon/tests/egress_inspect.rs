#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! `cordon exec` with method and path rules, through the real binary and a real HTTPS
//! upstream on the host's loopback: the proxy inspects only the ruled host, with a CA made
//! for the run whose certificate (never its key) the sandbox sees; git's smart HTTP
//! fetches and its pushes are refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

mod common;

use common::{World, text};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// An HTTPS server that answers every GET and POST with `METHOD PATH`.
const HTTPS_PY: &str = r#"
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n: self.rfile.read(n)
        auth = self.headers.get("Authorization") or ""
        key = self.headers.get("X-Api-Key") or ""
        if len(sys.argv) > 3:
            with open(sys.argv[3], "a") as log: log.write(f"{self.command} {self.path} auth={auth} key={key}\n")
        body = f"{self.command} {self.path} auth={auth} key={key}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_POST = do_GET
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", text(&o).1);
}

/// A test CA and a leaf for 127.0.0.1 signed by it, made with the openssl CLI; returns
/// the CA certificate's path.
fn test_pki(dir: &Path) -> std::path::PathBuf {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=cordon test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "leaf.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    dir.join("ca.pem")
}

fn https_server(dir: &Path) -> Server {
    std::fs::write(dir.join("srv.py"), HTTPS_PY).unwrap();
    let mut child = Command::new("python3")
        .arg(dir.join("srv.py"))
        .arg(dir.join("leaf.pem"))
        .arg(dir.join("leaf.key"))
        .arg(dir.join("seen.log"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap();
    Server { child, port }
}

#[test]
fn a_ruled_https_host_is_inspected_with_a_run_ca() {
    need_sandbox!("a_ruled_https_host_is_inspected_with_a_run_ca");
    let w = World::new();
    let pki = tempfile::tempdir().unwrap();
    let ca = test_pki(pki.path());
    let srv = https_server(pki.path());
    let port = srv.port;
    let mut config = std::fs::read_to_string(&w.config).unwrap();
    config.push_str(&format!(
        "\n[network]\nallow = [{{ host = \"127.0.0.1:{port}\", methods = [\"GET\"], paths = [\"/ok\"] }}]\n"
    ));
    std::fs::write(&w.config, config).unwrap();
    let report = w.root.join("report.json");
    let url = format!("https://127.0.0.1:{port}");
    let body = format!(
        r#"
curl -sS --max-time 10 {url}/ok/x; echo
curl -s --max-time 10 -o /dev/null -w 'post=%{{http_code}}\n' -X POST {url}/ok/x
curl -s --max-time 10 -o /dev/null -w 'other=%{{http_code}}\n' {url}/other
echo "bundle=$SSL_CERT_FILE git=$GIT_SSL_CAINFO node=$NODE_EXTRA_CA_CERTS"
grep -c 'BEGIN CERTIFICATE' "$SSL_CERT_FILE"
grep -l 'PRIVATE KEY' "$SSL_CERT_FILE" || echo no-key-in-bundle
ls /run/cordon
"#
    );
    let o = w.run(
        &body,
        &[
            "--allow-private",
            "127.0.0.0/8",
            "--upstream-ca",
            ca.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let (out, err) = text(&o);
    assert!(out.contains("GET /ok/x"), "{out}\n{err}");
    assert!(out.contains("post=403"), "{out}\n{err}");
    assert!(out.contains("other=403"), "{out}\n{err}");
    assert!(
        out.contains("bundle=/run/cordon/ca-bundle.pem git=/run/cordon/ca-bundle.pem node=/run/cordon/ca-bundle.pem"),
        "{out}\n{err}"
    );
    assert!(out.contains("no-key-in-bundle"), "{out}\n{err}");
    // Only the socket, the bundle and ssh's files are there: nothing of the CA's key.
    let listing: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("no-key-in-bundle"))
        .skip(1)
        .collect();
    assert_eq!(listing, ["ca-bundle.pem", "egress.sock", "ssh"], "{out}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let blocked = r["blocked"].as_array().unwrap();
    assert!(
        blocked.iter().any(|b| b["kind"] == "request"
            && b["target"] == format!("POST 127.0.0.1:{port}/ok/x")
            && b["detail"].as_str().unwrap().contains("method-not-allowed")),
        "{r}"
    );
}

#[test]
fn every_run_gets_its_own_ca() {
    need_sandbox!("every_run_gets_its_own_ca");
    let w = World::new();
    let mut config = std::fs::read_to_string(&w.config).unwrap();
    config.push_str("\n[network]\nallow = [{ host = \"example.com\", read_only = true }]\n");
    std::fs::write(&w.config, config).unwrap();
    let run = || {
        let o = w.run("tail -n 20 \"$SSL_CERT_FILE\"", &[]);
        let (out, err) = text(&o);
        assert!(
            o.status.success() && out.contains("END CERTIFICATE"),
            "{out}\n{err}"
        );
        out
    };
    assert_ne!(run(), run(), "two runs showed the same CA");
}

/// git's `http-backend` CGI served over plain HTTP (git's smart-HTTP protocol as its
/// `gitprotocol-http` and `git-http-backend` documentation describe it).
const GIT_CGI_PY: &str = r#"
import http.server, os, subprocess, sys
root = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def run(self):
        path, _, query = self.path.partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        env = {"GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
               "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_ADDR": "127.0.0.1",
               "REMOTE_USER": "tester", "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "PATH": os.environ["PATH"]}
        for h, e in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(h): env[e] = self.headers[h]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, rest = out.partition(sep)
        status, headers = 200, []
        for line in head.decode().splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status": status = int(v.split()[0])
            elif k: headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers: self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)
    do_GET = do_POST = run
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", text(&o).1);
    text(&o).0
}

#[test]
fn git_over_smart_http_fetches_and_push_is_refused_unless_allowed() {
    need_sandbox!("git_over_smart_http_fetches_and_push_is_refused_unless_allowed");
    let srv_dir = tempfile::tempdir().unwrap();
    let root = srv_dir.path();
    git(root, &["init", "-q", "--bare", "-b", "main", "repo.git"]);
    git(
        &root.join("repo.git"),
        &["config", "http.receivepack", "true"],
    );
    git(root, &["init", "-q", "-b", "main", "seed"]);
    std::fs::write(root.join("seed/a.txt"), "a\n").unwrap();
    git(&root.join("seed"), &["add", "a.txt"]);
    git(&root.join("seed"), &["commit", "-q", "-m", "seed"]);
    git(&root.join("seed"), &["push", "-q", "../repo.git", "main"]);
    let before = git(&root.join("repo.git"), &["rev-parse", "main"]);
    std::fs::write(root.join("cgi.py"), GIT_CGI_PY).unwrap();
    let mut child = Command::new("python3")
        .arg(root.join("cgi.py"))
        .arg(root)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let srv = Server {
        port: line.trim().parse().unwrap(),
        child,
    };
    let port = srv.port;
    let script = format!(
        r#"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
rm -rf clone
git clone -q http://127.0.0.1:{port}/repo.git clone && echo CLONED
cd clone && echo b > b.txt && git add b.txt && git commit -qm b
git push -q origin main 2>&1 && echo PUSHED || echo PUSH-FAILED
"#
    );
    let run = |rule: &str| {
        let w = World::new();
        let mut config = std::fs::read_to_string(&w.config).unwrap();
        config.push_str(&format!("\n[network]\nallow = [{rule}]\n"));
        std::fs::write(&w.config, config).unwrap();
        let o = w.run(&script, &["--allow-private", "127.0.0.0/8"]);
        text(&o)
    };
    let read_only =
        format!("{{ host = \"127.0.0.1:{port}\", read_only = true, paths = [\"/repo\"] }}");
    let (out, err) = run(&read_only);
    assert!(out.contains("CLONED"), "{out}\n{err}");
    assert!(
        out.contains("PUSH-FAILED") && out.contains("403"),
        "{out}\n{err}"
    );
    assert_eq!(git(&root.join("repo.git"), &["rev-parse", "main"]), before);
    // The same push, with the rule saying so, lands: the refusal above was the rule's.
    let push = format!(
        "{{ host = \"127.0.0.1:{port}\", read_only = true, git_push = true, paths = [\"/repo\"] }}"
    );
    let (out, err) = run(&push);
    assert!(out.contains("PUSHED"), "{out}\n{err}");
    assert_ne!(git(&root.join("repo.git"), &["rev-parse", "main"]), before);
}

const REAL: &str = "ghp_R3alSecretValue0123456789abcdefABCD";

#[test]
fn a_credential_stays_outside_and_is_added_by_the_proxy() {
    need_sandbox!("a_credential_stays_outside_and_is_added_by_the_proxy");
    let w = World::new();
    let pki = tempfile::tempdir().unwrap();
    let ca = test_pki(pki.path());
    let srv = https_server(pki.path());
    let port = srv.port;
    w.script(&format!(
        r#"
echo "var=$GH_TOKEN"
curl -sS --max-time 10 -H "Authorization: Bearer $GH_TOKEN" https://127.0.0.1:{port}/api; echo
(env; cat /proc/*/environ /proc/*/cmdline) > seen-procs.txt 2>/dev/null
find /run /tmp "$HOME" -type f -exec cat {{}} + > seen-files.txt 2>/dev/null
echo searched
"#
    ));
    let o = w
        .command(&[
            "--credential",
            &format!("GH_TOKEN:127.0.0.1:{port}"),
            "--allow-private",
            "127.0.0.0/8",
            "--upstream-ca",
            ca.to_str().unwrap(),
        ])
        .env("GH_TOKEN", REAL)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    let placeholder = out
        .lines()
        .find_map(|l| l.strip_prefix("var="))
        .unwrap_or_else(|| panic!("{out}\n{err}"))
        .to_string();
    assert!(
        placeholder.starts_with("ghp_") && placeholder.len() == REAL.len(),
        "{out}"
    );
    assert_ne!(placeholder, REAL);
    // Upstream got the real value; the sandbox saw its echo redacted.
    let seen = std::fs::read_to_string(pki.path().join("seen.log")).unwrap();
    assert!(
        seen.contains(&format!("GET /api auth=Bearer {REAL}")),
        "{seen}"
    );
    assert!(
        out.contains(&format!("GET /api auth=Bearer {placeholder}")),
        "{out}\n{err}"
    );
    assert!(
        !out.contains(REAL),
        "the real value reached the sandbox: {out}"
    );
    assert!(out.contains("searched"), "{out}\n{err}");
    for dump in ["seen-procs.txt", "seen-files.txt"] {
        let bytes = std::fs::read(w.ws.join(dump))
            .unwrap_or_else(|e| panic!("{dump}: {e} (exit {:?})\n{out}\n{err}", o.status));
        let text = String::from_utf8_lossy(&bytes);
        if dump == "seen-procs.txt" {
            assert!(
                text.contains("GH_TOKEN=ghp_"),
                "{dump} holds no environment"
            );
        }
        assert!(!text.contains(REAL), "the real value is inside, in {dump}");
    }
    assert!(!err.contains(REAL), "{err}");
}

const FILE_REAL: &str = "sk-proj-FileHeldValue0123456789abcdefXYZ";

// A `[[credential]]` table read from a private file and sent as a named header; a
// second and a third variable holding the value (one exactly, one inside a longer
// text) stay outside, which is the finding that the named variable alone was scrubbed.
#[test]
fn a_config_credential_from_a_file_goes_in_its_header_and_no_copy_enters() {
    need_sandbox!("a_config_credential_from_a_file_goes_in_its_header_and_no_copy_enters");
    use std::os::unix::fs::PermissionsExt;
    let w = World::new();
    let pki = tempfile::tempdir().unwrap();
    let ca = test_pki(pki.path());
    let srv = https_server(pki.path());
    let port = srv.port;
    let token = w.root.join("api-token");
    std::fs::write(&token, format!("{FILE_REAL}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut config = std::fs::read_to_string(&w.config).unwrap();
    config.push_str(&format!(
        r#"
[sandbox]
env_allow = ["APP_AUTH", "WITH_IT"]

[[credential]]
name = "api"
source = {{ file = "{}" }}
apply = {{ header = "X-Api-Key" }}
env = "API_KEY"
destinations = [{{ host = "127.0.0.1:{port}", paths = ["/api"], methods = ["GET"] }}]
"#,
        token.display()
    ));
    std::fs::write(&w.config, config).unwrap();
    w.script(&format!(
        r#"
echo "var=$API_KEY app=$APP_AUTH with=$WITH_IT"
curl -sS --max-time 10 -H "X-Api-Key: $API_KEY" https://127.0.0.1:{port}/api/x; echo
curl -s --max-time 10 -o /dev/null -w 'other=%{{http_code}}\n' -H "X-Api-Key: $API_KEY" https://127.0.0.1:{port}/other
(env; cat /proc/*/environ /proc/*/cmdline) > seen-procs.txt 2>/dev/null
echo searched
"#
    ));
    let report = w.root.join("report.json");
    let args = [
        "--allow-private",
        "127.0.0.0/8",
        "--upstream-ca",
        ca.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    let o = w
        .command(&args)
        .env("APP_AUTH", FILE_REAL)
        .env("WITH_IT", format!("prefix-{FILE_REAL}-suffix"))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    let placeholder = out
        .lines()
        .find_map(|l| l.strip_prefix("var="))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("{out}\n{err}"))
        .to_string();
    assert!(
        placeholder.starts_with("sk-proj-") && placeholder.len() == FILE_REAL.len(),
        "{out}"
    );
    assert!(
        out.contains("app= with="),
        "a variable with the value entered: {out}"
    );
    let seen = std::fs::read_to_string(pki.path().join("seen.log")).unwrap();
    assert!(
        seen.contains(&format!("GET /api/x auth= key={FILE_REAL}")),
        "{seen}"
    );
    // The echo came back with the value redacted.
    assert!(
        out.contains(&format!("GET /api/x auth= key={placeholder}")),
        "{out}\n{err}"
    );
    // Outside its paths the placeholder is a leak, refused before it leaves.
    assert!(out.contains("other=403"), "{out}\n{err}");
    assert!(!seen.contains("/other"), "{seen}");
    assert!(out.contains("searched"), "{out}\n{err}");
    let procs = std::fs::read(w.ws.join("seen-procs.txt")).unwrap();
    let procs = String::from_utf8_lossy(&procs);
    assert!(procs.contains("API_KEY=sk-proj-"), "no environment seen");
    assert!(!procs.contains(FILE_REAL), "the real value is inside");
    assert!(
        !out.contains(FILE_REAL) && !err.contains(FILE_REAL),
        "{out}\n{err}"
    );
    // The report names the credential, host, method and path of the injection and of
    // the refused leak, never the value.
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(!written.contains(FILE_REAL), "the report holds the value");
    let r: serde_json::Value = serde_json::from_str(&written).unwrap();
    let egress = r["egress"].as_array().unwrap();
    let named = |path: &str| {
        egress
            .iter()
            .find(|e| e["path"] == path && e["credential"] == "api")
            .unwrap_or_else(|| panic!("no event for {path}: {r}"))
    };
    assert_eq!(named("/api/x")["decision"], "allow");
    assert_eq!(named("/api/x")["method"], "GET");
    assert_eq!(named("/other")["code"], "credential-leak");
    assert_eq!(named("/other")["host"], "127.0.0.1");

    // The same file readable by others is refused, with a sentence saying what to do.
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = w.command(&args).output().unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
    assert!(
        err.contains("credential api") && err.contains("chmod 600"),
        "{err}"
    );
}

#[test]
fn the_real_value_in_the_commands_arguments_is_refused() {
    need_sandbox!("the_real_value_in_the_commands_arguments_is_refused");
    let w = World::new();
    let o = Command::new(common::bin())
        .args(["exec", "--isolated", "--config"])
        .arg(&w.config)
        .arg("--workspace")
        .arg(&w.ws)
        .args(["--credential", "GH_TOKEN:api.github.com", "--", "echo"])
        .arg(format!("token={REAL}"))
        .current_dir(&w.ws)
        .env_clear()
        .env("HOME", &w.home)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("GH_TOKEN", REAL)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(125), "{out}\n{err}");
    assert!(!out.contains(REAL), "{out}");
    assert!(err.contains("arguments hold the real value"), "{err}");
}

// The fallback tier mounts nothing, so the bundle is not at /run/cordon: the variables
// name it where it is, and Landlock lets it be read there.
#[test]
fn the_fallback_tier_sees_the_roots_bundle_too() {
    if !common::landlock_tcp_or_skip("the_fallback_tier_sees_the_roots_bundle_too") {
        return;
    }
    let w = World::new();
    // A wrapper refuses user namespaces: cordon falls back to Landlock and seccomp, on
    // this host's own network.
    let policy = format!(
        "{}\n[network]\nallow = [{{ host = \"example.com\", read_only = true }}]\n",
        common::ALLOW_ALL
    );
    std::fs::write(&w.config, policy).unwrap();
    w.script(
        "echo \"bundle=$SSL_CERT_FILE git=$GIT_SSL_CAINFO\"\necho \"certs=$(grep -c 'BEGIN CERTIFICATE' \"$SSL_CERT_FILE\")\"",
    );
    let o = common::without_user_namespaces(&w.root, &w.command(&["--require", "any"]))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(err.contains("fallback tier"), "{out}\n{err}");
    assert_eq!(o.status.code(), Some(0), "{out}\n{err}");
    let bundle = out
        .lines()
        .find_map(|l| l.strip_prefix("bundle="))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("{out}\n{err}"));
    assert_ne!(bundle, "/run/cordon/ca-bundle.pem", "{out}");
    assert!(bundle.ends_with("/ca-bundle.pem"), "{out}");
    assert!(out.contains(&format!("git={bundle}")), "{out}");
    let certs: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("certs="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        certs >= 1,
        "the bundle could not be read in the fallback tier: {out}\n{err}"
    );
}
