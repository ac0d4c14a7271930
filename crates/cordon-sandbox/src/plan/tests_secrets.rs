//! Tests of what the plan masks: the walk's budgets (a walk that cannot finish refuses
//! the run), credentials in the writable roots by name and by content, HOME's
//! credential paths with a pattern, and the caches of `read-only` mode.

use super::*;
use crate::error::SandboxErrorKind;
use cordon_policy::guards;
use std::fs;

fn inputs<'a>(ws: &'a Path, roots: &'a [PathBuf], home: &'a Path) -> PlanInputs<'a> {
    PlanInputs {
        mode: SandboxMode::WorkspaceWrite,
        workspace: ws,
        writable_roots: roots,
        home,
        home_view: HomeView::Hidden,
        home_readable: &[],
        read_only_binds: &[],
        masks: &[],
        proxy_socket: None,
        unix_sockets: &[],
        ca_bundle: None,
        ssh: None,
        ssh_agent: None,
        full_network: false,
        scratch_size: 1 << 20,
        slot: None,
        state_masks: &[],
        walk_limits: WalkLimits::default(),
    }
}

fn small() -> WalkLimits {
    WalkLimits {
        entries: 100,
        ..WalkLimits::default()
    }
}

fn masked(plan: &Plan) -> Vec<PathBuf> {
    plan.ops
        .iter()
        .filter_map(|o| match o {
            MountOp::MaskFile { path } | MountOp::MaskDir { path } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

fn many(dir: &Path, n: usize) {
    fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        fs::write(dir.join(format!("f{i}")), "").unwrap();
    }
}

/// F8: a run plants more files than the walk visits ahead of the user's secret; every
/// later run must refuse (naming the directory to hide), not start with `z/cfg/.env`
/// readable.
#[test]
fn walk_past_its_entry_budget_refuses_naming_the_directory() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    many(&ws.join("a"), 150);
    fs::create_dir_all(ws.join("z/cfg")).unwrap();
    fs::write(ws.join("z/cfg/.env"), "SECRET").unwrap();
    let roots = vec![ws.clone()];
    let mut inp = inputs(&ws, &roots, Path::new("/nonexistent"));
    inp.walk_limits = small();
    let err = build(&inp).unwrap_err();
    assert_eq!(err.kind, SandboxErrorKind::Invalid);
    let a = ws.join("a");
    assert!(
        err.message.contains(&format!("--mask {}", a.display())),
        "{}",
        err.message
    );

    // Hidden with --mask, the directory is not walked, and the secret is masked.
    let hide = vec![a.clone()];
    inp.masks = &hide;
    let plan = build(&inp).unwrap();
    assert!(masked(&plan).contains(&ws.join("z/cfg/.env")));
    assert!(masked(&plan).contains(&a));
    assert!(!plan.walk.truncated);
}

/// Second spelling: the files spread over many small directories, and over the root
/// itself, with the secret in the last directory.
#[test]
fn walk_past_its_entry_budget_refuses_spread_out() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    for d in 0..12 {
        many(&ws.join(format!("d{d:02}")), 9);
    }
    many(&ws, 20);
    fs::create_dir_all(ws.join("zz")).unwrap();
    fs::write(ws.join("zz/.env.local"), "SECRET").unwrap();
    let roots = vec![ws.clone()];
    let mut inp = inputs(&ws, &roots, Path::new("/nonexistent"));
    inp.walk_limits = small();
    let err = build(&inp).unwrap_err();
    assert_eq!(err.kind, SandboxErrorKind::Invalid);
    assert!(err.message.contains("--mask"), "{}", err.message);
    // Within the budget, the same tree is walked to its end.
    inp.walk_limits = WalkLimits::default();
    let plan = build(&inp).unwrap();
    assert!(masked(&plan).contains(&ws.join("zz/.env.local")));
}

/// F5/F5b: credential files in the workspace, by HOME's names in their relative form,
/// by more names, as editors' backups, and by content; the policy guards every one
/// found by name (one list), and ordinary files stay readable.
#[test]
fn workspace_credentials_are_masked_by_name_and_content() {
    let t = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(t.path()).unwrap();
    let home = base.join("home");
    let ws = base.join("ws");
    fs::create_dir_all(&home).unwrap();
    let by_name = [
        ".aws",
        ".git-credentials",
        ".netrc",
        "deploy/.kube/config",
        "infra/terraform.tfstate",
        "infra/terraform.tfstate.backup",
        ".env~",
        "#.env#",
        ".envrc",
        ".dev.vars",
        "app/.m2/settings.xml",
        "app/.netrc.bak",
    ];
    fs::create_dir_all(ws.join(".aws")).unwrap();
    fs::write(ws.join(".aws/credentials"), "aws_secret_access_key=x").unwrap();
    for f in &by_name[1..] {
        let p = ws.join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "secret").unwrap();
    }
    let by_content = ["keys/sa.json", "keys/deploy", "notes/key.txt"];
    fs::create_dir_all(ws.join("keys")).unwrap();
    fs::create_dir_all(ws.join("notes")).unwrap();
    fs::write(
        ws.join(by_content[0]),
        r#"{"type": "service_account", "project_id": "p", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}"#,
    )
    .unwrap();
    fs::write(
        ws.join(by_content[1]),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    fs::write(
        ws.join(by_content[2]),
        "prod key:\n-----BEGIN EC PRIVATE KEY-----\nMHc\n",
    )
    .unwrap();
    let ordinary = [
        ".npmrc",
        "package.json",
        "keys/server.crt",
        "src/credentials.rs",
        ".env.example",
        "README",
    ];
    for f in ordinary {
        let p = ws.join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "-----BEGIN CERTIFICATE-----\nMIIB\n").unwrap();
    }
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, &home)).unwrap();
    let m = masked(&plan);
    for f in by_name.iter().chain(&by_content) {
        assert!(m.contains(&ws.join(f)), "{f} not masked: {m:?}");
    }
    for f in by_name {
        assert!(
            guards::sensitive_read(&ws.join(f), &home).is_some(),
            "the policy does not guard {f}"
        );
    }
    for f in ordinary {
        assert!(!m.contains(&ws.join(f)), "{f} masked");
    }
    assert!(m.contains(&ws.join(".aws")) && !m.contains(&ws.join(".aws/credentials")));
    // `.envrc` is protected by its own name too: kept as a protected path as well
    // (judged at the merge; put back by the fallback tier).
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::write(ws.join("sub/.envrc"), "export TOKEN=x").unwrap();
    let plan = build(&inputs(&ws, &roots, &home)).unwrap();
    assert!(masked(&plan).contains(&ws.join("sub/.envrc")));
    assert!(plan.existing_protected.contains(&ws.join("sub/.envrc")));
    assert!(
        !plan
            .existing_protected
            .contains(&ws.join(".git-credentials"))
    );
}

/// F4: the build tools' credentials and nvm's global npmrc under HOME, masked (the
/// pattern entry is expanded to each installed Node.js), and guarded by the policy.
#[test]
fn home_build_tool_credentials_and_nvm_npmrc_are_masked() {
    let t = tempfile::tempdir().unwrap();
    let home = fs::canonicalize(t.path()).unwrap();
    let files = [
        ".m2/settings.xml",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
        ".nvm/versions/node/v20.11.1/etc/npmrc",
        ".nvm/versions/node/v18.0.0/etc/npmrc",
        ".config/configstore/firebase-tools.json",
        ".netlify/config.json",
        ".config/helm/repositories.yaml",
    ];
    for f in files {
        let p = home.join(f);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "password").unwrap();
    }
    fs::create_dir_all(home.join(".oci")).unwrap();
    fs::create_dir_all(home.join(".wrangler/config")).unwrap();
    let ws = home.join("proj");
    fs::create_dir_all(&ws).unwrap();
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, &home)).unwrap();
    let m = masked(&plan);
    for f in files.iter().chain(&[".oci", ".wrangler/config"]) {
        assert!(m.contains(&home.join(f)), "{f} not masked: {m:?}");
        assert!(
            guards::sensitive_read(&home.join(f), &home).is_some(),
            "{f}"
        );
    }
    assert!(!m.iter().any(|p| p.to_string_lossy().contains('*')));
}

/// F18: `read-only` mode mounts no writable cache; `workspace-write` does.
#[test]
fn read_only_mode_has_no_writable_cache() {
    let t = tempfile::tempdir().unwrap();
    let home = fs::canonicalize(t.path()).unwrap();
    for c in [".npm", ".cargo", ".m2", ".cache/pip"] {
        fs::create_dir_all(home.join(c)).unwrap();
    }
    let ws = home.join("proj");
    fs::create_dir_all(&ws).unwrap();
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, &home)).unwrap();
    assert!(plan.cache_paths().contains(&home.join(".npm")));
    let mut inp = inputs(&ws, &[], &home);
    inp.mode = SandboxMode::ReadOnly;
    let plan = build(&inp).unwrap();
    assert!(plan.cache_paths().is_empty(), "{:?}", plan.cache_paths());
    inp.home_view = HomeView::Visible;
    assert!(build(&inp).unwrap().cache_paths().is_empty());
}

/// F11: Debian's backups of the password hashes are system secrets.
#[test]
fn shadow_backups_are_system_secrets() {
    let sys = crate::system_secrets::system_secret_paths();
    for p in ["/var/backups/shadow.bak", "/var/backups/gshadow.bak"] {
        assert!(sys.contains(&PathBuf::from(p)), "{p}");
        assert!(guards::sensitive_read(Path::new(p), Path::new("/home/u")).is_some());
    }
}
