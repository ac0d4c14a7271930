//! File programs: listing and reading (`ls`, `cat`, `stat`, …), copying and moving,
//! creating and deleting, archives, and `find`/`fd` with their executing actions.

use super::{Entry, Invocation, Opts, Outcome, parse_args, plain_read_only, read_operands};
use crate::model::{Class, Word};

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &[
            "cat", "tac", "paste", "comm", "fmt", "expand", "unexpand", "fold", "strings",
            "readlink", "realpath", "sum", "cksum",
        ],
        classify: read_simple,
    },
    Entry {
        names: &["rev"],
        classify: |i| {
            // Reverses each line: text a reader sees becomes text they do not.
            let mut o = read_simple(i);
            o.decodes = true;
            o
        },
    },
    Entry {
        names: &["head", "tail"],
        classify: head_tail,
    },
    Entry {
        names: &["nl"],
        classify: |i| read_operands(i, &Opts::gnu("bdfhilnsvw", &[])),
    },
    Entry {
        names: &["wc"],
        classify: wc,
    },
    Entry {
        names: &["ls", "dir", "vdir"],
        classify: |i| {
            read_operands_or_cwd(
                i,
                &Opts::gnu(
                    "IwT",
                    &[
                        "hide",
                        "ignore",
                        "width",
                        "tabsize",
                        "sort",
                        "format",
                        "time",
                        "time-style",
                        "quoting-style",
                        "indicator-style",
                        "block-size",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["stat"],
        classify: |i| read_operands(i, &Opts::gnu("c", &["format", "printf"])),
    },
    Entry {
        names: &["file"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu(
                    "mfFeP",
                    &[
                        "magic-file",
                        "files-from",
                        "separator",
                        "exclude",
                        "parameter",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["du"],
        classify: |i| {
            read_operands_or_cwd(
                i,
                &Opts::gnu(
                    "dBtX",
                    &[
                        "max-depth",
                        "block-size",
                        "threshold",
                        "exclude",
                        "exclude-from",
                        "time-style",
                        "files0-from",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["df"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu("BtxF", &["block-size", "type", "exclude-type", "output"]),
            )
        },
    },
    Entry {
        names: &["tree"],
        classify: tree,
    },
    Entry {
        names: &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "shasum",
        ],
        classify: |i| read_operands(i, &Opts::gnu("al", &["algorithm", "length"])),
    },
    Entry {
        names: &["xxd"],
        classify: xxd,
    },
    Entry {
        names: &["od"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu(
                    "AjNtw",
                    &[
                        "address-radix",
                        "skip-bytes",
                        "read-bytes",
                        "format",
                        "width",
                        "endian",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["hexdump", "hd"],
        classify: |i| read_operands(i, &Opts::gnu("efns", &[])),
    },
    Entry {
        names: &["cmp"],
        classify: |i| read_operands(i, &Opts::gnu("in", &["ignore-initial", "bytes"])),
    },
    Entry {
        names: &["diff"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu(
                    "xXIFUCLSD",
                    &[
                        "exclude",
                        "exclude-from",
                        "ignore-matching-lines",
                        "label",
                        "starting-file",
                        "horizon-lines",
                        "show-function-line",
                        "unified",
                        "context",
                        "line-format",
                        "ifdef",
                        "palette",
                        "width",
                        "tabsize",
                        "color",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["join"],
        classify: |i| read_operands(i, &Opts::gnu("tjoe12a", &[])),
    },
    Entry {
        names: &["column"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu(
                    "scoNRWHdEJrTlC",
                    &[
                        "separator",
                        "output-separator",
                        "table-columns",
                        "table-name",
                        "table-right",
                        "table-wrap",
                        "table-hide",
                        "table-order",
                        "table-truncate",
                        "table-noextreme",
                        "tree",
                        "tree-id",
                        "tree-parent",
                        "output-width",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["cut"],
        classify: |i| {
            read_operands(
                i,
                &Opts::gnu(
                    "bcdf",
                    &[
                        "bytes",
                        "characters",
                        "delimiter",
                        "fields",
                        "output-delimiter",
                    ],
                ),
            )
        },
    },
    Entry {
        names: &["less", "more", "most"],
        classify: pager,
    },
    Entry {
        names: &[
            "basename",
            "dirname",
            "pwd",
            "true",
            "false",
            ":",
            "test",
            "[",
            "echo",
            "printf",
            "seq",
            "sleep",
            "yes",
            "tty",
            "nproc",
            "arch",
            "whoami",
            "logname",
            "groups",
            "users",
            "who",
            "w",
            "uptime",
            "free",
            "locale",
            "getconf",
            "id",
            "uname",
            "lsb_release",
            "ps",
            "pgrep",
            "top",
            "lsof",
            "pstree",
            "vmstat",
            "iostat",
            "lscpu",
            "lsblk",
            "lsmod",
            "which",
            "whereis",
            "type",
            "cal",
            "factor",
            "expr",
            "numfmt",
            "tput",
            "clear",
            "stty",
            "mount",
            "findmnt",
            "printenv",
            "env",
            "hash",
            "help",
            "dirs",
            "jobs",
            "history",
            "fc",
        ],
        classify: plain_or_special,
    },
    Entry {
        names: &["cp"],
        classify: |i| copy_like(i, false),
    },
    Entry {
        names: &["mv"],
        classify: |i| copy_like(i, true),
    },
    Entry {
        names: &["install"],
        classify: install,
    },
    Entry {
        names: &["ln", "link"],
        classify: ln,
    },
    Entry {
        names: &["touch"],
        classify: touch,
    },
    Entry {
        names: &["mkdir", "mkfifo", "mknod"],
        classify: |i| write_operands(i, &Opts::gnu("m", &["mode", "context"])),
    },
    Entry {
        names: &["truncate"],
        classify: |i| write_operands(i, &Opts::gnu("sr", &["size", "reference"])),
    },
    Entry {
        names: &["tee"],
        classify: |i| write_operands(i, &Opts::gnu("", &["output-error"])),
    },
    Entry {
        names: &["rm", "rmdir", "unlink"],
        classify: delete_operands,
    },
    Entry {
        names: &["shred"],
        classify: shred,
    },
    Entry {
        names: &["chmod"],
        classify: chmod,
    },
    Entry {
        names: &["chown", "chgrp"],
        classify: chown,
    },
    Entry {
        names: &["dd"],
        classify: dd,
    },
    Entry {
        names: &["mktemp"],
        classify: mktemp,
    },
    Entry {
        names: &[
            "gzip",
            "gunzip",
            "bzip2",
            "bunzip2",
            "xz",
            "unxz",
            "zstd",
            "unzstd",
            "lz4",
            "compress",
            "uncompress",
        ],
        classify: compress,
    },
    Entry {
        names: &["zcat", "bzcat", "xzcat", "zstdcat", "lz4cat"],
        classify: |i| {
            let mut o = read_simple(i);
            o.decodes = true;
            o
        },
    },
    Entry {
        names: &["zless", "zgrep", "zmore", "zdiff"],
        classify: read_simple,
    },
    Entry {
        names: &["uudecode"],
        classify: uudecode,
    },
    Entry {
        names: &["tar", "bsdtar"],
        classify: tar,
    },
    Entry {
        names: &["zip"],
        classify: zip,
    },
    Entry {
        names: &["unzip"],
        classify: unzip,
    },
    Entry {
        names: &["base64", "base32", "basenc"],
        classify: base64,
    },
    Entry {
        names: &["patch"],
        classify: patch,
    },
    Entry {
        names: &["find"],
        classify: find,
    },
    Entry {
        names: &["fd", "fdfind"],
        classify: fd,
    },
    Entry {
        names: &["split", "csplit"],
        classify: split,
    },
];

/// A read-only program whose operands are paths it reads, and that reads the working
/// directory when it is given none (`ls`, `du`).
fn read_operands_or_cwd(inv: &Invocation<'_>, spec: &Opts) -> Outcome {
    let mut o = read_operands(inv, spec);
    if o.effects.reads.is_empty()
        && !inv
            .args
            .iter()
            .any(|w| w.value.starts_with("--files0-from"))
    {
        o.reads([&Word::literal(".")]);
    }
    o
}

fn read_simple(inv: &Invocation<'_>) -> Outcome {
    read_operands(inv, &Opts::gnu("", &[]))
}

fn head_tail(inv: &Invocation<'_>) -> Outcome {
    read_operands(
        inv,
        &Opts::gnu(
            "ncs",
            &[
                "lines",
                "bytes",
                "sleep-interval",
                "pid",
                "max-unchanged-stats",
            ],
        ),
    )
}

fn wc(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    o.reads(p.values(&["--files0-from"]));
    o
}

fn plain_or_special(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    match inv.name {
        "env" => o.effects.reads_env = true,
        // `printenv NAME…` prints only those variables; a name that looks like it
        // holds a secret counts as printing the environment.
        "printenv" => {
            o.effects.reads_env = inv.args.iter().all(|w| w.value.starts_with('-'))
                || inv
                    .args
                    .iter()
                    .any(|w| !w.literal || secret_like_name(&w.value));
        }
        "printf" => o.decodes = printf_decodes(inv.args),
        "echo" => o.decodes = inv.args.iter().any(|w| has_byte_escape(&w.value)),
        "mount" if !inv.args.is_empty() => o.privilege("mount"),
        "history" => {
            // `history -a FILE` / `-w FILE` write the history file.
            let p = parse_args(inv.args, &Opts::gnu("", &[]));
            if p.has(&["-a", "-w", "-n", "-r", "-c", "-d", "-s"]) {
                o.writes(&p.operands);
                o.mutate();
            }
        }
        _ => {}
    }
    let _ = plain_read_only;
    o
}

/// A variable name that usually holds a secret.
fn secret_like_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "TOKEN", "SECRET", "PASS", "KEY", "AUTH", "CRED", "SESSION", "COOKIE", "PRIVATE",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// A `\xHH`, `\uHHHH`, `\UHHHHHHHH` or octal `\NNN` escape: bytes spelled so that a
/// reader does not see them.
fn has_byte_escape(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2).any(|w| {
        w[0] == b'\\' && (matches!(w[1], b'x' | b'u' | b'U') || (b'0'..=b'7').contains(&w[1]))
    })
}

/// `printf FORMAT [ARGS…]` whose format (or a `%b` argument) spells bytes as escapes.
fn printf_decodes(args: &[Word]) -> bool {
    let mut rest = args;
    if let Some(first) = rest.first()
        && first.value == "-v"
    {
        rest = rest.get(2..).unwrap_or(&[]);
    }
    if rest.first().is_some_and(|w| w.value == "--") {
        rest = &rest[1..];
    }
    let Some((format, values)) = rest.split_first() else {
        return false;
    };
    has_byte_escape(&format.value)
        || format.value.contains("%b") && values.iter().any(|w| has_byte_escape(&w.value))
}

/// `uudecode [-o OUT] [FILE]`: writes the decoded file (named inside the input unless
/// `-o` says otherwise).
fn uudecode(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("o", &["output-file"]));
    let mut o = Outcome::read_only();
    o.decodes = true;
    o.reads(&p.operands);
    let outs: Vec<Word> = p.values(&["-o", "--output-file"]).cloned().collect();
    if outs.is_empty() {
        o.writes([&Word {
            value: "the file named inside the input".into(),
            literal: false,
        }]);
    } else {
        o.writes(&outs);
    }
    o
}

fn tree(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "LPIo",
            &["filelimit", "timefmt", "sort", "charset", "fromfile"],
        ),
    );
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    if p.operands.is_empty() {
        o.reads([&Word::literal(".")]);
    }
    o.writes(p.values(&["-o"]));
    o
}

fn xxd(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("cglnos", &[]));
    let mut o = Outcome::read_only();
    o.decodes = p.has(&["-r", "-revert"]) || inv.args.iter().any(|w| w.value == "-revert");
    if let Some(inp) = p.operands.first() {
        o.reads([inp]);
    }
    o.writes(p.operands.get(1));
    o
}

fn pager(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "bhjkopPtTxyzO#",
            &[
                "log-file",
                "LOG-FILE",
                "tag-file",
                "tag",
                "prompt",
                "tabs",
                "shift",
                "window",
                "max-back-scroll",
                "max-forw-scroll",
                "lesskey-file",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    o.writes(p.values(&["-o", "-O", "--log-file", "--LOG-FILE"]));
    for (name, value) in inv.assignments {
        match name.as_str() {
            // `LESSOPEN='|cmd %s'`: an input preprocessor run through the shell for
            // each file; `LESSCLOSE`, `LESSEDIT`, `VISUAL` and `EDITOR` are commands too.
            "LESSOPEN" | "LESSCLOSE" | "LESSEDIT" | "VISUAL" | "EDITOR" => {
                let cmd = value.value.trim_start_matches(['|', '-', '>']);
                o.code(
                    inv.name,
                    name,
                    &Word {
                        value: cmd.to_owned(),
                        literal: value.literal,
                    },
                );
            }
            "LESSKEY" | "LESSKEYIN" => o.exec(inv.name, name, &value.value),
            _ => {}
        }
    }
    o
}

/// `cp`/`mv`: the last operand (or `-t DIR`) is written; the others are read, and
/// for `mv` also deleted.
fn copy_like(inv: &Invocation<'_>, moves: bool) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("St", &["suffix", "target-directory"]));
    let mut o = Outcome::mutating();
    let target: Vec<Word> = p.values(&["-t", "--target-directory"]).cloned().collect();
    let sources: &[Word] = if target.is_empty() {
        match p.operands.split_last() {
            Some((dest, rest)) => {
                o.writes([dest]);
                o.fills([dest]);
                rest
            }
            None => &[],
        }
    } else {
        o.writes(&target);
        o.fills(&target);
        &p.operands
    };
    o.reads(sources);
    if moves {
        o.deletes(sources);
    }
    if p.operands.is_empty() {
        o.effects.class = Class::Unknown;
    }
    o
}

fn install(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "gmoSt",
            &[
                "group",
                "mode",
                "owner",
                "suffix",
                "target-directory",
                "strip-program",
            ],
        ),
    );
    if p.has(&["-d", "--directory"]) {
        let mut o = Outcome::mutating();
        o.writes(&p.operands);
        return o;
    }
    let mut o = copy_like(inv, false);
    if let Some(prog) = p.values(&["--strip-program"]).next() {
        o.code("install", "--strip-program", prog);
    }
    o
}

/// `ln [-s] TARGET… NAME`: NAME is written, and each TARGET is read, because whatever
/// reads NAME later reads the target through the link (a hard link is the same file;
/// a symbolic link is followed). A relative target of a symbolic link is relative to
/// the link's directory, not to the working directory.
fn ln(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("St", &["suffix", "target-directory"]));
    let mut o = Outcome::mutating();
    let symbolic = p.has(&["-s", "--symbolic"]);
    let dir: Vec<Word> = p.values(&["-t", "--target-directory"]).cloned().collect();
    let (targets, link_dir): (&[Word], Option<Word>) = if let Some(d) = dir.last() {
        o.writes(&dir);
        o.fills(&dir);
        (&p.operands, Some(d.clone()))
    } else if p.operands.len() == 1 {
        o.writes([&Word::literal(".")]);
        o.fills([&Word::literal(".")]);
        (&p.operands, None)
    } else if let Some((name, targets)) = p.operands.split_last() {
        o.writes([name]);
        o.fills([name]);
        let parent = if name.value.ends_with('/') {
            Some(name.value.trim_end_matches('/').to_owned())
        } else {
            name.value.rsplit_once('/').map(|(d, _)| d.to_owned())
        };
        let parent = parent.map(|d| Word {
            value: if d.is_empty() { "/".into() } else { d },
            literal: name.literal,
        });
        (targets, parent)
    } else {
        o.effects.class = Class::Unknown;
        return o;
    };
    for t in targets {
        match &link_dir {
            Some(d)
                if symbolic
                    && !t.value.starts_with('/')
                    && !t.value.starts_with('~')
                    && d.value != "." =>
            {
                o.reads([&Word {
                    value: format!("{}/{}", d.value.trim_end_matches('/'), t.value),
                    literal: t.literal && d.literal,
                }]);
            }
            _ => o.reads([t]),
        }
    }
    o
}

fn touch(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("rdt", &["reference", "date"]));
    let mut o = Outcome::mutating();
    o.writes(&p.operands);
    o.reads(p.values(&["-r", "--reference"]));
    o
}

fn write_operands(inv: &Invocation<'_>, spec: &Opts) -> Outcome {
    let p = parse_args(inv.args, spec);
    let mut o = Outcome::mutating();
    o.writes(&p.operands);
    o
}

fn delete_operands(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    let mut o = Outcome::mutating();
    o.deletes(&p.operands);
    o
}

fn shred(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("ns", &["iterations", "size", "random-source"]),
    );
    let mut o = Outcome::mutating();
    o.writes(&p.operands);
    if p.has(&["-u", "--remove"]) {
        o.deletes(&p.operands);
    }
    o
}

/// A mode that sets the setuid or setgid bit: `u+s`, `g+s`, `+s`, `4755`, `2755`.
fn sets_setid(mode: &str) -> bool {
    if mode.bytes().all(|c| c.is_ascii_digit()) {
        return mode.len() >= 4 && matches!(mode.as_bytes()[mode.len() - 4], b'2'..=b'7');
    }
    mode.split(',').any(|clause| {
        clause
            .split_once(['+', '='])
            .is_some_and(|(_, perms)| perms.contains('s'))
    })
}

fn chmod(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &["reference"]));
    let mut o = Outcome::mutating();
    let targets: &[Word] = if p.has(&["--reference"]) {
        &p.operands
    } else {
        match p.operands.split_first() {
            Some((mode, rest)) => {
                if sets_setid(&mode.value) || !mode.literal {
                    o.privilege(&format!("chmod {}", mode.value));
                }
                rest
            }
            None => &[],
        }
    };
    // `chmod -s` style clusters: the parser saw them as options.
    if p.opts.iter().any(|(n, _)| n == "-s") {
        o.effects.class = Class::Unknown;
    }
    o.writes(targets);
    o
}

fn chown(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &["reference", "from"]));
    let mut o = Outcome::mutating();
    let targets = if p.has(&["--reference"]) {
        &p.operands[..]
    } else {
        p.operands.get(1..).unwrap_or(&[])
    };
    o.writes(targets);
    o
}

fn dd(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    for a in inv.args {
        if let Some(v) = a.value.strip_prefix("if=") {
            o.reads([&Word {
                value: v.to_owned(),
                literal: a.literal,
            }]);
        } else if let Some(v) = a.value.strip_prefix("of=") {
            o.writes([&Word {
                value: v.to_owned(),
                literal: a.literal,
            }]);
        }
    }
    o
}

fn mktemp(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("p", &["tmpdir", "suffix"]));
    if p.has(&["-u", "--dry-run"]) {
        return Outcome::read_only();
    }
    let dir = p
        .values(&["-p", "--tmpdir"])
        .next()
        .cloned()
        .unwrap_or_else(|| Word::literal("/tmp"));
    let mut o = Outcome::mutating();
    match p.operands.first() {
        Some(t) if t.value.contains('/') && !p.has(&["-p", "--tmpdir", "-t"]) => o.writes([t]),
        _ => o.writes([&dir]),
    }
    o
}

fn compress(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("SbTo", &["suffix", "threads", "output"]),
    );
    let mut o = Outcome::read_only();
    o.reads(&p.operands);
    let decompress = p.has(&["-d", "--decompress", "--uncompress"])
        || inv.name.starts_with("gun")
        || inv.name.starts_with("un")
        || inv.name.starts_with("bun")
        || inv.name.ends_with("cat");
    o.decodes = decompress && !p.has(&["-l", "--list", "-t", "--test"]);
    let to_stdout = p.has(&[
        "-c",
        "--stdout",
        "--to-stdout",
        "-l",
        "--list",
        "-t",
        "--test",
    ]) || inv.name.ends_with("cat");
    if to_stdout || p.operands.is_empty() {
        return o;
    }
    for f in &p.operands {
        let out = if decompress {
            Word {
                value: f
                    .value
                    .rsplit_once('.')
                    .map_or(f.value.clone(), |(a, _)| a.to_owned()),
                literal: f.literal,
            }
        } else {
            Word {
                value: format!("{}.*", f.value),
                literal: false,
            }
        };
        o.writes([&out]);
    }
    o.writes(p.values(&["-o", "--output"]));
    if !p.has(&["-k", "--keep"]) && inv.name != "zstd" && inv.name != "lz4" {
        o.deletes(&p.operands);
    }
    o
}

fn tar(inv: &Invocation<'_>) -> Outcome {
    // Old-style first argument (`tar xzf a.tgz`) is a cluster without the dash.
    let mut args = inv.args.to_vec();
    if let Some(first) = args.first_mut()
        && !first.value.starts_with('-')
        && first.value.bytes().all(|c| c.is_ascii_alphabetic())
    {
        first.value.insert(0, '-');
    }
    let p = parse_args(
        &args,
        &Opts::gnu(
            "fCTXbHgKLNVIF",
            &[
                "file",
                "directory",
                "files-from",
                "exclude-from",
                "exclude",
                "blocking-factor",
                "format",
                "listed-incremental",
                "starting-file",
                "tape-length",
                "newer",
                "after-date",
                "label",
                "use-compress-program",
                "to-command",
                "info-script",
                "new-volume-script",
                "rsh-command",
                "transform",
                "xform",
                "owner",
                "group",
                "mode",
                "checkpoint",
                "checkpoint-action",
                "suffix",
                "strip-components",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    for (name, value) in &p.opts {
        let v = value.as_ref().map(|w| w.value.as_str()).unwrap_or("");
        match (name.as_str(), value) {
            (
                "-I"
                | "--use-compress-program"
                | "--to-command"
                | "--info-script"
                | "-F"
                | "--new-volume-script"
                | "--rsh-command",
                Some(cmd),
            ) => o.code("tar", name, cmd),
            ("--checkpoint-action", Some(w)) if v.starts_with("exec=") => o.code(
                "tar",
                name,
                &Word {
                    value: v["exec=".len()..].to_owned(),
                    literal: w.literal,
                },
            ),
            ("--checkpoint-action", _) if v.starts_with("exec") => o.exec("tar", name, v),
            _ => {}
        }
    }
    let archive: Vec<Word> = p.values(&["-f", "--file"]).cloned().collect();
    let dir: Option<Word> = p.values(&["-C", "--directory"]).last().cloned();
    o.reads(p.values(&["-T", "--files-from", "-X", "--exclude-from"]));
    let remote = archive
        .iter()
        .any(|a| a.value.contains(':') && !a.value.starts_with('/'));
    if remote {
        o.net_unknown();
    }
    if p.has(&["-x", "--extract", "--get"]) {
        o.reads(&archive);
        if !p.has(&["-O", "--to-stdout"]) && !p.has(&["--to-command"]) {
            let target = dir.unwrap_or_else(|| Word::literal("."));
            o.writes([&target]);
            o.fills([&target]);
        }
        if archive.is_empty() {
            // Reads the archive from standard input.
        }
    } else if p.has(&[
        "-c",
        "--create",
        "-r",
        "--append",
        "-u",
        "--update",
        "-A",
        "--catenate",
        "--concatenate",
        "--delete",
    ]) {
        o.writes(&archive);
        let base = dir.map(|d| d.value);
        for op in &p.operands {
            match &base {
                Some(b) if !op.value.starts_with('/') => o.reads([&Word {
                    value: format!("{b}/{}", op.value),
                    literal: op.literal,
                }]),
                _ => o.reads([op]),
            }
        }
        if p.has(&["--remove-files"]) {
            o.deletes(&p.operands);
        }
    } else if p.has(&["-t", "--list", "-d", "--diff", "--compare"]) {
        o.reads(&archive);
    } else {
        o.effects.class = Class::Unknown;
    }
    o
}

fn zip(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "bnstxiOPZ",
            &[
                "temp-path",
                "suffixes",
                "from-date",
                "before-date",
                "exclude",
                "include",
                "output-file",
                "password",
                "compression-method",
                "unzip-command",
                "split-size",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    // `-TT cmd` is parsed as `-T` `-T`; find the real spelling. The command tests the
    // archive (its name replaces `{}` or is appended), run through the shell.
    let mut it = inv.args.iter();
    while let Some(a) = it.next() {
        if a.value == "-TT" || a.value == "--unzip-command" {
            match it.next() {
                Some(cmd) => o.code("zip", &a.value, cmd),
                None => o.exec("zip", &a.value, ""),
            }
        } else if let Some(cmd) = a.value.strip_prefix("--unzip-command=") {
            o.code(
                "zip",
                "--unzip-command",
                &Word {
                    value: cmd.to_owned(),
                    literal: a.literal,
                },
            );
        }
    }
    if let Some((archive, files)) = p.operands.split_first() {
        o.writes([archive]);
        o.reads(files);
        if p.has(&["-m", "--move"]) {
            o.deletes(files);
        }
    }
    o.writes(p.values(&["-O", "--output-file"]));
    if p.operands.is_empty() {
        o.effects.class = Class::Unknown;
    }
    o
}

fn unzip(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("dxP", &[]));
    let mut o = Outcome::read_only();
    o.reads(p.operands.first());
    if p.has(&["-l", "-t", "-v", "-p", "-c", "-Z", "-z"]) {
        return o;
    }
    let target = p
        .values(&["-d"])
        .last()
        .cloned()
        .unwrap_or_else(|| Word::literal("."));
    o.writes([&target]);
    o.fills([&target]);
    o
}

fn base64(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu("wbio", &["wrap", "break", "input", "output"]),
    );
    let mut o = Outcome::read_only();
    o.decodes = p.has(&["-d", "--decode", "-D"]);
    o.reads(&p.operands);
    o.reads(p.values(&["-i", "--input"]));
    o.writes(p.values(&["-o", "--output"]));
    o
}

fn patch(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            "iodpBDFrVYzgx",
            &[
                "input",
                "output",
                "directory",
                "strip",
                "prefix",
                "ifdef",
                "fuzz",
                "reject-file",
                "version-control",
                "basename-prefix",
                "suffix",
                "get",
                "debug",
                "quoting-style",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    o.reads(p.values(&["-i", "--input"]));
    if p.has(&["--dry-run", "-C", "--check"]) {
        return o;
    }
    o.writes(p.values(&["-o", "--output", "-r", "--reject-file"]));
    match p.operands.split_first() {
        Some((orig, rest)) => {
            o.writes([orig]);
            o.reads(rest);
        }
        None => {
            // The files to change are named inside the patch, which the text does not show.
            let dir = p
                .values(&["-d", "--directory"])
                .last()
                .cloned()
                .unwrap_or_else(|| Word::literal("."));
            o.fills([&dir]);
            o.writes([&Word {
                value: dir.value,
                literal: false,
            }]);
        }
    }
    o
}

fn split(inv: &Invocation<'_>) -> Outcome {
    // split's `-d` and `-x` are flags; csplit's `-f`, `-n` and `-b` take values.
    let short = if inv.name == "csplit" { "fnb" } else { "albCn" };
    let p = parse_args(
        inv.args,
        &Opts::gnu(
            short,
            &[
                "suffix-length",
                "additional-suffix",
                "bytes",
                "line-bytes",
                "lines",
                "number",
                "filter",
                "prefix",
                "suffix-format",
            ],
        ),
    );
    let mut o = Outcome::read_only();
    if let Some(f) = p.values(&["--filter"]).next() {
        o.code(inv.name, "--filter", f);
    }
    let (input, prefix) = match inv.name {
        "csplit" => (
            p.operands.first(),
            p.values(&["-f", "--prefix"]).next().cloned(),
        ),
        _ => (p.operands.first(), p.operands.get(1).cloned()),
    };
    o.reads(input);
    let prefix =
        prefix.unwrap_or_else(|| Word::literal(if inv.name == "csplit" { "xx" } else { "x" }));
    o.writes([&Word {
        value: format!("{}*", prefix.value),
        literal: false,
    }]);
    o
}

/// Primaries of `find` that take one argument.
const FIND_ONE_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-used",
    "-links",
    "-inum",
    "-samefile",
    "-lname",
    "-ilname",
    "-maxdepth",
    "-mindepth",
    "-fstype",
    "-context",
    "-regextype",
    "-printf",
    "-newerXY",
    "-files0-from",
];

fn find(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let args = inv.args;
    let mut i = 0;
    // Leading options and starting points.
    while i < args.len()
        && matches!(
            args[i].value.as_str(),
            "-H" | "-L" | "-P" | "-O0" | "-O1" | "-O2" | "-O3"
        )
    {
        i += 1;
    }
    if args.get(i).is_some_and(|a| a.value == "-D") {
        i += 2;
    }
    let mut roots = Vec::new();
    while i < args.len() {
        let v = &args[i].value;
        if v.starts_with('-') || v == "(" || v == "!" {
            break;
        }
        roots.push(args[i].clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(Word::literal("."));
    }
    o.reads(&roots);
    while i < args.len() {
        let a = args[i].value.as_str();
        match a {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && args[end].value != ";" && args[end].value != "+" {
                    end += 1;
                }
                let argv = args[start..end.min(args.len())].to_vec();
                o.exec("find", a, &super::join(&argv));
                o.exec_argv.push(("find ".to_owned() + a, argv));
                i = end + 1;
            }
            "-delete" => {
                // The matched entries under each starting point, not the point itself
                // (find cannot remove `.`); which ones is only known at run time.
                let matched: Vec<Word> = roots
                    .iter()
                    .map(|r| Word {
                        value: format!("{}/*", r.value.trim_end_matches('/')),
                        literal: false,
                    })
                    .collect();
                o.deletes(&matched);
                i += 1;
            }
            "-fprint" | "-fprint0" | "-fls" => {
                o.writes(args.get(i + 1));
                i += 2;
            }
            "-fprintf" => {
                o.writes(args.get(i + 1));
                i += 3;
            }
            _ if FIND_ONE_ARG.contains(&a) || a.starts_with("-newer") => {
                if a == "-files0-from" {
                    o.reads(args.get(i + 1));
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    o
}

fn fd(inv: &Invocation<'_>) -> Outcome {
    let spec = Opts::gnu(
        "tedEcjSoxX",
        &[
            "type",
            "extension",
            "max-depth",
            "min-depth",
            "exact-depth",
            "exclude",
            "color",
            "threads",
            "size",
            "changed-within",
            "changed-before",
            "owner",
            "base-directory",
            "path-separator",
            "search-path",
            "max-results",
            "ignore-file",
            "and",
            "format",
            "hyperlink",
            "batch-size",
            "exec",
            "exec-batch",
        ],
    );
    let mut o = Outcome::read_only();
    let args = inv.args;
    // Everything after -x/-X/--exec/--exec-batch up to `;` (or the end) is the command.
    let mut i = 0;
    let mut before = Vec::new();
    while i < args.len() {
        let a = args[i].value.as_str();
        if matches!(a, "-x" | "-X" | "--exec" | "--exec-batch") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end].value != ";" {
                end += 1;
            }
            let argv = args[start..end.min(args.len())].to_vec();
            o.exec("fd", a, &super::join(&argv));
            o.exec_argv.push((format!("fd {a}"), argv));
            i = end + 1;
        } else {
            before.push(args[i].clone());
            i += 1;
        }
    }
    let p = parse_args(&before, &spec);
    // First operand is the pattern, the rest are search paths.
    let mut paths: Vec<Word> = p.operands.get(1..).unwrap_or(&[]).to_vec();
    paths.extend(p.values(&["--search-path", "--base-directory"]).cloned());
    if paths.is_empty() {
        paths.push(Word::literal("."));
    }
    o.reads(&paths);
    o.reads(p.values(&["--ignore-file"]));
    o
}
