//! Computing the mount plan from [`PlanInputs`]: the order of the mounts, what each
//! root, secret and socket becomes, and the Landlock paths of both tiers.

use super::walk::{Found, Presence, first_missing, walk};
use super::{
    CA_BUNDLE_IN_SANDBOX, FALLBACK_SYSTEM_READ, HIDDEN_DIRS, HomeView, MountOp,
    PROXY_SOCKET_IN_SANDBOX, Plan, PlanInputs, SCRATCH_DIRS, replaced,
};
use crate::caches::{CACHE_WRITERS, DEV_CACHES, installed};
use crate::error::SandboxError;
use crate::system_secrets::system_secret_paths;
use cordon_policy::guards;
use cordon_policy::settings::SandboxMode;
use std::path::{Path, PathBuf};

/// Compute the plan.
pub(crate) fn build(inp: &PlanInputs<'_>) -> Result<Plan, SandboxError> {
    let full_access = matches!(inp.mode, SandboxMode::FullAccess);
    let mut plan = Plan {
        scratch_size: inp.scratch_size,
        ..Plan::default()
    };
    let ops = &mut plan.ops;
    ops.push(MountOp::RootBind {
        read_only: !full_access,
    });
    if !full_access {
        // `/var/run` is usually a symlink to `/run`, which is already hidden; a
        // directory that is a symlink is hidden where it leads.
        let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
        for d in SCRATCH_DIRS.iter().map(Path::new).filter(|p| is_dir(p)) {
            match inp.slot.and_then(|s| s.tmp.as_ref()) {
                Some(tmp) if d == Path::new("/tmp") => ops.push(MountOp::Bind {
                    src: tmp.clone(),
                    dst: d.to_path_buf(),
                    read_only: false,
                }),
                _ => ops.push(MountOp::Scratch {
                    path: d.to_path_buf(),
                }),
            }
        }
        for d in HIDDEN_DIRS.iter().map(Path::new).filter(|p| is_dir(p)) {
            ops.push(MountOp::Tmpfs {
                path: d.to_path_buf(),
            });
        }
    } else {
        // Even with write access to everything, the command cannot move itself out of
        // the cgroup that counts its processes.
        for m in crate::cgroup::mount_points() {
            ops.push(MountOp::Bind {
                src: m.clone(),
                dst: m,
                read_only: true,
            });
        }
    }
    ops.push(MountOp::Dev);
    ops.push(MountOp::Scratch {
        path: PathBuf::from("/dev/shm"),
    });
    ops.push(MountOp::Proc);
    if !inp.full_network {
        ops.push(MountOp::Sys {
            masks: sys_net_dirs(Path::new("/sys")),
        });
        // Names resolve nowhere in a namespace of the sandbox's own: the stub on its
        // loopback answers at once and reports what was asked (`dns.rs`).
        if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf") {
            ops.push(MountOp::Text {
                dst: target,
                text: crate::dns::RESOLV_CONF.into(),
            });
        }
    }
    if !full_access && inp.home.is_dir() {
        match inp.home_view {
            HomeView::Hidden => {
                // A slot is HOME itself, persistent and writable; else an empty tmpfs.
                ops.push(match inp.slot {
                    Some(slot) => MountOp::Bind {
                        src: slot.home.clone(),
                        dst: inp.home.to_path_buf(),
                        read_only: false,
                    },
                    None => MountOp::Tmpfs {
                        path: inp.home.to_path_buf(),
                    },
                });
                for p in inp.home_readable {
                    if let Ok(src) = std::fs::canonicalize(p) {
                        ops.push(MountOp::Bind {
                            src,
                            dst: p.clone(),
                            read_only: true,
                        });
                    }
                }
            }
            HomeView::Visible => ops.push(MountOp::Bind {
                src: inp.home.to_path_buf(),
                dst: inp.home.to_path_buf(),
                read_only: true,
            }),
        }
    }
    // Developer caches: writable from the run's slot, never the host's. Not inside a
    // writable root (already writable, and merged); when HOME is visible, only those
    // that exist (a mount point cannot be made in the host's read-only HOME); and one
    // the host lacks only when a program that writes it is installed.
    // Not in `read-only` mode, where no write may land anywhere, a cache included: the
    // host's caches stay visible read-only there (HOME's toolchains, or HOME itself).
    if matches!(inp.mode, SandboxMode::WorkspaceWrite) && inp.home.is_dir() {
        let search = std::env::var_os("PATH").unwrap_or_default();
        for (rel, writers) in DEV_CACHES.iter().zip(CACHE_WRITERS) {
            let path = inp.home.join(rel);
            let exists = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
            let in_root = inp.writable_roots.iter().any(|r| path.starts_with(r));
            let wanted = exists
                || (inp.home_view == HomeView::Hidden
                    && (writers.is_empty() || installed(writers, &search)));
            if !in_root && wanted {
                ops.push(MountOp::Cache { path });
            }
        }
    }
    if !full_access {
        if inp.writable_roots.is_empty() {
            ops.push(MountOp::Bind {
                src: inp.workspace.to_path_buf(),
                dst: inp.workspace.to_path_buf(),
                read_only: true,
            });
        }
        for r in inp.writable_roots {
            ops.push(MountOp::Overlay { root: r.clone() });
        }
    }
    // Paths the caller shows read-only (an action's declared inputs, pinned), over the
    // scratch space and the copy-on-write roots; masks come later and still apply.
    for (src, dst) in inp.read_only_binds {
        ops.push(MountOp::Bind {
            src: src.clone(),
            dst: dst.clone(),
            read_only: true,
        });
    }
    // Inside a copy-on-write root the command may write anything, `.git/config`
    // included (git must work): what it leaves is judged when it is merged.
    let cow = |p: &Path| !full_access && inp.writable_roots.iter().any(|r| p.starts_with(r));

    // Protected paths inside every writable root, existing or not.
    let mut protected: Vec<PathBuf> = Vec::new();
    for root in inp.writable_roots {
        protected.extend(guards::protected_paths_in_root(root));
        // A pattern (`python*`) names no single path to watch.
        for rel in guards::PROTECTED_HOME_PATHS
            .iter()
            .filter(|r| !r.contains('*'))
        {
            let p = inp.home.join(rel);
            if p.starts_with(root) {
                protected.push(p);
            }
        }
    }
    for p in &protected {
        let root = inp
            .writable_roots
            .iter()
            .find(|r| p.starts_with(r))
            .map(PathBuf::as_path)
            .unwrap_or(Path::new("/"));
        match first_missing(root, p)? {
            Presence::Exists if cow(p) => plan.existing_protected.push(p.clone()),
            Presence::Exists => ops.push(MountOp::Protect { path: p.clone() }),
            Presence::Missing(first) => {
                if !plan.missing_protected.contains(&first) {
                    plan.missing_protected.push(first);
                }
            }
            Presence::Uncreatable => {}
        }
    }

    // Secrets and protected names deeper in the roots.
    let mut found = Found::default();
    let mut walk_roots: Vec<&Path> = inp.writable_roots.iter().map(PathBuf::as_path).collect();
    if walk_roots.is_empty() {
        walk_roots.push(inp.workspace);
    }
    // Directories masked whole hide whatever the walk would find in them.
    let mut canonical = super::canon::Canonical::default();
    let hidden: Vec<PathBuf> = inp
        .masks
        .iter()
        .chain(inp.state_masks)
        .filter_map(|m| canonical.resolve(m).ok())
        .filter(|m| m.is_dir())
        .collect();
    plan.walk = walk(&walk_roots, inp.home, &hidden, inp.walk_limits, &mut found)?;
    for p in found.protected {
        if cow(&p) {
            if !plan.existing_protected.contains(&p) {
                plan.existing_protected.push(p);
            }
            continue;
        }
        let op = MountOp::Protect { path: p };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }

    // Masks: the policy's sensitive HOME paths, configured extras, walked secrets.
    let mut masks: Vec<PathBuf> = sensitive_home_paths(inp.home);
    // A visible HOME that is not walked as a root shows its own entries: those named
    // like secrets (`~/.env`, `~/server.pem`) are masked as in a root.
    if inp.home_view == HomeView::Visible
        && !walk_roots.iter().any(|r| inp.home.starts_with(r))
        && let Ok(rd) = std::fs::read_dir(inp.home)
    {
        masks.extend(
            rd.flatten()
                .filter(|e| guards::is_secret_file_name(&e.file_name()))
                .map(|e| e.path()),
        );
    }
    // System secrets. Run as root, the command is uid 0 in its namespace, and the owner's
    // bits let it read /etc/shadow without any capability; a member of a group such as
    // ssl-cert reads keys through a directory it cannot even list. Masking whatever
    // exists costs one bind each and needs no guess about who can read what.
    masks.extend(system_secret_paths());
    masks.extend(inp.masks.iter().cloned());
    masks.extend(found.secrets);
    let state_from = masks.len();
    masks.extend(inp.state_masks.iter().cloned());
    // Resolved afresh: the walk above may have taken long, and a parent resolved before
    // it may have been replaced since (a mask planned on a stale path hides nothing).
    let mut after_walk = super::canon::Canonical::default();
    for (i, m) in masks.into_iter().enumerate() {
        // Mask the file itself, reached with every component resolved: a name through a
        // symlinked directory is not the path the mount table holds, and a mask planned
        // on it would hide nothing. A name that does not resolve (absent, a dangling link,
        // a directory this user cannot search) names nothing the command, which has no
        // more rights than this user, could read either.
        let Ok(path) = after_walk.resolve(&m) else {
            continue;
        };
        let is_dir = path.is_dir();
        if !plan.fallback_unreadable.contains(&path) {
            plan.fallback_unreadable.push(path.clone());
        }
        if i >= state_from {
            plan.state_masks.push(path.clone());
        }
        let op = if is_dir {
            MountOp::MaskDir { path }
        } else {
            MountOp::MaskFile { path }
        };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }

    // With the host's network, name resolution must keep working even when
    // /etc/resolv.conf points into a hidden directory (systemd-resolved's stub in /run).
    if inp.full_network
        && !full_access
        && let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
        && replaced(&target)
    {
        ops.push(MountOp::Bind {
            src: target.clone(),
            dst: target,
            read_only: true,
        });
    }

    if let Some(sock) = inp.proxy_socket {
        ops.push(MountOp::Socket {
            src: sock.to_path_buf(),
            dst: PathBuf::from(PROXY_SOCKET_IN_SANDBOX),
        });
        if let Some(bundle) = inp.ca_bundle {
            ops.push(MountOp::Bind {
                src: bundle.to_path_buf(),
                dst: PathBuf::from(CA_BUNDLE_IN_SANDBOX),
                read_only: true,
            });
        }
    }
    if let Some(ssh) = inp.ssh {
        ops.extend(crate::ssh::ops(ssh));
    }
    ops.extend(inp.ssh_agent.cloned());
    for sock in inp.unix_sockets {
        let masked = ops.iter().find_map(|o| match o {
            MountOp::MaskDir { path } | MountOp::MaskFile { path } if sock.starts_with(path) => {
                Some(path)
            }
            _ => None,
        });
        if let Some(m) = masked {
            return Err(SandboxError::invalid(format!(
                "the Unix socket {} is inside the masked path {}; cordon does not open masked secrets",
                sock.display(),
                m.display()
            )));
        }
        ops.push(MountOp::Socket {
            src: sock.clone(),
            dst: sock.clone(),
        });
    }

    plan.write_paths = inp.writable_roots.to_vec();
    if let Some(slot) = inp.slot {
        plan.write_paths.push(inp.home.to_path_buf());
        if slot.tmp.is_some() {
            plan.write_paths.push(PathBuf::from("/tmp"));
        }
    }
    if full_access {
        plan.write_paths = vec![PathBuf::from("/")];
    }
    plan.fallback_read_paths = fallback_read_paths(inp);
    plan.ca_bundle_on_host = inp
        .ca_bundle
        .filter(|_| inp.proxy_socket.is_some())
        .map(Path::to_path_buf);
    Ok(plan)
}

/// The policy's sensitive HOME paths ([`guards::sensitive_home_paths`]) under `home`,
/// an entry with a `*` component (`.nvm/versions/node/*/etc/npmrc`) expanded to every
/// directory entry it matches there now.
pub(super) fn sensitive_home_paths(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in guards::sensitive_home_paths(home) {
        if !p.as_os_str().as_encoded_bytes().contains(&b'*') {
            out.push(p);
            continue;
        }
        let mut paths = vec![PathBuf::new()];
        for c in p.components() {
            let want = c.as_os_str().to_string_lossy();
            let Some((head, tail)) = want.split_once('*') else {
                paths.iter_mut().for_each(|p| p.push(c));
                continue;
            };
            let mut next = Vec::new();
            for dir in &paths {
                let Ok(rd) = std::fs::read_dir(dir) else {
                    continue;
                };
                for e in rd.flatten() {
                    let name = e.file_name();
                    let n = name.as_encoded_bytes();
                    if n.len() >= head.len() + tail.len()
                        && n.starts_with(head.as_bytes())
                        && n.ends_with(tail.as_bytes())
                    {
                        next.push(dir.join(&name));
                    }
                }
            }
            paths = next;
        }
        out.extend(paths);
    }
    out
}

/// The directories of `sys` (the host's `/sys`) that name its network interfaces:
/// `class/net`, `devices/virtual/net`, and the `net` directory of each device that
/// `class/net` links to (`devices/pci…/virtio2/net`).
pub(super) fn sys_net_dirs(sys: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![sys.join("class/net"), sys.join("devices/virtual/net")];
    if let Ok(rd) = std::fs::read_dir(sys.join("class/net")) {
        for entry in rd.flatten() {
            if let Ok(dev) = std::fs::canonicalize(entry.path())
                && let Some(net) = dev.parent()
                && net.starts_with(sys)
                && !dirs.iter().any(|d| d == net)
            {
                dirs.push(net.to_path_buf());
            }
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs
}

/// Read access in the fallback tier, an allowlist: the system ([`FALLBACK_SYSTEM_READ`]),
/// the workspace and the roots, and HOME as the full tier shows it (its toolchains, or
/// all of it with `--home visible`; its secrets are split out by the helper). Under
/// `full-access`, which the full tier does not contain either, everything.
fn fallback_read_paths(inp: &PlanInputs<'_>) -> Vec<PathBuf> {
    if matches!(inp.mode, SandboxMode::FullAccess) {
        return vec![PathBuf::from("/")];
    }
    let mut out: Vec<PathBuf> = FALLBACK_SYSTEM_READ.iter().map(PathBuf::from).collect();
    out.push(inp.workspace.to_path_buf());
    out.extend(inp.writable_roots.iter().cloned());
    match inp.home_view {
        HomeView::Visible => out.push(inp.home.to_path_buf()),
        HomeView::Hidden => out.extend(inp.home_readable.iter().cloned()),
    }
    // The roots bundle is read where it is on the host: no mount shows it at
    // `CA_BUNDLE_IN_SANDBOX` in this tier (the helper points the variables at it).
    if let (Some(bundle), Some(_)) = (inp.ca_bundle, inp.proxy_socket) {
        out.push(bundle.to_path_buf());
    }
    // With the host's network, name resolution must work where `/etc/resolv.conf`
    // leads (systemd-resolved's stub in `/run`), as the full tier binds it.
    if inp.full_network
        && let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
    {
        out.push(target);
    }
    // Paths that do not exist are skipped when the Landlock rules are made.
    out.sort();
    out.dedup();
    out
}
