//! Programs that create, change or delete files: copies and moves, links, `touch`,
//! `rm`/`shred`, mode and owner changes, `dd` and `mktemp`.

use crate::knowledge::{Invocation, Opts, Outcome, parse_args};
use crate::model::{Class, Word};

/// `cp`/`mv`: the last operand (or `-t DIR`) is written; the others are read, and
/// for `mv` also deleted.
pub(super) fn copy_like(inv: &Invocation<'_>, moves: bool) -> Outcome {
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

pub(super) fn install(inv: &Invocation<'_>) -> Outcome {
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
pub(super) fn ln(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn touch(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("rdt", &["reference", "date"]));
    let mut o = Outcome::mutating();
    o.writes(&p.operands);
    o.reads(p.values(&["-r", "--reference"]));
    o
}

pub(super) fn write_operands(inv: &Invocation<'_>, spec: &Opts) -> Outcome {
    let p = parse_args(inv.args, spec);
    let mut o = Outcome::mutating();
    o.writes(&p.operands);
    o
}

pub(super) fn delete_operands(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &Opts::gnu("", &[]));
    let mut o = Outcome::mutating();
    o.deletes(&p.operands);
    o
}

pub(super) fn shred(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn chmod(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn chown(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn dd(inv: &Invocation<'_>) -> Outcome {
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

pub(super) fn mktemp(inv: &Invocation<'_>) -> Outcome {
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
        // The X's are replaced at random: the file is made in the template's directory.
        Some(t) if t.value.contains('/') && !p.has(&["-p", "--tmpdir", "-t"]) => {
            let parent = match t.value.rsplit_once('/') {
                Some(("", _)) => "/",
                Some((d, _)) => d,
                None => ".",
            };
            o.writes([&Word {
                value: parent.to_owned(),
                literal: t.literal,
            }]);
        }
        _ => o.writes([&dir]),
    }
    o
}
