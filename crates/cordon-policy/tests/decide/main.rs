//! The decision order end to end, on a fake file system: one line per case.
// Test code: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use cordon_policy::{
    Attenuation, AttenuationError, Decision, Defaults, FakeFs, LoadOptions, Mode, Policy, Request,
    Step, Verdict,
};

const USER_CFG: &str = "/home/u/.config/cordon/policy.toml";

fn base_fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/src")
        .file("/w/proj/src/main.rs")
        .file("/w/proj/README.md")
        .file_with("/w/proj/.env", 1, b"SECRET=1")
        .file("/w/proj/.env.example")
        .file("/w/proj/certs/server.pem")
        .dir("/w/proj/.git/hooks")
        .file("/w/proj/.git/config")
        .dir("/w/proj/secrets")
        .file("/w/proj/secrets/token")
        .dir("/w/proj_evil")
        .file("/home/u/.ssh/id_rsa")
        .file("/home/u/.aws/credentials")
        .file("/home/u/.bashrc")
        .file("/home/u/notes.txt")
        .file("/etc/hosts")
        .file("/etc/passwd")
        // Links planted inside the workspace.
        .symlink("/w/proj/sshdir", "/home/u/.ssh")
        .symlink("/w/proj/key", "/home/u/.ssh/id_rsa")
        .symlink("/w/proj/out", "/tmp")
        .symlink("/w/proj/etc", "/etc")
        .symlink("/w/proj/src/up", "../..")
        .symlink("/w/proj/sec", "secrets")
        .symlink("/w/proj/hooks", ".git/hooks")
        .file_with("/w/proj/hardlinked", 2, b"")
        .symlink("/w/proj/loop", "/w/proj/loop")
}

fn policy_with(cfg: &str, mode: Option<Mode>) -> Policy {
    let fs = base_fs().file_with(USER_CFG, 1, cfg.as_bytes());
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/etc/cordon/none.toml".into()),
        mode,
        ..Default::default()
    };
    Policy::load(&opts, &fs).unwrap_or_else(|e| panic!("config: {e}"))
}

fn judge(cfg: &str, mode: Option<Mode>, req: &str) -> Verdict {
    let policy = policy_with(cfg, mode);
    let req = Request::from_json(req).unwrap_or_else(|e| panic!("request {req}: {e}"));
    policy.decide(&req, &base_fs())
}

fn read(path: &str) -> String {
    format!(r#"{{"tool":"Read","input":{{"file_path":"{path}"}}}}"#)
}
fn write(path: &str) -> String {
    format!(r#"{{"tool":"Write","input":{{"file_path":"{path}","content":"x"}}}}"#)
}
fn delete(path: &str) -> String {
    format!(r#"{{"tool":"delete_file","input":{{"path":"{path}"}}}}"#)
}
fn fetch(url: &str) -> String {
    format!(r#"{{"tool":"WebFetch","input":{{"url":"{url}","prompt":"p"}}}}"#)
}

macro_rules! case {
    ($name:ident, $cfg:expr, $mode:expr, $req:expr, $want:ident) => {
        case!($name, $cfg, $mode, $req, $want, None);
    };
    ($name:ident, $cfg:expr, $mode:expr, $req:expr, $want:ident, $step:expr) => {
        #[test]
        fn $name() {
            let v = judge($cfg, $mode, &$req);
            assert_eq!(v.decision, Decision::$want, "{:#?}", v);
            let step: Option<Step> = $step;
            if let Some(s) = step {
                assert_eq!(v.source.step, s, "{:#?}", v);
            }
            assert!(!v.reason.is_empty());
        }
    };
}

const NONE: &str = "";
const PERMISSIVE: &str = r#"
[defaults]
read_outside = "allow"
write_inside = "allow"
write_outside = "allow"
exec = "allow"
network = "allow"
mcp = "allow"
"#;

mod guards;
mod network;
mod rules;
mod verdicts;
