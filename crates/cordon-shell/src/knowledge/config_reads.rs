//! Files programs read by themselves: configuration, start-up and credential files that
//! no argument names (`git` reads `~/.gitconfig`, `wget` reads `~/.netrc`, a login
//! shell runs `~/.profile`).
//!
//! Owns the table of those files, found by the soundness harness (each entry was a
//! read it saw and the analysis did not name) and checked against each program's
//! manual, and the pass that adds them to an invocation's effects. The policy judges
//! them apart from the reads the text asks for. Never decides anything itself.

use super::{Invocation, Outcome};
use crate::model::Word;

/// One program's own files.
struct Own {
    programs: &'static [&'static str],
    /// Read on every run.
    files: &'static [&'static str],
    /// Where the manual says so.
    #[allow(dead_code)] // documentation of the table
    source: &'static str,
}

const GIT_CONFIG: &[&str] = &["/etc/gitconfig", "~/.gitconfig", "~/.config/git"];

const TABLE: &[Own] = &[
    Own {
        programs: &["git"],
        files: GIT_CONFIG,
        source: "git-config(1) FILES: $(prefix)/etc/gitconfig, $XDG_CONFIG_HOME/git/config, ~/.gitconfig; gitattributes(5), gitignore(5): $XDG_CONFIG_HOME/git/attributes, ignore",
    },
    Own {
        programs: &["rg"],
        files: &[
            "~/.gitconfig",
            "~/.config/git",
            "./.gitignore",
            "./.ignore",
            "./.rgignore",
            "./.git/info/exclude",
        ],
        source: "rg(1) AUTOMATIC FILTERING: .gitignore, .ignore, .rgignore, .git/info/exclude and git's core.excludesFile (from git's configuration) are respected",
    },
    Own {
        programs: &["curl"],
        files: &["~/.curlrc", "~/.config/curlrc"],
        source: "curl(1) -K, --config: curl searches for a default config file, $XDG_CONFIG_HOME/curlrc then $HOME/.curlrc, unless -q is the first option",
    },
    Own {
        programs: &["wget"],
        files: &["/etc/wgetrc", "~/.wgetrc", "~/.netrc"],
        source: "wget(1) FILES: /usr/local/etc/wgetrc (the system wgetrc), .wgetrc (user startup file); --no-netrc: wget reads ~/.netrc for credentials by default",
    },
    Own {
        programs: &["less"],
        files: &[
            "~/.lesskey",
            "~/.less",
            "~/.lesshst",
            "~/.config/lesskey",
            "/etc/sysless",
            "/etc/syslesskey",
        ],
        source: "less(1) LESSKEY, LESSHISTFILE: the key bindings (~/.lesskey, ~/.less, /etc/sysless) and the history file (~/.lesshst)",
    },
    Own {
        programs: &["jq"],
        files: &["~/.jq"],
        source: "jq(1) MODULES: if $HOME/.jq is a file, it is sourced into the main program",
    },
    Own {
        programs: &["pip", "pip3"],
        files: &[
            "/etc/pip.conf",
            "/etc/xdg/pip/pip.conf",
            "~/.pip/pip.conf",
            "~/.config/pip/pip.conf",
        ],
        source: "pip user guide, Configuration: global /etc/pip.conf and $XDG_CONFIG_DIRS/pip/pip.conf, user $HOME/.config/pip/pip.conf and legacy $HOME/.pip/pip.conf",
    },
    Own {
        programs: &["npm", "npx"],
        files: &["~/.npmrc", "./.npmrc", "~/.gitconfig", "./package.json"],
        source: "npm-config(7), npmrc(5): per-project ./.npmrc, per-user ~/.npmrc, global $PREFIX/etc/npmrc are read on every run",
    },
    Own {
        programs: &["ssh", "scp", "sftp"],
        files: &[
            "~/.ssh/config",
            "/etc/ssh/ssh_config",
            "/etc/ssh/ssh_config.d",
        ],
        source: "ssh(1) FILES: ~/.ssh/config (per-user configuration), /etc/ssh/ssh_config (system-wide)",
    },
    Own {
        programs: &["ps"],
        files: &["/proc"],
        source: "ps(1) FILES: /proc/[pid]/... ps reads every process's entries",
    },
];

/// Programs that run others by themselves to do their own job.
const HELPERS: &[(&[&str], &[&str], &str)] = &[
    (
        &[
            "zcat",
            "zgrep",
            "zegrep",
            "zfgrep",
            "zless",
            "zmore",
            "zdiff",
            "zcmp",
            "gunzip",
            "uncompress",
        ],
        &["gzip", "grep", "sed", "less", "more", "diff", "cmp", "sh"],
        "gzip(1) package: zcat, zgrep, zless, zdiff and gunzip are shell scripts that run gzip -cd (and grep, less, diff)",
    ),
    (
        &["scp", "sftp"],
        &["ssh"],
        "scp(1), sftp(1): the transfer runs over ssh(1), started as a child (-S program)",
    ),
];

/// The compressors GNU tar runs through `sh -c` (tar(1), `-z`, `-j`, `-J`, `--zstd`,
/// `-a`, and by suffix when it reads a compressed archive).
const TAR_HELPERS: &[&str] = &["sh", "gzip", "bzip2", "xz", "zstd", "lzip", "lzma", "lzop"];

/// Start-up files of a login shell (`bash -l`, `sh -l`, `bash --login`).
const LOGIN: &[&str] = &[
    "/etc/profile",
    "/etc/profile.d",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.profile",
];
/// Start-up files of an interactive bash (`bash -i`).
const INTERACTIVE: &[&str] = &["/etc/bash.bashrc", "~/.bashrc"];

/// Add the files `inv`'s program reads by itself.
pub(crate) fn apply(inv: &Invocation<'_>, o: &mut Outcome) {
    let mut add = |files: &[&str]| {
        for f in files {
            let w = Word::literal(*f);
            if !o.effects.config_reads.contains(&w) {
                o.effects.config_reads.push(w);
            }
        }
    };
    for own in TABLE.iter().filter(|t| t.programs.contains(&inv.name)) {
        add(own.files);
    }
    // `curl -n`/`--netrc`/`--netrc-optional` reads ~/.netrc.
    if inv.name == "curl"
        && inv.args.iter().any(|a| {
            matches!(a.value.as_str(), "--netrc" | "--netrc-optional")
                || (a.value.starts_with('-') && !a.value.starts_with("--") && a.value.contains('n'))
        })
    {
        add(&["~/.netrc"]);
    }
    // git over HTTP reads ~/.netrc; over ssh it runs ssh, which reads its configuration.
    if inv.name == "git"
        && inv.args.iter().any(|a| {
            matches!(
                a.value.as_str(),
                "clone" | "fetch" | "pull" | "push" | "ls-remote"
            )
        })
    {
        add(&["~/.netrc", "~/.ssh/config", "/etc/ssh/ssh_config"]);
    }
    let mut helpers: Vec<&str> = Vec::new();
    for (programs, run, _) in HELPERS {
        if programs.contains(&inv.name) {
            helpers.extend(*run);
        }
    }
    if matches!(inv.name, "tar" | "gtar") && tar_compresses(inv.args) {
        helpers.extend(TAR_HELPERS);
    }
    for h in helpers {
        if !o.effects.helpers.iter().any(|x| x == h) {
            o.effects.helpers.push(h.to_owned());
        }
    }
    if matches!(inv.name, "bash" | "sh" | "dash" | "zsh" | "ksh") {
        let flags = shell_flags(inv.args);
        if flags.login {
            add(LOGIN);
        }
        if flags.interactive && inv.name == "bash" {
            add(INTERACTIVE);
        }
    }
}

#[derive(Default)]
struct ShellFlags {
    login: bool,
    interactive: bool,
}

/// The shell's leading options (up to the command string or script).
fn shell_flags(args: &[Word]) -> ShellFlags {
    let mut f = ShellFlags::default();
    for a in args {
        let v = a.value.as_str();
        match v {
            "--login" | "-l" => f.login = true,
            "--" => break,
            _ if v.starts_with("--") => {}
            _ if v.starts_with('-') && v.len() > 1 => {
                f.login |= v.contains('l');
                f.interactive |= v.contains('i');
            }
            _ => break,
        }
    }
    f
}

/// Whether tar runs a compressor: a compression option, or an archive name with a
/// compressed suffix (read by suffix on extraction and listing, or chosen by `-a`).
fn tar_compresses(args: &[Word]) -> bool {
    const SUFFIXES: &[&str] = &[
        ".gz", ".tgz", ".taz", ".bz2", ".tbz", ".tbz2", ".tz2", ".xz", ".txz", ".zst", ".tzst",
        ".lz", ".lzma", ".tlz", ".lzo", ".Z", ".taZ",
    ];
    args.iter().any(|a| {
        let v = a.value.as_str();
        matches!(
            v,
            "--gzip"
                | "--gunzip"
                | "--bzip2"
                | "--xz"
                | "--zstd"
                | "--lzip"
                | "--lzma"
                | "--lzop"
                | "--auto-compress"
                | "--compress"
                | "--uncompress"
        ) || (v.starts_with('-')
            && !v.starts_with("--")
            && v[1..].contains(['z', 'j', 'J', 'a', 'Z']))
            || (!v.starts_with('-')
                && v.len() < 20
                && v.chars().all(|c| c.is_ascii_alphabetic())
                && v.contains(['z', 'j', 'J', 'a', 'Z'])
                && args.first() == Some(a))
            || SUFFIXES.iter().any(|s| v.ends_with(s))
    })
}
