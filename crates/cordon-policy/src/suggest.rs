//! Narrow rule suggestions for "always allow".
//!
//! When a human answers "always allow", cordon saves the narrowest rule that still
//! saves them from being asked the same thing again, written in Claude Code syntax so
//! that it can live in the same files as the user's other rules. This module only
//! computes that rule: it is pure (no I/O, no environment), and returns `None` whenever
//! no rule would be both narrow and safe — the human then gets "allow once" and "allow
//! for this session" only.
//!
//! # The rules it writes
//!
//! * **Commands** (`Bash(…)`), from the argv the shell analysis produced (wrappers
//!   already peeled). The rule offered first, and the one saved unless the human picks
//!   another, is the **exact call**: `git push --force origin main` →
//!   `Bash(git push --force origin main)`, which allows that call and nothing else. A
//!   generalisation `Bash(PREFIX:*)` is offered beside it only for a prefix on the
//!   allowlist [`GENERALISABLE`] (`git status`, which writes nothing and reads only the
//!   repository), with
//!   an example of a call it would also allow, and only when the call itself carries none
//!   of the flags a prefix must never fold in ([`NEVER_FOLDED`]: force, mirror, delete,
//!   configuration and code-running flags). Nothing is ever offered as a prefix for
//!   `git push`/`fetch`/`pull`/`clone`/`remote` or the git subcommands that rewrite the
//!   work tree (`checkout`, `restore`, `reset`, `merge`, …): they are not on the
//!   allowlist. A call whose argument cannot be written in a rule (spaces, quotes, globs,
//!   expansions) gets nothing.
//!
//!   Never suggested, whatever the arguments: programs that run arbitrary code they are
//!   given ([`RUNS_ANYTHING`]: shells, interpreters, `env`, `sudo`, `xargs`, …),
//!   commands that start with a runner ([`RUNNER_PREFIXES`]: `npx`, `npm exec`,
//!   `docker run`, `go run`, …), commands carrying an argument that executes code
//!   ([`CODE_FLAGS`]: `find -exec`, `rg --pre`, `git -c`, …), and a command that is
//!   exactly one of [`BARE_PREFIXES`] (`git`, `npm install`). The policy adds one more:
//!   a program run by another program's argument (`git -c core.pager=evil log` runs
//!   `evil`) is never named by a rule (see `Policy::suggestions`).
//! * **Files**: `Read(path)` for reads, `Edit(path)` for writes, for that one path.
//!   A path inside the workspace is written `./rel` (relative to the workspace root);
//!   one under the home directory `~/rel`; any other absolute path `//abs` (Claude's
//!   absolute form). The workspace root, the home directory, `/`, relative paths,
//!   paths with `.`/`..` components and paths containing glob characters yield nothing.
//! * **Hosts**: `WebFetch(domain:HOST)` for that one host (lower-cased, trailing dot
//!   removed); no wildcard, never a bare suffix.
//! * **MCP tools**: `mcp__SERVER__TOOL` for that one tool.
//!
//! No suggestion is ever tool-wide (`Bash`, `Bash(*)`, `Read`, `Read(**)`, `mcp__s`).

use std::path::{Component, Path, PathBuf};

/// What the human is being asked to allow, as the policy normalized it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SuggestTarget {
    /// One simple command after wrappers were peeled: program and arguments.
    Command {
        /// `argv[0]` is the program.
        argv: Vec<String>,
    },
    /// A file read (absolute, normalized path).
    ReadPath(PathBuf),
    /// A file write, edit or delete (absolute, normalized path).
    WritePath(PathBuf),
    /// A network host (from a normalized origin).
    Host(String),
    /// One MCP tool of one server.
    Mcp {
        /// Server name.
        server: String,
        /// Tool name.
        tool: String,
    },
}

/// Where relative rule paths are anchored.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anchors<'a> {
    /// The workspace root: paths under it are written `./rel`.
    pub workspace: Option<&'a Path>,
    /// The user's home directory: other paths under it are written `~/rel`.
    pub home: Option<&'a Path>,
}

/// Programs that run whatever code or command they are handed: never suggested.
/// Interpreters also match with a version suffix (`python3.12`, `perl5.36`).
pub const RUNS_ANYTHING: &[&str] = &[
    // shells
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "ash",
    "busybox",
    "pwsh",
    "powershell",
    "cmd",
    "nu",
    "elvish",
    "xonsh",
    // interpreters and REPLs (code as an argument or on stdin)
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "ipython",
    "perl",
    "ruby",
    "irb",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "expect",
    "Rscript",
    "R",
    "julia",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "jshell",
    "ghci",
    "groovy",
    // wrappers that run another command
    "env",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "xargs",
    "parallel",
    "eval",
    "exec",
    "command",
    "builtin",
    "source",
    ".",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "stdbuf",
    "setsid",
    "flock",
    "watch",
    "time",
    "chroot",
    "unshare",
    "nsenter",
    "chrt",
    "taskset",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "script",
    "systemd-run",
    "sg",
    "newgrp",
    "firejail",
    "bwrap",
    "proot",
    "fakeroot",
    "tmux",
    "screen",
    "dtach",
    // remote or packaged execution of arbitrary commands
    "ssh",
    "npx",
    "pnpx",
    "bunx",
    "uvx",
    "pipx",
    // editors and pagers that can spawn a shell
    "vi",
    "vim",
    "nvim",
    "emacs",
    "ed",
    "less",
    "more",
];

/// Interpreter names that also match with a version suffix.
const VERSIONED: &[&str] = &[
    "python", "pypy", "perl", "ruby", "node", "php", "lua", "tclsh",
];

/// Command prefixes after which anything at all can run: never suggested.
pub const RUNNER_PREFIXES: &[&[&str]] = &[
    &["npm", "exec"],
    &["npm", "x"],
    &["pnpm", "exec"],
    &["pnpm", "dlx"],
    &["yarn", "exec"],
    &["yarn", "dlx"],
    &["bun", "x"],
    &["uv", "run"],
    &["uv", "tool", "run"],
    &["poetry", "run"],
    &["pipenv", "run"],
    &["pdm", "run"],
    &["hatch", "run"],
    &["conda", "run"],
    &["bundle", "exec"],
    &["go", "run"],
    &["docker", "run"],
    &["docker", "exec"],
    &["podman", "run"],
    &["podman", "exec"],
    &["kubectl", "exec"],
    &["kubectl", "run"],
    &["git", "submodule", "foreach"],
    &["nix", "run"],
    &["nix", "shell"],
    &["nix-shell"],
    &["direnv", "exec"],
    &["mise", "exec"],
    &["asdf", "exec"],
];

/// Prefixes too broad to save with `:*`: each needs a more specific word after it
/// (a script name), or else the exact command is saved. A command that is exactly one
/// of these yields nothing.
pub const BARE_PREFIXES: &[&[&str]] = &[
    &["git"],
    &["npm", "run"],
    &["npm", "run-script"],
    &["yarn", "run"],
    &["pnpm", "run"],
    &["bun", "run"],
    &["deno", "task"],
    &["git", "config"],
    &["npm", "install"],
    &["npm", "i"],
    &["yarn", "add"],
    &["pnpm", "add"],
    &["pip", "install"],
    &["pip3", "install"],
    &["uv", "pip"],
    &["cargo", "install"],
    &["go", "install"],
    &["gem", "install"],
    &["apt", "install"],
    &["apt-get", "install"],
    &["brew", "install"],
];

/// Arguments that make a program execute other code: a command carrying one gets no
/// suggestion. Long flags also match as `--flag=value`; two-character short flags also
/// match with the value attached (`-Iprog`).
pub const CODE_FLAGS: &[(&str, &[&str])] = &[
    ("find", &["-exec", "-execdir", "-ok", "-okdir"]),
    ("fd", &["-x", "--exec", "-X", "--exec-batch"]),
    ("fdfind", &["-x", "--exec", "-X", "--exec-batch"]),
    ("rg", &["--pre"]),
    (
        "git",
        &[
            "-c",
            "--config-env",
            "--exec-path",
            "--upload-pack",
            "--receive-pack",
            "-u",
            "--extcmd",
            "-x",
            "--exec",
            "--paginate",
        ],
    ),
    (
        "tar",
        &[
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "--new-volume-script",
            "-F",
        ],
    ),
    ("rsync", &["-e", "--rsh", "--rsync-path"]),
    ("sort", &["--compress-program"]),
    ("make", &["--eval", "-E"]),
    ("go", &["-exec", "-toolexec"]),
    ("zip", &["-TT", "--unzip-command"]),
    ("man", &["--html", "-H", "-P", "--pager"]),
    ("tcpdump", &["-z"]),
];

/// Prefixes that may be offered as `Bash(PREFIX:*)` beside the exact call, each with the
/// tail of an example call the prefix would also allow. A prefix is here only when no
/// argument after it can make the command run code the analysis does not see: cargo is
/// not (`cargo test --config target.….runner=PROGRAM` runs any program), nor are the
/// JavaScript package managers (`npm run test --script-shell=PROGRAM`) or go
/// (`go test -o FILE` writes anywhere). A test loads each as a rule and checks them.
// `git log`, `git diff` and `git show` are not here: a saved prefix would also allow their
// `--output=FILE` (a write anywhere) and `--no-index A B` (a read anywhere), which the
// call shown did not carry.
pub const GENERALISABLE: &[(&[&str], &str)] = &[(&["git", "status"], "--ignored")];

/// Flags a prefix must never fold in: a call carrying one is offered its exact rule
/// only. Long flags also match as `--flag=value`.
pub const NEVER_FOLDED: &[&str] = &[
    "-f",
    "--force",
    "--force-with-lease",
    "--force-if-includes",
    "--mirror",
    "-d",
    "-D",
    "--delete",
    "--prune",
    "-c",
    "--config",
    "--exec",
    "-exec",
    "-toolexec",
    "--output",
    "-o",
    "--ext-diff",
    "--textconv",
    "--script-shell",
    "--upload-pack",
    "--receive-pack",
];

/// The most options offered for one call (the exact call included).
pub const MAX_OPTIONS: usize = 3;

/// One rule "always allow" may save.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RuleOption {
    /// The rule, in Claude Code syntax.
    pub rule: String,
    /// For a generalisation, a call it would also allow (shown beside it); `None` for the
    /// exact call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

impl RuleOption {
    /// The exact rule for the call shown.
    pub fn exact(rule: impl Into<String>) -> Self {
        RuleOption {
            rule: rule.into(),
            example: None,
        }
    }
}

/// The narrowest safe rule for `target` (the exact call), or `None` when there is none.
pub fn suggest_rule(target: &SuggestTarget, anchors: &Anchors<'_>) -> Option<String> {
    suggest_options(target, anchors)
        .into_iter()
        .next()
        .map(|o| o.rule)
}

/// The rules "always allow" may save for `target`, the exact one first; empty when no
/// rule would be narrow and safe.
pub fn suggest_options(target: &SuggestTarget, anchors: &Anchors<'_>) -> Vec<RuleOption> {
    let options = match target {
        SuggestTarget::Command { argv } => command_options(argv),
        SuggestTarget::ReadPath(p) => path_rule(p, anchors)
            .map(|p| RuleOption::exact(format!("Read({p})")))
            .into_iter()
            .collect(),
        SuggestTarget::WritePath(p) => path_rule(p, anchors)
            .map(|p| RuleOption::exact(format!("Edit({p})")))
            .into_iter()
            .collect(),
        SuggestTarget::Host(h) => host_rule(h).map(RuleOption::exact).into_iter().collect(),
        SuggestTarget::Mcp { server, tool } => mcp_rule(server, tool)
            .map(RuleOption::exact)
            .into_iter()
            .collect(),
    };
    options
        .into_iter()
        .filter(|o| !is_tool_wide(&o.rule))
        .take(MAX_OPTIONS)
        .collect()
}

fn is_tool_wide(rule: &str) -> bool {
    if let Some(rest) = rule.strip_prefix("mcp__") {
        // A server-wide rule (`mcp__server`) or a wildcard tool is tool-wide.
        return !rest
            .split_once("__")
            .is_some_and(|(s, t)| !s.is_empty() && !t.is_empty() && !t.contains('*'));
    }
    let Some((_, rest)) = rule.split_once('(') else {
        return true;
    };
    matches!(
        rest.trim_end_matches(')'),
        "" | "*" | ":*" | "**" | "./**" | "//**" | "~/**" | "/**"
    )
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn runs_anything(program: &str) -> bool {
    let base = basename(program);
    RUNS_ANYTHING.contains(&base)
        || VERSIONED.iter().any(|v| {
            base.strip_prefix(v).is_some_and(|rest| {
                !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
            })
        })
}

/// Does `argv` (with argv[0] reduced to its basename) start with `prefix`?
fn starts_with(argv: &[String], prefix: &[&str]) -> bool {
    argv.len() >= prefix.len()
        && prefix.iter().enumerate().all(|(i, p)| {
            let word = if i == 0 {
                basename(&argv[0])
            } else {
                argv[i].as_str()
            };
            word == *p
        })
}

fn carries_code_flag(argv: &[String]) -> bool {
    let program = basename(&argv[0]);
    let Some((_, flags)) = CODE_FLAGS.iter().find(|(p, _)| *p == program) else {
        return false;
    };
    argv[1..].iter().any(|arg| {
        flags.iter().any(|flag| {
            arg == flag
                || (flag.starts_with("--")
                    && arg.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
                || (flag.len() == 2
                    && !flag.starts_with("--")
                    && arg.starts_with(flag)
                    && !arg.starts_with("--"))
        })
    })
}

/// A word that can stand in a rule as is (no spaces, quotes, globs, parentheses,
/// expansions or control characters).
fn is_rule_safe(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        })
}

fn command_options(argv: &[String]) -> Vec<RuleOption> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    if !is_rule_safe(program) || runs_anything(program) || program.contains('=') {
        return Vec::new();
    }
    if RUNNER_PREFIXES.iter().any(|p| starts_with(argv, p)) || carries_code_flag(argv) {
        return Vec::new();
    }
    if BARE_PREFIXES
        .iter()
        .any(|p| p.len() == argv.len() && starts_with(argv, p))
    {
        return Vec::new();
    }
    if !argv.iter().all(|a| is_rule_safe(a)) {
        return Vec::new();
    }
    let mut out = vec![RuleOption::exact(format!("Bash({})", argv.join(" ")))];
    if argv[1..].iter().any(|a| never_folded(a)) {
        return out;
    }
    for (prefix, tail) in GENERALISABLE {
        let n = prefix.len();
        if starts_with(argv, prefix) && argv.len() > n {
            let head = argv[..n].join(" ");
            out.push(RuleOption {
                rule: format!("Bash({head}:*)"),
                example: Some(format!("{head} {tail}")),
            });
        }
    }
    out
}

/// Is `arg` one of [`NEVER_FOLDED`] (or `--flag=value`, or a short flag bundled with
/// others such as `-fd`)?
fn never_folded(arg: &str) -> bool {
    NEVER_FOLDED.iter().any(|flag| {
        arg == *flag
            || (flag.starts_with("--")
                && arg.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
            || (flag.len() == 2
                && !arg.starts_with("--")
                && arg.starts_with('-')
                && arg[1..].contains(&flag[1..]))
    })
}

fn path_rule(path: &Path, anchors: &Anchors<'_>) -> Option<String> {
    if !path.is_absolute() {
        return None;
    }
    let text = path.to_str()?;
    // `components()` hides a `.` in the middle, so look at the text itself.
    if text.split('/').any(|seg| seg == "." || seg == "..")
        || path.components().any(|c| matches!(c, Component::ParentDir))
    {
        return None;
    }
    let unsafe_char = |c: char| c.is_control() || c.is_whitespace() || "*?[]{}()\\!".contains(c);
    if text.chars().any(unsafe_char) {
        return None;
    }
    let under = |root: Option<&Path>| -> Option<Option<String>> {
        let root = root?;
        let rel = path.strip_prefix(root).ok()?;
        let rel = rel.to_str()?;
        Some((!rel.is_empty()).then(|| rel.trim_end_matches('/').to_string()))
    };
    if let Some(rel) = under(anchors.workspace) {
        return rel.map(|r| format!("./{r}"));
    }
    if let Some(rel) = under(anchors.home) {
        return rel.map(|r| format!("~/{r}"));
    }
    let trimmed = text.trim_end_matches('/');
    if trimmed.is_empty() {
        return None;
    }
    Some(format!("/{trimmed}"))
}

fn host_rule(host: &str) -> Option<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let v6 = host.starts_with('[')
        && host.ends_with(']')
        && host.len() > 2
        && host[1..host.len() - 1]
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
    let name = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        && host
            .split('.')
            .all(|label| !label.is_empty() && !label.starts_with('-') && !label.ends_with('-'));
    (v6 || name).then(|| format!("WebFetch(domain:{host})"))
}

fn mcp_rule(server: &str, tool: &str) -> Option<String> {
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    (ok(server)
        && ok(tool)
        && !server.contains("__")
        && !server.starts_with('_')
        && !server.ends_with('_'))
    .then(|| format!("mcp__{server}__{tool}"))
}

mod shown;
pub use shown::offered_for_shown;

#[cfg(test)]
mod tests;
