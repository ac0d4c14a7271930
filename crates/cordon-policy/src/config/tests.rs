//! Tests of loading and merging policy files.

use super::*;
use crate::facts::FakeFs;

fn fs() -> FakeFs {
    FakeFs::new().dir("/w/proj").dir("/home/u/.config/cordon")
}

fn opts() -> LoadOptions {
    LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/etc/cordon/policy.toml".into()),
        ..Default::default()
    }
}

#[test]
fn line_and_column() {
    assert_eq!(line_col("ab\ncd", 0), (1, 1));
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
}

#[test]
fn errors_name_file_line_and_column() {
    let fs = fs().file_with(
        "/home/u/.config/cordon/policy.toml",
        1,
        b"mode = \"default\"\n[permissions]\nallow = [\"Frob(x)\"]\n",
    );
    let e = load(&opts(), &fs).unwrap_err();
    assert_eq!(
        e.file.as_deref(),
        Some(Path::new("/home/u/.config/cordon/policy.toml"))
    );
    assert_eq!(e.position, Some((3, 10)));
    assert!(e.message.contains("Frob"), "{e}");

    let fs2 = FakeFs::new().dir("/w/proj").file_with(
        "/w/proj/.cordon/policy.toml",
        1,
        b"mode = \"default\"\nbogus = 1\n",
    );
    let e = load(&opts(), &fs2).unwrap_err();
    assert_eq!(e.position.map(|p| p.0), Some(2), "{e}");
    let fs3 = FakeFs::new().dir("/w/proj").file_with(
        "/w/proj/.cordon/policy.toml",
        1,
        b"mode = \"yolo\"\n",
    );
    let e = load(&opts(), &fs3).unwrap_err();
    assert_eq!(e.position, Some((1, 8)), "{e}");
}

#[test]
fn untrusted_project_cannot_widen() {
    let fs = fs().file_with(
        "/w/proj/.cordon/policy.toml",
        1,
        br#"mode = "bypass"
[permissions]
allow = ["Bash(curl:*)"]
deny = ["Read(./secrets/**)"]
[defaults]
read_outside = "allow"
write_inside = "deny"
[network]
allow = ["evil.com"]
deny = ["pastebin.com"]
"#,
    );
    let m = load(&opts(), &fs).unwrap();
    assert!(!m.trusted);
    assert_eq!(m.mode, Mode::Default);
    assert_eq!(m.rules.len(), 1);
    assert_eq!(m.rules[0].action, Decision::Deny);
    assert_eq!(m.defaults.read_outside, Decision::Ask);
    assert_eq!(
        m.defaults.write_inside,
        Decision::Deny,
        "tightening is honoured"
    );
    assert!(m.network.allow.is_empty());
    assert_eq!(m.network.deny, vec!["pastebin.com".to_string()]);
    assert!(m.notes.iter().any(|n| n.contains("not trusted")));
}

#[test]
fn trusted_project_applies_and_user_wins() {
    let fs = fs()
        .file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            b"trusted_workspaces = [\"/w/proj\"]\n[defaults]\nexec = \"deny\"\n",
        )
        .file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            b"mode = \"accept-edits\"\n[permissions]\nallow = [\"Bash(cargo test:*)\"]\n[defaults]\nexec = \"allow\"\n",
        );
    let m = load(&opts(), &fs).unwrap();
    assert!(m.trusted);
    assert_eq!(m.mode, Mode::AcceptEdits);
    assert_eq!(m.rules.len(), 1);
    assert_eq!(
        m.defaults.exec,
        Decision::Deny,
        "the user layer outranks the project"
    );
}

#[test]
fn project_cannot_trust_itself() {
    let fs = fs().file_with(
        "/w/proj/.cordon/policy.toml",
        1,
        b"trusted_workspaces = [\"/w/proj\"]\n[permissions]\nallow = [\"Bash\"]\n",
    );
    let m = load(&opts(), &fs).unwrap();
    assert!(!m.trusted);
    assert!(m.rules.is_empty());
}

#[test]
fn precedence_managed_over_flags_over_user() {
    let fs = fs()
        .file_with("/etc/cordon/policy.toml", 1, b"mode = \"plan\"\n")
        .file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            b"mode = \"bypass\"\n",
        );
    let mut o = opts();
    o.mode = Some(Mode::AcceptEdits);
    assert_eq!(load(&o, &fs).unwrap().mode, Mode::Plan);
    let fs = self::fs().file_with(
        "/home/u/.config/cordon/policy.toml",
        1,
        b"mode = \"bypass\"\n",
    );
    assert_eq!(load(&o, &fs).unwrap().mode, Mode::AcceptEdits);
    o.mode = None;
    assert_eq!(load(&o, &fs).unwrap().mode, Mode::Bypass);
}

#[test]
fn rule_examples_are_checked() {
    let good = br#"[[rule]]
action = "deny"
rule = "Bash(git push:*)"
reason = "pushes need review"
match = ["git push origin main"]
not_match = ["git pull"]
"#;
    let fs = fs().file_with("/home/u/.config/cordon/policy.toml", 1, good);
    let m = load(&opts(), &fs).unwrap();
    assert_eq!(m.rules[0].reason.as_deref(), Some("pushes need review"));
    let bad = br#"[[rule]]
action = "deny"
rule = "Read(./secrets/*.key)"
match = ["secrets/a/b.key"]
"#;
    let fs = self::fs().file_with("/home/u/.config/cordon/policy.toml", 1, bad);
    let e = load(&opts(), &fs).unwrap_err();
    assert!(e.message.contains("does not match its example"), "{e}");
    assert_eq!(e.position.map(|p| p.0), Some(4));
}

#[test]
fn unreadable_or_invalid_files_are_errors() {
    let fs = fs().file_with("/home/u/.config/cordon/policy.toml", 1, b"\xff\xfe");
    assert!(load(&opts(), &fs).is_err());
    let mut o = opts();
    o.config_files = vec!["/nope.toml".into()];
    assert!(load(&o, &self::fs()).is_err());
    let fs = fs_with_network("allow = [\"http://x.com/\"]");
    assert!(load(&opts(), &fs).is_err());
    let fs = fs_with_network("allow_private = [\"10.0.0.0/33\"]");
    assert!(load(&opts(), &fs).is_err());
}

#[test]
fn network_allow_takes_request_rules() {
    let fs = fs_with_network(
        r#"allow = ["example.com", { host = "github.com", read_only = true, paths = ["/org/repo"] }]"#,
    );
    let m = load(&opts(), &fs).unwrap();
    assert_eq!(m.network.allow, vec!["example.com", "github.com"]);
    assert_eq!(m.network.rules.len(), 1);
    assert!(m.network.rules[0].read_only);
    let p = crate::net::NetworkPolicy::from_settings(&m.network).unwrap();
    let gh = crate::net::Host::parse("github.com").unwrap();
    assert!(p.is_ruled(&gh, 443));
    assert!(p.check_request(&gh, 443, "GET", "/org/repo/x").is_ok());
    assert!(p.check_request(&gh, 443, "POST", "/org/repo/x").is_err());
    for bad in [
        r#"allow = [{ host = "github.com", methods = ["G ET"] }]"#,
        r#"allow = [{ host = "github.com", paths = ["org"] }]"#,
        r#"allow = [{ host = "github.com", colour = "red" }]"#,
    ] {
        assert!(load(&opts(), &fs_with_network(bad)).is_err(), "{bad}");
    }
}

fn fs_with_network(line: &str) -> FakeFs {
    fs().file_with(
        "/home/u/.config/cordon/policy.toml",
        1,
        format!("[network]\n{line}\n").as_bytes(),
    )
}
