//! A table of action requests: each operation type, origins with and without explicit
//! default ports, http against https, redirects, interpreter flags, external writes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cordon_action::{ActionPolicy, ActionRequest, review};
use cordon_policy::Decision;
use cordon_policy::FakeFs;
use serde_json::{Value, json};

const POLICY: &str = r#"
workspace = "/w"
[paths]
read = ["/w/**"]
create = ["/w/out/**", "/w/new/**"]
overwrite = ["/w/out/**"]
delete = ["/w/out/**"]
[executables]
allow = ["python3", "python3.12", "node", "bash", "perl", "env", "/usr/bin/jq", "curl", "awk"]
code_flags = "deny"
[network]
allow = ["https://api.example.com", "http://localhost:8080"]
redirects = "none"
[secrets]
API_TOKEN = ["https://api.example.com"]
[side_effects]
approve = ["external-write", "destructive"]
"#;

fn fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/out")
        .dir("/w/new")
        .file("/w/src/a.txt")
        .file("/w/out/report.txt")
        .file("/etc/passwd")
        .symlink("/w/out/link.txt", "/etc/passwd")
        .dir("/w/out/sub")
        .file_with("/w/out/hard.txt", 2, b"")
}

fn base() -> Value {
    json!({"actor": "agent-1", "capability": "report", "argv": ["/usr/bin/jq", "."], "cwd": "/w",
           "side_effect": "none", "reason": "make the report"})
}

fn judge_with(policy: &str, patch: Value) -> cordon_action::Review {
    let mut v = base();
    for (k, val) in patch.as_object().unwrap() {
        v[k] = val.clone();
    }
    let req = ActionRequest::from_json(&v.to_string()).unwrap();
    review(&req, &ActionPolicy::from_toml(policy).unwrap(), &fs())
}

fn judge(patch: Value) -> cordon_action::Review {
    judge_with(POLICY, patch)
}

macro_rules! table {
    ($($name:ident: $patch:expr => $verdict:ident;)*) => {$(
        #[test]
        fn $name() {
            let r = judge($patch);
            assert_eq!(r.verdict, Decision::$verdict, "{:#?}", r);
        }
    )*};
}

fn path(p: &str, access: &str) -> Value {
    json!({"paths": [{"path": p, "access": access}]})
}

fn net(url: &str) -> Value {
    json!({"network": [{"url": url}]})
}

table! {
    plain_allowed: json!({}) => Allow;
    read_inside: path("/w/src/a.txt", "read") => Allow;
    read_relative_to_cwd: path("src/a.txt", "read") => Allow;
    read_outside: path("/etc/passwd", "read") => Deny;
    read_dotdot_escape: path("/w/src/../../etc/passwd", "read") => Deny;
    read_prefix_sibling: path("/w_evil/x", "read") => Deny;
    read_missing: path("/w/src/none.txt", "read") => Deny;
    create_new: path("/w/out/new.txt", "create") => Allow;
    create_existing: path("/w/out/report.txt", "create") => Deny;
    create_not_permitted_dir: path("/w/src/new.txt", "create") => Deny;
    overwrite_existing: path("/w/out/report.txt", "overwrite") => Allow;
    overwrite_missing: path("/w/out/none.txt", "overwrite") => Deny;
    overwrite_needs_its_own_permission: path("/w/new/x.txt", "overwrite") => Deny;
    overwrite_through_symlink: path("/w/out/link.txt", "overwrite") => Deny;
    overwrite_hard_link: path("/w/out/hard.txt", "overwrite") => Deny;
    overwrite_directory: path("/w/out/sub", "overwrite") => Deny;
    delete_asks: path("/w/out/report.txt", "delete") => Ask;
    delete_not_permitted: path("/w/src/a.txt", "delete") => Deny;
    delete_the_permitted_dir_itself: path("/w/out", "delete") => Deny;

    https_default_port_implicit: net("https://api.example.com/v1") => Allow;
    https_default_port_explicit: net("https://api.example.com:443/v1") => Allow;
    https_case_and_trailing_path: net("HTTPS://API.Example.COM/") => Allow;
    http_instead_of_https: net("http://api.example.com/v1") => Deny;
    https_other_port: net("https://api.example.com:8443/") => Deny;
    http_listed_port: net("http://localhost:8080/x") => Allow;
    http_default_port_not_listed: net("http://localhost/x") => Deny;
    lookalike_suffix: net("https://api.example.com.evil.com/") => Deny;
    userinfo: net("https://api.example.com@evil.com/") => Deny;
    not_http: net("ftp://api.example.com/") => Deny;
    redirects_forbidden: json!({"network": [{"url": "https://api.example.com/", "follow_redirects": true}]}) => Deny;

    python_c: json!({"argv": ["python3", "-c", "print(1)"]}) => Deny;
    python_versioned_c: json!({"argv": ["python3.12", "-c", "print(1)"]}) => Deny;
    python_combined_flags: json!({"argv": ["python3", "-Ic", "print(1)"]}) => Deny;
    python_script: json!({"argv": ["python3", "gen.py"]}) => Allow;
    node_e: json!({"argv": ["node", "-e", "1"]}) => Deny;
    node_eval_equals: json!({"argv": ["node", "--eval=1"]}) => Deny;
    bash_c: json!({"argv": ["bash", "-c", "id"]}) => Deny;
    perl_e: json!({"argv": ["perl", "-e", "1"]}) => Deny;
    env_wrapper: json!({"argv": ["env", "python3", "x.py"]}) => Deny;
    awk_program: json!({"argv": ["awk", "BEGIN{system(\"id\")}"]}) => Deny;
    program_not_allowed: json!({"argv": ["rm", "-rf", "/"]}) => Deny;
    bare_name_does_not_match_path: json!({"argv": ["/tmp/python3", "x.py"]}) => Deny;
    cwd_outside: json!({"cwd": "/tmp"}) => Deny;

    external_write_without_key: json!({"side_effect": "external-write", "network": [{"url": "https://api.example.com/v1", "method": "POST"}]}) => Deny;
    external_write_with_key_asks: json!({"side_effect": "external-write", "idempotency_key": "k-1", "network": [{"url": "https://api.example.com/v1", "method": "POST"}]}) => Ask;
    post_declared_as_none: json!({"network": [{"url": "https://api.example.com/v1", "method": "POST"}]}) => Deny;
    credential_to_its_destination: json!({"credentials": ["API_TOKEN"], "network": [{"url": "https://api.example.com/v1"}]}) => Allow;
    credential_to_another_destination: json!({"credentials": ["API_TOKEN"], "network": [{"url": "http://localhost:8080/"}]}) => Deny;
    credential_not_in_policy: json!({"credentials": ["AWS_SECRET_ACCESS_KEY"]}) => Deny;
}

#[test]
fn code_flags_can_be_asked_about_with_the_exact_code() {
    let policy = POLICY.replace("code_flags = \"deny\"", "code_flags = \"ask\"");
    let r = judge_with(
        &policy,
        json!({"argv": ["python3", "-c", "import os; os.remove('x')"]}),
    );
    assert_eq!(r.verdict, Decision::Ask);
    assert_eq!(r.required_approvals[0].kind, "code");
    assert!(
        r.required_approvals[0].target.contains("os.remove"),
        "{:?}",
        r.required_approvals
    );
}

#[test]
fn approvals_show_the_actual_target_and_consequence() {
    let r = judge(
        json!({"side_effect": "external-write", "idempotency_key": "k-1",
                         "network": [{"url": "HTTPS://api.example.com/v1/items", "method": "POST"}]}),
    );
    let a = &r.required_approvals[0];
    assert_eq!(a.target, "https://api.example.com:443");
    assert!(a.consequence.contains("k-1"), "{a:?}");
    let r = judge(path("/w/out/../out/report.txt", "delete"));
    assert_eq!(r.required_approvals[0].target, "/w/out/report.txt");
}

#[test]
fn the_profile_comes_from_the_request() {
    let r = judge(
        json!({"paths": [{"path": "/w/out/new.txt", "access": "create"}, {"path": "/w/src/a.txt", "access": "read"}],
                         "credentials": ["API_TOKEN"], "network": [{"url": "https://api.example.com/"}]}),
    );
    assert_eq!(r.verdict, Decision::Allow, "{r:#?}");
    assert_eq!(
        r.profile.writable_paths,
        vec![std::path::PathBuf::from("/w/out/new.txt")]
    );
    assert_eq!(
        r.profile.writable_dirs,
        vec![std::path::PathBuf::from("/w/out")]
    );
    assert_eq!(r.profile.network, vec!["api.example.com:443".to_string()]);
    assert_eq!(r.profile.env, vec!["API_TOKEN".to_string()]);
}

#[test]
fn invalid_requests_and_policies() {
    for bad in [
        r#"{}"#,
        r#"{"actor":"a","capability":"c","argv":[],"cwd":"/w","side_effect":"none","reason":"r"}"#,
        r#"{"actor":"a","capability":"c","argv":["x"],"cwd":"rel","side_effect":"none","reason":"r"}"#,
        r#"{"actor":"a","capability":"c","argv":["x"],"cwd":"/w","side_effect":"maybe","reason":"r"}"#,
        r#"{"actor":"a","capability":"c","argv":["x"],"cwd":"/w","side_effect":"none","reason":"r","extra":1}"#,
        r#"{"actor":"a","capability":"c","argv":["x"],"cwd":"/w","side_effect":"none","reason":"r","credentials":["A=B"]}"#,
    ] {
        assert!(ActionRequest::from_json(bad).is_err(), "{bad}");
    }
    assert!(ActionPolicy::from_toml("workspace = \"rel\"").is_err());
    assert!(ActionPolicy::from_toml("workspace = \"/w\"\n[paths]\nread = [\"*.txt\"]").is_err());
    assert!(
        ActionPolicy::from_toml("workspace = \"/w\"\n[network]\nallow = [\"ftp://x\"]").is_err()
    );
}
