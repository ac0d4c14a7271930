//! Compressors and archivers: `gzip` and kin, `tar`, `zip` and `unzip`.

use crate::knowledge::{Invocation, Opts, Outcome, Parsed, parse_args};
use crate::model::{Class, Word};

pub(super) fn compress(inv: &Invocation<'_>) -> Outcome {
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

/// tar's options that take a value, so that no value is taken for a file.
const TAR_OPTS: Opts = Opts::gnu(
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
);

/// Options whose value is a command tar runs.
const TAR_COMMANDS: &[&str] = &[
    "-I",
    "--use-compress-program",
    "--to-command",
    "--info-script",
    "-F",
    "--new-volume-script",
    "--rsh-command",
];

/// Operations that write the archive.
const TAR_WRITES_ARCHIVE: &[&str] = &[
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
];

pub(super) fn tar(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(&with_dash(inv.args), &TAR_OPTS);
    let mut o = Outcome::read_only();
    tar_commands(&p, &mut o);
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
        // Without `-f`, the archive is read from standard input.
        o.reads(&archive);
        if !p.has(&["-O", "--to-stdout"]) && !p.has(&["--to-command"]) {
            let target = dir.unwrap_or_else(|| Word::literal("."));
            o.writes([&target]);
            o.fills([&target]);
        }
    } else if p.has(TAR_WRITES_ARCHIVE) {
        o.writes(&archive);
        tar_members(&p, dir, &mut o);
    } else if p.has(&["-t", "--list", "-d", "--diff", "--compare"]) {
        o.reads(&archive);
    } else {
        o.effects.class = Class::Unknown;
    }
    o
}

/// The arguments with an old-style first argument (`tar xzf a.tgz`, a cluster without
/// the dash) given its dash.
fn with_dash(args: &[Word]) -> Vec<Word> {
    let mut args = args.to_vec();
    if let Some(first) = args.first_mut()
        && !first.value.starts_with('-')
        && first.value.bytes().all(|c| c.is_ascii_alphabetic())
    {
        first.value.insert(0, '-');
    }
    args
}

/// The commands tar's options run: a compressor, `--to-command`, the volume and info
/// scripts, the remote shell, and `--checkpoint-action=exec=…`.
fn tar_commands(p: &Parsed, o: &mut Outcome) {
    for (name, value) in &p.opts {
        let v = value.as_ref().map(|w| w.value.as_str()).unwrap_or("");
        match (name.as_str(), value) {
            (n, Some(cmd)) if TAR_COMMANDS.contains(&n) => o.code("tar", name, cmd),
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
}

/// The files an archive is made of (relative ones under `-C`'s directory), read, and
/// with `--remove-files` deleted.
fn tar_members(p: &Parsed, dir: Option<Word>, o: &mut Outcome) {
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
}

pub(super) fn zip(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn unzip(inv: &Invocation<'_>) -> Outcome {
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
