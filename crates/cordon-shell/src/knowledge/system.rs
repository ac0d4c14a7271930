//! Shell builtins (`cd`, `export`, `read`, …), programs that change the system or
//! gain privilege, persistence mechanisms (`crontab`, `systemctl --user enable`,
//! `at`), and agent CLIs asked to drop their own safeguards.

use super::{Cd, Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["cd", "pushd"],
        classify: cd,
    },
    Entry {
        names: &["popd"],
        classify: |_| {
            let mut o = Outcome::read_only();
            o.cd = Some(Cd::Unknown);
            o
        },
    },
    Entry {
        names: &["export", "declare", "typeset", "local", "readonly"],
        classify: export,
    },
    Entry {
        names: &["set"],
        classify: set,
    },
    Entry {
        names: &[
            "unset",
            "shift",
            "read",
            "mapfile",
            "readarray",
            "wait",
            "exit",
            "return",
            "break",
            "continue",
            "let",
            "getopts",
            "ulimit",
            "umask",
            "shopt",
            "unalias",
            "alias",
            "times",
            "caller",
            "compgen",
            "complete",
            "compopt",
            "disown",
            "bg",
            "fg",
            "suspend",
            "logout",
        ],
        classify: |_| Outcome::read_only(),
    },
    Entry {
        names: &["enable", "bind"],
        classify: enable,
    },
    Entry {
        names: &["kill", "killall", "pkill", "renice", "xkill"],
        classify: |_| Outcome::mutating(),
    },
    Entry {
        names: &["date"],
        classify: date,
    },
    Entry {
        names: &["hostname"],
        classify: hostname,
    },
    Entry {
        names: &["crontab"],
        classify: crontab,
    },
    Entry {
        names: &["at", "batch"],
        classify: at,
    },
    Entry {
        names: &["systemctl"],
        classify: systemctl,
    },
    Entry {
        names: &["service", "launchctl", "update-rc.d", "chkconfig"],
        classify: |i| {
            let mut o = Outcome::mutating();
            if i.args.is_empty() {
                o.effects.class = Class::Unknown;
            }
            o
        },
    },
    Entry {
        names: &[
            "setcap",
            "passwd",
            "chpasswd",
            "visudo",
            "usermod",
            "useradd",
            "userdel",
            "groupadd",
            "groupmod",
            "gpasswd",
            "adduser",
            "deluser",
            "modprobe",
            "insmod",
            "rmmod",
            "iptables",
            "ip6tables",
            "nft",
            "setenforce",
            "capsh",
            "chattr",
            "losetup",
            "swapon",
            "swapoff",
            "umount",
            "reboot",
            "shutdown",
            "halt",
            "poweroff",
            "init",
            "telinit",
        ],
        classify: privileged,
    },
    Entry {
        names: &["sysctl"],
        classify: sysctl,
    },
    Entry {
        names: &["claude", "claude-code"],
        classify: claude,
    },
    Entry {
        names: &["gemini"],
        classify: gemini,
    },
    Entry {
        names: &["codex"],
        classify: codex,
    },
    Entry {
        names: &[
            "aider",
            "cursor-agent",
            "opencode",
            "goose",
            "amp",
            "qwen",
            "copilot",
        ],
        classify: other_agent,
    },
    Entry {
        names: &["docker", "podman", "nerdctl"],
        classify: docker,
    },
    Entry {
        names: &[
            "open",
            "xdg-open",
            "gio",
            "sensible-browser",
            "x-www-browser",
            "wslview",
        ],
        classify: |i| {
            let mut o = Outcome::read_only();
            o.exec(i.name, "open", &super::join(i.args));
            o
        },
    },
];

fn cd(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    let mut o = Outcome::read_only();
    o.cd = Some(match p.operands.first() {
        None => Cd::To(Word::literal("~")),
        Some(w) if w.value == "-" || !w.literal => Cd::Unknown,
        Some(w) if w.value.starts_with('+') && inv.name == "pushd" => Cd::Unknown,
        Some(w) => Cd::To(w.clone()),
    });
    o
}

/// Variables whose value steers what later commands execute or load.
pub(crate) fn influential(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS4",
        "IFS",
        "CDPATH",
        "SHELLOPTS",
        "BASHOPTS",
        "GLOBIGNORE",
        "HOME",
        "LESSOPEN",
        "LESSCLOSE",
        "LESSKEY",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "SHELL",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PYTHONINSPECT",
        "PERL5LIB",
        "PERL5OPT",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "CLASSPATH",
        "RUSTC_WRAPPER",
        "RUSTC",
        "RUSTFLAGS",
        "CC",
        "CXX",
        "LD",
        "MAKEFLAGS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "GIT_ASKPASS",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "ZDOTDIR",
        "NPM_CONFIG_PREFIX",
        "PROMPT_DIRTRIM",
        "TERMINFO",
        "HISTFILE",
        "MAIL",
        "FPATH",
        "PYTHONUSERBASE",
        "GCONV_PATH",
        "GIO_EXTRA_MODULES",
    ];
    const PREFIXES: &[&str] = &[
        "GIT_",
        "LD_",
        "DYLD_",
        "BASH_FUNC_",
        "CARGO_",
        "NPM_CONFIG_",
        "npm_config_",
        "PIP_",
        "UV_",
        "GOFLAGS",
        "GOPROXY",
        "LESS",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

fn export(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let mut function_export = false;
    for w in inv.args {
        let v = w.value.as_str();
        if v.starts_with('-') {
            function_export |= v.contains('f');
            continue;
        }
        let name = v.split('=').next().unwrap_or(v);
        let name = name.trim_end_matches('+');
        if influential(name) && !o.effects.influences_env.iter().any(|n| n == name) {
            o.effects.influences_env.push(name.to_owned());
        }
    }
    if function_export {
        // `export -f f` makes the function visible to child shells.
        o.effects.influences_env.push("exported function".into());
    }
    // With no name, `export`, `export -p`, `declare -x`, `declare -p`, `typeset` print
    // every variable with its value, as `env` does (but `-f`/`-F` list functions, and
    // `local`/`readonly` their own kind only).
    let functions_only = inv
        .args
        .iter()
        .any(|w| w.value.starts_with('-') && w.value.contains(['f', 'F']));
    o.effects.reads_env |= matches!(inv.name, "export" | "declare" | "typeset")
        && !functions_only
        && inv
            .args
            .iter()
            .all(|w| w.literal && w.value.starts_with('-'));
    o
}

/// `set` with no argument prints every variable with its value (the environment
/// among them); with arguments it sets options or positional parameters.
fn set(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    o.effects.reads_env = inv.args.is_empty();
    o
}

fn enable(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if inv
        .args
        .iter()
        .any(|w| w.value == "-f" || w.value == "-x" || w.value.starts_with("-x"))
    {
        o.exec(inv.name, "-f", &super::join(inv.args));
    } else if !inv.args.is_empty() {
        o.effects.class = Class::Unknown;
    }
    o
}

fn date(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("dfrsI", &["date", "file", "reference", "set"]),
    );
    let mut o = Outcome::read_only();
    o.reads(p.values(&["-f", "--file", "-r", "--reference"]));
    if p.has(&["-s", "--set"]) {
        o.privilege("date --set changes the system clock");
    }
    o
}

fn hostname(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("F", &["file"]));
    let mut o = Outcome::read_only();
    if !p.operands.is_empty() || p.has(&["-F", "--file", "-b", "--boot"]) {
        o.privilege("hostname NAME changes the host name");
    }
    o
}

const CRON_SPOOL: &str = "/var/spool/cron/crontabs";

fn crontab(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("u", &[]));
    let mut o = Outcome::read_only();
    if p.has(&["-l"]) && !p.has(&["-e", "-r"]) {
        return o;
    }
    if p.has(&["-u"]) {
        o.privilege("crontab -u edits another user's crontab");
    }
    if p.has(&["-r"]) {
        o.deletes([&Word::literal(CRON_SPOOL)]);
        return o;
    }
    o.writes([&Word::literal(CRON_SPOOL)]);
    o.reads(&p.operands);
    if p.operands.is_empty() && !p.has(&["-e"]) || p.operands.iter().any(|w| w.value == "-") {
        // The new table comes from standard input.
        o.stdin_code = false;
    }
    o.exec(
        "crontab",
        "schedule",
        "installs commands that run later (persistence)",
    );
    o
}

fn at(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("fqt", &[]));
    let mut o = Outcome::read_only();
    if p.has(&["-l", "-c", "-r", "-d"]) {
        if p.has(&["-r", "-d"]) {
            o.mutate();
        }
        return o;
    }
    o.reads(p.values(&["-f"]));
    o.exec(inv.name, "schedule", "runs commands later (persistence)");
    if !p.has(&["-f"]) {
        // The job's shell commands come from standard input.
        o.stdin_code = true;
    }
    o
}

fn systemctl(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let user = inv.args.iter().any(|w| w.value == "--user");
    let sub = inv
        .args
        .iter()
        .find(|w| !w.value.starts_with('-'))
        .map(|w| w.value.as_str());
    match sub {
        None
        | Some(
            "status" | "show" | "cat" | "list-units" | "list-unit-files" | "list-timers"
            | "list-sockets" | "list-dependencies" | "is-active" | "is-enabled" | "is-failed"
            | "is-system-running" | "help" | "get-default",
        ) => {}
        Some(
            "enable" | "link" | "edit" | "add-wants" | "add-requires" | "set-property" | "preset"
            | "reenable" | "revert" | "set-default" | "set-environment" | "import-environment",
        ) => {
            let dir = if user {
                "~/.config/systemd/user"
            } else {
                "/etc/systemd/system"
            };
            o.writes([&Word::literal(dir)]);
            o.exec(
                "systemctl",
                sub.unwrap_or_default(),
                "installs a service that runs later (persistence)",
            );
        }
        Some(s) => {
            o.exec("systemctl", s, "starts, stops or changes services");
        }
    }
    o
}

fn privileged(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if inv
        .args
        .iter()
        .any(|w| w.value == "--help" || w.value == "--version")
    {
        return o;
    }
    o.privilege(&format!("{} changes system security settings", inv.name));
    o
}

fn sysctl(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    if inv
        .args
        .iter()
        .any(|w| w.value == "-w" || w.value == "-p" || w.value == "--load" || w.value.contains('='))
    {
        o.privilege("sysctl changes kernel parameters");
    }
    o
}

fn agent_outcome(inv: &Invocation<'_>, danger: Option<String>) -> Outcome {
    let mut o = Outcome::unknown();
    if let Some(why) = danger {
        o.effects.privilege = Some(why);
    }
    if inv
        .args
        .iter()
        .all(|w| matches!(w.value.as_str(), "--version" | "-v" | "--help" | "-h"))
        && !inv.args.is_empty()
    {
        o.effects.class = Class::ReadOnly;
    }
    o
}

fn claude(inv: &Invocation<'_>) -> Outcome {
    let mut danger = None;
    for (k, w) in inv.args.iter().enumerate() {
        let v = w.value.as_str();
        let next = inv.args.get(k + 1).map(|w| w.value.as_str());
        if v == "--dangerously-skip-permissions" || v == "--allow-dangerously-skip-permissions" {
            danger = Some(format!("{} {v}", inv.name));
        }
        let mode = v
            .strip_prefix("--permission-mode=")
            .or(if v == "--permission-mode" { next } else { None });
        if mode.is_some_and(|m| m.eq_ignore_ascii_case("bypassPermissions")) {
            danger = Some(format!("{} --permission-mode bypassPermissions", inv.name));
        }
    }
    agent_outcome(inv, danger)
}

fn gemini(inv: &Invocation<'_>) -> Outcome {
    let mut danger = None;
    for (k, w) in inv.args.iter().enumerate() {
        let v = w.value.as_str();
        let next = inv.args.get(k + 1).map(|w| w.value.as_str());
        if v == "--yolo" || v == "-y" {
            danger = Some(format!("gemini {v}"));
        }
        let mode = v
            .strip_prefix("--approval-mode=")
            .or(if v == "--approval-mode" { next } else { None });
        if mode == Some("yolo") {
            danger = Some("gemini --approval-mode yolo".into());
        }
    }
    agent_outcome(inv, danger)
}

fn codex(inv: &Invocation<'_>) -> Outcome {
    let mut danger = None;
    for (k, w) in inv.args.iter().enumerate() {
        let v = w.value.as_str();
        let next = inv.args.get(k + 1).map(|w| w.value.as_str());
        if v == "--dangerously-bypass-approvals-and-sandbox" || v == "--yolo" {
            danger = Some(format!("codex {v}"));
        }
        let sandbox = v
            .strip_prefix("--sandbox=")
            .or(if v == "--sandbox" || v == "-s" {
                next
            } else {
                None
            });
        if sandbox == Some("danger-full-access") {
            danger = Some("codex --sandbox danger-full-access".into());
        }
    }
    agent_outcome(inv, danger)
}

fn other_agent(inv: &Invocation<'_>) -> Outcome {
    let danger = inv
        .args
        .iter()
        .find(|w| {
            matches!(
                w.value.as_str(),
                "--yes-always"
                    | "--yolo"
                    | "--force"
                    | "--dangerously-skip-permissions"
                    | "--allow-all-tools"
            )
        })
        .map(|w| format!("{} {}", inv.name, w.value));
    agent_outcome(inv, danger)
}

fn docker(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::unknown();
    let sub = inv
        .args
        .iter()
        .find(|w| !w.value.starts_with('-'))
        .map(|w| w.value.as_str());
    if matches!(
        sub,
        Some(
            "ps" | "images"
                | "version"
                | "info"
                | "inspect"
                | "logs"
                | "stats"
                | "top"
                | "port"
                | "history"
        )
    ) {
        o.effects.class = Class::ReadOnly;
    }
    let privileged = inv.args.iter().any(|w| {
        let v = w.value.as_str();
        v == "--privileged"
            || v.starts_with("--cap-add")
            || v == "--pid=host"
            || v == "--net=host"
            || v == "--network=host"
            || v.starts_with("/:/")
            || v.contains("docker.sock")
    });
    if privileged {
        o.effects.privilege = Some(format!("{} with host-level access", inv.name));
    }
    o
}
