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
        masks: &[],
        proxy_socket: None,
        unix_sockets: &[],
        ca_bundle: None,
        ssh: None,
        ssh_agent: None,
        full_network: false,
        scratch_size: 1 << 20,
        slot: None,
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

#[test]
fn walk_is_bounded() {
    let t = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(t.path()).unwrap();
    let mut d = ws.clone();
    for i in 0..(WALK_MAX_DEPTH + 3) {
        d = d.join(format!("d{i}"));
    }
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join(".env"), "deep").unwrap();
    let roots = vec![ws.clone()];
    let plan = build(&inputs(&ws, &roots, Path::new("/nonexistent"))).unwrap();
    assert!(!plan.ops.contains(&MountOp::MaskFile {
        path: d.join(".env")
    }));
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
