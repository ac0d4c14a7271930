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

// ---- defaults and locations -----------------------------------------------------------
case!(
    read_inside_allowed,
    NONE,
    None,
    read("src/main.rs"),
    Allow,
    Some(Step::Default)
);
case!(
    read_outside_asks,
    NONE,
    None,
    read("/etc/hosts"),
    Ask,
    Some(Step::Default)
);
case!(
    write_inside_asks,
    NONE,
    None,
    write("src/new.rs"),
    Ask,
    Some(Step::Default)
);
case!(
    write_outside_asks,
    NONE,
    None,
    write("/tmp/x"),
    Ask,
    Some(Step::Default)
);
case!(
    write_outside_configured_deny,
    "[defaults]\nwrite_outside = \"deny\"\n",
    None,
    write("/tmp/x"),
    Deny,
    Some(Step::Default)
);
case!(
    prefix_sibling_is_outside,
    "[defaults]\nwrite_outside = \"deny\"\nwrite_inside = \"allow\"\n",
    None,
    write("/w/proj_evil/x"),
    Deny
);
case!(
    dotdot_sibling_is_outside,
    "[defaults]\nwrite_outside = \"deny\"\nwrite_inside = \"allow\"\n",
    None,
    write("../proj_evil/x"),
    Deny
);
case!(
    dotdot_inside_stays_inside,
    "[defaults]\nwrite_inside = \"allow\"\n",
    None,
    write("src/../README.md"),
    Allow
);
case!(
    symlink_dir_out_write_is_outside,
    "[defaults]\nwrite_outside = \"deny\"\nwrite_inside = \"allow\"\n",
    None,
    write("out/x"),
    Deny
);
case!(
    symlink_parent_dotdot_escape,
    "[defaults]\nread_outside = \"deny\"\n",
    None,
    read("src/up/proj_evil/x"),
    Deny
);
case!(
    hard_link_write_never_silent,
    "[defaults]\nwrite_inside = \"allow\"\n",
    None,
    write("hardlinked"),
    Ask
);
case!(
    symlink_loop_is_unknown,
    "[defaults]\nread_inside = \"allow\"\n",
    None,
    read("loop"),
    Ask
);
case!(
    permissive_read_outside,
    PERMISSIVE,
    None,
    read("/etc/hosts"),
    Allow
);
case!(
    cwd_outside_workspace_is_outside,
    NONE,
    None,
    r#"{"tool":"Read","input":{"file_path":"hosts"},"cwd":"/etc"}"#,
    Ask
);
case!(
    cwd_cannot_widen,
    "[defaults]\nwrite_outside = \"deny\"\nwrite_inside = \"allow\"\n",
    None,
    r#"{"tool":"Write","input":{"file_path":"x"},"cwd":"/w/proj_evil"}"#,
    Deny
);

// ---- guards: nothing turns them off ---------------------------------------------------
case!(
    ssh_key_denied,
    PERMISSIVE,
    None,
    read("~/.ssh/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_key_home_var_denied,
    PERMISSIVE,
    None,
    read("$HOME/.ssh/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_key_case_variant_denied,
    PERMISSIVE,
    None,
    read("/home/u/.SSH/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_key_via_dir_symlink_denied,
    PERMISSIVE,
    None,
    read("sshdir/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_key_via_file_symlink_denied,
    PERMISSIVE,
    None,
    read("key"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_key_via_proc_root_denied,
    PERMISSIVE,
    None,
    read("/proc/self/root/home/u/.ssh/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    shadow_denied,
    PERMISSIVE,
    None,
    read("/etc/shadow"),
    Deny,
    Some(Step::Guard)
);
case!(
    ssh_host_key_denied,
    PERMISSIVE,
    None,
    read("/etc/ssh/ssh_host_ed25519_key"),
    Deny,
    Some(Step::Guard)
);
case!(
    aws_denied,
    PERMISSIVE,
    None,
    read("/home/u/.aws/credentials"),
    Deny,
    Some(Step::Guard)
);
case!(
    env_file_denied,
    PERMISSIVE,
    None,
    read(".env"),
    Deny,
    Some(Step::Guard)
);
case!(
    env_template_allowed,
    NONE,
    None,
    read(".env.example"),
    Allow
);
case!(
    pem_denied,
    PERMISSIVE,
    None,
    read("certs/server.pem"),
    Deny,
    Some(Step::Guard)
);
case!(
    proc_environ_denied,
    PERMISSIVE,
    None,
    read("/proc/1/environ"),
    Deny,
    Some(Step::Guard)
);
case!(
    guard_beats_bypass,
    NONE,
    Some(Mode::Bypass),
    read("~/.ssh/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    guard_beats_allow_rule,
    "[permissions]\nallow = [\"Read(~/.ssh/**)\"]\n",
    None,
    read("~/.ssh/id_rsa"),
    Deny,
    Some(Step::Guard)
);
case!(
    git_hook_write_denied,
    PERMISSIVE,
    Some(Mode::Bypass),
    write(".git/hooks/pre-commit"),
    Deny,
    Some(Step::Guard)
);
case!(
    git_hook_via_symlink_denied,
    PERMISSIVE,
    Some(Mode::Bypass),
    write("hooks/pre-commit"),
    Deny,
    Some(Step::Guard)
);
case!(
    git_config_write_denied,
    PERMISSIVE,
    None,
    write(".git/config"),
    Deny,
    Some(Step::Guard)
);
case!(
    claude_settings_denied,
    PERMISSIVE,
    Some(Mode::AcceptEdits),
    write(".claude/settings.json"),
    Deny,
    Some(Step::Guard)
);
case!(
    cordon_config_denied,
    PERMISSIVE,
    None,
    write(".cordon/policy.toml"),
    Deny,
    Some(Step::Guard)
);
case!(
    vscode_case_variant_denied,
    PERMISSIVE,
    None,
    write(".VSCode/tasks.json"),
    Deny,
    Some(Step::Guard)
);
case!(
    mcp_json_denied,
    PERMISSIVE,
    None,
    write("sub/.mcp.json"),
    Deny,
    Some(Step::Guard)
);
case!(
    bashrc_denied,
    PERMISSIVE,
    None,
    write("~/.bashrc"),
    Deny,
    Some(Step::Guard)
);
case!(
    authorized_keys_not_yet_existing_denied,
    PERMISSIVE,
    None,
    write("~/.ssh/authorized_keys"),
    Deny,
    Some(Step::Guard)
);
case!(
    systemd_unit_denied,
    PERMISSIVE,
    None,
    write("~/.config/systemd/user/x.service"),
    Deny,
    Some(Step::Guard)
);
case!(
    delete_workspace_denied,
    PERMISSIVE,
    Some(Mode::Bypass),
    delete("/w/proj"),
    Deny,
    Some(Step::Guard)
);
case!(
    delete_workspace_parent_denied,
    PERMISSIVE,
    None,
    delete(".."),
    Deny,
    Some(Step::Guard)
);
case!(
    delete_home_denied,
    PERMISSIVE,
    None,
    delete("~"),
    Deny,
    Some(Step::Guard)
);
case!(
    delete_root_denied,
    PERMISSIVE,
    None,
    delete("/"),
    Deny,
    Some(Step::Guard)
);
case!(
    delete_inside_follows_default,
    PERMISSIVE,
    None,
    delete("src/main.rs"),
    Allow
);

// ---- rules ----------------------------------------------------------------------------
case!(
    deny_rule,
    "[permissions]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_rule_via_symlink,
    "[permissions]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("sec/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_rule_dir_form,
    "[permissions]\ndeny = [\"Read(./secrets)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_beats_allow,
    "[permissions]\nallow = [\"Read(./secrets/**)\"]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    ask_beats_allow,
    "[permissions]\nallow = [\"Read(./**)\"]\nask = [\"Read(./src/**)\"]\n",
    None,
    read("src/main.rs"),
    Ask,
    Some(Step::AskRule)
);
case!(
    allow_rule_absolute,
    "[permissions]\nallow = [\"Read(//etc/**)\"]\n",
    None,
    read("/etc/hosts"),
    Allow,
    Some(Step::AllowRule)
);
case!(
    allow_rule_not_through_symlink_out,
    "[permissions]\nallow = [\"Read(./etc/**)\"]\n",
    None,
    read("etc/passwd"),
    Ask
);
case!(
    edit_allow_rule,
    "[permissions]\nallow = [\"Edit(./src/**)\"]\n",
    None,
    write("src/lib.rs"),
    Allow,
    Some(Step::AllowRule)
);
case!(
    edit_rule_does_not_cover_reads,
    "[permissions]\ndeny = [\"Edit(//etc/**)\"]\n",
    None,
    read("/etc/hosts"),
    Ask
);
case!(
    tool_wide_deny,
    "[permissions]\ndeny = [\"WebFetch\"]\n",
    None,
    fetch("https://example.com/"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    structured_rule,
    "[[rule]]\naction = \"deny\"\nrule = \"Read(//etc/passwd)\"\nreason = \"no passwd\"\n",
    None,
    read("/etc/passwd"),
    Deny,
    Some(Step::DenyRule)
);

// ---- modes ----------------------------------------------------------------------------
case!(
    plan_denies_write,
    PERMISSIVE,
    Some(Mode::Plan),
    write("src/x.rs"),
    Deny,
    Some(Step::Mode)
);
case!(
    plan_allows_read,
    NONE,
    Some(Mode::Plan),
    read("src/main.rs"),
    Allow
);
case!(
    accept_edits_inside,
    NONE,
    Some(Mode::AcceptEdits),
    write("src/x.rs"),
    Allow,
    Some(Step::Mode)
);
case!(
    accept_edits_not_outside,
    NONE,
    Some(Mode::AcceptEdits),
    write("/tmp/x"),
    Ask
);
case!(
    accept_edits_not_hard_link,
    NONE,
    Some(Mode::AcceptEdits),
    write("hardlinked"),
    Ask
);
case!(
    bypass_allows_outside,
    NONE,
    Some(Mode::Bypass),
    write("/tmp/x"),
    Allow,
    Some(Step::Mode)
);
case!(
    bypass_respects_ask_rule,
    "[permissions]\nask = [\"Edit(//tmp/**)\"]\n",
    Some(Mode::Bypass),
    write("/tmp/x"),
    Ask,
    Some(Step::AskRule)
);
case!(
    dont_ask_turns_ask_into_deny,
    NONE,
    Some(Mode::DontAsk),
    read("/etc/hosts"),
    Deny,
    Some(Step::NoHuman)
);
case!(
    dont_ask_keeps_allow,
    NONE,
    Some(Mode::DontAsk),
    read("src/main.rs"),
    Allow
);

// ---- network --------------------------------------------------------------------------
const NET: &str = "[network]\nallow = [\"example.com\", \"*.github.com\", \"static.example.org:8443\"]\ndeny = [\"gist.github.com\"]\n";
case!(
    net_allowed,
    NET,
    None,
    fetch("https://example.com/x"),
    Allow,
    Some(Step::AllowRule)
);
case!(
    net_case_and_trailing_dot,
    NET,
    None,
    fetch("https://EXAMPLE.com./x"),
    Allow
);
case!(
    net_not_listed_asks,
    NET,
    None,
    fetch("https://example.net/"),
    Ask,
    Some(Step::Default)
);
case!(
    net_suffix_trick,
    NET,
    None,
    fetch("https://example.com.evil.com/"),
    Ask
);
case!(
    net_subdomain_pattern,
    NET,
    None,
    fetch("https://api.github.com/"),
    Allow
);
case!(
    net_apex_not_in_subdomain_pattern,
    NET,
    None,
    fetch("https://github.com/"),
    Ask
);
case!(
    net_deny_list_wins,
    NET,
    None,
    fetch("https://gist.github.com/"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    net_wrong_port,
    NET,
    None,
    fetch("https://example.com:8080/"),
    Ask
);
case!(
    net_explicit_port,
    NET,
    None,
    fetch("https://static.example.org:8443/"),
    Allow
);
case!(
    net_userinfo_refused,
    NET,
    None,
    fetch("https://example.com@evil.com/"),
    Deny,
    Some(Step::Validate)
);
case!(
    net_backslash_refused,
    NET,
    None,
    fetch("https://evil.com\\\\@example.com/"),
    Deny,
    Some(Step::Validate)
);
case!(
    net_file_scheme_refused,
    NET,
    None,
    fetch("file:///etc/passwd"),
    Deny,
    Some(Step::Validate)
);
case!(
    net_loopback_literal,
    NET,
    Some(Mode::Bypass),
    fetch("http://127.0.0.1/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_decimal_ip,
    NET,
    None,
    fetch("http://2130706433/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_octal_ip,
    NET,
    None,
    fetch("http://0177.0.0.1/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_hex_ip,
    NET,
    None,
    fetch("http://0x7f.1/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_mapped_v6,
    NET,
    None,
    fetch("http://[::ffff:127.0.0.1]/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_nat64,
    NET,
    None,
    fetch("http://[64:ff9b::a9fe:a9fe]/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_metadata,
    NET,
    None,
    fetch("http://169.254.169.254/latest/meta-data/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_cgnat,
    NET,
    None,
    fetch("http://100.64.1.1/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_unspecified,
    NET,
    None,
    fetch("http://0.0.0.0/"),
    Deny,
    Some(Step::Guard)
);
case!(
    net_private_allowed_by_cidr,
    "[network]\nallow = [\"10.1.2.3:8080\"]\nallow_private = [\"10.0.0.0/8\"]\n",
    None,
    fetch("http://10.1.2.3:8080/"),
    Allow
);
case!(
    net_idn_homograph_not_allowed,
    "[network]\nallow = [\"apple.com\"]\n",
    None,
    fetch("https://\u{0430}pple.com/"),
    Ask
);
case!(
    net_domain_rule,
    "[permissions]\ndeny = [\"WebFetch(domain:pastebin.com)\"]\n",
    None,
    fetch("https://pastebin.com/raw/x"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    net_domain_allow_rule,
    "[permissions]\nallow = [\"WebFetch(domain:docs.rs)\"]\n",
    None,
    fetch("https://docs.rs/x"),
    Allow,
    Some(Step::AllowRule)
);

// ---- MCP and unknown tools ------------------------------------------------------------
case!(
    mcp_default_asks,
    NONE,
    None,
    r#"{"tool":"mcp__github__create_issue","input":{}}"#,
    Ask,
    Some(Step::Default)
);
case!(
    mcp_server_wildcard_allows,
    "[permissions]\nallow = [\"mcp__github__*\"]\n",
    None,
    r#"{"tool":"mcp__github__create_issue","input":{}}"#,
    Allow
);
case!(
    mcp_tool_denied,
    "[permissions]\nallow = [\"mcp__github__*\"]\ndeny = [\"mcp__github__delete_repo\"]\n",
    None,
    r#"{"tool":"mcp__github__delete_repo","input":{}}"#,
    Deny
);
case!(
    mcp_other_server_not_covered,
    "[permissions]\nallow = [\"mcp__github__*\"]\n",
    None,
    r#"{"tool":"mcp","input":{"server":"gitlab","tool":"x","arguments":{}}}"#,
    Ask
);
case!(
    unknown_tool_asks,
    PERMISSIVE,
    None,
    r#"{"tool":"Frobnicate","input":{"x":1}}"#,
    Ask,
    Some(Step::Opaque)
);
case!(
    unknown_tool_never_bypassed,
    NONE,
    Some(Mode::Bypass),
    r#"{"tool":"Frobnicate","input":{}}"#,
    Ask,
    Some(Step::Opaque)
);
case!(
    unknown_tool_named_allow,
    "[permissions]\nallow = [\"Frobnicate\"]\n",
    None,
    r#"{"tool":"Frobnicate","input":{}}"#,
    Allow
);

// ---- patches --------------------------------------------------------------------------
case!(
    patch_move_target_guarded,
    PERMISSIVE,
    None,
    r#"{"tool":"apply_patch","input":{"input":"*** Begin Patch\n*** Update File: src/main.rs\n*** Move to: .git/hooks/post-checkout\n*** End Patch"}}"#,
    Deny,
    Some(Step::Guard)
);
case!(
    patch_outside_asks,
    "[defaults]\nwrite_inside = \"allow\"\n",
    None,
    r#"{"tool":"apply_patch","input":{"input":"*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Add File: ../proj_evil/b.rs\n+y\n*** End Patch"}}"#,
    Ask
);

#[test]
fn verdict_source_names_file_and_line() {
    let v = judge(
        "[permissions]\n\ndeny = [\n  \"Read(./secrets/**)\",\n]\n",
        None,
        &read("secrets/token"),
    );
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(
        v.source.file.as_deref(),
        Some(std::path::Path::new(USER_CFG))
    );
    assert_eq!((v.source.line, v.source.column), (Some(4), Some(3)));
    let json = serde_json::to_value(&v).unwrap();
    for k in ["decision", "reason", "source", "findings"] {
        assert!(json.get(k).is_some(), "verdict JSON lacks {k}");
    }
    assert_eq!(json["findings"][0]["op"], "read");
}

#[test]
fn attenuation_only_narrows() {
    let parent = policy_with(PERMISSIVE, None);
    let child = parent
        .attenuate(&Attenuation {
            deny: vec!["Read(//etc/**)".into()],
            ask: vec!["Edit(./src/**)".into()],
            defaults: Some(Defaults::default()),
            mode: None,
            network_allow: Some(vec!["docs.rs".into()]),
        })
        .unwrap();
    let fs = base_fs();
    let reqs = [
        read("/etc/hosts"),
        read("src/main.rs"),
        write("src/x.rs"),
        write("/tmp/x"),
        fetch("https://example.com/"),
        fetch("https://docs.rs/"),
        r#"{"tool":"mcp__a__b","input":{}}"#.to_string(),
    ];
    for r in &reqs {
        let req = Request::from_json(r).unwrap();
        let p = parent.decide(&req, &fs).decision;
        let c = child.decide(&req, &fs).decision;
        assert!(c >= p, "{r}: child {c} is looser than parent {p}");
    }
    assert_eq!(
        child
            .decide(&Request::from_json(&read("/etc/hosts")).unwrap(), &fs)
            .decision,
        Decision::Deny
    );
    let widened = parent
        .attenuate(&Attenuation {
            mode: Some(Mode::Bypass),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(widened, AttenuationError::Mode(Mode::Bypass));
    assert_eq!(
        widened.to_string(),
        "an attenuation cannot switch to mode Bypass: only plan or dont-ask narrow a policy"
    );
    let bad_rule = parent
        .attenuate(&Attenuation {
            deny: vec!["Read(".into()],
            ..Default::default()
        })
        .unwrap_err();
    assert!(
        matches!(&bad_rule, AttenuationError::Rule { rule, .. } if rule == "Read("),
        "{bad_rule:?}"
    );
    let planned = parent
        .attenuate(&Attenuation {
            mode: Some(Mode::Plan),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        planned
            .decide(&Request::from_json(&write("src/x.rs")).unwrap(), &fs)
            .decision,
        Decision::Deny
    );
}

#[test]
fn no_human_turns_ask_into_deny() {
    let mut p = policy_with(NONE, None);
    p.set_no_human(true);
    let v = p.decide(
        &Request::from_json(&read("/etc/hosts")).unwrap(),
        &base_fs(),
    );
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(v.source.step, Step::NoHuman);
}

#[test]
fn most_restrictive_operation_wins() {
    let v = judge(
        "[defaults]\nwrite_inside = \"allow\"\n",
        None,
        r#"{"tool":"apply_patch","input":{"input":"*** Begin Patch\n*** Add File: a\n+x\n*** Add File: .git/config\n+y\n*** Add File: /tmp/q\n+z\n*** End Patch"}}"#,
    );
    assert_eq!(v.decision, Decision::Deny);
    assert_eq!(v.findings.len(), 3);
    assert_eq!(v.findings[0].decision, Decision::Allow);
    assert_eq!(v.findings[1].decision, Decision::Deny);
    assert_eq!(v.findings[2].decision, Decision::Ask);
}

#[test]
fn fingerprints_bind_the_exact_call() {
    let p = policy_with(NONE, None);
    let a = Request::from_json(&write("src/a.rs")).unwrap();
    let b = Request::from_json(&write("src/b.rs")).unwrap();
    let a_elsewhere = Request::from_json(
        r#"{"tool":"Write","input":{"file_path":"src/a.rs","content":"x"},"cwd":"/w/proj/src"}"#,
    )
    .unwrap();
    assert_eq!(p.fingerprint(&a), p.fingerprint(&a.clone()));
    assert_ne!(p.fingerprint(&a), p.fingerprint(&b));
    assert_ne!(p.fingerprint(&a), p.fingerprint(&a_elsewhere));
    let changed = policy_with("[defaults]\nexec = \"deny\"\n", None);
    assert_ne!(
        p.fingerprint(&a),
        changed.fingerprint(&a),
        "a changed policy invalidates fingerprints"
    );
}

/// Stored approvals are bound to fingerprints: the same call under the same policy must
/// keep its fingerprint from one build to the next (nested input, escapes, non-ASCII).
#[test]
fn a_fingerprint_does_not_change_between_builds() {
    let p = policy_with(NONE, None);
    let req = Request::from_json(
        r#"{"tool":"mcp__tracker__create_issue","input":{"title":"\u00e9t\u00e9 \"q\"\n\\","meta":{"z":1,"a":[1.5,null,true]},"labels":["b","a"]},"cwd":"/w/proj/src"}"#,
    )
    .unwrap();
    assert_eq!(
        p.fingerprint(&req),
        "9747aa41f2638707595e4aa317538e4ab4b6d764082bc4df0dc45ad08a8435d3"
    );
}

#[test]
fn suggestions_are_narrow() {
    let p = policy_with(NONE, None);
    let fs = base_fs();
    let suggest = |req: Request| {
        let ops = p.operations(&req, &fs);
        let v = p.judge(&ops);
        p.suggestion(&ops, &v)
    };
    assert_eq!(
        suggest(Request::shell("npm run test -- --watch", None)).as_deref(),
        Some("Bash(npm run test -- --watch)")
    );
    // A program run by another program's argument is never named by a rule.
    assert_eq!(suggest(Request::shell("bash -c 'make'", None)), None);
    assert_eq!(
        suggest(Request::shell("git -c core.pager=evil log", None)),
        None
    );
    assert_eq!(suggest(Request::shell("eval \"$X\"", None)), None);
    assert_eq!(suggest(Request::shell("python3 -c 'print(1)'", None)), None);
    assert_eq!(
        suggest(Request::from_json(&read("/etc/hosts")).unwrap()).as_deref(),
        Some("Read(//etc/hosts)")
    );
    assert_eq!(
        suggest(Request::from_json(&fetch("https://docs.rs/x")).unwrap()).as_deref(),
        Some("WebFetch(domain:docs.rs)")
    );
}

#[test]
fn remembered_rules_allow_and_change_the_version() {
    let fs = base_fs();
    let mut opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    let before = Policy::load(&opts, &fs).unwrap();
    opts.remembered_rules = vec!["Bash(npm run test:*)".into()];
    let after = Policy::load(&opts, &fs).unwrap();
    let req = Request::shell("npm run test -- --watch", None);
    assert_eq!(before.decide(&req, &fs).decision, Decision::Ask);
    assert_eq!(after.decide(&req, &fs).decision, Decision::Allow);
    assert_ne!(before.version(), after.version());
    // A lease given before the rule was saved ("always allow" gives both) still answers
    // the same call: approvals are not bound to the remembered rules.
    assert_eq!(before.fingerprint(&req), after.fingerprint(&req));
    opts.network_allow = vec!["example.com".into()];
    let widened = Policy::load(&opts, &fs).unwrap();
    assert_ne!(after.fingerprint(&req), widened.fingerprint(&req));
    opts.remembered_rules = vec!["Bogus(".into()];
    assert!(Policy::load(&opts, &fs).is_err());
}

// cordon's own state (audit log, store, key): no agent writes it, whatever the mode
// (outside review of issue 36, F7: Write/Edit on the log were `allow` in bypass).
case!(
    cordon_audit_log_write_denied_in_bypass,
    PERMISSIVE,
    Some(Mode::Bypass),
    write("~/.local/state/cordon/audit.jsonl"),
    Deny,
    Some(Step::Guard)
);
case!(
    cordon_store_edit_denied_in_bypass,
    PERMISSIVE,
    Some(Mode::Bypass),
    r#"{"tool":"Edit","input":{"file_path":"/home/u/.local/state/cordon/store.sqlite3","old_string":"a","new_string":"b"}}"#,
    Deny,
    Some(Step::Guard)
);
case!(
    cordon_state_write_denied_by_default,
    NONE,
    None,
    write("/home/u/.local/state/cordon/export/queue"),
    Deny,
    Some(Step::Guard)
);
