#![allow(clippy::disallowed_methods)] // fixtures are built with std::fs
//! What the MCP gateway's process tests share (`mcp_gateway.rs`, `mcp_hostile.rs`): the
//! pinned programs of `scripts/install-test-deps.sh` (node, server-everything, the
//! TypeScript SDK, the Python SDK in a venv), and a temporary workspace, HOME, store,
//! audit log and policy with the gateway's argv over them.
//!
//! The tools are found in `.test-deps/mcp` of the checkout (or `CORDON_MCP_TEST_DEPS`).
//! Without them the tests skip with a reason, except in CI (`CI=true` or
//! `CORDON_REQUIRE_SANDBOX_TESTS=1`), where a missing tool is a failure.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The programs the MCP tests run.
pub struct Deps {
    /// The venv's python, with the `mcp` SDK.
    pub python: PathBuf,
    /// server-everything's entry point.
    pub everything: PathBuf,
    /// node.
    pub node: PathBuf,
    /// The `node_modules` holding the TypeScript SDK.
    pub node_modules: PathBuf,
}

/// cordon-mcp's fixtures (the Python client, the probe server).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cordon-mcp/tests/fixtures")
}

/// The MCP test programs, or `None` (a skip, or a failure in CI) when missing.
pub fn deps(test: &str) -> Option<Deps> {
    let base = std::env::var_os("CORDON_MCP_TEST_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-deps/mcp"));
    let d = Deps {
        python: base.join("venv/bin/python"),
        everything: base.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        node: ["/usr/bin/node", "/usr/local/bin/node"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .unwrap_or_else(|| PathBuf::from("node")),
        node_modules: base.join("node_modules"),
    };
    let sdk = d
        .node_modules
        .join("@modelcontextprotocol/sdk/package.json");
    let missing: Vec<String> = [&d.python, &d.everything, &d.node, &sdk]
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if missing.is_empty() {
        return Some(d);
    }
    let ci = std::env::var_os("CI").is_some_and(|v| v == "true")
        || std::env::var_os("CORDON_REQUIRE_SANDBOX_TESTS").is_some_and(|v| v == "1");
    assert!(
        !ci,
        "{test}: MCP test tools missing ({}); run scripts/install-test-deps.sh",
        missing.join(", ")
    );
    eprintln!(
        "skipping {test}: MCP test tools missing ({}); run scripts/install-test-deps.sh",
        missing.join(", ")
    );
    None
}

/// A workspace, a HOME, a store, an audit log and a policy, in one temporary directory.
pub struct Env {
    _tmp: tempfile::TempDir,
    /// The temporary directory.
    pub root: PathBuf,
}

impl Env {
    /// A new one with this policy.
    pub fn new(policy: &str) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::create_dir_all(root.join("ws")).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::write(root.join("policy.toml"), policy).unwrap();
        Env { _tmp: tmp, root }
    }

    /// A path inside it.
    pub fn p(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }

    /// `cordon mcp-gateway` argv for `server`, with this env's files.
    pub fn gateway(&self, name: &str, extra: &[&str], server: &[String]) -> Vec<String> {
        let mut v: Vec<String> = vec![
            super::bin().display().to_string(),
            "mcp-gateway".into(),
            "--name".into(),
            name.into(),
            "--isolated".into(),
            "--config".into(),
            self.p("policy.toml"),
            "--workspace".into(),
            self.p("ws"),
            "--store".into(),
            self.p("store.db"),
            "--audit-file".into(),
            self.p("audit.jsonl"),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push("--".into());
        v.extend(server.iter().cloned());
        v
    }

    /// The environment of the client and what it runs.
    pub fn env(&self) -> Value {
        json!({"HOME": self.p("home"), "PATH": "/usr/local/bin:/usr/bin:/bin"})
    }

    /// Run the Python client through `gateway`; the client's JSON report and stderr.
    pub fn client(
        &self,
        d: &Deps,
        gateway: Vec<String>,
        elicit: Value,
        steps: Value,
    ) -> (Value, String) {
        let spec = json!({"command": gateway, "env": self.env(), "elicit": elicit, "steps": steps});
        let out = Command::new(&d.python)
            .arg(fixtures().join("client.py"))
            .arg(spec.to_string())
            .output()
            .unwrap();
        let (stdout, stderr) = super::text(&out);
        assert!(out.status.success(), "client failed: {stderr}\n{stdout}");
        (serde_json::from_str(&stdout).unwrap(), stderr)
    }

    /// Run one of `tests/mcp`'s scripted clients (`ts-client.js` with node and the
    /// TypeScript SDK, `py-client.py` with the Python SDK) through `gateway`; its JSON
    /// report and the stderr of the client and the gateway.
    pub fn scripted(
        &self,
        d: &Deps,
        script: &str,
        gateway: Vec<String>,
        steps: Value,
    ) -> (Value, String) {
        let spec = json!({"command": gateway, "env": self.env(), "steps": steps});
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp")
            .join(script);
        let runner = if script.ends_with(".js") {
            &d.node
        } else {
            &d.python
        };
        let out = Command::new(runner)
            .arg(path)
            .arg(spec.to_string())
            .env("NODE_PATH", &d.node_modules)
            .output()
            .unwrap();
        let (stdout, stderr) = super::text(&out);
        assert!(out.status.success(), "{script} failed: {stderr}\n{stdout}");
        let report =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
        (report, stderr)
    }

    /// Run cordon with this env's HOME: success, stdout, stderr.
    pub fn cordon(&self, args: &[&str]) -> (bool, String, String) {
        let out = Command::new(super::bin())
            .args(args)
            .env("HOME", self.p("home"))
            .output()
            .unwrap();
        let (o, e) = super::text(&out);
        (out.status.success(), o, e)
    }

    /// The audit log's records.
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root.join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}
