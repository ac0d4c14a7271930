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
//! the kernel's), reporting it as a blocked write (see `run/settle.rs`). The fallback
//! tier has no observer for this list, so there only the removal applies.
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

use crate::caches::CacheLayer;
use crate::changes::Layer;
use cordon_policy::settings::SandboxMode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod canon;
mod compute;
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests;
#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests_secrets;
mod walk;

pub(crate) use compute::build;
pub(crate) use walk::Limits as WalkLimits;

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

/// The system the fallback tier lets the command read and run, beside the workspace, the
/// writable roots, HOME's toolchains and the scratch directory: programs, libraries,
/// their data and configuration (`/etc` without the system secrets the user could read,
/// see `system_secrets.rs`), the stores of Nix and Guix, snaps, openSUSE's CA bundle
/// (which `/etc/ssl` links to), and the kernel's views. Not the homes, `/root`, `/run`,
/// `/tmp`, `/var` (services' data and spools), `/srv`, `/mnt`, `/media` or `/boot`:
/// without a mount to hide their secrets, Landlock can only leave them out.
pub const FALLBACK_SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix",
    "/gnu",
    "/snap",
    "/var/lib/ca-certificates",
    "/proc",
    "/sys",
];

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

/// How deep the walk for secrets and protected names inside writable roots goes: a
/// deeper directory refuses the run (no real tree nests this far outside the skipped
/// dependency directories).
pub const WALK_MAX_DEPTH: usize = 64;
/// How many entries the walk visits at most (over all roots): a tree with more refuses
/// the run, naming the directory to hide with `--mask` (about a second of walking).
pub const WALK_MAX_ENTRIES: usize = 200_000;

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
    /// Always `false`: a walk that cannot visit everything refuses the run (the field
    /// stays for the report's format).
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
    /// (before the helper leaves the system secrets out, see `system_secrets.rs`): an
    /// allowlist, since Landlock hides by not granting (see [`FALLBACK_SYSTEM_READ`]).
    pub fallback_read_paths: Vec<PathBuf>,
    /// What the full tier masks (HOME's secrets, cordon's state directory, `--mask`
    /// paths, secrets found in the writable roots), canonical: the fallback tier's
    /// Landlock rules are split so that none covers one, where that can be done (see
    /// `helper/fs_rules.rs`).
    #[serde(default)]
    pub fallback_unreadable: Vec<PathBuf>,
    /// The paths among the masks that hide cordon's own state directory, canonical.
    #[serde(default)]
    pub state_masks: Vec<PathBuf>,
    /// Protected paths inside copy-on-write roots that exist: the full tier judges what
    /// the run leaves there when it merges; the fallback tier, which writes them in
    /// place, puts them back after the run (see `run/undo.rs`).
    #[serde(default)]
    pub existing_protected: Vec<PathBuf>,
    /// The private scratch directory of a run that may fall back (`TMPDIR` there),
    /// made when the run starts (see `scratch.rs`).
    #[serde(default)]
    pub fallback_scratch: Option<PathBuf>,

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
    /// Host paths shown read-only at a path inside: (host source, path inside).
    pub read_only_binds: &'a [(PathBuf, PathBuf)],
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
    /// The paths that hide cordon's state directory (masked like `masks`).
    pub state_masks: &'a [PathBuf],
    /// The walk's budgets ([`WALK_MAX_ENTRIES`], [`WALK_MAX_DEPTH`]; smaller in tests).
    pub walk_limits: WalkLimits,
}
