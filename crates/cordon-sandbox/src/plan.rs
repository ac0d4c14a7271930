//! The mount plan: what the sandbox's filesystem looks like, computed from host facts on
//! the caller's side and executed by the helper (`mounts.rs`).
//!
//! This module owns the decisions (which path is read-only, masked, hidden or writable);
//! it performs no mount itself. Every path here is canonical and absolute.
//!
//! # Protected paths that do not exist yet
//!
//! A protected path inside a writable root (`.git/hooks`, `.vscode`, `.mcp.json`…) that
//! exists is re-bound read-only. One that does not exist cannot be masked by a mount
//! without first creating a mount point in the host's workspace, and cordon never writes
//! the host's workspace to build the sandbox (an overlay needs a work directory on the
//! same filesystem, which is the same problem). So cordon records the first missing
//! component of each such path here, and two mechanisms use the list: while the command
//! runs, the write observer (`observe.rs`) answers every creating system call at or
//! beneath one of them with `EACCES`; and after the command has ended and every process
//! of the sandbox is gone, the caller's side checks them again and removes whatever
//! appeared there anyway (a thread that rewrote the path between the observer's read and
//! the kernel's), reporting it as a blocked write (see `run.rs`). The fallback tier has
//! no observer for this list, so there only the removal applies.
//!
//! # Host Unix sockets
//!
//! A pathname Unix socket is reachable from the sandbox wherever its file is visible:
//! connecting needs only write permission on the socket file, which a read-only mount
//! does not take away, and Landlock restricts it only from ABI 9. So the plan hides the
//! directories where services put their sockets: `/run` (and `/var/run`, its usual
//! link: Docker, containerd, Podman, systemd's and D-Bus's system sockets, the user
//! runtime directories under `/run/user`), `/tmp` and `/var/tmp` (X11 in `/tmp/.X11-unix`,
//! ssh-agent, tmux and screen sockets, anything a program drops there), the homes
//! (`/home`, `/root`, and HOME wherever it is), and `/dev` (`/dev/log` leads into
//! `/run`). Abstract sockets are out of reach too: they belong to a network namespace,
//! and Landlock scopes them where the kernel can (ABI 6).
//!
//! Still reachable, because hiding them would hide what commands legitimately read:
//! sockets elsewhere in the read-only view of `/`, such as `/var/lib/…` (MySQL's in some
//! distributions), `/var/spool/postfix`, `/var/snap/lxd/common/lxd/unix.socket`, or
//! any directory a user or service made outside the locations above (under `/srv`,
//! `/opt`, `/mnt`, a project directory). The host's file permissions still apply, and
//! `cordon exec --mask PATH` hides such a directory. In the fallback tier no mount hides
//! anything, so every socket this user could reach stays reachable.
//!
//! A host socket the command needs (an ssh-agent, a database) is bound in at its own
//! path, read-only, with [`MountOp::Socket`] (`cordon exec --allow-unix-socket`);
//! mount points inside hidden directories are made in their empty tmpfs.
//!
//! # Scratch space
//!
//! `/tmp`, `/var/tmp` and `/dev/shm` are directories of one tmpfs ([`MountOp::Scratch`],
//! [`Plan::scratch_size`] bytes), so that together they hold no more than that much of
//! the host's memory. Every other tmpfs of the plan (the hidden directories, `/dev`)
//! is made read-only once its mount points are in place: only the scratch space and the
//! writable roots take writes.

use crate::caches::{CACHE_WRITERS, CacheLayer, DEV_CACHES, installed};
use crate::changes::Layer;
use crate::error::{SandboxError, SandboxErrorKind};
use crate::system_secrets::system_secret_paths;
use cordon_policy::guards;
use cordon_policy::settings::SandboxMode;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Whether the caller's `HOME` is visible inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HomeView {
    /// `HOME` is an empty directory except the workspace and the read-only toolchain
    /// directories.
    #[default]
    Hidden,
    /// `HOME` is visible read-only (secrets are still masked).
    Visible,
}

/// Paths under HOME kept visible, read-only, when HOME is hidden.
pub const DEFAULT_HOME_READABLE: &[&str] = &[
    ".cargo",
    ".rustup",
    ".local/bin",
    ".pyenv",
    ".nvm",
    ".npm",
    ".m2",
    ".gradle",
    ".gitconfig",
];

/// Where the proxy's Unix socket appears inside the sandbox.
pub const PROXY_SOCKET_IN_SANDBOX: &str = "/run/cordon/egress.sock";

/// Where the trusted-roots bundle (system roots plus the run's CA) is seen inside.
pub const CA_BUNDLE_IN_SANDBOX: &str = "/run/cordon/ca-bundle.pem";

/// Directories replaced by the sandbox's private scratch space (when they exist).
const SCRATCH_DIRS: &[&str] = &["/tmp", "/var/tmp"];

/// Directories replaced by an empty, read-only tmpfs in the sandbox (when they exist):
/// other users' homes and host service sockets.
const HIDDEN_DIRS: &[&str] = &["/home", "/root", "/run", "/var/run"];

/// Whether `p` is at or beneath a directory the sandbox replaces (outside `full-access`).
fn replaced(p: &Path) -> bool {
    SCRATCH_DIRS
        .iter()
        .chain(HIDDEN_DIRS)
        .any(|d| p.starts_with(d))
}

/// How far the walk for secrets and protected names inside writable roots goes.
pub const WALK_MAX_DEPTH: usize = 8;
/// How many entries the walk visits at most (over all roots).
pub const WALK_MAX_ENTRIES: usize = 20_000;
/// Directories the walk does not descend into (build output and dependency trees).
const WALK_SKIP: &[&str] = &["node_modules", "target", ".venv", "__pycache__"];

/// One step of the mount plan, executed in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum MountOp {
    /// Bind the host's `/` recursively as the new root, read-only unless stated.
    RootBind {
        /// Make every mount of the tree read-only.
        read_only: bool,
    },
    /// An empty tmpfs that hides what is beneath it, made read-only once the plan's
    /// mount points inside it exist.
    Tmpfs {
        /// Where.
        path: PathBuf,
    },
    /// A fresh, empty, writable directory of the sandbox's scratch tmpfs (one tmpfs of
    /// [`Plan::scratch_size`] bytes for every such directory).
    Scratch {
        /// Where.
        path: PathBuf,
    },
    /// A minimal `/dev`, read-only but for its devices (`/dev/shm` is scratch space).
    Dev,
    /// A fresh `/proc` for the new PID namespace.
    Proc,
    /// `/sys` without the host's network interfaces (names, MAC addresses): a fresh,
    /// read-only sysfs, which shows only the sandbox's own network namespace; where the
    /// kernel refuses one, the host's `/sys` with `masks` hidden under empty directories.
    /// Only in a network namespace of the sandbox's own.
    Sys {
        /// The directories that list the host's interfaces: `/sys/class/net`,
        /// `/sys/devices/virtual/net` and each device's `net` directory.
        masks: Vec<PathBuf>,
    },
    /// Bind a host path (directory or file) into the sandbox at the same path.
    Bind {
        /// Host path.
        src: PathBuf,
        /// Path inside the sandbox.
        dst: PathBuf,
        /// Read-only bind.
        read_only: bool,
    },
    /// A protected path inside a writable root: re-bound read-only; if it has become a
    /// symlink by the time it is mounted, the run is refused.
    Protect {
        /// Where.
        path: PathBuf,
    },
    /// Hide a secret directory under an empty read-only tmpfs.
    MaskDir {
        /// Where.
        path: PathBuf,
    },
    /// Hide a secret file under a read-only bind of `/dev/null`.
    MaskFile {
        /// Where.
        path: PathBuf,
    },
    /// A writable root mounted through overlayfs: the host's tree below, the run's
    /// changes in the layer [`Plan::overlays`] names for it, merged back after the run.
    Overlay {
        /// The root (lower layer and mount point).
        root: PathBuf,
    },
    /// A developer cache under HOME made writable from the run's cache slot (see
    /// `caches.rs`): an overlay over the host's cache, or the slot's directory when the
    /// host has none. Never merged.
    Cache {
        /// The cache's path.
        path: PathBuf,
    },
    /// Bind a host's Unix socket (the proxy's, or one the caller allowed) to `dst`,
    /// read-only: connecting to it works, replacing it does not.
    Socket {
        /// Host socket.
        src: PathBuf,
        /// Path inside the sandbox.
        dst: PathBuf,
    },
    /// The running binary (the one the helper was executed from: ssh's relay), read-only
    /// at `dst`. Bound from `src` (its path as the caller saw it) when that path, looked
    /// up with the user's own rights, still names the running file; else (a directory
    /// above it the user cannot search, a binary replaced since it started) a copy of
    /// the running image, read through `/proc/self/exe`, made in the staging root.
    OwnBinary {
        /// The binary's path on the host when the run was planned.
        src: PathBuf,
        /// Path inside the sandbox.
        dst: PathBuf,
    },
    /// A file of cordon's own text (ssh's configuration), made in the staging root and
    /// bound read-only at `dst`.
    Text {
        /// Path inside the sandbox.
        dst: PathBuf,
        /// The file's content.
        text: String,
    },
}

/// The result of the bounded walk of the writable roots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkSummary {
    /// Entries visited.
    pub entries: usize,
    /// The walk stopped at its entry limit before visiting everything.
    pub truncated: bool,
}

/// The filesystem side of a sandboxed run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Mount steps (full tier).
    pub ops: Vec<MountOp>,
    /// The roots bundle's path on the host, which the fallback tier (no mounts) names
    /// instead of [`CA_BUNDLE_IN_SANDBOX`].
    #[serde(default)]
    pub ca_bundle_on_host: Option<PathBuf>,
    /// Paths the command may write (Landlock), as seen inside the sandbox.
    pub write_paths: Vec<PathBuf>,
    /// Paths the command may read in the fallback tier, where no mount hides anything
    /// (before the helper leaves the system secrets out, see `system_secrets.rs`).
    pub fallback_read_paths: Vec<PathBuf>,

    /// First missing component of each protected path inside a writable root; whatever
    /// appears there during the run is removed after it.
    pub missing_protected: Vec<PathBuf>,
    /// The walk of the writable roots.
    pub walk: WalkSummary,
    /// Bytes of the scratch tmpfs behind every [`MountOp::Scratch`].
    pub scratch_size: u64,
    /// The copy-on-write layer of each [`MountOp::Overlay`], made when the run starts.
    #[serde(default)]
    pub overlays: Vec<Layer>,
    /// The slot's layer of each [`MountOp::Cache`], taken when the run starts.
    #[serde(default)]
    pub caches: Vec<CacheLayer>,
}

impl Plan {
    /// How many secrets the plan masks.
    pub fn masked(&self) -> usize {
        self.ops
            .iter()
            .filter(|o| matches!(o, MountOp::MaskDir { .. } | MountOp::MaskFile { .. }))
            .count()
    }

    /// The developer caches made writable from a cache slot.
    pub fn cache_paths(&self) -> Vec<PathBuf> {
        self.ops
            .iter()
            .filter_map(|o| match o {
                MountOp::Cache { path } => Some(path.clone()),
                _ => None,
            })
            .collect()
    }

    /// The roots mounted through a copy-on-write layer.
    pub fn overlay_roots(&self) -> impl Iterator<Item = &Path> {
        self.ops.iter().filter_map(|o| match o {
            MountOp::Overlay { root } => Some(root.as_path()),
            _ => None,
        })
    }

    /// Missing protected paths that must be watched in the full tier: none inside a
    /// copy-on-write root, whose changes are judged when they are merged.
    pub fn watched_protected(&self) -> Vec<PathBuf> {
        let overlays: Vec<&Path> = self.overlay_roots().collect();
        self.missing_protected
            .iter()
            .filter(|m| !overlays.iter().any(|r| m.starts_with(r)))
            .cloned()
            .collect()
    }
}

/// What the plan is computed from.
pub(crate) struct PlanInputs<'a> {
    pub mode: SandboxMode,
    pub workspace: &'a Path,
    pub writable_roots: &'a [PathBuf],
    pub home: &'a Path,
    pub home_view: HomeView,
    pub home_readable: &'a [PathBuf],
    pub masks: &'a [PathBuf],
    pub proxy_socket: Option<&'a Path>,
    /// Host sockets to bind in at their own path (canonical, checked to be sockets).
    pub unix_sockets: &'a [PathBuf],
    /// The roots bundle to show read-only at [`CA_BUNDLE_IN_SANDBOX`].
    pub ca_bundle: Option<&'a Path>,
    /// ssh through the proxy (`ssh.rs`), and the agent's socket op.
    pub ssh: Option<&'a crate::ssh::SshInputs>,
    pub ssh_agent: Option<&'a MountOp>,
    pub full_network: bool,
    pub scratch_size: u64,
    /// The persistent slot that replaces HOME's tmpfs (and `/tmp` when asked).
    pub slot: Option<&'a crate::slot::SlotMounts>,
}

fn refuse_symlink(p: &Path) -> SandboxError {
    SandboxError::new(
        SandboxErrorKind::ProtectedSymlink,
        format!(
            "refusing to start: the protected path {} is a symlink, which could redirect writes",
            p.display()
        ),
    )
}

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
    if !full_access && inp.home.is_dir() {
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
            Presence::Exists if cow(p) => {}
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
    plan.walk = walk(&walk_roots, inp.home, &mut found)?;
    for p in found.protected.into_iter().filter(|p| !cow(p)) {
        let op = MountOp::Protect { path: p };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }

    // Masks: the policy's sensitive HOME paths, configured extras, walked secrets.
    let mut masks: Vec<PathBuf> = guards::sensitive_home_paths(inp.home);
    // System secrets. Run as root, the command is uid 0 in its namespace, and the owner's
    // bits let it read /etc/shadow without any capability; a member of a group such as
    // ssl-cert reads keys through a directory it cannot even list. Masking whatever
    // exists costs one bind each and needs no guess about who can read what.
    masks.extend(system_secret_paths());
    masks.extend(inp.masks.iter().cloned());
    masks.extend(found.secrets);
    for m in masks {
        let Ok(meta) = std::fs::symlink_metadata(&m) else {
            continue;
        };
        let (path, is_dir) = if meta.file_type().is_symlink() {
            // Mask what the link points at; a dangling link hides nothing.
            match std::fs::canonicalize(&m) {
                Ok(t) => {
                    let d = t.is_dir();
                    (t, d)
                }
                Err(_) => continue,
            }
        } else {
            (m, meta.is_dir())
        };
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

/// The directories of `sys` (the host's `/sys`) that name its network interfaces:
/// `class/net`, `devices/virtual/net`, and the `net` directory of each device that
/// `class/net` links to (`devices/pci…/virtio2/net`).
fn sys_net_dirs(sys: &Path) -> Vec<PathBuf> {
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

enum Presence {
    Exists,
    /// The first component that does not exist.
    Missing(PathBuf),
    /// A component is a regular file: the path can never be created.
    Uncreatable,
}

/// Walk from `root` down to `path`: refuse symlinks on the way, find the first missing
/// component.
fn first_missing(root: &Path, path: &Path) -> Result<Presence, SandboxError> {
    let Ok(rest) = path.strip_prefix(root) else {
        return Ok(Presence::Uncreatable);
    };
    let mut cur = root.to_path_buf();
    let comps: Vec<_> = rest.components().collect();
    for (i, c) in comps.iter().enumerate() {
        cur.push(c);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err(refuse_symlink(&cur)),
            Ok(m) if !m.is_dir() && i + 1 < comps.len() => return Ok(Presence::Uncreatable),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Presence::Missing(cur));
            }
            Err(e) => {
                return Err(SandboxError::io(
                    format!("cannot inspect the protected path {}", cur.display()),
                    e,
                ));
            }
        }
    }
    Ok(Presence::Exists)
}

#[derive(Default)]
struct Found {
    secrets: Vec<PathBuf>,
    protected: Vec<PathBuf>,
}

/// Breadth-first walk of the roots, bounded in depth and entries: secret file names are
/// masked, protected names re-bound read-only, `.git` is looked into only for `hooks` and
/// `config`.
fn walk(roots: &[&Path], home: &Path, found: &mut Found) -> Result<WalkSummary, SandboxError> {
    let mut summary = WalkSummary::default();
    let mut queue: VecDeque<(PathBuf, usize)> =
        roots.iter().map(|r| (r.to_path_buf(), 0)).collect();
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            if summary.entries >= WALK_MAX_ENTRIES {
                summary.truncated = true;
                return Ok(summary);
            }
            summary.entries += 1;
            let name = entry.file_name();
            let path = entry.path();
            let Ok(ft) = entry.file_type() else {
                continue;
            };
            if guards::is_secret_file_name(&name) {
                found.secrets.push(path);
                continue;
            }
            if guards::protected_write(&path, home).is_some() {
                if ft.is_symlink() {
                    return Err(refuse_symlink(&path));
                }
                found.protected.push(path);
                continue;
            }
            if name == ".git" && ft.is_dir() {
                for sub in ["hooks", "config"] {
                    let p = path.join(sub);
                    match std::fs::symlink_metadata(&p) {
                        Ok(m) if m.file_type().is_symlink() => return Err(refuse_symlink(&p)),
                        Ok(_) => found.protected.push(p),
                        Err(_) => {}
                    }
                }
                continue;
            }
            if ft.is_dir() && depth + 1 < WALK_MAX_DEPTH && !WALK_SKIP.iter().any(|s| name == *s) {
                queue.push_back((path, depth + 1));
            }
        }
    }
    Ok(summary)
}

/// Read access in the fallback tier: every top-level directory except the hidden ones,
/// plus the workspace, the roots and the visible parts of HOME.
fn fallback_read_paths(inp: &PlanInputs<'_>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/") {
        for e in rd.flatten() {
            let p = e.path();
            if !SCRATCH_DIRS
                .iter()
                .chain(HIDDEN_DIRS)
                .any(|h| p == Path::new(h))
            {
                out.push(p);
            }
        }
    }
    out.push(PathBuf::from("/tmp"));
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
    // Paths that do not exist are skipped when the Landlock rules are made.
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
