//! File programs: listing and reading (`ls`, `cat`, `stat`, …), copying and moving,
//! creating and deleting, archives, and `find`/`fd` with their executing actions.

use super::{Entry, Invocation, Opts, Outcome, join, parse_args, plain_read_only, read_operands};
use crate::model::Word;

mod archive;
mod find;
mod write;
use archive::{compress, tar, unzip, zip};
use find::{fd, find};
use write::{
    chmod, chown, copy_like, dd, delete_operands, install, ln, mktemp, shred, touch, write_operands,
};

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
