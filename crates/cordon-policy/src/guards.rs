//! The non-disableable guard lists: sensitive read paths, protected write paths and
//! critical delete targets.
//!
//! These lists are shared by the policy (which denies requests that touch them) and the
//! sandbox (which masks or re-binds them read-only), so both layers agree on what a
//! secret is. Matching is on path components, ASCII case-insensitive for every listed
//! name, never on string prefixes. Callers pass absolute, lexically clean paths; the
//! decision core checks both the literal and the resolved form of every path.
//!
//! Nothing here may be switched off by configuration: no rule, mode or flag reaches it.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// Paths under `HOME` that hold credentials. Reading them is denied; the sandbox masks them.
pub const SENSITIVE_HOME_PATHS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".kube/config",
    ".docker/config.json",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".azure",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    // Build tools' server passwords and publishing credentials.
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    // Other tools' credentials.
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".config/rclone",
    ".config/op",
    ".config/containers/auth.json",
    ".terraform.d/credentials.tfrc.json",
    ".config/doctl",
    // npm's global configuration of each Node.js that nvm installed (`npm login
    // --location=global` writes the registry token there).
    ".nvm/versions/node/*/etc/npmrc",
    // Deploy and cloud CLIs' logins.
    ".netlify/config.json",
    ".config/netlify",
    ".config/configstore/firebase-tools.json",
    ".wrangler/config",
    ".config/.wrangler/config",
    ".config/helm/repositories.yaml",
    ".config/helm/registry",
    ".oci",
    ".config/heroku",
    ".local/share/com.vercel.cli",
    // MCP server definitions, often with API keys in their environment.
    ".claude.json",
    // Wallets, tokens and keys of other tools (no build reads them).
    ".config/github-copilot",
    ".gem/credentials",
    ".config/solana",
    ".ethereum/keystore",
    ".bitcoin",
    ".local/share/atuin/key",
    // Coding agents' own logins.
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    // Browser profiles: cookies, saved logins and session tokens.
    ".mozilla/firefox",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".thunderbird",
    // Shell and REPL histories: typed passwords and tokens end up there.
    ".bash_history",
    ".zsh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
    ".viminfo",
    ".lesshst",
];

/// System files that hold secrets: password hashes and the TLS private-key directories.
/// Reading them is denied; the sandbox masks them (run as root, the command is uid 0 in
/// its namespace and the owner's bits would let it read them even without
/// capabilities), and in the fallback tier Landlock leaves them out.
pub const SENSITIVE_SYSTEM_PATHS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
    // Debian's and Ubuntu's daily copies (`/etc/cron.daily/passwd`).
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
];

/// The directory of the SSH server's host keys; its `ssh_host_*_key` files (not the
/// `.pub` ones) are secrets too.
pub const SSH_HOST_KEY_DIR: &str = "/etc/ssh";

/// Is `name` an SSH host private key (`ssh_host_*_key`, not the `.pub`)? The sandbox
/// lists [`SSH_HOST_KEY_DIR`] with it; this module does no I/O.
pub fn is_ssh_host_key(name: &OsStr) -> bool {
    let n = name.as_encoded_bytes();
    let (head, tail) = (b"ssh_host_".as_slice(), b"_key".as_slice());
    n.len() > head.len() + tail.len()
        && n[..head.len()].eq_ignore_ascii_case(head)
        && n[n.len() - tail.len()..].eq_ignore_ascii_case(tail)
}

/// Writable locations under `HOME` that make something run later (persistence) or that
/// configure cordon and other agents. Writing them is denied; the sandbox never binds them
/// writable.
pub const PROTECTED_HOME_PATHS: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".inputrc",
    ".xprofile",
    ".xinitrc",
    ".xsession",
    ".pam_environment",
    ".config/fish",
    ".config/autostart",
    ".config/systemd",
    ".local/share/systemd",
    ".config/environment.d",
    ".config/cordon",
    ".ssh",
    ".gitconfig",
    ".config/git",
    ".local/bin",
    // Language and tool start-up hooks: code or settings that the next host run of the
    // tool loads without being asked (a `.pth` or `usercustomize.py` in the user site,
    // a cargo `rustc-wrapper`, an npm `script-shell`, a Gradle init script, a kubeconfig
    // `exec` plugin, an AWS `credential_process`), and the directories of programs that
    // the host runs by name.
    ".local/lib/python*",
    ".pythonrc",
    ".pythonrc.py",
    ".config/pip",
    ".pip",
    ".pydistutils.cfg",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".config/yarn",
    ".bunfig.toml",
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/bin",
    ".cargo/env",
    ".rustup/settings.toml",
    ".rustup/toolchains",
    ".m2/settings.xml",
    ".gradle/init.d",
    ".gradle/init.gradle",
    ".gradle/init.gradle.kts",
    ".gradle/gradle.properties",
    ".nvm/nvm.sh",
    ".nvm/versions",
    ".pyenv/bin",
    ".pyenv/shims",
    ".pyenv/versions",
    ".rbenv/bin",
    ".rbenv/shims",
    ".sdkman/bin",
    ".sdkman/candidates",
    ".deno/bin",
    ".bun/bin",
    "go/bin",
    ".gemrc",
    ".irbrc",
    ".pryrc",
    ".Rprofile",
    ".psqlrc",
    ".sqliterc",
    ".kube",
    ".aws/config",
    ".docker/config.json",
    ".config/gcloud",
    // Editors and terminal multiplexers load plugins and run settings.
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".local/share/nvim",
    ".emacs",
    ".emacs.el",
    ".emacs.d",
    ".config/emacs",
    ".config/Code",
    ".vscode-server",
    ".tmux.conf",
    ".config/tmux",
    ".oh-my-zsh",
    ".zsh",
    ".bashrc.d",
    ".xsessionrc",
    ".local/share/applications",
    ".config/direnv",
    // Window managers, REPL start-up, CLI plugins and tools' own rc files: each runs or
    // steers code the next time the user starts the program.
    ".config/i3",
    ".config/sway",
    ".config/hypr",
    ".ipython",
    ".docker/cli-plugins",
    ".curlrc",
    ".config/curlrc",
    ".wgetrc",
    ".lessfilter",
    ".lesskey",
    // Agent settings and cordon's own state (its store of approvals and its audit log).
    ".claude.json",
    ".local/state/cordon",
];

/// Trees under `HOME` whose contents the host builds or runs later without review:
/// package caches that are compiled or installed from (cargo's extracted registry
/// sources are not verified again, pip's cached wheels need no hash), and toolchain
/// managers' whole directories. Writing them is ordinary work for a build, so the policy
/// does not deny it; but a contained run's changes there are never merged into the
/// host's HOME (`cordon_policy::planted`).
pub const PLANTED_HOME_PATHS: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".cache",
    "go",
    ".m2",
    ".gradle",
    ".nvm",
    ".pyenv",
    ".rbenv",
    ".sdkman",
    ".deno",
    ".bun",
    ".local/share/pnpm",
    ".local/bin",
    ".local/lib",
    ".local/share/virtualenvs",
    ".conda",
];

/// Is `path` in a tree under `HOME` whose changes a contained run may not leave
/// ([`PLANTED_HOME_PATHS`])?
pub fn planted_home(path: &Path, home: &Path) -> Option<GuardHit> {
    let comps = normal_components(path);
    let rest = rest_after(&comps, home)?;
    PLANTED_HOME_PATHS
        .iter()
        .find(|r| rel_matches(rest, r))
        .map(|rel| GuardHit {
            guard: "planted-home",
            pattern: format!("~/{rel}"),
        })
}

/// Directory or file names that are protected from writes wherever they appear, because
/// they configure an agent, an IDE or git so that code runs later.
pub const PROTECTED_ANYWHERE_COMPONENTS: &[&str] = &[
    ".cordon",
    ".claude",
    ".codex",
    ".gemini",
    ".cursor",
    ".vscode",
    ".idea",
    // Git hook directories that `core.hooksPath` points at (husky sets it on install).
    ".husky",
    ".githooks",
    // Dev container definitions: their commands run when the folder is opened.
    ".devcontainer",
    // Other agents' and editors' project settings (rules, MCP servers, tasks).
    ".windsurf",
    ".continue",
    ".amazonq",
    ".roo",
    ".kiro",
    ".zed",
];

/// File names protected from writes wherever they appear.
pub const PROTECTED_ANYWHERE_FILES: &[&str] = &[
    ".mcp.json",
    ".envrc",
    // Instructions other agents follow, and vi's per-directory start-up file.
    ".cursorrules",
    ".windsurfrules",
    ".clinerules",
    ".aider.conf.yml",
    ".exrc",
];

/// Component sequences protected wherever they appear (`.git/hooks`, `.git/config`).
pub const PROTECTED_ANYWHERE_SEQUENCES: &[&[&str]] = &[
    &[".git", "hooks"],
    &[".git", "config"],
    // A worktree's own settings, and where git finds its common directory.
    &[".git", "config.worktree"],
    &[".git", "commondir"],
    &[".github", "copilot-instructions.md"],
];

/// Absolute system locations whose modification schedules or grants execution.
pub const PROTECTED_SYSTEM_PATHS: &[&str] = &[
    "/etc/cron.d",
    "/etc/cron.daily",
    "/etc/cron.hourly",
    "/etc/cron.weekly",
    "/etc/cron.monthly",
    "/etc/crontab",
    "/var/spool/cron",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/zsh",
    "/etc/environment",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/systemd",
    "/etc/xdg/autostart",
    "/etc/ld.so.preload",
    "/etc/cordon",
    // Accounts, and the kernel's live settings.
    "/etc/passwd",
    "/etc/group",
    "/proc/sys",
];

/// `.env` templates that are conventionally committed and hold no secrets.
const ENV_TEMPLATES: &[&str] = &[".env.example", ".env.sample", ".env.template", ".env.dist"];

/// Why a guard matched, in words a human can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardHit {
    /// Stable short name of the guard (`sensitive-read`, `protected-write`, …).
    pub guard: &'static str,
    /// The list entry or pattern that matched.
    pub pattern: String,
}

fn name_eq(a: &OsStr, b: &str) -> bool {
    a.as_encoded_bytes().eq_ignore_ascii_case(b.as_bytes())
}

fn lower(name: &OsStr) -> String {
    name.to_string_lossy().to_ascii_lowercase()
}

/// The normal components of `path` (a clean absolute path has only these after the root).
fn normal_components(path: &Path) -> Vec<&OsStr> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Is `name` the file name of a secret wherever it appears (`.env`, `.env.local`,
/// `*.pem`, `id_rsa`, …)? Templates such as `.env.example` are not secrets.
pub fn is_secret_file_name(name: &OsStr) -> bool {
    // Allocation-free and case-insensitive: this runs for every component of every path.
    let n = name.as_encoded_bytes();
    let eq = |s: &str| n.eq_ignore_ascii_case(s.as_bytes());
    let starts = |s: &str| n.len() >= s.len() && n[..s.len()].eq_ignore_ascii_case(s.as_bytes());
    let ends =
        |s: &str| n.len() > s.len() && n[n.len() - s.len()..].eq_ignore_ascii_case(s.as_bytes());
    if ENV_TEMPLATES.iter().any(|t| eq(t)) {
        return false;
    }
    eq(".env")
        || starts(".env.")
        || ends(".pem")
        || ends(".key")
        || ends(".p12")
        || ends(".pfx")
        || starts("id_rsa")
        || starts("id_ed25519")
        || starts("id_ecdsa")
        || starts("id_dsa")
        || crate::secret_files::is_more_secret_name(n)
        || crate::secret_files::is_backup_of_secret(n)
}

/// `path`'s components after `base`, when `path` is `base` or beneath it.
fn rest_after<'a>(comps: &'a [&'a OsStr], base: &Path) -> Option<&'a [&'a OsStr]> {
    let mut n = 0;
    for b in base.components() {
        match b {
            Component::Normal(b) => {
                if comps.get(n) != Some(&b) {
                    return None;
                }
                n += 1;
            }
            Component::RootDir => {}
            _ => return None,
        }
    }
    Some(&comps[n..])
}

/// Do `rest`'s leading components spell `rel` (case-insensitively)? A `*` in a
/// component of `rel` stands for any run of characters (`.local/lib/python*`).
fn rel_matches(rest: &[&OsStr], rel: &str) -> bool {
    let mut it = rest.iter();
    rel.split('/')
        .all(|want| it.next().is_some_and(|got| component_matches(got, want)))
}

/// One component against one pattern component: a literal, or `head*tail`.
fn component_matches(got: &OsStr, want: &str) -> bool {
    match want.split_once('*') {
        None => name_eq(got, want),
        Some((head, tail)) => {
            let g = got.as_encoded_bytes();
            g.len() >= head.len() + tail.len()
                && g[..head.len()].eq_ignore_ascii_case(head.as_bytes())
                && g[g.len() - tail.len()..].eq_ignore_ascii_case(tail.as_bytes())
        }
    }
}

/// Does reading `path` touch a credential? `path` must be absolute and lexically clean.
pub fn sensitive_read(path: &Path, home: &Path) -> Option<GuardHit> {
    let comps = normal_components(path);
    sensitive_read_comps(&comps, home)
}

fn sensitive_read_comps(comps: &[&OsStr], home: &Path) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "sensitive-read",
            pattern,
        })
    };
    if let Some(rest) = rest_after(comps, home)
        && let Some(rel) = SENSITIVE_HOME_PATHS.iter().find(|r| rel_matches(rest, r))
    {
        return hit(format!("~/{rel}"));
    }
    if let Some(rel) = crate::secret_files::credential_anywhere(comps) {
        return hit(format!("credential file {rel}"));
    }
    if let Some(p) = proc_sensitive(comps) {
        return hit(p);
    }
    if let Some(abs) = SENSITIVE_SYSTEM_PATHS
        .iter()
        .find(|a| rel_matches(comps, a.trim_start_matches('/')))
    {
        return hit((*abs).to_string());
    }
    if let [etc, ssh, key] = comps
        && name_eq(etc, "etc")
        && name_eq(ssh, "ssh")
        && is_ssh_host_key(key)
    {
        return hit("/etc/ssh/ssh_host_*_key".into());
    }
    // A secret file name anywhere, or any path beneath a directory with such a name.
    if let Some(c) = comps.iter().find(|c| is_secret_file_name(c)) {
        return hit(format!("secret file name {}", c.to_string_lossy()));
    }
    None
}

/// Entries of `/proc/PID/` (and `/proc/PID/task/TID/`) that read a process's secrets
/// or step around path checks.
pub(crate) const PROC_PER_PROCESS: &[&str] = &[
    "environ",
    "mem",
    "root",
    "cwd",
    "fd",
    "fdinfo",
    "map_files",
    "auxv",
    "pagemap",
    "syscall",
    "stack",
];

/// `/proc/PID/{environ,mem,root,cwd,fd,map_files,…}` read other processes' secrets or
/// step around path checks (`/proc/self/root/home/u/.ssh`).
fn proc_sensitive(comps: &[&OsStr]) -> Option<String> {
    if comps.first().is_some_and(|c| name_eq(c, "proc")) {
        if let Some(entry) = comps.get(2) {
            if PROC_PER_PROCESS.iter().any(|p| name_eq(entry, p)) {
                return Some(format!("/proc/*/{}", lower(entry)));
            }
            // /proc/PID/task/TID/environ and friends.
            if name_eq(entry, "task")
                && let Some(e) = comps.get(4)
                && PROC_PER_PROCESS.iter().any(|p| name_eq(e, p))
            {
                return Some(format!("/proc/*/task/*/{}", lower(e)));
            }
        }
        if comps.get(1).is_some_and(|c| name_eq(c, "kcore")) {
            return Some("/proc/kcore".into());
        }
    }
    None
}

/// Is writing `path` denied outright (persistence, agent or git configuration)?
pub fn protected_write(path: &Path, home: &Path) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "protected-write",
            pattern,
        })
    };
    let comps = normal_components(path);
    if let Some(rest) = rest_after(&comps, home)
        && let Some(rel) = PROTECTED_HOME_PATHS.iter().find(|r| rel_matches(rest, r))
    {
        return hit(format!("~/{rel}"));
    }
    if let Some(abs) = PROTECTED_SYSTEM_PATHS
        .iter()
        .find(|a| rel_matches(&comps, a.trim_start_matches('/')))
    {
        return hit((*abs).to_string());
    }
    if raw_device(&comps) {
        return hit(format!("{} (a raw disk or memory device)", path.display()));
    }
    if let Some(state) = cordon_state_dirs(home)
        .into_iter()
        .find(|d| rest_after(&comps, d).is_some())
    {
        return hit(format!(
            "{} (cordon's own state: store, audit log, key)",
            state.display()
        ));
    }
    for c in &comps {
        if let Some(p) = PROTECTED_ANYWHERE_COMPONENTS.iter().find(|p| name_eq(c, p)) {
            return hit(format!("{p} (agent or IDE configuration)"));
        }
    }
    if let Some(last) = comps.last()
        && let Some(p) = PROTECTED_ANYWHERE_FILES.iter().find(|p| name_eq(last, p))
    {
        return hit((*p).to_string());
    }
    for seq in PROTECTED_ANYWHERE_SEQUENCES {
        if comps
            .windows(seq.len())
            .any(|w| w.iter().zip(seq.iter()).all(|(a, b)| name_eq(a, b)))
        {
            return hit(seq.join("/"));
        }
    }
    // Writing a credential file is as bad as reading one: it can plant a key.
    if let Some(hit) = sensitive_read_comps(&comps, home) {
        return Some(GuardHit {
            guard: "protected-write",
            pattern: hit.pattern,
        });
    }
    None
}

/// cordon's state directory (its store, audit log, signing key and export queue), as
/// `cordon_store::state_dir` finds it (`$CORDON_STATE_DIR`, else
/// `$XDG_STATE_HOME/cordon`, else `~/.local/state/cordon`), and the default under `home`
/// whatever the environment says; each also resolved through symlinks. No agent writes
/// cordon's own records, whatever the mode.
fn cordon_state_dirs(home: &Path) -> Vec<std::path::PathBuf> {
    let abs =
        |v: Option<std::ffi::OsString>| v.map(std::path::PathBuf::from).filter(|p| p.is_absolute());
    let mut dirs = vec![home.join(".local/state/cordon")];
    if let Some(d) = abs(std::env::var_os("CORDON_STATE_DIR")) {
        dirs.push(d);
    } else if let Some(d) = abs(std::env::var_os("XDG_STATE_HOME")) {
        dirs.push(d.join("cordon"));
    }
    let resolved: Vec<_> = dirs
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    dirs.extend(resolved);
    dirs.retain(|d| d.components().count() > 2);
    dirs
}

/// Block devices and memory under `/dev`: writing one bypasses every file permission
/// (`dd of=/dev/sda`, `/dev/mem`).
fn raw_device(comps: &[&OsStr]) -> bool {
    const DISK_PREFIXES: &[&str] = &[
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "dm-", "md", "loop", "sr",
    ];
    const EXACT: &[&str] = &["mem", "kmem", "port"];
    match comps {
        [dev, sub, ..]
            if name_eq(dev, "dev") && (name_eq(sub, "mapper") || name_eq(sub, "disk")) =>
        {
            true
        }
        [dev, name] if name_eq(dev, "dev") => {
            let n = name.to_string_lossy();
            EXACT.contains(&n.as_ref())
                || DISK_PREFIXES.iter().any(|p| {
                    n.strip_prefix(p).is_some_and(|r| {
                        r.starts_with(|c: char| c.is_ascii_digit() || c.is_ascii_lowercase())
                    })
                })
        }
        _ => false,
    }
}

/// Is deleting `path` catastrophic: `/`, a top-level directory, `HOME`, the workspace or any
/// of their ancestors?
pub fn critical_delete(path: &Path, home: &Path, workspace: &Path) -> Option<GuardHit> {
    let hit = |pattern: String| {
        Some(GuardHit {
            guard: "critical-delete",
            pattern,
        })
    };
    let depth = normal_components(path).len();
    if depth <= 1 {
        return hit(format!("{} is / or a top-level directory", path.display()));
    }
    if home.starts_with(path) {
        return hit(format!("{} is HOME or contains it", path.display()));
    }
    if workspace.starts_with(path) {
        return hit(format!(
            "{} is the workspace or contains it",
            path.display()
        ));
    }
    None
}

/// Absolute paths the sandbox must mask for this `home`: every entry of
/// [`SENSITIVE_HOME_PATHS`] joined to it (whether or not it exists today).
pub fn sensitive_home_paths(home: &Path) -> Vec<PathBuf> {
    SENSITIVE_HOME_PATHS.iter().map(|r| home.join(r)).collect()
}

/// Paths inside a writable `root` that the sandbox must keep read-only (bound read-only
/// when they exist, masked so they cannot be created when they do not).
pub fn protected_paths_in_root(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROTECTED_ANYWHERE_COMPONENTS
        .iter()
        .chain(PROTECTED_ANYWHERE_FILES)
        .map(|n| root.join(n))
        .collect();
    out.extend(
        PROTECTED_ANYWHERE_SEQUENCES
            .iter()
            .map(|seq| root.join(seq.join("/"))),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/home/u";

    fn read(p: &str) -> bool {
        sensitive_read(Path::new(p), Path::new(HOME)).is_some()
    }
    fn write(p: &str) -> bool {
        protected_write(Path::new(p), Path::new(HOME)).is_some()
    }

    #[test]
    fn sensitive_reads() {
        for p in [
            "/home/u/.ssh",
            "/home/u/.ssh/id_rsa",
            "/home/u/.SSH/config",
            "/home/u/.aws/credentials",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.netrc",
            "/home/u/.git-credentials",
            "/w/proj/.env",
            "/w/proj/.ENV.local",
            "/w/proj/sub/.env.production",
            "/w/proj/certs/server.pem",
            "/tmp/id_ed25519",
            "/proc/self/environ",
            "/proc/1/mem",
            "/proc/self/root/etc/passwd",
            "/proc/12/task/13/environ",
            "/proc/self/fd/3",
            "/etc/shadow",
            "/etc/gshadow-",
            "/etc/ssl/private/server.key.bak",
            "/etc/ssh/ssh_host_ed25519_key",
            "/home/u/.bash_history",
            "/home/u/.mozilla/firefox/abc.default/cookies.sqlite",
            "/home/u/.config/google-chrome/Default/Login Data",
            "/home/u/.claude/.credentials.json",
            "/home/u/.codex/auth.json",
            "/home/u/.pgpass",
        ] {
            assert!(read(p), "{p} should be sensitive");
        }
    }

    #[test]
    fn not_sensitive() {
        for p in [
            "/home/u/.sshx",
            "/home/u/src/ssh",
            "/w/proj/.env.example",
            "/w/proj/.env.sample",
            "/w/proj/.env.template",
            "/w/proj/environment.rs",
            "/home/u/.kube/cache",
            "/proc/cpuinfo",
            "/proc/self/status",
            "/w/proj/README.md",
            "/etc/passwd",
            "/etc/shadowsocks.json",
            "/etc/ssh/ssh_host_ed25519_key.pub",
            "/etc/ssh/sshd_config",
            "/w/etc/ssh/ssh_host_rsa_key_notes",
        ] {
            assert!(!read(p), "{p} should not be sensitive");
        }
    }

    #[test]
    fn protected_writes() {
        for p in [
            "/home/u/.bashrc",
            "/home/u/.ZSHRC",
            "/home/u/.ssh/authorized_keys",
            "/home/u/.config/autostart/x.desktop",
            "/home/u/.config/systemd/user/evil.service",
            "/w/proj/.git/hooks/pre-commit",
            "/w/proj/.git/config",
            "/w/proj/.GIT/Config",
            "/w/proj/.claude/settings.json",
            "/w/proj/.vscode/tasks.json",
            "/w/proj/.cordon/policy.toml",
            "/w/proj/sub/.mcp.json",
            "/etc/cron.d/x",
            "/var/spool/cron/crontabs/u",
            "/w/proj/.env",
            "/w/proj/.husky/pre-commit",
            "/w/proj/.devcontainer/devcontainer.json",
            "/dev/sda",
            "/dev/nvme0n1p2",
            "/dev/mapper/root",
            "/dev/mem",
        ] {
            assert!(write(p), "{p} should be protected");
        }
    }

    #[test]
    fn ordinary_writes() {
        for p in [
            "/w/proj/src/main.rs",
            "/w/proj/.git/objects/ab",
            "/w/proj/.github/workflows/ci.yml",
            "/w/proj/bashrc",
            "/home/u/notes.txt",
            "/dev/null",
            "/dev/stdout",
            "/dev/tty",
            "/dev/shm/x",
        ] {
            assert!(!write(p), "{p} should not be protected");
        }
    }

    #[test]
    fn critical_deletes() {
        let h = Path::new(HOME);
        let w = Path::new("/home/u/src/proj");
        for p in [
            "/",
            "/usr",
            "/home",
            "/home/u",
            "/home/u/src",
            "/home/u/src/proj",
        ] {
            assert!(critical_delete(Path::new(p), h, w).is_some(), "{p}");
        }
        for p in ["/home/u/src/proj/target", "/home/u/src/proj_evil", "/tmp/x"] {
            assert!(critical_delete(Path::new(p), h, w).is_none(), "{p}");
        }
    }
}
