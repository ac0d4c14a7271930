//! What a sandboxed run is: the command, its roots, its network, its limits.
//!
//! A [`SandboxSpec`] is built on the caller's side by [`SandboxBuilder`], which
//! canonicalizes every root, builds the environment from an allowlist and computes the
//! mount plan from host facts. The helper receives the finished spec over an inherited
//! pipe (never argv or the environment) and only executes it.

use crate::env::EnvPolicy;
use crate::plan::{HomeView, Plan};
use crate::slot::SlotMounts;
use cordon_policy::settings::SandboxMode;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

mod build;
mod slot_home;

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
///
/// The fallback tier (Landlock and seccomp, where user namespaces are unavailable) writes
/// the roots in place and shares the host's PIDs, network namespace and IPC: it cannot
/// keep code the command plants in the workspace from being run later by the host's own
/// tools (see [`fallback_gaps`](crate::fallback_gaps)). So it runs only when the caller
/// says [`Require::Any`]; the default refuses instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Require {
    /// Use full containment when the host allows it, otherwise the fallback tier, which
    /// prints what it does not protect at every run.
    Any,
    /// Refuse to run unless namespaces, Landlock and seccomp are all available.
    #[default]
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
    /// Files made writable alone (canonical regular files, see
    /// [`SandboxBuilder::writable_file`]). The directory of each is among
    /// `writable_roots`, there only for them: its copy-on-write layer lets nothing but
    /// these files reach the host.
    #[serde(default)]
    pub writable_files: Vec<PathBuf>,
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
    /// What needs the full tier besides the caller's own [`Require`] (a slot, a merge
    /// allowlist, a decision reached for the full tier), for the refusal to name; `None`
    /// when only the caller required it.
    #[serde(default)]
    pub full_tier_for: Option<String>,
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
    /// Keep the run's changes in its change set for review instead of merging them
    /// (`cordon changes show`, `apply`, `discard`). Needs the full tier.
    #[serde(default)]
    pub hold: bool,
    /// The most bytes the run's changes to its writable roots may take (the copy-on-write
    /// layers); the run is stopped when they reach it. `None`: all but a reserve of the
    /// free space where the changes are kept.
    #[serde(default)]
    pub changes_limit: Option<u64>,
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
    extra_files: Vec<PathBuf>,
    mode: SandboxMode,
    network: Network,
    home_view: HomeView,
    home: Option<PathBuf>,
    home_readable: Option<Vec<PathBuf>>,
    masks: Vec<PathBuf>,
    own_files: Vec<PathBuf>,
    unix_sockets: Vec<PathBuf>,
    ca_bundle: Option<PathBuf>,
    proxy_loopback: bool,
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
    hold: bool,
    changes_limit: Option<u64>,
    read_only_binds: Vec<(PathBuf, PathBuf)>,
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
            extra_files: Vec::new(),
            mode: SandboxMode::WorkspaceWrite,
            network: Network::None,
            home_view: HomeView::Hidden,
            home: None,
            home_readable: None,
            masks: Vec::new(),
            own_files: Vec::new(),
            unix_sockets: Vec::new(),
            ca_bundle: None,
            proxy_loopback: false,
            ssh_known_hosts: None,
            ssh_agent: None,
            env_set: Vec::new(),
            withheld: Withheld::default(),
            env: EnvPolicy::default(),
            limits: Limits::default(),
            timeout: None,
            require: Require::Full,
            output_limit: None,
            slot: None,
            merge_only: None,
            hold: false,
            changes_limit: None,
            read_only_binds: Vec::new(),
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

    /// One existing regular file made writable alone: absolute, or `~/…` for HOME.
    ///
    /// A bind mount of the file itself would write the host's file while the command
    /// runs, let it change the file's mode (a set-user-ID bit, when run as root) and
    /// fail every program that saves by writing a new file and renaming it over the
    /// old one. So the file's directory is mounted copy-on-write like a writable root,
    /// and the merge after the run takes only this file from its layer, and only as a
    /// regular file (no symlink, no directory, no removal), without set-id bits; every
    /// other change there waits in the run's change set for `cordon changes`. Without
    /// copy-on-write layers no such limit could hold, so the run then requires the full
    /// tier. A file that an ordinary root already makes writable adds nothing.
    pub fn writable_file(mut self, file: impl Into<PathBuf>) -> Self {
        self.extra_files.push(file.into());
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

    /// One of cordon's own files kept outside its state directory (a `--store`, an
    /// `--audit-file`): masked like [`mask`](Self::mask), and building refuses when the
    /// command could write in its directory. A mask hides the file, not what is made
    /// beside it: SQLite reads a `-journal` planted next to its database back into it.
    pub fn own_file(mut self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.masks.push(path.clone());
        self.own_files.push(path);
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

    /// Send loopback destinations through the proxy too (to the host's loopback), for a
    /// caller whose network policy allows the host's loopback addresses. By default
    /// `NO_PROXY` names loopback, so a server the command starts inside stays reachable
    /// directly. Only with [`Network::Proxy`].
    pub fn proxy_loopback(mut self, through_proxy: bool) -> Self {
        self.proxy_loopback = through_proxy;
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

    /// Hold the run's changes for review instead of merging them: the change set stays
    /// for `cordon changes show`, `apply` or `discard`. The copy-on-write roots that make
    /// this possible exist only in the full tier, so the run then requires it.
    pub fn hold(mut self, hold: bool) -> Self {
        self.hold = hold;
        self
    }

    /// The most bytes the run's changes to its writable roots may take; the run is
    /// stopped when they reach it (`None`: all but a reserve of the free space).
    pub fn changes_limit(mut self, bytes: Option<u64>) -> Self {
        self.changes_limit = bytes;
        self
    }

    /// Show the host file or directory `src` read-only at `dst` inside the sandbox, over
    /// whatever the sandbox would show there (a private `/tmp`, a copy-on-write root);
    /// cordon's masks still apply on top. Only the full tier has mounts: in the fallback
    /// tier the run reads `dst` from the host.
    pub fn read_only_bind(mut self, src: impl Into<PathBuf>, dst: impl Into<PathBuf>) -> Self {
        self.read_only_binds.push((src.into(), dst.into()));
        self
    }

    /// Accepted tiers ([`Require::Full`] unless said otherwise).
    pub fn require(mut self, require: Require) -> Self {
        self.require = require;
        self
    }
}
