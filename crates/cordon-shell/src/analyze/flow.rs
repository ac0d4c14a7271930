//! Where bytes go: redirections, files and links written earlier in the text, and
//! bytes the reader cannot see (fetched or decoded) followed to what runs them.

use super::{Analyzer, Feed, Nested, Scope, Unseen, dev_tcp, norm_path, push_all};
use crate::expand::{Expander, Field, Mode};
use crate::model::{Context, CwdChange, Dynamic, Effects, Redirect, RedirectKind, Word};
use crate::parse::{RawRedirect, RawTarget};

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

    /// Decode redirections. Returns them with the dynamic flags of file targets, what
    /// feeds standard input, nested-analysis facts, and `/dev/tcp` targets.
    #[allow(clippy::type_complexity)]
    pub(super) fn redirects(
        &mut self,
        raw: &[RawRedirect],
        scope: &Scope,
    ) -> (
        Vec<Redirect>,
        Vec<Dynamic>,
        Option<Feed>,
        Nested,
        Vec<(Word, bool)>,
    ) {
        let mut out = Vec::with_capacity(raw.len());
        let mut dynamic = Vec::new();
        let mut feed = None;
        let mut nested = Nested::default();
        let mut net = Vec::new();
        for r in raw {
            let stdin = matches!(r.fd, None | Some(0));
            let target = match &r.target {
                RawTarget::Word(w) => {
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
                    nested.merge(n);
                    self.arith_effects(&e.arith);
                    let mut d = e.all_dynamic();
                    let field = match e.fields.as_slice() {
                        [f] => f.clone(),
                        _ => {
                            // bash refuses a target that expands to no word or several.
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
                        push_all(&mut dynamic, &d);
                    }
                    if let Some(hostport) = dev_tcp(&target.value) {
                        net.push((
                            Word {
                                value: hostport,
                                literal: target.literal,
                            },
                            r.kind.reads_file(),
                        ));
                    }
                    match r.kind {
                        RedirectKind::HereString if stdin => {
                            feed = Some(Feed::Text {
                                text: target.clone(),
                                unseen: n.unseen,
                            });
                        }
                        RedirectKind::Read if stdin => feed = Some(Feed::File(target.clone())),
                        _ => {}
                    }
                    target
                }
                RawTarget::Process(script) => {
                    let n = self.nested_script(script, scope, Context::ProcessSubstitution);
                    nested.merge(n);
                    push_all(&mut dynamic, &[Dynamic::ProcessSubstitution]);
                    if r.kind == RedirectKind::Read && stdin {
                        feed = Some(Feed::Process { unseen: n.unseen });
                    }
                    Word {
                        value: "<(…)".into(),
                        literal: false,
                    }
                }
                RawTarget::HereDoc { body, expand } => {
                    let (target, unseen) = if *expand {
                        let static_ok = self.echo_is_builtin();
                        let e = {
                            let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
                            x.static_ok = static_ok;
                            x.heredoc(body)
                        };
                        let n = self.nested(&e.substs, scope);
                        nested.merge(n);
                        self.arith_effects(&e.arith);
                        let f = e.joined();
                        (
                            Word {
                                literal: f.literal(),
                                value: f.value,
                            },
                            n.unseen,
                        )
                    } else {
                        (Word::literal(body.clone()), Unseen::default())
                    };
                    if stdin {
                        feed = Some(Feed::Text {
                            text: target.clone(),
                            unseen,
                        });
                    }
                    target
                }
            };
            out.push(Redirect {
                fd: r.fd,
                kind: r.kind,
                target,
            });
        }
        (out, dynamic, feed, nested, net)
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
