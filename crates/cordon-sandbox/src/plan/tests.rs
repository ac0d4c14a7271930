//! Tests of the mount plan.

use super::compute::sys_net_dirs;
use super::*;
use crate::error::SandboxErrorKind;
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

#[test]
fn protected_existing_and_missing() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    fs::write(ws.join(".git/config"), "").unwrap();
    fs::write(ws.join(".env"), "SECRET=1").unwrap();
    fs::create_dir_all(ws.join("sub/.vscode")).unwrap();
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, Path::new("/nonexistent"))).unwrap();
    // The root is copy-on-write: what the run leaves there is judged at the merge,
    // so git can write `.git/config` inside.
    assert!(plan.ops.contains(&MountOp::Overlay { root: ws.clone() }));
    assert!(
        !plan
            .ops
            .iter()
            .any(|o| matches!(o, MountOp::Protect { .. })),
        "{:?}",
        plan.ops
    );
    assert!(plan.watched_protected().is_empty());
    assert!(plan.ops.contains(&MountOp::MaskFile {
        path: ws.join(".env")
    }));
    assert!(plan.missing_protected.contains(&ws.join(".claude")));
    assert!(plan.missing_protected.contains(&ws.join(".mcp.json")));
}

#[test]
fn protected_symlink_refuses() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    std::os::unix::fs::symlink("/tmp", ws.join(".vscode")).unwrap();
    let roots = vec![ws.clone()];
    let err = build(&inputs(&ws, &roots, Path::new("/nonexistent"))).unwrap_err();
    assert_eq!(err.kind, SandboxErrorKind::ProtectedSymlink);
    assert!(err.message.contains(".vscode"), "{}", err.message);
}

#[test]
fn secrets_under_home_are_masked() {
    let t = tempfile::tempdir().unwrap();
    let home = fs::canonicalize(t.path()).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".netrc"), "machine x").unwrap();
    let ws = home.join("proj");
    fs::create_dir_all(&ws).unwrap();
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, &home)).unwrap();
    assert!(plan.ops.contains(&MountOp::MaskDir {
        path: home.join(".ssh")
    }));
    assert!(plan.ops.contains(&MountOp::MaskFile {
        path: home.join(".netrc")
    }));
    // HOME is hidden before the workspace is bound back in.
    let tmpfs = plan
        .ops
        .iter()
        .position(|o| o == &MountOp::Tmpfs { path: home.clone() })
        .unwrap();
    let bind = plan
        .ops
        .iter()
        .position(|o| matches!(o, MountOp::Overlay { root } if root == &ws))
        .unwrap();
    assert!(tmpfs < bind);
}

/// A tree deeper than the walk goes refuses the run: a `.env` below the limit would
/// otherwise be left unmasked (see `tests_secrets.rs` for the entry budget).
#[test]
fn walk_past_its_depth_refuses() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    let mut d = ws.clone();
    for i in 0..(WALK_MAX_DEPTH + 3) {
        d = d.join(format!("d{i}"));
    }
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join(".env"), "deep").unwrap();
    let roots = vec![ws.clone()];
    let err = build(&inputs(&ws, &roots, Path::new("/nonexistent"))).unwrap_err();
    assert_eq!(err.kind, SandboxErrorKind::Invalid);
    assert!(
        err.message
            .contains(&format!("--mask {}", ws.join("d0").display())),
        "{}",
        err.message
    );
}

#[test]
fn sys_hides_the_host_interfaces_only_in_an_own_network_namespace() {
    let t = tempfile::tempdir().unwrap();
    let sys = fs::canonicalize(t.path()).unwrap();
    fs::create_dir_all(sys.join("devices/pci0/virtio2/net/eth0")).unwrap();
    fs::create_dir_all(sys.join("devices/virtual/net/lo")).unwrap();
    fs::create_dir_all(sys.join("class/net")).unwrap();
    let link = std::os::unix::fs::symlink;
    link(
        "../../devices/pci0/virtio2/net/eth0",
        sys.join("class/net/eth0"),
    )
    .unwrap();
    link("../../devices/virtual/net/lo", sys.join("class/net/lo")).unwrap();
    assert_eq!(
        sys_net_dirs(&sys),
        [
            sys.join("class/net"),
            sys.join("devices/virtual/net"),
            sys.join("devices/pci0/virtio2/net"),
        ]
    );
    assert_eq!(sys_net_dirs(&sys.join("missing")), Vec::<PathBuf>::new());

    let ws = sys.clone();
    let has_sys = |full_network: bool| {
        let mut inp = inputs(&ws, &[], Path::new("/nonexistent"));
        inp.full_network = full_network;
        build(&inp)
            .unwrap()
            .ops
            .iter()
            .any(|o| matches!(o, MountOp::Sys { .. }))
    };
    assert!(has_sys(false));
    assert!(!has_sys(true), "the host's network is visible anyway");
}

/// The fallback tier reads by allowlist: the system, the workspace and roots, HOME's
/// toolchains (or HOME with `--home visible`); never the host's `/tmp`, `/var/tmp`,
/// `/run`, the homes or `/var`. What the full tier masks is recorded for the helper to
/// split the rules around, cordon's state apart; the protected paths that exist in a
/// copy-on-write root are recorded for the fallback tier to put back.
#[test]
fn fallback_reads_by_allowlist_and_records_what_to_leave_out() {
    let t = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(t.path()).unwrap();
    let home = base.join("home");
    let ws = home.join("proj");
    let state = home.join(".local/state/cordon");
    fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::create_dir_all(home.join(".cargo")).unwrap();
    fs::create_dir_all(&state).unwrap();
    let roots = vec![ws.clone()];
    let toolchains = vec![home.join(".cargo")];
    let states = vec![state.clone()];
    let mut inp = inputs(&ws, &roots, &home);
    inp.home_readable = &toolchains;
    inp.state_masks = &states;
    let plan = build(&inp).unwrap();
    let reads = &plan.fallback_read_paths;
    for p in ["/usr", "/etc", "/proc"] {
        assert!(reads.contains(&PathBuf::from(p)), "{p}: {reads:?}");
    }
    for p in [
        "/tmp", "/var/tmp", "/var", "/run", "/home", "/root", "/dev/shm",
    ] {
        assert!(!reads.iter().any(|r| r == Path::new(p)), "{p}: {reads:?}");
    }
    assert!(reads.contains(&ws) && reads.contains(&home.join(".cargo")));
    assert!(!reads.contains(&home), "{reads:?}");
    assert!(plan.fallback_unreadable.contains(&home.join(".ssh")));
    assert!(plan.fallback_unreadable.contains(&state));
    assert_eq!(plan.state_masks, vec![state.clone()]);
    assert!(plan.existing_protected.contains(&ws.join(".git/hooks")));
    assert!(plan.fallback_scratch.is_none(), "made when the run starts");

    inp.home_view = HomeView::Visible;
    let plan = build(&inp).unwrap();
    assert!(plan.fallback_read_paths.contains(&home));

    inp.mode = SandboxMode::FullAccess;
    let plan = build(&inp).unwrap();
    assert_eq!(plan.fallback_read_paths, vec![PathBuf::from("/")]);
}
