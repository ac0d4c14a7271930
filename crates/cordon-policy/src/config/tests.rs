//! Tests of loading and merging policy files.

use super::*;
use crate::facts::FakeFs;
use crate::settings::RequiredTier;

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

/// `[sandbox] require` (may the fallback tier run?) comes from the managed file, the
/// command line, `--config` files and the user file, in that order, and never from a
/// project's file, trusted or not: the code whose plants the fallback cannot stop must
/// not be the one to accept it.
#[test]
fn the_required_tier_is_the_users_choice_never_the_projects() {
    let user = "/home/u/.config/cordon/policy.toml";
    let project = "/w/proj/.cordon/policy.toml";
    let tier = |fs: &FakeFs, o: &LoadOptions| {
        let m = load(o, fs).unwrap();
        (
            m.sandbox.required_tier(),
            m.sandbox.require_source.clone(),
            m.notes,
        )
    };
    // Nothing set: the full tier is required.
    let (t, src, _) = tier(&fs(), &opts());
    assert_eq!((t, src), (RequiredTier::Full, None));
    // A project, even a trusted one, cannot accept the fallback.
    let fs1 = fs()
        .file_with(user, 1, b"trusted_workspaces = [\"/w/proj\"]\n")
        .file_with(project, 1, b"[sandbox]\nrequire = \"any\"\n");
    let (t, _, notes) = tier(&fs1, &opts());
    assert_eq!(t, RequiredTier::Full);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("`[sandbox] require` ignored")),
        "{notes:?}"
    );
    // The user's file can; the command line outranks it; the managed file outranks both.
    let fs2 = fs().file_with(user, 1, b"[sandbox]\nrequire = \"any\"\n");
    let (t, src, _) = tier(&fs2, &opts());
    assert_eq!((t, src.as_deref()), (RequiredTier::Any, Some(user)));
    let mut o = opts();
    o.require = Some(RequiredTier::Full);
    let (t, src, _) = tier(&fs2, &o);
    assert_eq!((t, src.as_deref()), (RequiredTier::Full, Some("--require")));
    o.require = Some(RequiredTier::Any);
    let fs3 = fs2.file_with(
        "/etc/cordon/policy.toml",
        1,
        b"[sandbox]\nrequire = \"full\"\n",
    );
    let (t, src, _) = tier(&fs3, &o);
    assert_eq!(
        (t, src.as_deref()),
        (RequiredTier::Full, Some("/etc/cordon/policy.toml"))
    );
    // The flag alone, with no file that names the key.
    let (t, src, _) = tier(&fs(), &o);
    assert_eq!((t, src.as_deref()), (RequiredTier::Any, Some("--require")));
    // An unknown word is an error that names the file.
    let bad = fs().file_with(user, 1, b"[sandbox]\nrequire = \"some\"\n");
    let e = load(&opts(), &bad).unwrap_err();
    assert!(e.message.contains("expected full or any"), "{e}");
    assert_eq!(e.file.as_deref(), Some(Path::new(user)));
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
