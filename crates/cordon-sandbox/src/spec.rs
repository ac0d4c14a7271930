//! What a sandboxed run is: the command, its roots, its network, its limits.
//!
//! A [`SandboxSpec`] is built on the caller's side by [`SandboxBuilder`], which
//! canonicalizes every root, builds the environment from an allowlist and computes the
//! mount plan from host facts. The helper receives the finished spec over an inherited
//! pipe (never argv or the environment) and only executes it.

use crate::env::EnvPolicy;
use crate::error::SandboxError;
use crate::plan::{self, HomeView, Plan};
use crate::slot::SlotMounts;
use cordon_policy::settings::SandboxMode;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The loopback port the in-sandbox forwarder listens on when a proxy is configured.
pub const DEFAULT_PROXY_PORT: u16 = 3128;

/// Network access of the sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Network {
    /// No network. At the full tier: a network namespace with nothing but its own
    /// loopback, which is up, so the command can bind and connect there (a test suite's
    /// local server) and reach nothing else. In the fallback tier, which has no network
    /// namespace: only `AF_UNIX` sockets can be created.
    None,
    /// The network namespace of [`Network::None`], whose loopback also carries a
    /// forwarder on `127.0.0.1:port` that relays every TCP connection to the egress proxy
    /// listening on `socket` outside the sandbox. In the fallback tier, which has no
    /// network namespace, the forwarder listens on a port of the host's loopback that
    /// the kernel chose (the proxy variables name it instead of `port`) and serves only
    /// this user's sockets; the command's `connect` to it is made by its supervisor,
    /// every other TCP connection, bind and listen is refused, and seccomp allows TCP
    /// sockets only (see `connect_guard.rs`).
    Proxy {
        /// The proxy's Unix socket on the host.
        socket: PathBuf,
        /// The in-sandbox loopback port of the forwarder.
        port: u16,
    },
    /// The host's network, unfiltered.
    Full,
}

/// Which containment tiers the caller accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Require {
    /// Use full containment when the host allows it, otherwise Landlock + seccomp.
    #[default]
    Any,
    /// Refuse to run unless namespaces, Landlock and seccomp are all available.
    Full,
}

/// Resource limits applied to the command (`None` leaves the inherited rlimit, except
/// where a field says otherwise).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// `RLIMIT_CPU`, seconds of CPU time.
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_AS`, bytes of address space.
    pub address_space: Option<u64>,
    /// Processes and threads the command may have at once. Held by a pids cgroup where
    /// cordon can make one, else by `RLIMIT_NPROC` where that holds (see `limits.rs`).
    /// `Some(n)`: refuse to run where neither holds; `None`:
    /// [`DEFAULT_PROCESS_LIMIT`](crate::DEFAULT_PROCESS_LIMIT) where it can be held.
    pub processes: Option<u64>,
    /// `RLIMIT_FSIZE`, bytes of the largest file written.
    pub file_size: Option<u64>,
    /// `RLIMIT_NOFILE`, open file descriptors.
    pub open_files: Option<u64>,
    /// Bytes of the scratch tmpfs that `/tmp`, `/var/tmp` and `/dev/shm` share; `None`:
    /// [`default_tmp_size`](crate::default_tmp_size) of the address-space limit.
    pub tmp_size: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_seconds: None,
            address_space: None,
            processes: None,
            file_size: None,
            open_files: Some(4096),
            tmp_size: None,
        }
    }
}

/// The finished description of one sandboxed run. Built by [`SandboxBuilder::build`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxSpec {
    /// The command and its arguments; `argv[0]` is searched in the sandbox's `PATH`.
    pub argv: Vec<OsString>,
    /// Working directory of the command (must be visible inside the sandbox).
    pub cwd: PathBuf,
    /// The session's workspace (canonical).
    pub workspace: PathBuf,
    /// Every writable root, canonical, the workspace included in `workspace-write` mode.
    pub writable_roots: Vec<PathBuf>,
    /// What the process can physically do.
    pub mode: SandboxMode,
    /// Network access.
    pub network: Network,
    /// HOME visibility.
    pub home_view: HomeView,
    /// The caller's HOME (canonical when it exists).
    pub home: PathBuf,
    /// The environment of the command, already filtered through the allowlist.
    pub env: Vec<(OsString, OsString)>,
    /// Resource limits.
    pub limits: Limits,
    /// Wall-clock limit; the whole process tree is killed and the run exits 124.
    pub timeout: Option<Duration>,
    /// Accepted tiers.
    pub require: Require,
    /// Cap on the bytes of stdout and of stderr passed on (each); the rest is drained and
    /// dropped. `None` lets the command write to cordon's own stdout and stderr directly.
    pub output_limit: Option<u64>,
    /// The mount plan and Landlock paths computed from host facts.
    pub plan: Plan,
    /// The persistent slot that is HOME (and `/tmp` when asked), if any.
    #[serde(default)]
    pub slot: Option<SlotMounts>,
    /// Only these paths (and what lies beneath them) are merged back into the host's
    /// tree; every other change stays for `cordon changes`. Needs the full tier.
    #[serde(default)]
    pub merge_only: Option<Vec<PathBuf>>,
}

/// The common git directory of `workspace` when its `.git` is a file naming a linked
/// worktree's git directory (`gitdir: …/.git/worktrees/NAME`, with a `commondir` file).
fn worktree_common_dir(workspace: &Path) -> Option<PathBuf> {
    let dotgit = workspace.join(".git");
    if !std::fs::symlink_metadata(&dotgit).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dotgit).ok()?;
    let gitdir = Path::new(text.lines().next()?.strip_prefix("gitdir:")?.trim());
    let gitdir = std::fs::canonicalize(workspace.join(gitdir)).ok()?;
    let common = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = std::fs::canonicalize(gitdir.join(common.trim())).ok()?;
    (common.is_dir() && common != Path::new("/")).then_some(common)
}

/// Secret values kept out of the sandbox; `Debug` shows only how many.
#[derive(Clone, Default)]
struct Withheld(Vec<String>);

impl std::fmt::Debug for Withheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Withheld({} values)", self.0.len())
    }
}

impl Withheld {
    /// Whether `text` holds one of the values.
    fn held_by(&self, text: &OsString) -> bool {
        let bytes = text.as_encoded_bytes();
        self.0.iter().any(|v| {
            let v = v.as_bytes();
            bytes.windows(v.len()).any(|w| w == v)
        })
    }
}

/// Builds a [`SandboxSpec`]. Every path is canonicalized; the workspace defaults to the
/// current directory.
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    argv: Vec<OsString>,
    cwd: Option<PathBuf>,
    workspace: Option<PathBuf>,
    extra_roots: Vec<PathBuf>,
    mode: SandboxMode,
    network: Network,
    home_view: HomeView,
    home: Option<PathBuf>,
    home_readable: Option<Vec<PathBuf>>,
    masks: Vec<PathBuf>,
    unix_sockets: Vec<PathBuf>,
    ca_bundle: Option<PathBuf>,
    ssh_known_hosts: Option<PathBuf>,
    ssh_agent: Option<PathBuf>,
    env_set: Vec<(OsString, OsString)>,
    withheld: Withheld,
    env: EnvPolicy,
    limits: Limits,
    timeout: Option<Duration>,
    require: Require,
    output_limit: Option<u64>,
    slot: Option<SlotMounts>,
    merge_only: Option<Vec<PathBuf>>,
}

impl SandboxBuilder {
    /// A builder for running `argv` (at least the program name).
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        SandboxBuilder {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: None,
            workspace: None,
            extra_roots: Vec::new(),
            mode: SandboxMode::WorkspaceWrite,
            network: Network::None,
            home_view: HomeView::Hidden,
            home: None,
            home_readable: None,
            masks: Vec::new(),
            unix_sockets: Vec::new(),
            ca_bundle: None,
            ssh_known_hosts: None,
            ssh_agent: None,
            env_set: Vec::new(),
            withheld: Withheld::default(),
            env: EnvPolicy::default(),
            limits: Limits::default(),
            timeout: None,
            require: Require::Any,
            output_limit: None,
            slot: None,
            merge_only: None,
        }
    }

    /// The session's workspace. Defaults to the current directory. This must come from
    /// the session's configuration, never from a tool call.
    pub fn workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = Some(dir.into());
        self
    }

    /// The command's working directory (defaults to the workspace). It never widens the
    /// writable roots: a directory outside them is merely read-only.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// An extra writable root (from configuration): absolute, or `~`/`~/…` for HOME.
    /// A relative path is refused when the spec is built: it would be a guess whether it
    /// means HOME or some directory, and a wrong guess widens the sandbox elsewhere.
    pub fn writable_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.extra_roots.push(dir.into());
        self
    }

    /// The sandbox mode.
    pub fn mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Network access.
    pub fn network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }

    /// HOME visibility.
    pub fn home_view(mut self, view: HomeView) -> Self {
        self.home_view = view;
        self
    }

    /// The caller's HOME (defaults to `$HOME`).
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Paths under HOME that stay visible, read-only, when HOME is hidden (relative paths
    /// are taken relative to HOME). Replaces the built-in toolchain list.
    pub fn home_readable(mut self, paths: Vec<PathBuf>) -> Self {
        self.home_readable = Some(paths);
        self
    }

    /// An extra path to mask (beyond the built-in secret list): absolute, or `~/…`. A
    /// relative path is refused when the spec is built, so that a guess never leaves
    /// the intended path unmasked.
    pub fn mask(mut self, path: impl Into<PathBuf>) -> Self {
        self.masks.push(path.into());
        self
    }

    /// A host Unix socket the command may connect to (a relative path is taken from the
    /// current directory): bound in, read-only, at its real path, even inside a
    /// directory the sandbox hides. Building refuses a path that is not a socket, or one
    /// inside a masked secret.
    pub fn allow_unix_socket(mut self, path: impl Into<PathBuf>) -> Self {
        self.unix_sockets.push(path.into());
        self
    }

    /// A PEM bundle of trusted roots (the system's plus the egress proxy's run CA), shown
    /// read-only inside at [`crate::CA_BUNDLE_IN_SANDBOX`] and named by the usual
    /// variables (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`,
    /// `CURL_CA_BUNDLE`, `GIT_SSL_CAINFO`). Only with [`Network::Proxy`].
    pub fn ca_bundle(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_bundle = Some(path.into());
        self
    }

    /// The `known_hosts` file ssh checks host keys against inside, read-only, in place of
    /// `~/.ssh/known_hosts` (which ssh then does not read). See `ssh.rs`: with
    /// [`Network::Proxy`], ssh reaches hosts through the proxy. Building refuses a path
    /// that is not a regular file, one named like a private key or holding one, and a
    /// run where ssh would not read it (the host's network, `full-access`).
    pub fn ssh_known_hosts(mut self, path: impl Into<PathBuf>) -> Self {
        self.ssh_known_hosts = Some(path.into());
        self
    }

    /// Make this ssh agent's socket reachable inside, bound at
    /// [`crate::AGENT_IN_SANDBOX`] and named by `SSH_AUTH_SOCK`. Without it no agent is
    /// reachable and `SSH_AUTH_SOCK` is not passed. Building refuses a path that is not a
    /// socket.
    pub fn ssh_agent(mut self, socket: impl Into<PathBuf>) -> Self {
        self.ssh_agent = Some(socket.into());
        self
    }

    /// Set `name` to `value` inside, whatever the environment policy says (a credential's
    /// placeholder). The caller's own value of `name` never passes.
    pub fn set_env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env_set.push((name.into(), value.into()));
        self
    }

    /// Values that must not enter the sandbox (the real values of credentials the egress
    /// proxy adds): every variable whose value holds one is left out, whatever its name
    /// or the environment policy, and building refuses a command whose arguments hold
    /// one.
    pub fn withhold_values(mut self, values: Vec<String>) -> Self {
        self.withheld
            .0
            .extend(values.into_iter().filter(|v| !v.is_empty()));
        self
    }

    /// The environment policy (allowlist and explicit secret overrides).
    pub fn env_policy(mut self, env: EnvPolicy) -> Self {
        self.env = env;
        self
    }

    /// Resource limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Wall-clock timeout.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Cap the bytes of stdout and of stderr passed on (each); the command is not
    /// stopped, its excess output is dropped.
    pub fn output_limit(mut self, bytes: Option<u64>) -> Self {
        self.output_limit = bytes;
        self
    }

    /// Run in a persistent slot: its directories become HOME (and `/tmp` when the slot
    /// says so) instead of an empty tmpfs. The caller holds the slot's guard until the
    /// run ends. A slot needs the full tier (mounts), a hidden HOME and a sandbox mode
    /// other than `full-access`; building refuses anything else.
    pub fn slot(mut self, slot: SlotMounts) -> Self {
        self.slot = Some(slot);
        self
    }

    /// Merge back only `paths` (absolute; and what lies beneath them): every other
    /// change the command makes in its writable roots stays in the run's change set
    /// for a human (`cordon changes`). The copy-on-write roots that make this possible
    /// exist only in the full tier, so the run then requires it.
    pub fn merge_only(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.merge_only = Some(paths.into_iter().collect());
        self
    }

    /// Accepted tiers.
    pub fn require(mut self, require: Require) -> Self {
        self.require = require;
        self
    }

    /// Validate, canonicalize and compute the mount plan.
    pub fn build(self) -> Result<SandboxSpec, SandboxError> {
        if self.argv.is_empty() || self.argv[0].is_empty() {
            return Err(SandboxError::invalid("no command was given"));
        }
        if self.argv.iter().any(|a| self.withheld.held_by(a)) {
            return Err(SandboxError::invalid(
                "the command's arguments hold the real value of a credential that is kept outside the sandbox; pass its placeholder variable instead (\"$VAR\" expanded inside)",
            ));
        }
        let current = std::env::current_dir()
            .map_err(|e| SandboxError::io("cannot read the current directory", e))?;
        let workspace = canonical_dir(self.workspace.as_deref().unwrap_or(&current), "workspace")?;
        let home = match self
            .home
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        {
            Some(h) if h.is_absolute() => std::fs::canonicalize(&h).unwrap_or(h),
            Some(h) => {
                return Err(SandboxError::invalid(format!(
                    "HOME must be an absolute path, not {}",
                    h.display()
                )));
            }
            None => PathBuf::from("/nonexistent"),
        };
        let cwd = match &self.cwd {
            Some(c) => canonical_dir(&workspace.join(c), "working directory")?,
            None => workspace.clone(),
        };
        let mut writable_roots = Vec::new();
        match self.mode {
            SandboxMode::ReadOnly => {}
            SandboxMode::WorkspaceWrite | SandboxMode::FullAccess => {
                if workspace == Path::new("/") && matches!(self.mode, SandboxMode::WorkspaceWrite) {
                    return Err(SandboxError::invalid(
                        "`/` cannot be the workspace of a workspace-write sandbox; choose a project directory",
                    ));
                }
                writable_roots.push(workspace.clone());
                for r in &self.extra_roots {
                    let r = canonical_dir(
                        &absolute_or_home(r, &home, "writable root")?,
                        "writable root",
                    )?;
                    if r == Path::new("/") {
                        return Err(SandboxError::invalid(
                            "`/` cannot be a writable root; use full-access mode instead",
                        ));
                    }
                    writable_roots.push(r);
                }
            }
            // A mode this version does not know gets the narrowest view.
            _ => {}
        }
        // A workspace that is a linked git worktree keeps its commits, refs and index in
        // the main repository's git directory: that directory is a writable root too
        // (copy-on-write like the workspace, so its hooks and config are judged when
        // merged), or `git commit` could not work inside.
        if matches!(self.mode, SandboxMode::WorkspaceWrite)
            && let Some(common) = worktree_common_dir(&workspace)
            && !writable_roots.iter().any(|r| common.starts_with(r))
        {
            writable_roots.push(common);
        }
        writable_roots.sort();
        writable_roots.dedup();
        if let Network::Proxy { socket, port } = &self.network {
            if *port == 0 {
                return Err(SandboxError::invalid("the proxy port must not be 0"));
            }
            let meta = std::fs::metadata(socket).map_err(|e| {
                SandboxError::io(
                    format!("cannot use the proxy socket {}", socket.display()),
                    e,
                )
            })?;
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(SandboxError::invalid(format!(
                    "the proxy socket {} is not a Unix socket",
                    socket.display()
                )));
            }
        }
        let home_readable: Vec<PathBuf> = match &self.home_readable {
            Some(list) => list.iter().map(|p| expand_home(p, &home)).collect(),
            None => plan::DEFAULT_HOME_READABLE
                .iter()
                .map(|r| home.join(r))
                .collect(),
        };
        // Before the state directory's mask: the relay's copy may be made there
        // (`relay_copy.rs`), which creates the directory.
        let ssh = crate::ssh::inputs(
            self.mode,
            &self.network,
            &home,
            self.ssh_known_hosts.as_deref(),
        )?;
        let mut masks = self
            .masks
            .iter()
            .map(|p| absolute_or_home(p, &home, "path to mask"))
            .collect::<Result<Vec<PathBuf>, SandboxError>>()?;
        if let Some(state) = crate::state_mask::state_dir() {
            let mut keep: Vec<&Path> = vec![&workspace, &home];
            keep.extend(writable_roots.iter().map(PathBuf::as_path));
            masks.extend(crate::state_mask::state_masks(&state, &keep));
        }
        let unix_sockets = self
            .unix_sockets
            .iter()
            .map(|p| host_socket(p))
            .collect::<Result<Vec<_>, _>>()?;
        if self.limits.processes == Some(0) {
            return Err(SandboxError::invalid(
                "the process limit must be at least 1",
            ));
        }
        let scratch_size = match self.limits.tmp_size {
            Some(n) if n < crate::limits::MIN_TMP_SIZE => {
                return Err(SandboxError::invalid(format!(
                    "the size of /tmp must be at least {} bytes (1 MiB)",
                    crate::limits::MIN_TMP_SIZE
                )));
            }
            Some(n) => n,
            None => crate::limits::default_tmp_size(self.limits.address_space),
        };
        let ssh_agent = match &self.ssh_agent {
            Some(p) => Some(crate::ssh::agent(self.mode, &host_socket(p)?)),
            None => None,
        };
        let mut require = self.require;
        if let Some(slot) = &self.slot {
            check_slot(slot, self.mode, self.home_view, &home)?;
            // The slot's directory holds its lock beside it: neither may be inside what
            // the command can write (or see through a copy-on-write root).
            let holder = slot
                .home
                .parent()
                .and_then(Path::parent)
                .unwrap_or(&slot.home);
            let holder = std::fs::canonicalize(holder).unwrap_or_else(|_| holder.to_path_buf());
            if let Some(r) = writable_roots
                .iter()
                .find(|r| holder.starts_with(r) || r.starts_with(&holder))
            {
                return Err(SandboxError::invalid(format!(
                    "the slot {} lies inside the writable root {} (or holds it): move cordon's state directory out of it (CORDON_STATE_DIR)",
                    slot.home.display(),
                    r.display()
                )));
            }
            // Without mounts a slot could not be HOME: the run would see the real one.
            require = Require::Full;
        }
        let merge_only = match &self.merge_only {
            None => None,
            Some(paths) => {
                // The fallback tier writes the roots directly: no allowlist could hold.
                require = Require::Full;
                Some(
                    paths
                        .iter()
                        .map(|p| canonical_target(p))
                        .collect::<Result<Vec<_>, _>>()?,
                )
            }
        };
        let inputs = plan::PlanInputs {
            mode: self.mode,
            workspace: &workspace,
            writable_roots: &writable_roots,
            home: &home,
            home_view: self.home_view,
            home_readable: &home_readable,
            masks: &masks,
            proxy_socket: match &self.network {
                Network::Proxy { socket, .. } => Some(socket.as_path()),
                _ => None,
            },
            unix_sockets: &unix_sockets,
            ca_bundle: match &self.network {
                Network::Proxy { .. } => self.ca_bundle.as_deref(),
                _ => None,
            },
            ssh: ssh.as_ref(),
            ssh_agent: ssh_agent.as_ref().and_then(|(op, _)| op.as_ref()),
            full_network: matches!(self.network, Network::Full),
            scratch_size,
            slot: self.slot.as_ref(),
        };
        let plan = plan::build(&inputs)?;
        if let Some(slot) = &self.slot {
            prepare_slot_mount_points(slot, &home, &plan)?;
        }
        let mut env = self.env.build(std::env::vars_os(), &home);
        if let Network::Proxy { port, .. } = &self.network {
            env.retain(|(k, _)| !crate::env::is_proxy_name(k));
            let url = OsString::from(format!("http://127.0.0.1:{port}"));
            for name in [
                "HTTP_PROXY",
                "HTTPS_PROXY",
                "ALL_PROXY",
                "http_proxy",
                "https_proxy",
                "all_proxy",
            ] {
                env.push((name.into(), url.clone()));
            }
            env.push(("NO_PROXY".into(), OsString::new()));
            env.push(("no_proxy".into(), OsString::new()));
            if self.ca_bundle.is_some() {
                let names = crate::env::CA_BUNDLE_VARS;
                env.retain(|(k, _)| !names.iter().any(|n| k == n));
                for name in names {
                    env.push(((*name).into(), plan::CA_BUNDLE_IN_SANDBOX.into()));
                }
            }
        }
        env.retain(|(_, v)| !self.withheld.held_by(v));
        // An agent is reachable only when the caller passed one.
        env.retain(|(k, _)| k != "SSH_AUTH_SOCK");
        if let Some((_, path)) = ssh_agent {
            env.push(("SSH_AUTH_SOCK".into(), path));
        }
        let ssh_env = ssh.as_ref().map(crate::ssh::env).unwrap_or_default();
        for (name, value) in ssh_env.iter().chain(&self.env_set) {
            env.retain(|(k, _)| k != name);
            env.push((name.clone(), value.clone()));
        }
        Ok(SandboxSpec {
            argv: self.argv,
            cwd,
            workspace,
            writable_roots,
            mode: self.mode,
            network: self.network,
            home_view: self.home_view,
            home,
            env,
            limits: self.limits,
            timeout: self.timeout,
            require,
            output_limit: self.output_limit,
            plan,
            slot: self.slot,
            merge_only,
        })
    }
}

/// Refuse a slot where it cannot be HOME.
fn check_slot(
    slot: &SlotMounts,
    mode: SandboxMode,
    view: HomeView,
    home: &Path,
) -> Result<(), SandboxError> {
    if matches!(mode, SandboxMode::FullAccess) {
        return Err(SandboxError::invalid(
            "a slot cannot be used in full-access mode, which shows the real HOME writable; choose another --sandbox mode",
        ));
    }
    if view == HomeView::Visible {
        return Err(SandboxError::invalid(
            "a slot is the sandbox's HOME, so it cannot be used with --home visible",
        ));
    }
    if !home.is_dir() {
        return Err(SandboxError::invalid(format!(
            "a slot becomes the sandbox's HOME, and HOME ({}) is not a directory",
            home.display()
        )));
    }
    for d in [Some(&slot.home), slot.tmp.as_ref(), Some(&slot.caches)]
        .into_iter()
        .flatten()
    {
        if !std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()) {
            return Err(SandboxError::invalid(format!(
                "the slot directory {} is missing or not a directory",
                d.display()
            )));
        }
    }
    Ok(())
}

/// Make every directory on the way to a mount point under HOME a real directory of the
/// slot before the helper mounts: the slot was written by earlier sandboxed runs, and the
/// helper, which creates missing mount points, would otherwise follow a symlink planted
/// there (`~/.local -> /somewhere/on/the/host`) and create a directory where it leads.
/// Each component is opened with `O_NOFOLLOW` relative to its parent; a symlink or a
/// file in the way refuses the run.
fn prepare_slot_mount_points(
    slot: &SlotMounts,
    home: &Path,
    plan: &Plan,
) -> Result<(), SandboxError> {
    use crate::plan::MountOp;
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let root = rustix::fs::open(&slot.home, flags, Mode::empty()).map_err(|e| {
        SandboxError::setup(format!("cannot open the slot {}: {e}", slot.home.display()))
    })?;
    for op in &plan.ops {
        let dst = match op {
            MountOp::Bind { dst, .. } | MountOp::Socket { dst, .. } => dst,
            MountOp::Tmpfs { path }
            | MountOp::Scratch { path }
            | MountOp::Cache { path }
            | MountOp::MaskDir { path }
            | MountOp::MaskFile { path } => path,
            MountOp::Overlay { root } => root,
            _ => continue,
        };
        let Ok(rel) = dst.strip_prefix(home) else {
            continue;
        };
        let Some(parent) = rel.parent() else {
            continue;
        };
        let mut fd = rustix::fs::openat(&root, ".", flags, Mode::empty())
            .map_err(|e| SandboxError::setup(format!("cannot open the slot: {e}")))?;
        for c in parent.components() {
            let name = c.as_os_str();
            let refuse = |why: String| {
                SandboxError::setup(format!(
                    "refusing to start: in the slot's HOME, {} {why}, where cordon mounts {}; remove it, or the slot (`cordon slots rm`)",
                    home.join(rel.parent().unwrap_or(rel)).display(),
                    dst.display()
                ))
            };
            match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(refuse(format!("cannot be created ({e})"))),
            }
            fd = rustix::fs::openat(&fd, name, flags, Mode::empty())
                .map_err(|e| refuse(format!("is not a plain directory ({e})")))?;
        }
    }
    Ok(())
}

/// `~` and `~/x` are expanded against `home`; relative paths are taken relative to it.
fn expand_home(p: &Path, home: &Path) -> PathBuf {
    match p.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) if p.is_relative() => home.join(p),
        Err(_) => p.to_path_buf(),
    }
}

/// `p` with a leading `~` expanded to `home`; any other relative path is refused.
fn absolute_or_home(p: &Path, home: &Path, what: &str) -> Result<PathBuf, SandboxError> {
    let e = match p.strip_prefix("~") {
        Ok(rest) => home.join(rest),
        Err(_) => p.to_path_buf(),
    };
    if e.is_absolute() {
        Ok(e)
    } else {
        Err(SandboxError::invalid(format!(
            "the {what} {} is relative: give an absolute path or one that starts with ~/",
            p.display()
        )))
    }
}

/// The real path of a host Unix socket the command may use; refused unless it is one.
fn host_socket(p: &Path) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::FileTypeExt;
    let real = std::fs::canonicalize(p)
        .map_err(|e| SandboxError::io(format!("cannot use the Unix socket {}", p.display()), e))?;
    let meta = std::fs::metadata(&real)
        .map_err(|e| SandboxError::io(format!("cannot use the Unix socket {}", p.display()), e))?;
    if !meta.file_type().is_socket() {
        return Err(SandboxError::invalid(format!(
            "{} is not a Unix socket; only a socket can be made reachable in the sandbox",
            p.display()
        )));
    }
    Ok(real)
}

/// A path to merge back: absolute, its directory canonical (the path itself may not
/// exist yet), so that it compares with the merge's own paths.
fn canonical_target(p: &Path) -> Result<PathBuf, SandboxError> {
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return Err(SandboxError::invalid(format!(
            "{} cannot be a path to merge back; name a file or directory",
            p.display()
        )));
    };
    if !p.is_absolute() {
        return Err(SandboxError::invalid(format!(
            "the path to merge back {} must be absolute",
            p.display()
        )));
    }
    Ok(canonical_dir(dir, "directory of a path to merge back")?.join(name))
}

fn canonical_dir(p: &Path, what: &str) -> Result<PathBuf, SandboxError> {
    let c = std::fs::canonicalize(p)
        .map_err(|e| SandboxError::io(format!("cannot use the {what} {}", p.display()), e))?;
    if !c.is_dir() {
        return Err(SandboxError::invalid(format!(
            "the {what} {} is not a directory",
            p.display()
        )));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SandboxErrorKind;

    #[test]
    fn home_expansion() {
        let h = Path::new("/home/u");
        assert_eq!(expand_home(Path::new("~/.cargo"), h), h.join(".cargo"));
        assert_eq!(expand_home(Path::new(".m2"), h), h.join(".m2"));
        assert_eq!(expand_home(Path::new("/opt/x"), h), Path::new("/opt/x"));
        let root = |p: &str| absolute_or_home(Path::new(p), h, "writable root");
        assert_eq!(root("~/src").unwrap(), h.join("src"));
        assert_eq!(root("~").unwrap(), h);
        assert_eq!(root("/opt/x").unwrap(), Path::new("/opt/x"));
        let e = root("build").unwrap_err();
        assert_eq!(e.kind, SandboxErrorKind::Invalid);
        assert_eq!(
            e.message,
            "the writable root build is relative: give an absolute path or one that starts with ~/"
        );
    }

    #[test]
    fn empty_command_is_refused() {
        let err = SandboxBuilder::new(Vec::<OsString>::new()).build();
        assert!(err.is_err());
    }

    #[test]
    fn cwd_outside_workspace_does_not_widen_roots() {
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let spec = SandboxBuilder::new(["true"])
            .workspace(ws.path())
            .cwd(other.path())
            .home(ws.path())
            .build()
            .unwrap();
        let ws_c = std::fs::canonicalize(ws.path()).unwrap();
        assert_eq!(spec.writable_roots, vec![ws_c]);
        assert_eq!(spec.cwd, std::fs::canonicalize(other.path()).unwrap());
    }

    #[test]
    fn read_only_mode_has_no_writable_roots() {
        let ws = tempfile::tempdir().unwrap();
        let spec = SandboxBuilder::new(["true"])
            .workspace(ws.path())
            .home(ws.path())
            .mode(SandboxMode::ReadOnly)
            .build()
            .unwrap();
        assert!(spec.writable_roots.is_empty());
    }
}
