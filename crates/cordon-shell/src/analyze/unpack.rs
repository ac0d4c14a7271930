//! Remote content unpacked or merged into a folder: an archive or a patch fetched from
//! the network and extracted or applied (`curl URL | tar -x`, `curl -o k.tgz URL && tar
//! -xzf k.tgz`, `curl URL | git apply`), a branch of a repository named by URL pulled or
//! checked out (`git pull URL`, `git fetch URL && git checkout FETCH_HEAD -- .`). The
//! files that land are ones nobody has seen, and among them may be the ones the
//! project's own tools run or obey (`.claude/settings.json`, `.git/hooks/*`,
//! `conftest.py`, `package.json` scripts): code that runs later. The command is given an
//! executing argument saying so, which `cordon check` asks about and the skill review
//! puts before a human.

use super::{Analyzer, Unseen, norm_path};
use crate::knowledge::Outcome;
use crate::model::{ExecArg, Word};

/// Git subcommands that bring a fetched ref's files into the working tree.
const GIT_TAKES_REF: &[&str] = &[
    "checkout",
    "switch",
    "restore",
    "merge",
    "reset",
    "rebase",
    "cherry-pick",
    "read-tree",
    "stash",
];

/// What the executing argument says.
const DETAIL: &str = "runs whatever the files it unpacks or merges become: they come from the network unseen, and the project's tools run some files (hooks, settings, configs)";

/// Does the word name a repository by URL (not a configured remote's name)?
fn repo_url(w: &Word) -> bool {
    !w.literal
        || w.value.contains("://")
        || (w.value.contains('@') && w.value.contains(':'))
        || w.value.ends_with(".git") && w.value.contains('/')
}

/// The git subcommand and the words after it (global options skipped).
fn git_sub(args: &[Word]) -> Option<(&str, &[Word])> {
    let mut k = 0;
    while let Some(w) = args.get(k) {
        match w.value.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => k += 2,
            v if v.starts_with('-') => k += 1,
            v => return Some((v, &args[k + 1..])),
        }
    }
    None
}

/// Is this tar invocation an extraction (`-x`, `--extract`, `xzf`, `-xzf`, `--get`)?
fn tar_extracts(args: &[Word]) -> bool {
    args.iter().enumerate().any(|(k, w)| {
        let v = w.value.as_str();
        v == "--extract"
            || v == "--get"
            || (v.starts_with('-') && !v.starts_with("--") && v.contains('x'))
            || (k == 0
                && !v.starts_with('-')
                && v.contains('x')
                && v.chars().all(|c| c.is_ascii_alphabetic()))
    })
}

/// The archive a tar reads: the value of `-f`/`--file` (or a bundled `xzf NAME`).
fn tar_archive(args: &[Word]) -> Option<&Word> {
    for (k, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        if v == "-f" || v == "--file" {
            return args.get(k + 1);
        }
        if v.starts_with("--file=") {
            return Some(w);
        }
        let bundled = (v.starts_with('-') && !v.starts_with("--")) || k == 0;
        if bundled
            && v.ends_with('f')
            && v.len() > 1
            && v.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        {
            return args.get(k + 1);
        }
    }
    None
}

impl Analyzer {
    /// A file filled with network bytes earlier in the text.
    fn fetched_file(&self, w: &Word) -> bool {
        let v = w.value.strip_prefix("--file=").unwrap_or(&w.value);
        self.unseen_files
            .get(&norm_path(v))
            .is_some_and(|u| u.fetched)
    }

    /// Judge a command that may unpack or merge remote content into a folder (see the
    /// module docs); `feed` is what its standard input carries.
    pub(super) fn fetched_into_tree(
        &mut self,
        name: Option<&str>,
        args: &[Word],
        feed: Unseen,
        outcome: &mut Outcome,
    ) {
        let Some(name) = name else {
            return;
        };
        if self.unpacks(name, args, feed) {
            outcome.effects.executes.push(exec_arg(name));
            outcome.mutate();
        }
    }

    /// The same for command `k` of the text, whose standard input a pipe fills with
    /// bytes fetched from the network (known only once the pipeline is walked).
    pub(super) fn fetched_piped_into_tree(&mut self, k: usize) {
        let Some(c) = self.out.commands.get(k) else {
            return;
        };
        let Some(name) = c
            .program
            .as_ref()
            .map(|p| p.value.rsplit('/').next().unwrap_or_default().to_owned())
        else {
            return;
        };
        let args = c.args.clone();
        if !self.unpacks(&name, &args, Unseen::FETCHED) {
            return;
        }
        if let Some(c) = self.out.commands.get_mut(k)
            && !c.effects.executes.iter().any(|e| e.detail == DETAIL)
        {
            c.effects.executes.push(exec_arg(&name));
            if c.effects.class == crate::model::Class::ReadOnly {
                c.effects.class = crate::model::Class::Mutating;
            }
        }
    }

    /// Does the command unpack or merge fetched content (see the module docs)?
    fn unpacks(&mut self, name: &str, args: &[Word], feed: Unseen) -> bool {
        let operands: Vec<&Word> = args.iter().filter(|w| !w.value.starts_with('-')).collect();
        match name {
            "tar" | "gtar" | "bsdtar" => {
                tar_extracts(args)
                    && match tar_archive(args) {
                        None => feed.fetched,
                        Some(a) if a.value == "-" => feed.fetched,
                        Some(a) => self.fetched_file(a),
                    }
            }
            "unzip" | "7z" | "7za" | "unrar" | "cpio" | "pax" | "patch" => {
                feed.fetched || operands.iter().any(|w| self.fetched_file(w))
            }
            "git" => match git_sub(args) {
                Some(("apply" | "am", rest)) => {
                    let files: Vec<&Word> =
                        rest.iter().filter(|w| !w.value.starts_with('-')).collect();
                    (files.is_empty() && feed.fetched)
                        || files
                            .iter()
                            .any(|w| self.fetched_file(w) || (w.value == "-" && feed.fetched))
                }
                Some(("pull", rest)) => rest
                    .iter()
                    .find(|w| !w.value.starts_with('-'))
                    .is_some_and(repo_url),
                Some(("fetch", rest)) => {
                    if rest
                        .iter()
                        .find(|w| !w.value.starts_with('-'))
                        .is_some_and(repo_url)
                    {
                        self.unseen_files
                            .insert("FETCH_HEAD".into(), Unseen::FETCHED);
                    }
                    false
                }
                Some((sub, rest)) if GIT_TAKES_REF.contains(&sub) => rest.iter().any(|w| {
                    w.value.starts_with("FETCH_HEAD")
                        && self.fetched_file(&Word::literal("FETCH_HEAD"))
                }),
                _ => false,
            },
            _ => false,
        }
    }
}

fn exec_arg(name: &str) -> ExecArg {
    ExecArg {
        program: name.to_owned(),
        arg: name.to_owned(),
        own_purpose: false,
        detail: DETAIL.to_owned(),
    }
}
