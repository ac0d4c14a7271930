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
    // libpq's service file (may hold `password=`) and its default client key and
    // certificates.
    ".pg_service.conf",
    ".postgresql",
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
    // Tokens and keys of more tools: Hugging Face, age keys of sops, Stripe's CLI,
    // Databricks, dbt, Poetry's and Composer's registry logins, ngrok, Fly, Supabase,
    // and Cursor's MCP servers (their `env` holds API keys, as `~/.claude.json` does).
    ".cache/huggingface/token",
    ".huggingface/token",
    ".config/sops/age",
    ".config/stripe",
    ".databrickscfg",
    ".dbt/profiles.yml",
    ".config/pypoetry/auth.toml",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".config/ngrok",
    ".fly/config.yml",
    ".supabase/access-token",
    ".cursor/mcp.json",
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
    // The local variants that shared dotfiles (grml, thoughtbot, oh-my-zsh setups, vim
    // distributions) source at the end of the main file, and the drop-in folders.
    ".bashrc.local",
    ".bash_profile.local",
    ".profile.local",
    ".zshrc.local",
    ".zshenv.local",
    ".zprofile.local",
    ".vimrc.local",
    ".gvimrc.local",
    ".profile.d",
    ".zshrc.d",
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
    let n = name.as_encoded_bytes();
    is_secret_name_itself(n) || crate::secret_files::is_backup_of_secret(n)
}

/// [`is_secret_file_name`] without its backup copies: the backup check walks a name's
/// chain of backups once and asks this of each (asking the whole check there would walk
/// the rest of the chain again at every step, exponential in the chain's length).
pub(crate) fn is_secret_name_itself(n: &[u8]) -> bool {
    // Allocation-free and case-insensitive: this runs for every component of every path.
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

/// Absolute paths the sandbox must mask for this `home`: every entry of
/// [`SENSITIVE_HOME_PATHS`] joined to it (whether or not it exists today).
pub fn sensitive_home_paths(home: &Path) -> Vec<PathBuf> {
    SENSITIVE_HOME_PATHS.iter().map(|r| home.join(r)).collect()
}

// The lists and the sensitive-read guard (with the matching every guard shares) are
// above, in this file; the other guards are one module each.
mod delete;
mod write;

pub use delete::critical_delete;
pub use write::{StateDirs, protected_paths_in_root, protected_write, protected_write_in};

#[cfg(test)]
mod tests;
