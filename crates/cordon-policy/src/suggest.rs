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
//!   already peeled). The *prefix* is the program followed by its leading plain words
//!   (subcommands such as `run test` or `push origin main`) — at most
//!   [`MAX_PREFIX_WORDS`] words — stopping before the first argument that is a flag
//!   (`-p`, `--watch`, `--`), a path (`src/x`, `./a`, `main.rs`), a URL, or any other
//!   word that is not plain (values with `=`, `.`, `~`, quotes, globs…). Then:
//!   1. every argument was a plain word → the exact command: `git push origin main` →
//!      `Bash(git push origin main)`;
//!   2. the prefix has a subcommand and is not one that must be narrowed further →
//!      `Bash(PREFIX:*)`: `npm run test -- --watch` → `Bash(npm run test:*)`,
//!      `cargo test -p foo` → `Bash(cargo test:*)`;
//!   3. otherwise (the prefix is the bare program, like `rm` or `ls`, or a prefix like
//!      `npm install` that would cover anything) → the exact command if every argument
//!      can be written in a rule, else nothing: `rm -rf build` → `Bash(rm -rf build)`.
//!
//!   Never suggested, whatever the arguments: programs that run arbitrary code they are
//!   given ([`RUNS_ANYTHING`]: shells, interpreters, `env`, `sudo`, `xargs`, …),
//!   commands that start with a runner ([`RUNNER_PREFIXES`]: `npx`, `npm exec`,
//!   `docker run`, `go run`, …), and commands carrying an argument that executes code
//!   ([`CODE_FLAGS`]: `find -exec`, `rg --pre`, `git -c`, …). A command that is exactly a
//!   prefix needing narrowing (`git`, `npm run`) yields nothing.
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

/// Longest command prefix suggested, program included.
pub const MAX_PREFIX_WORDS: usize = 4;

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

/// The narrowest safe rule for `target`, or `None` when there is none.
pub fn suggest_rule(target: &SuggestTarget, anchors: &Anchors<'_>) -> Option<String> {
    let rule = match target {
        SuggestTarget::Command { argv } => command_rule(argv),
        SuggestTarget::ReadPath(p) => path_rule(p, anchors).map(|p| format!("Read({p})")),
        SuggestTarget::WritePath(p) => path_rule(p, anchors).map(|p| format!("Edit({p})")),
        SuggestTarget::Host(h) => host_rule(h),
        SuggestTarget::Mcp { server, tool } => mcp_rule(server, tool),
    }?;
    (!is_tool_wide(&rule)).then_some(rule)
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

/// A subcommand-like word: letters, digits, `_ - : +`, not starting with `-`.
fn is_plain_word(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '+'))
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

fn command_rule(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    if !is_rule_safe(program) || runs_anything(program) || program.contains('=') {
        return None;
    }
    if RUNNER_PREFIXES.iter().any(|p| starts_with(argv, p)) || carries_code_flag(argv) {
        return None;
    }
    if BARE_PREFIXES
        .iter()
        .any(|p| p.len() == argv.len() && starts_with(argv, p))
    {
        return None;
    }
    let mut words = vec![program.as_str()];
    for arg in &argv[1..] {
        if words.len() == MAX_PREFIX_WORDS || !is_plain_word(arg) {
            break;
        }
        words.push(arg);
    }
    if words.len() == argv.len() {
        return Some(format!("Bash({})", words.join(" ")));
    }
    let prefix: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
    let bare = BARE_PREFIXES
        .iter()
        .any(|p| p.len() == prefix.len() && starts_with(&prefix, p));
    if words.len() >= 2 && !bare {
        return Some(format!("Bash({}:*)", words.join(" ")));
    }
    if argv.iter().all(|a| is_rule_safe(a)) {
        return Some(format!("Bash({})", argv.join(" ")));
    }
    None
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

#[cfg(test)]
mod tests;
