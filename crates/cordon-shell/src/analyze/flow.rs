//! Where bytes go: redirections, files and links written earlier in the text, and
//! bytes the reader cannot see (fetched or decoded) followed to what runs them.

use super::{Analyzer, Feed, Nested, Scope, Unseen, dev_tcp, norm_path, push_all};
use crate::expand::{Expander, Field, Mode};
use crate::model::{Context, CwdChange, Dynamic, Effects, Redirect, RedirectKind, Word};
use crate::parse::{RawRedirect, RawTarget};

/// Decoded redirections and what they tell the analysis.
#[derive(Default)]
pub(super) struct Redirected {
    /// The redirections, targets expanded.
    pub(super) redirects: Vec<Redirect>,
    /// The dynamic flags of file targets.
    pub(super) dynamic: Vec<Dynamic>,
    /// What feeds standard input (the last redirection of it).
    pub(super) feed: Option<Feed>,
    /// Facts of the code nested in the targets.
    pub(super) nested: Nested,
    /// `/dev/tcp` addresses, each with whether it is read.
    pub(super) net: Vec<(Word, bool)>,
}

impl Analyzer {
    /// Why the file at `key` (or a directory holding it, such as a repository cloned
    /// earlier in the text) holds bytes the analysis cannot see.
    pub(super) fn unseen_file(&self, key: &str) -> Option<Unseen> {
        let mut p = key.trim_end_matches('/');
        loop {
            if let Some(u) = self.unseen_files.get(p) {
                return Some(*u);
            }
            p = p.rsplit_once('/')?.0;
            if p.is_empty() {
                return None;
            }
        }
    }

    /// What the commands emitted since `start` output that the analysis cannot see.
    pub(super) fn unseen_since(&self, start: usize) -> Unseen {
        let mut u = Unseen::default();
        for m in self.meta.get(start..).unwrap_or(&[]) {
            u.merge(m.unseen);
        }
        u
    }

    /// Files command `c` writes (through its arguments or by redirecting its standard
    /// output) hold bytes the analysis cannot see.
    pub(super) fn record_unseen_outputs(&mut self, c: usize, unseen: Unseen) {
        let Some(cmd) = self.out.commands.get(c) else {
            return;
        };
        let files: Vec<String> = cmd
            .effects
            .writes
            .iter()
            .map(|w| w.value.clone())
            .chain(
                cmd.redirects
                    .iter()
                    .filter(|r| r.kind.writes_file() && r.fd.is_none_or(|fd| fd == 1))
                    .map(|r| r.target.value.clone()),
            )
            .collect();
        for f in files {
            self.unseen_files
                .entry(norm_path(&f))
                .or_default()
                .merge(unseen);
        }
    }

    /// Decode redirections: their targets, with the dynamic flags of file targets, what
    /// feeds standard input, nested-analysis facts, and `/dev/tcp` targets.
    pub(super) fn redirects(&mut self, raw: &[RawRedirect], scope: &Scope) -> Redirected {
        let mut acc = Redirected {
            redirects: Vec::with_capacity(raw.len()),
            ..Redirected::default()
        };
        for r in raw {
            let stdin = matches!(r.fd, None | Some(0));
            let target = match &r.target {
                RawTarget::Word(w) => self.word_target(r, w, stdin, scope, &mut acc),
                RawTarget::Process(script) => {
                    let n = self.nested_script(script, scope, Context::ProcessSubstitution);
                    acc.nested.merge(n);
                    push_all(&mut acc.dynamic, &[Dynamic::ProcessSubstitution]);
                    if r.kind == RedirectKind::Read && stdin {
                        acc.feed = Some(Feed::Process { unseen: n.unseen });
                    }
                    Word {
                        value: "<(…)".into(),
                        literal: false,
                    }
                }
                RawTarget::HereDoc { body, expand } => {
                    let (target, unseen) = self.heredoc_text(body, *expand, scope, &mut acc);
                    if stdin {
                        acc.feed = Some(Feed::Text {
                            text: target.clone(),
                            unseen,
                        });
                    }
                    target
                }
            };
            acc.redirects.push(Redirect {
                fd: r.fd,
                kind: r.kind,
                target,
            });
        }
        acc
    }

    /// The target of a redirection to a word, expanded (bash refuses one that expands to
    /// no word or several: its text is kept, marked opaque). A file's dynamic flags, a
    /// `/dev/tcp` address, and standard input fed from a here-string or a file go to
    /// `acc`.
    fn word_target(
        &mut self,
        r: &RawRedirect,
        w: &str,
        stdin: bool,
        scope: &Scope,
        acc: &mut Redirected,
    ) -> Word {
        let fd_only = matches!(
            r.kind,
            RedirectKind::DupIn | RedirectKind::DupOut | RedirectKind::Close
        );
        let mode = if fd_only || r.kind == RedirectKind::HereString {
            Mode::Quoted
        } else {
            Mode::Command
        };
        let e = self.expand_word(w, mode);
        let n = self.nested(&e.substs, scope);
        acc.nested.merge(n);
        self.arith_effects(&e.arith);
        let mut d = e.all_dynamic();
        let field = match e.fields.as_slice() {
            [f] => f.clone(),
            _ => {
                d.push(Dynamic::Opaque(format!(
                    "the redirection target `{w}` does not expand to one word"
                )));
                Field {
                    value: e.joined().value,
                    dynamic: d.clone(),
                }
            }
        };
        let target = Word {
            value: field.value.clone(),
            literal: field.literal(),
        };
        if !fd_only {
            push_all(&mut acc.dynamic, &d);
        }
        if let Some(hostport) = dev_tcp(&target.value) {
            acc.net.push((
                Word {
                    value: hostport,
                    literal: target.literal,
                },
                r.kind.reads_file(),
            ));
        }
        match r.kind {
            RedirectKind::HereString if stdin => {
                acc.feed = Some(Feed::Text {
                    text: target.clone(),
                    unseen: n.unseen,
                });
            }
            RedirectKind::Read if stdin => acc.feed = Some(Feed::File(target.clone())),
            _ => {}
        }
        target
    }

    /// The text of a here-document, expanded unless its delimiter was quoted, and what
    /// of it the analysis cannot see.
    fn heredoc_text(
        &mut self,
        body: &str,
        expand: bool,
        scope: &Scope,
        acc: &mut Redirected,
    ) -> (Word, Unseen) {
        if !expand {
            return (Word::literal(body.to_owned()), Unseen::default());
        }
        let static_ok = self.echo_is_builtin();
        let e = {
            let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
            x.static_ok = static_ok;
            x.heredoc(body)
        };
        let n = self.nested(&e.substs, scope);
        acc.nested.merge(n);
        self.arith_effects(&e.arith);
        let f = e.joined();
        (
            Word {
                literal: f.literal(),
                value: f.value,
            },
            n.unseen,
        )
    }

    /// Paths that go through a link made earlier in the text reach its target too:
    /// `ln -s ~/.bashrc notes.txt && echo x >> notes.txt` writes `~/.bashrc`.
    pub(super) fn through_links(
        &self,
        effects: &mut Effects,
        redirects: &[Redirect],
        cwd: &CwdChange,
    ) {
        if self.links.is_empty() || *cwd != CwdChange::Unchanged {
            return;
        }
        let via = |w: &Word| -> Option<Word> {
            if !w.literal {
                return None;
            }
            let p = norm_path(&w.value);
            let p = p.trim_end_matches('/');
            self.links.iter().find_map(|(name, target)| {
                let rest = p.strip_prefix(name.as_str())?;
                if !(rest.is_empty() || rest.starts_with('/')) {
                    return None;
                }
                Some(Word {
                    value: format!("{}{rest}", target.value.trim_end_matches('/')),
                    literal: target.literal,
                })
            })
        };
        let reads: Vec<Word> = effects
            .reads
            .iter()
            .chain(
                redirects
                    .iter()
                    .filter(|r| r.kind.reads_file())
                    .map(|r| &r.target),
            )
            .filter_map(via)
            .collect();
        let writes: Vec<Word> = effects
            .writes
            .iter()
            .chain(
                redirects
                    .iter()
                    .filter(|r| r.kind.writes_file())
                    .map(|r| &r.target),
            )
            .filter_map(via)
            .collect();
        let deletes: Vec<Word> = effects.deletes.iter().filter_map(via).collect();
        effects.reads.extend(reads);
        effects.writes.extend(writes);
        effects.deletes.extend(deletes);
    }

    /// Remember the content of a file this command writes entirely from literal text,
    /// so that running it later in the same text can be analyzed.
    pub(super) fn record_written(
        &mut self,
        name: Option<&str>,
        args: &[Word],
        redirects: &[Redirect],
        feed: Option<&Feed>,
    ) {
        let content = match name {
            Some("cat") if args.is_empty() => match feed {
                Some(Feed::Text { text, .. }) if text.literal => Some(text.value.clone()),
                _ => None,
            },
            Some("echo") if args.iter().all(|w| w.literal) => {
                let words: Vec<&str> = args
                    .iter()
                    .map(|w| w.value.as_str())
                    .skip_while(|v| *v == "-e" || *v == "-n")
                    .collect();
                Some(format!("{}\n", words.join(" ")))
            }
            Some("printf")
                if args.len() == 1 && args[0].literal && !args[0].value.contains('%') =>
            {
                Some(args[0].value.replace("\\n", "\n").replace("\\t", "\t"))
            }
            _ => None,
        };
        for r in redirects.iter().filter(|r| r.fd.is_none_or(|fd| fd == 1)) {
            if !r.kind.writes_file() {
                continue;
            }
            let key = norm_path(&r.target.value);
            match (&content, r.target.literal) {
                (Some(c), true)
                    if r.kind == RedirectKind::Append || r.kind == RedirectKind::AppendBoth =>
                {
                    if let Some(existing) = self.written.get_mut(&key) {
                        existing.push_str(c);
                    }
                }
                (Some(c), true) => {
                    self.written.insert(key, c.clone());
                }
                _ => {
                    self.written.remove(&key);
                }
            }
        }
    }
}
