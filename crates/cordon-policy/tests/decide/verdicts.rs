//! Patches, verdict sources, attenuation, fingerprints, suggestions, cordon's own state.

use super::*;

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
