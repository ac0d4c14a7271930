#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The gate's outcome for every approval policy × verdict × containment × human, through
//! the gate itself (no processes), for both surfaces that decide today.

use cordon_gate::Surface;
use cordon_gate::{Absent, Containment, Gate, GateOptions, Human, Outcome};
use cordon_policy::{ApprovalPolicy, FakeFs, LoadOptions, Policy, Request};
use cordon_store::{Choice, PromptOutcome, Prompter, Question};

/// A human who allows once whatever is asked.
struct Yes;

impl Prompter for Yes {
    fn ask(&mut self, _q: &Question<'_>) -> std::io::Result<PromptOutcome> {
        Ok(PromptOutcome::Answered(Choice::AllowOnce))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Who {
    Caller,
    Nobody,
    Pending,
    Yes,
}

fn fs() -> FakeFs {
    FakeFs::new()
        .dir("/w/proj/src")
        .file("/w/proj/src/a.rs")
        .dir("/home/u/.ssh")
        .file("/home/u/.ssh/id_rsa")
        .file_with(
            "/cfg.toml",
            1,
            b"[permissions]\nask = [\"Bash(git push:*)\"]\n",
        )
}

fn gate(approval: ApprovalPolicy, surface: Surface, store: &std::path::Path) -> Gate {
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        skip_default_files: true,
        config_files: vec!["/cfg.toml".into()],
        approval: Some(approval),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs()).expect("policy loads");
    Gate::new(
        policy,
        GateOptions {
            surface,
            store: Some(store.to_path_buf()),
            audit: None,
            no_audit: true,
            edits: false,
        },
    )
}

fn outcome(
    approval: ApprovalPolicy,
    surface: Surface,
    command: &str,
    containment: Containment,
    who: Who,
) -> &'static str {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(approval, surface, &dir.path().join("store.sqlite3"));
    let req = Request::shell(command, Some("/w/proj".into()));
    let mut yes = Yes;
    let human: Human<'_> = match who {
        Who::Caller => Human::caller(),
        Who::Nobody => Human::nobody(),
        Who::Pending => Human {
            prompter: None,
            absent: Absent::Pending,
        },
        Who::Yes => Human {
            prompter: Some(&mut yes),
            absent: Absent::Deny,
        },
    };
    let o = g.decide(&req, &fs(), containment, human, false);
    if let Outcome::Permitted(p) = &o {
        assert_eq!(p.decided.verdict.decision, cordon_policy::Decision::Allow);
    }
    o.name()
}

/// The outcome the design prescribes.
fn expected(approval: ApprovalPolicy, case: &str, c: Containment, who: Who) -> &'static str {
    use ApprovalPolicy::*;
    let policy_verdict = match case {
        "ls src" => "allow",
        "make" if c.is_contained() => "allow",
        "make" | "git push origin main" => "ask",
        _ => "deny",
    };
    let untrusted_ask = approval == Untrusted && policy_verdict == "allow" && case != "ls src";
    match policy_verdict {
        "deny" => return "refused",
        "allow" if !untrusted_ask => return "permitted",
        _ => {}
    }
    if !untrusted_ask {
        if approval == Never {
            return "refused";
        }
        if approval == OnFailure && c.is_contained() {
            return "trial";
        }
    }
    match who {
        Who::Caller => "ask",
        Who::Nobody => "refused",
        Who::Pending => "pending",
        Who::Yes => "permitted",
    }
}

#[test]
fn every_policy_verdict_containment_and_human() {
    use ApprovalPolicy::*;
    let mut n = 0;
    for approval in [Untrusted, OnRequest, OnFailure, Never] {
        for case in [
            "ls src",
            "make",
            "git push origin main",
            "cat ~/.ssh/id_rsa",
        ] {
            for c in [Containment::None, Containment::Fallback, Containment::Full] {
                for who in [Who::Caller, Who::Nobody, Who::Pending, Who::Yes] {
                    let want = expected(approval, case, c, who);
                    let check = outcome(approval, Surface::Check, case, c, who);
                    let exec = outcome(approval, Surface::Exec, case, c, who);
                    assert_eq!(check, want, "check: {approval:?} `{case}` {c:?} {who:?}");
                    assert_eq!(
                        exec, check,
                        "exec differs: {approval:?} `{case}` {c:?} {who:?}"
                    );
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, 192);
}

#[test]
fn a_contained_verdict_says_so_and_names_its_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(
        ApprovalPolicy::OnRequest,
        Surface::Exec,
        &dir.path().join("s"),
    );
    let req = Request::shell("make", Some("/w/proj".into()));
    let o = g.decide(&req, &fs(), Containment::Full, Human::nobody(), false);
    let v = &o.decided().verdict;
    assert!(v.contained);
    assert_eq!(v.source.rule.as_deref(), Some("contained.exec"));
    assert!(v.reason.contains("runs contained"), "{}", v.reason);
    let json = serde_json::to_value(v).expect("json");
    assert_eq!(json["contained"], true);
}

#[test]
fn the_fallback_tier_does_not_contain_network_or_reads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(
        ApprovalPolicy::OnRequest,
        Surface::Exec,
        &dir.path().join("s"),
    );
    for (cmd, full, fallback) in [
        ("curl https://example.com/", "permitted", "refused"),
        ("cat /etc/hostname", "permitted", "refused"),
        ("touch /var/tmp/x", "permitted", "permitted"),
    ] {
        let req = Request::shell(cmd, Some("/w/proj".into()));
        let f = g.decide(&req, &fs(), Containment::Full, Human::nobody(), false);
        let b = g.decide(&req, &fs(), Containment::Fallback, Human::nobody(), false);
        assert_eq!((f.name(), b.name()), (full, fallback), "{cmd}");
    }
}

#[test]
fn a_project_may_tighten_contained_never_loosen_it() {
    let fs = fs()
        .dir("/w/proj/.cordon")
        .file_with(
            "/w/proj/.cordon/policy.toml",
            1,
            b"[contained]\nexec = \"deny\"\nmcp = \"allow\"\n",
        )
        .file_with(
            "/home/u/.config/cordon/policy.toml",
            1,
            b"trusted_workspaces = [\"/w/proj\"]\n",
        );
    let opts = LoadOptions {
        workspace: "/w/proj".into(),
        home: "/home/u".into(),
        managed: Some("/none".into()),
        ..Default::default()
    };
    let policy = Policy::load(&opts, &fs).expect("loads");
    let c = policy.contained_defaults();
    assert_eq!(c.exec, cordon_policy::Decision::Deny, "tightened");
    assert_eq!(
        c.mcp,
        cordon_policy::Decision::Ask,
        "never loosened, trusted or not"
    );
}

#[test]
fn non_shell_calls_are_never_judged_contained() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(
        ApprovalPolicy::OnRequest,
        Surface::Check,
        &dir.path().join("s"),
    );
    let req =
        Request::from_json(r#"{"tool":"Write","input":{"file_path":"/w/proj/x","content":"y"}}"#)
            .expect("request");
    let o = g.decide(&req, &fs(), Containment::Full, Human::caller(), false);
    assert_eq!(o.name(), "ask");
    assert_eq!(o.decided().containment, Containment::None);
}

#[test]
fn with_home_visible_reads_are_not_contained() {
    // `--home visible` masks only the secrets: the rest of HOME can be read, so reads are
    // judged as if uncontained; program runs and writes stay contained.
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(
        ApprovalPolicy::OnRequest,
        Surface::Exec,
        &dir.path().join("s"),
    );
    let visible = Containment::full(false, true);
    for (cmd, hidden_home, visible_home) in [
        ("cat /home/u/notes.txt", "permitted", "refused"),
        ("make", "permitted", "permitted"),
        ("curl https://example.com/", "permitted", "permitted"),
    ] {
        let req = Request::shell(cmd, Some("/w/proj".into()));
        let h = g.decide(&req, &fs(), Containment::Full, Human::nobody(), false);
        let v = g.decide(&req, &fs(), visible, Human::nobody(), false);
        assert_eq!((h.name(), v.name()), (hidden_home, visible_home), "{cmd}");
    }
}

#[test]
fn git_may_write_its_config_only_where_the_merge_judges_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = gate(
        ApprovalPolicy::OnRequest,
        Surface::Exec,
        &dir.path().join("s"),
    );
    let fs = fs().dir("/w/proj/.git").file("/w/proj/.git/config");
    let config = Request::shell("git config user.email a@b", Some("/w/proj".into()));
    let hook = Request::shell("echo x > .git/hooks/pre-commit", Some("/w/proj".into()));
    // The full tier's writable roots are copy-on-write: the merge checks the config.
    let full = g.decide(&config, &fs, Containment::Full, Human::nobody(), false);
    assert_eq!(full.name(), "permitted");
    // Without that layer the guard holds: the fallback tier and no containment.
    for c in [Containment::Fallback, Containment::None] {
        let o = g.decide(&config, &fs, c, Human::nobody(), false);
        assert_eq!(o.name(), "refused", "{c:?}");
    }
    // A hook is refused by the guard at every tier.
    for c in [Containment::Full, Containment::Fallback, Containment::None] {
        let o = g.decide(&hook, &fs, c, Human::nobody(), false);
        assert_eq!(o.name(), "refused", "{c:?}");
    }
}
