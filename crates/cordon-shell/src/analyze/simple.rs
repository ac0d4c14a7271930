//! One simple command: decoded, peeled of its wrappers, classified by the knowledge
//! base, and the code it runs analyzed in turn.
//!
//! [`Analyzer::simple`] reads as the steps a command goes through; each step is a
//! function here (the words and what runs), in `code.rs` (bytes and code the command
//! runs) or in `state.rs` (what it changes in this shell for later commands).

use super::code::{Code, Runner, code_to_run};
use super::state::change_directory;
use super::vars::is_int;
use super::{
    Analyzer, Feed, MAX_DEPTH, MAX_EXPANSIONS, Meta, Nested, SHELLS, Scope, Unseen, add_dev_tcp,
    glob_programs, is_declaration, join_cwd, norm_path, push_all, wrapper_only,
};
use crate::env::Val;
use crate::expand::{self, Mode};
use crate::knowledge::{self, Invocation, Outcome};
use crate::model::{Class, Context, CwdChange, Dynamic, Effects, Redirect, SimpleCommand, Word};
use crate::parse::{Arg, Assign, Simple};
use crate::wrappers::{self, Peeled, standard_name};

/// The command name and arguments of a simple command once expanded, one entry per
/// field.
struct Words {
    words: Vec<Word>,
    /// Why each word is not literal.
    decoded: Vec<Vec<Dynamic>>,
    /// Whether each word holds bytes the analysis cannot see (a substitution's output).
    fetched: Vec<Unseen>,
    /// The assignments a declaration builtin makes (`export X=1`), with their values.
    decl_assigns: Vec<(Assign, Val)>,
}

impl Words {
    /// What of the bytes of word `at` (when there is one) the analysis cannot see.
    fn unseen_at(&self, at: Option<usize>) -> Unseen {
        at.and_then(|i| self.fetched.get(i).copied())
            .unwrap_or_default()
    }

    /// What of all the words' bytes the analysis cannot see.
    fn all_unseen(&self) -> Unseen {
        self.fetched.iter().fold(Unseen::default(), |mut all, u| {
            all.merge(*u);
            all
        })
    }
}

/// The assignments written before the command name (`A=1 B=2 cmd`).
struct Prefix {
    /// Each name with its value as a word; wrapper assignments (`env X=1`) join later.
    assignments: Vec<(String, Word)>,
    /// Names that change what a program does (`PATH`, `LD_PRELOAD`).
    influences: Vec<String>,
    /// Assignments that last only for the command that follows them.
    temp: Vec<(Assign, Val)>,
}

/// The program a command runs once its wrappers are peeled, and its arguments.
struct Target {
    program: Word,
    /// The name the knowledge base knows the program by (`rm` for `/bin/rm`), when the
    /// program is literal and named by a standard name.
    name: Option<String>,
    args: Vec<Word>,
}

/// What runs in place of the command's program, as the knowledge base and the shell's
/// own definitions decide it.
struct Classified {
    outcome: Outcome,
    /// A function defined in the text runs instead of any program.
    function_call: bool,
    /// An alias runs instead: its text, followed by the command's arguments.
    alias_text: Option<String>,
}

/// Effects that gain privilege are not read-only, whatever else they do.
fn privileged_mutates(mut effects: Effects) -> Effects {
    if effects.privilege.is_some() && effects.class == Class::ReadOnly {
        effects.class = Class::Mutating;
    }
    effects
}

/// How the command runs the code it runs: named `name` (the program `program`), in this
/// shell when no wrapper but `command` or `builtin` stands before it, sourcing with
/// `source` or `.`, as a function call, with `temp`'s assignments for itself only.
fn runner<'a>(
    name: Option<&'a str>,
    program: &Word,
    peeled: &Peeled,
    function_call: bool,
    temp: &'a [(Assign, Val)],
) -> Runner<'a> {
    let same_shell = peeled
        .wrappers
        .iter()
        .all(|w| w == "command" || w == "builtin");
    Runner {
        name,
        program_literal: program.literal,
        same_shell,
        sourcing: same_shell && matches!(name, Some("source" | ".")),
        function_call,
        temp,
    }
}

impl Analyzer {
    /// What a command past the analysis's limits is marked with: nested code (its own,
    /// or the `code` it runs, or the function it calls, at `depth`) cut at the depth
    /// limit, a function call past the expansion budget.
    fn past_limits(
        &self,
        code: &Code,
        nested: Nested,
        function_call: bool,
        depth: usize,
        dynamic: &mut Vec<Dynamic>,
    ) {
        let cut = (code.cut_by_depth() || function_call) && depth >= MAX_DEPTH;
        if nested.too_deep || cut {
            dynamic.push(Dynamic::TooDeep);
        }
        if function_call && self.expansions >= MAX_EXPANSIONS {
            dynamic.push(Dynamic::Opaque("too many function calls to expand".into()));
        }
    }

    /// The hazards the command's knowledge found, reported.
    fn knowledge_hazards(&mut self, text: &str, outcome: &mut Outcome) {
        for (kind, why) in std::mem::take(&mut outcome.hazards) {
            self.hazard(kind, text, &why);
        }
    }

    /// Analyze one simple command. Returns the index of the emitted command.
    pub(super) fn simple(&mut self, s: &Simple, scope: &mut Scope) -> Option<usize> {
        self.steps += 1;
        let mut dynamic: Vec<Dynamic> = Vec::new();
        let mut nested = Nested::default();
        // Taken first, so that no substitution of this command sees it.
        let piped = self.pipe_feed.take();

        // Words: the command name and its arguments, expanded first (as bash does).
        let mut words = self.expand_args(s, scope, &mut nested, &mut dynamic);
        let variants = self.glob_variants(&words.decoded);
        for d in &words.decoded {
            push_all(&mut dynamic, d);
        }
        let r = self.redirects(&s.redirects, scope);
        let (redirects, net) = (r.redirects, r.net);
        nested.merge(r.nested);
        push_all(&mut dynamic, &r.dynamic);
        let feed = r.feed.or_else(|| piped.map(Feed::piped));
        let mut prefix = self.prefix_assignments(s, scope, &words, &mut nested, &mut dynamic);
        if words.words.is_empty() {
            let only = AssignmentsOnly {
                prefix,
                redirects,
                nested,
                dynamic,
                net,
            };
            return Some(self.assignments_only(s, scope, only));
        }

        // What runs: the program behind the wrappers, and what the wrappers add.
        let (peeled, xargs_code) = self.peel_wrappers(&mut words, feed.as_ref());
        let cmd_cwd = wrapper_settings(&peeled, &mut prefix, &scope.cwd, &mut dynamic);
        let target = program_and_args(&peeled, &words.words);
        let program_unseen = words.unseen_at(peeled.program);
        let any_unseen = words.all_unseen();
        self.arithmetic_in(s, &target, &mut dynamic);
        self.record_vars(&target.program, &target.args);
        let Classified {
            mut outcome,
            function_call,
            alias_text,
        } = self.classify_program(
            s,
            &target,
            &peeled,
            &prefix.assignments,
            program_unseen,
            &mut dynamic,
        );
        add_wrapper_effects(&mut outcome, &peeled, prefix.influences, net);
        let name = target.name.as_deref();

        // Bytes the reader cannot see, and the code the command runs.
        let feed_unseen = feed.as_ref().map(Feed::unseen).unwrap_or_default();
        self.unseen_code_hazards(&s.text, name, &peeled, &outcome, any_unseen, feed_unseen);
        let out_unseen = self.mark_unseen_outputs(name, &outcome, feed_unseen, &redirects);
        self.fetched_into_tree(name, &target.args, feed_unseen, &mut outcome);
        self.record_written(name, &target.args, &redirects, feed.as_ref());
        let written_script = self
            .written_script_it_runs(&s.text, name, &target.program, &mut outcome, &mut dynamic)
            .or_else(|| self.written_make_recipes(name, &target.args));
        self.dns_exfiltration(&s.text, &outcome);
        let prog_name = name.unwrap_or_default();
        let (heredoc, mut stdin_code) =
            self.stdin_code(&s.text, prog_name, &mut outcome, feed.as_ref(), xargs_code);
        stdin_code |= xargs_shell_stdin(prog_name, &mut outcome, &peeled, feed.as_ref());
        if prog_name == "sftp" {
            self.sftp_batch(&mut outcome, feed.as_ref());
        }
        self.knowledge_hazards(&s.text, &mut outcome);
        let code = code_to_run(&peeled, heredoc, written_script, alias_text, &mut outcome);
        self.past_limits(&code, nested, function_call, scope.depth, &mut dynamic);

        // The command itself, with what links made earlier add to its paths.
        let cd = outcome.cd.clone();
        let meta = Meta {
            unseen: out_unseen,
            stdin_code,
        };
        self.through_links(&mut outcome.effects, &redirects, &cmd_cwd);
        self.record_link(name, &cmd_cwd, &outcome.effects);
        let effects = privileged_mutates(outcome.effects);
        let runner = runner(name, &target.program, &peeled, function_call, &prefix.temp);
        let idx = self.emit(
            SimpleCommand {
                text: s.text.clone(),
                program: Some(target.program),
                args: target.args,
                assignments: prefix.assignments,
                redirects,
                wrappers: peeled.wrappers.clone(),
                context: scope.context,
                cwd: cmd_cwd,
                dynamic,
                effects,
                function_call,
            },
            meta,
        );

        // Nested code, then what the command changes in this shell.
        self.run_code(&code, &runner, scope);
        self.analyze_variants(s, scope, variants);
        self.variables_after(idx, &runner, &code, feed.as_ref(), words.decl_assigns);
        self.builtin_state_after(name, &peeled, idx);
        if let Some(cd) = cd {
            change_directory(scope, cd);
        }
        Some(idx)
    }

    /// Expand the command name and arguments: each word into its fields, a
    /// declaration builtin's assignments into assignments, a process substitution into
    /// its analysis.
    fn expand_args(
        &mut self,
        s: &Simple,
        scope: &Scope,
        nested: &mut Nested,
        dynamic: &mut Vec<Dynamic>,
    ) -> Words {
        let decl = is_declaration(&s.args);
        let mut out = Words {
            words: Vec::with_capacity(s.args.len()),
            decoded: Vec::with_capacity(s.args.len()),
            fetched: Vec::with_capacity(s.args.len()),
            decl_assigns: Vec::new(),
        };
        for a in &s.args {
            match a {
                Arg::Assign(raw, asg) if decl && !expand::brace_expands(raw) => {
                    let (w, val, d, n) = self.eval_assign(asg, scope);
                    nested.merge(n);
                    out.fetched.push(n.unseen);
                    out.words.push(Word {
                        value: format!(
                            "{}{}={}",
                            asg.target(),
                            if asg.append { "+" } else { "" },
                            w.value
                        ),
                        literal: w.literal,
                    });
                    out.decoded.push(d);
                    out.decl_assigns.push((asg.clone(), val));
                }
                Arg::Word(raw) | Arg::Assign(raw, _) => {
                    if let Arg::Assign(_, asg) = a
                        && decl
                    {
                        // `export X={a,b}` is `export X=a X=b`: not followed.
                        out.decl_assigns.push((asg.clone(), Val::Unknown));
                    }
                    let e = self.expand_word(raw, Mode::Command);
                    let n = self.nested(&e.substs, scope);
                    nested.merge(n);
                    self.arith_effects(&e.arith);
                    if e.fields.is_empty() {
                        push_all(dynamic, &e.dynamic);
                    }
                    for f in e.fields {
                        out.fetched.push(n.unseen);
                        out.words.push(Word {
                            literal: f.literal(),
                            value: f.value,
                        });
                        out.decoded.push(f.dynamic);
                    }
                }
                Arg::Process(script) => {
                    let n = self.nested_script(script, scope, Context::ProcessSubstitution);
                    nested.merge(n);
                    out.fetched.push(n.unseen);
                    out.words.push(Word {
                        value: "<(…)".into(),
                        literal: false,
                    });
                    out.decoded.push(vec![Dynamic::ProcessSubstitution]);
                }
            }
        }
        out
    }

    /// The programs a glob in the command name may name, each analyzed as the command
    /// too (the glob itself stays opaque).
    fn glob_variants(&self, decoded: &[Vec<Dynamic>]) -> Vec<String> {
        match decoded.first().map(Vec::as_slice) {
            Some([Dynamic::Glob(g)]) if !self.in_variant && self.variant_budget > 0 => {
                glob_programs(g)
            }
            _ => Vec::new(),
        }
    }

    /// Evaluate the assignments before the command name. With no command after them
    /// they are assignments of this shell; otherwise they last for the command only.
    fn prefix_assignments(
        &mut self,
        s: &Simple,
        scope: &Scope,
        words: &Words,
        nested: &mut Nested,
        dynamic: &mut Vec<Dynamic>,
    ) -> Prefix {
        let mut out = Prefix {
            assignments: Vec::with_capacity(s.assignments.len()),
            influences: Vec::new(),
            temp: Vec::new(),
        };
        for asg in &s.assignments {
            let (w, val, d, n) = self.eval_assign(asg, scope);
            nested.merge(n);
            let name = asg.target();
            // An `IFS` the text fixes is followed by the analysis itself.
            let followed = asg.name == "IFS" && w.literal && asg.index.is_none();
            if knowledge::influential(&name) && !followed {
                push_all(dynamic, &d);
                out.influences.push(name.clone());
            }
            if words.words.is_empty() {
                self.apply_assign(asg, val);
            } else {
                out.temp.push((asg.clone(), val));
            }
            out.assignments.push((name, w));
        }
        out
    }

    /// A command of only assignments and/or redirections: read-only, but for the
    /// `/dev/tcp` connections it opens.
    fn assignments_only(&mut self, s: &Simple, scope: &Scope, only: AssignmentsOnly) -> usize {
        let AssignmentsOnly {
            prefix,
            redirects,
            nested,
            mut dynamic,
            net,
        } = only;
        for (name, w) in &prefix.assignments {
            let base = name.split('[').next().unwrap_or(name);
            self.vars
                .insert(base.to_owned(), w.literal && is_int(&w.value));
        }
        let mut effects = Effects {
            class: Class::ReadOnly,
            influences_env: prefix.influences,
            ..Effects::default()
        };
        add_dev_tcp(&mut effects, net);
        if nested.too_deep {
            dynamic.push(Dynamic::TooDeep);
        }
        self.emit(
            SimpleCommand {
                text: s.text.clone(),
                program: None,
                args: Vec::new(),
                assignments: prefix.assignments,
                redirects,
                wrappers: Vec::new(),
                context: scope.context,
                cwd: scope.cwd.clone(),
                dynamic,
                effects,
                function_call: false,
            },
            Meta::default(),
        )
    }

    /// Peel the wrappers off the words. `xargs` whose input the text shows (`echo /x |
    /// xargs rm`, `xargs cat < list` after `echo … > list`) has its arguments expanded
    /// into the words. Also says whether xargs' input becomes the code a shell runs.
    fn peel_wrappers(&self, words: &mut Words, feed: Option<&Feed>) -> (Peeled, bool) {
        let mut peeled = wrappers::peel(&words.words);
        let xargs = peeled.runtime_args.as_deref() == Some("xargs");
        // `… | xargs -I{} sh -c '{}'`: xargs' input becomes the code a shell runs, an
        // executing argument even when the text shows that input.
        let xargs_code = xargs
            && peeled.program.is_some_and(|i| {
                standard_name(&words.words[i].value).is_some_and(|n| SHELLS.contains(&n))
                    && words.words[i + 1..].iter().any(|w| w.value.contains("{}"))
            });
        if xargs
            && let Some(input) = match feed {
                Some(Feed::Text { text, .. }) if text.literal => Some(text.value.clone()),
                Some(Feed::File(f)) if f.literal => self.written.get(&norm_path(&f.value)).cloned(),
                _ => None,
            }
            && let Some(expanded) = wrappers::xargs_expand(&words.words, &input)
        {
            words.fetched.resize(expanded.len(), Unseen::default());
            words.words = expanded;
            peeled = wrappers::peel(&words.words);
            peeled.runtime_args = None;
        }
        (peeled, xargs_code)
    }

    /// `let EXPR` and subscripted assignments `a[EXPR]=…` evaluate arithmetic, which
    /// can run code through the names it reads.
    fn arithmetic_in(&self, s: &Simple, target: &Target, dynamic: &mut Vec<Dynamic>) {
        if target.program.value == "let" && target.args.iter().any(|w| self.arith_unsafe(&w.value))
        {
            push_all(dynamic, &[Dynamic::Arithmetic]);
        }
        if s.assignments
            .iter()
            .any(|a| a.index.as_deref().is_some_and(|sub| self.arith_unsafe(sub)))
        {
            push_all(dynamic, &[Dynamic::Arithmetic]);
        }
    }

    /// What the program does: unknown when its name is computed, the wrapper's own
    /// behaviour when no program follows it, a path's script, a function or alias of
    /// the text, or what the knowledge base says of the name.
    fn classify_program(
        &mut self,
        s: &Simple,
        target: &Target,
        peeled: &Peeled,
        assignments: &[(String, Word)],
        program_unseen: Unseen,
        dynamic: &mut Vec<Dynamic>,
    ) -> Classified {
        let program = &target.program;
        let mut function_call = false;
        let mut alias_text = None;
        let outcome = if !program.literal {
            dynamic.push(Dynamic::NonLiteralProgram);
            if program_unseen.any() {
                self.hazard(
                    program_unseen.hazard(),
                    &s.text,
                    &format!("the program to run is taken from {}", program_unseen.what()),
                );
            }
            Outcome::unknown()
        } else if peeled.program.is_none() {
            wrapper_only(peeled, &program.value)
        } else {
            match target.name.as_deref() {
                None => program_at_path(program),
                Some(n) if !peeled.bypass_functions && self.functions.contains_key(n) => {
                    function_call = true;
                    if knowledge::knows(n) {
                        dynamic.push(Dynamic::ShadowedByFunction(n.to_owned()));
                    }
                    Outcome::read_only()
                }
                Some(n) if peeled.wrappers.is_empty() && self.aliases.contains_key(n) => {
                    dynamic.push(Dynamic::ShadowedByAlias(n.to_owned()));
                    let alias = self.aliases.get(n).cloned().unwrap_or_default();
                    alias_text = Some(alias_expansion(alias, &s.args));
                    Outcome::read_only()
                }
                Some(n) => knowledge::classify(&Invocation {
                    name: n,
                    args: &target.args,
                    assignments,
                }),
            }
        };
        Classified {
            outcome,
            function_call,
            alias_text,
        }
    }
}

/// The parts of a command of only assignments and redirections.
struct AssignmentsOnly {
    prefix: Prefix,
    redirects: Vec<Redirect>,
    nested: Nested,
    dynamic: Vec<Dynamic>,
    net: Vec<(Word, bool)>,
}

/// What the wrappers set for the program: their assignments (`env X=1`, `sudo X=1`),
/// arguments only known at run time (`xargs`), and the directory it runs in (`env -C
/// DIR`), which is returned.
fn wrapper_settings(
    peeled: &Peeled,
    prefix: &mut Prefix,
    cwd: &CwdChange,
    dynamic: &mut Vec<Dynamic>,
) -> CwdChange {
    prefix
        .assignments
        .extend(peeled.assignments.iter().cloned());
    for (n, _) in &peeled.assignments {
        if knowledge::influential(n) {
            prefix.influences.push(n.clone());
        }
    }
    if let Some(w) = &peeled.runtime_args {
        dynamic.push(Dynamic::RuntimeArguments(w.clone()));
    }
    match &peeled.chdir {
        Some(dir) => join_cwd(cwd, dir),
        None => cwd.clone(),
    }
}

/// The program and its arguments behind the wrappers. When a wrapper runs no program,
/// the wrapper itself is the program and the words after its name the arguments.
fn program_and_args(peeled: &Peeled, words: &[Word]) -> Target {
    let (program, args_start) = match peeled.program {
        Some(i) => (words[i].clone(), i + 1),
        None => {
            let name = peeled
                .wrappers
                .last()
                .cloned()
                .unwrap_or_else(|| words[0].value.clone());
            let start = words
                .iter()
                .position(|w| w.value == name)
                .map_or(1, |p| p + 1);
            (Word::literal(name), start)
        }
    };
    let name = if program.literal {
        standard_name(&program.value).map(str::to_owned)
    } else {
        None
    };
    Target {
        program,
        name,
        args: words.get(args_start..).unwrap_or(&[]).to_vec(),
    }
}

/// A program named by a path the knowledge base does not know: it runs whatever that
/// file is.
fn program_at_path(program: &Word) -> Outcome {
    let mut o = Outcome::mutating();
    o.reads([program]);
    o.exec(
        &program.value,
        &program.value,
        "runs the program at this path",
    );
    o.runs_script = true;
    o
}

/// The text an alias expands to: its value, then the command's arguments as written.
fn alias_expansion(mut text: String, args: &[Arg]) -> String {
    for a in args.iter().skip(1) {
        text.push(' ');
        match a {
            Arg::Word(raw) | Arg::Assign(raw, _) => text.push_str(raw),
            Arg::Process(_) => text.push_str("\"$(:)\""),
        }
    }
    text
}

/// What the wrappers add to the program's outcome: privilege, the files they write and
/// read, the variables that influence the program, and `/dev/tcp` connections.
fn add_wrapper_effects(
    outcome: &mut Outcome,
    peeled: &Peeled,
    influences: Vec<String>,
    net: Vec<(Word, bool)>,
) {
    if let Some(p) = &peeled.privilege {
        outcome.privilege(p);
    }
    if !peeled.writes.is_empty() {
        outcome.writes(&peeled.writes);
    }
    outcome.reads(&peeled.reads);
    for n in influences {
        if !outcome.effects.influences_env.contains(&n) {
            outcome.effects.influences_env.push(n);
        }
    }
    let reads_network = net.iter().any(|(_, reads)| *reads);
    add_dev_tcp(&mut outcome.effects, net);
    if reads_network {
        outcome.fetches = true;
    }
}

/// `… | xargs sh -c` and `… | xargs -I{} sh -c '{}'`: the code a shell runs is read
/// from xargs' standard input. Says whether it is.
fn xargs_shell_stdin(
    prog_name: &str,
    outcome: &mut Outcome,
    peeled: &Peeled,
    feed: Option<&Feed>,
) -> bool {
    let reads_code = peeled.runtime_args.as_deref() == Some("xargs")
        && feed.is_none()
        && SHELLS.contains(&prog_name)
        && ((outcome.shell_code.is_empty() && outcome.effects.class == Class::Unknown)
            || outcome
                .shell_code
                .iter()
                .any(|(_, c)| c.value.contains("{}")));
    if reads_code {
        outcome.exec(prog_name, "stdin", "code from xargs' standard input");
    }
    reads_code
}
