//! One simple command: decoded, peeled of its wrappers, classified by the knowledge
//! base, and the code it runs analyzed in turn.

use super::host::host_computed;
use super::vars::is_int;
use super::{
    Analyzer, CODE_RUNNERS, ENV_BUILTINS, FETCHERS, Feed, MAX_DEPTH, MAX_EXPANSIONS, Meta, Nested,
    SHELLS, Scope, Unseen, Where, add_dev_tcp, exec_argv_text, glob_programs, is_declaration,
    join_cwd, norm_path, prog_name_of, push_all, wrapper_only,
};
use crate::env::Val;
use crate::expand::{self, Mode};
use crate::knowledge::{self, Cd, Invocation, Outcome};
use crate::model::{Class, Context, CwdChange, Dynamic, Effects, HazardKind, SimpleCommand, Word};
use crate::parse::{Arg, Assign, Simple};
use crate::wrappers::{self, shell_quote, standard_name};

impl Analyzer {
    #[allow(clippy::too_many_lines)]
    pub(super) fn simple(&mut self, s: &Simple, scope: &mut Scope) -> Option<usize> {
        self.steps += 1;
        let mut dynamic: Vec<Dynamic> = Vec::new();
        let mut nested = Nested::default();
        // Taken first, so that no substitution of this command sees it.
        let piped = self.pipe_feed.take();

        // Words: the command name and its arguments, expanded first (as bash does).
        let decl = is_declaration(&s.args);
        let mut words = Vec::with_capacity(s.args.len());
        let mut decoded: Vec<Vec<Dynamic>> = Vec::with_capacity(s.args.len());
        let mut fetched = Vec::with_capacity(s.args.len());
        let mut decl_assigns: Vec<(Assign, Val)> = Vec::new();
        for a in &s.args {
            match a {
                Arg::Assign(raw, asg) if decl && !expand::brace_expands(raw) => {
                    let (w, val, d, n) = self.eval_assign(asg, scope);
                    nested.merge(n);
                    fetched.push(n.unseen);
                    words.push(Word {
                        value: format!(
                            "{}{}={}",
                            asg.target(),
                            if asg.append { "+" } else { "" },
                            w.value
                        ),
                        literal: w.literal,
                    });
                    decoded.push(d);
                    decl_assigns.push((asg.clone(), val));
                }
                Arg::Word(raw) | Arg::Assign(raw, _) => {
                    if let Arg::Assign(_, asg) = a
                        && decl
                    {
                        // `export X={a,b}` is `export X=a X=b`: not followed.
                        decl_assigns.push((asg.clone(), Val::Unknown));
                    }
                    let e = self.expand_word(raw, Mode::Command);
                    let n = self.nested(&e.substs, scope);
                    nested.merge(n);
                    self.arith_effects(&e.arith);
                    if e.fields.is_empty() {
                        push_all(&mut dynamic, &e.dynamic);
                    }
                    for f in e.fields {
                        fetched.push(n.unseen);
                        words.push(Word {
                            literal: f.literal(),
                            value: f.value,
                        });
                        decoded.push(f.dynamic);
                    }
                }
                Arg::Process(script) => {
                    let n = self.nested_script(script, scope, Context::ProcessSubstitution);
                    nested.merge(n);
                    fetched.push(n.unseen);
                    words.push(Word {
                        value: "<(…)".into(),
                        literal: false,
                    });
                    decoded.push(vec![Dynamic::ProcessSubstitution]);
                }
            }
        }
        // A glob in the command name may name a program: analyze the command as each
        // that matters (the glob itself stays opaque).
        let variants = match decoded.first().map(Vec::as_slice) {
            Some([Dynamic::Glob(g)]) if !self.in_variant && self.variant_budget > 0 => {
                glob_programs(g)
            }
            _ => Vec::new(),
        };
        for d in &decoded {
            push_all(&mut dynamic, d);
        }

        let (redirects, rdyn, mut feed, n, net) = self.redirects(&s.redirects, scope);
        nested.merge(n);
        push_all(&mut dynamic, &rdyn);
        if feed.is_none()
            && let Some(text) = piped
        {
            feed = Some(Feed::Text {
                text,
                unseen: Unseen::default(),
            });
        }

        // Assignments before the command: they last only when no command follows.
        let mut assignments = Vec::with_capacity(s.assignments.len());
        let mut influences = Vec::new();
        let mut temp: Vec<(Assign, Val)> = Vec::new();
        for asg in &s.assignments {
            let (w, val, d, n) = self.eval_assign(asg, scope);
            nested.merge(n);
            let name = asg.target();
            // An `IFS` the text fixes is followed by the analysis itself.
            let followed = asg.name == "IFS" && w.literal && asg.index.is_none();
            if knowledge::influential(&name) && !followed {
                push_all(&mut dynamic, &d);
                influences.push(name.clone());
            }
            if words.is_empty() {
                self.apply_assign(asg, val);
            } else {
                temp.push((asg.clone(), val));
            }
            assignments.push((name, w));
        }

        if words.is_empty() {
            for (name, w) in &assignments {
                let base = name.split('[').next().unwrap_or(name);
                self.vars
                    .insert(base.to_owned(), w.literal && is_int(&w.value));
            }
            // Only assignments and/or redirections.
            let mut effects = Effects {
                class: Class::ReadOnly,
                influences_env: influences,
                ..Effects::default()
            };
            add_dev_tcp(&mut effects, net);
            if nested.too_deep {
                dynamic.push(Dynamic::TooDeep);
            }
            let idx = self.emit(
                SimpleCommand {
                    text: s.text.clone(),
                    program: None,
                    args: Vec::new(),
                    assignments,
                    redirects,
                    wrappers: Vec::new(),
                    context: scope.context,
                    cwd: scope.cwd.clone(),
                    dynamic,
                    effects,
                    function_call: false,
                },
                Meta::default(),
            );
            return Some(idx);
        }

        let mut peeled = wrappers::peel(&words);
        // `xargs` whose input the text shows (`echo /x | xargs rm`, `xargs cat < list`
        // after `echo … > list`): the arguments are known after all.
        if peeled.runtime_args.as_deref() == Some("xargs")
            && let Some(input) = match &feed {
                Some(Feed::Text { text, .. }) if text.literal => Some(text.value.clone()),
                Some(Feed::File(f)) if f.literal => self.written.get(&norm_path(&f.value)).cloned(),
                _ => None,
            }
            && let Some(expanded) = wrappers::xargs_expand(&words, &input)
        {
            fetched.resize(expanded.len(), Unseen::default());
            words = expanded;
            peeled = wrappers::peel(&words);
            peeled.runtime_args = None;
        }
        assignments.extend(peeled.assignments.iter().cloned());
        for (n, _) in &peeled.assignments {
            if knowledge::influential(n) {
                influences.push(n.clone());
            }
        }
        if let Some(w) = &peeled.runtime_args {
            dynamic.push(Dynamic::RuntimeArguments(w.clone()));
        }
        let mut cmd_cwd = scope.cwd.clone();
        if let Some(dir) = &peeled.chdir {
            cmd_cwd = join_cwd(&cmd_cwd, dir);
        }

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
        let args: Vec<Word> = words.get(args_start..).unwrap_or(&[]).to_vec();
        let program_unseen = peeled
            .program
            .and_then(|i| fetched.get(i).copied())
            .unwrap_or_default();
        let mut any_unseen = Unseen::default();
        for u in &fetched {
            any_unseen.merge(*u);
        }

        // `let EXPR` and subscripted assignments `a[EXPR]=…` evaluate arithmetic.
        if program.value == "let" && args.iter().any(|w| self.arith_unsafe(&w.value)) {
            push_all(&mut dynamic, &[Dynamic::Arithmetic]);
        }
        if s.assignments
            .iter()
            .any(|a| a.index.as_deref().is_some_and(|sub| self.arith_unsafe(sub)))
        {
            push_all(&mut dynamic, &[Dynamic::Arithmetic]);
        }
        self.record_vars(&program, &args);
        let name: Option<String> = if program.literal {
            standard_name(&program.value).map(str::to_owned)
        } else {
            None
        };
        let mut function_call = false;
        let mut alias_text = None;
        let mut outcome = if !program.literal {
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
            wrapper_only(&peeled, &program.value)
        } else {
            match name.as_deref() {
                None => {
                    let mut o = Outcome::mutating();
                    o.reads([&program]);
                    o.exec(
                        &program.value,
                        &program.value,
                        "runs the program at this path",
                    );
                    o.runs_script = true;
                    o
                }
                Some(n) if !peeled.bypass_functions && self.functions.contains_key(n) => {
                    function_call = true;
                    if knowledge::knows(n) {
                        dynamic.push(Dynamic::ShadowedByFunction(n.to_owned()));
                    }
                    Outcome::read_only()
                }
                Some(n) if peeled.wrappers.is_empty() && self.aliases.contains_key(n) => {
                    dynamic.push(Dynamic::ShadowedByAlias(n.to_owned()));
                    let mut text = self.aliases.get(n).cloned().unwrap_or_default();
                    for a in s.args.iter().skip(1) {
                        text.push(' ');
                        match a {
                            Arg::Word(raw) | Arg::Assign(raw, _) => text.push_str(raw),
                            Arg::Process(_) => text.push_str("\"$(:)\""),
                        }
                    }
                    alias_text = Some(text);
                    Outcome::read_only()
                }
                Some(n) => knowledge::classify(&Invocation {
                    name: n,
                    args: &args,
                    assignments: &assignments,
                }),
            }
        };

        // What the wrappers add.
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
        add_dev_tcp(&mut outcome.effects, net.clone());
        if net.iter().any(|(_, reads)| *reads) {
            outcome.fetches = true;
        }

        let code_runner = name.as_deref().is_some_and(|n| CODE_RUNNERS.contains(&n))
            || !outcome.shell_code.is_empty()
            || !peeled.shell_strings.is_empty()
            || outcome.stdin_code
            || outcome.runs_script;
        let feed_unseen = match &feed {
            Some(Feed::Text { unseen, .. } | Feed::Process { unseen }) => *unseen,
            _ => Unseen::default(),
        };
        if code_runner && any_unseen.any() {
            self.hazard(
                any_unseen.hazard(),
                &s.text,
                &format!(
                    "{} is substituted into a command that runs it as code",
                    any_unseen.what()
                ),
            );
        }
        if code_runner && feed_unseen.any() {
            self.hazard(
                feed_unseen.hazard(),
                &s.text,
                &format!(
                    "{} is fed to {} as the code it runs",
                    feed_unseen.what(),
                    prog_name_of(name.as_deref())
                ),
            );
        }

        // Fetch or decode to a file, then run it: `curl -o x.sh URL && bash x.sh`,
        // `base64 -d p.b64 > x.sh && bash x.sh`.
        let is_fetcher = name.as_deref().is_some_and(|n| FETCHERS.contains(&n));
        let mut out_unseen = Unseen {
            fetched: outcome.fetches,
            decoded: outcome.decodes,
        };
        out_unseen.merge(feed_unseen);
        if is_fetcher || outcome.fetched_writes {
            for w in &outcome.effects.writes {
                self.unseen_files
                    .entry(norm_path(&w.value))
                    .or_default()
                    .merge(Unseen::FETCHED);
            }
        }
        if outcome.decodes {
            for w in &outcome.effects.writes {
                self.unseen_files
                    .entry(norm_path(&w.value))
                    .or_default()
                    .merge(Unseen::DECODED);
            }
        }
        if out_unseen.any() {
            for r in redirects
                .iter()
                .filter(|r| r.kind.writes_file() && r.fd.is_none_or(|fd| fd == 1))
            {
                self.unseen_files
                    .entry(norm_path(&r.target.value))
                    .or_default()
                    .merge(out_unseen);
            }
        }
        self.record_written(name.as_deref(), &args, &redirects, feed.as_ref());
        let mut written_script = None;
        if outcome.runs_script {
            let script = if name.is_none() {
                Some(program.value.clone())
            } else {
                outcome.effects.reads.first().map(|w| w.value.clone())
            };
            if let Some(p) = script {
                let key = norm_path(&p);
                if let Some(u) = self.unseen_file(&key) {
                    self.hazard(u.hazard(), &s.text, &format!("{} is run as code", u.file()));
                }
                let shell_runs_it =
                    name.is_none() || SHELLS.contains(&prog_name_of(name.as_deref()));
                if shell_runs_it && let Some(content) = self.written.get(&key) {
                    // Re-running a script that grows could make analysis quadratic:
                    // past a total budget the run is left opaque.
                    if self.written_budget >= content.len() {
                        self.written_budget -= content.len();
                        written_script = Some(content.clone());
                    } else {
                        dynamic.push(Dynamic::Opaque(
                            "a script written in this text is run too many times to analyze".into(),
                        ));
                    }
                } else if !shell_runs_it
                    && let Some(content) = self.written.get(&key)
                    && self.written_budget >= content.len()
                {
                    // Another language's script written in this text: its code stays
                    // opaque, but what it names and runs by shell does not.
                    self.written_budget -= content.len();
                    let code = Word::literal(content.clone());
                    knowledge::inline_code(&mut outcome, prog_name_of(name.as_deref()), &code);
                }
            }
        }

        // A Makefile written earlier in the text: its recipes are the shell commands
        // `make` runs.
        if matches!(name.as_deref(), Some("make" | "gmake" | "bmake"))
            && written_script.is_none()
            && let Some(recipes) = self.written_makefile(&args)
            && self.written_budget >= recipes.len()
        {
            self.written_budget -= recipes.len();
            written_script = Some(recipes);
        }

        // DNS exfiltration: a lookup whose host name is built from run-time data. A
        // host that is one expansion and nothing else is only an unknown destination,
        // which the network operation asks about.
        let lookup_dynamic = outcome
            .lookup_hosts
            .iter()
            .any(|h| !h.literal && host_computed(&h.value, false))
            || outcome
                .urls
                .iter()
                .any(|u| !u.literal && host_computed(&u.value, true));
        if lookup_dynamic {
            self.hazard(HazardKind::DnsExfiltration, &s.text, "a network lookup's host name is built from run-time data, which can carry that data out through DNS");
        }

        // Standard input that carries code.
        let prog_name = name.clone().unwrap_or_default();
        let mut heredoc_code = None;
        let mut pipe_stdin_code = false;
        if outcome.stdin_code {
            match &feed {
                Some(Feed::Text { text, .. }) if SHELLS.contains(&prog_name.as_str()) => {
                    if !text.literal {
                        outcome.exec(
                            &prog_name,
                            "stdin",
                            "code from a here-document with expansions",
                        );
                    }
                    heredoc_code = Some(text.value.clone());
                }
                Some(Feed::Text { text, .. }) => {
                    outcome.exec(&prog_name, "stdin", "code from a here-document");
                    knowledge::inline_code(&mut outcome, &prog_name, text);
                }
                Some(Feed::File(f)) => {
                    if let Some(u) = self.unseen_file(&norm_path(&f.value)) {
                        self.hazard(u.hazard(), &s.text, &format!("{} is run as code", u.file()));
                    }
                    outcome.reads([f]);
                    outcome.exec(&prog_name, "stdin", &format!("code read from {}", f.value));
                }
                Some(Feed::Process { .. }) => {
                    outcome.exec(&prog_name, "stdin", "code from a process substitution")
                }
                None => {
                    pipe_stdin_code = true;
                    outcome.exec(&prog_name, "stdin", "code from standard input");
                }
            }
        }
        // `… | xargs sh -c` and `… | xargs -I{} sh -c '{}'`: the code a shell runs is
        // read from xargs' standard input.
        if peeled.runtime_args.as_deref() == Some("xargs")
            && feed.is_none()
            && SHELLS.contains(&prog_name.as_str())
            && ((outcome.shell_code.is_empty() && outcome.effects.class == Class::Unknown)
                || outcome
                    .shell_code
                    .iter()
                    .any(|(_, c)| c.value.contains("{}")))
        {
            pipe_stdin_code = true;
            outcome.exec(&prog_name, "stdin", "code from xargs' standard input");
        }
        // An sftp batch the text shows (`echo 'put .env' | sftp host`, `sftp -b f`).
        if prog_name == "sftp" {
            let batch = match &feed {
                Some(Feed::Text { text, .. }) if text.literal => Some(text.value.clone()),
                _ => outcome
                    .effects
                    .reads
                    .iter()
                    .find_map(|r| self.written.get(&norm_path(&r.value)).cloned()),
            };
            if let Some(b) = batch {
                knowledge::sftp_batch(&mut outcome, &b);
            }
        }
        for (kind, why) in std::mem::take(&mut outcome.hazards) {
            self.hazard(kind, &s.text, &why);
        }

        // Shell strings: analyzed when literal, opaque otherwise.
        let mut strings: Vec<(String, Word)> = peeled.shell_strings.clone();
        strings.append(&mut outcome.shell_code);
        let mut to_run: Vec<(String, String)> = Vec::new();
        let mut unseen_code = false;
        for (label, code) in &strings {
            if code.literal {
                to_run.push((label.clone(), code.value.clone()));
            } else {
                unseen_code |= label == "eval";
                let (prog, arg) = label.split_once(' ').unwrap_or((label, label));
                outcome.exec(prog, arg, &code.value);
            }
        }
        if (!to_run.is_empty()
            || heredoc_code.is_some()
            || alias_text.is_some()
            || !outcome.exec_argv.is_empty()
            || function_call)
            && scope.depth >= MAX_DEPTH
        {
            nested.too_deep = true;
        }
        if nested.too_deep {
            dynamic.push(Dynamic::TooDeep);
        }
        if function_call && self.expansions >= MAX_EXPANSIONS {
            dynamic.push(Dynamic::Opaque("too many function calls to expand".into()));
        }

        let cd = outcome.cd.clone();
        let meta = Meta {
            unseen: out_unseen,
            stdin_code: pipe_stdin_code,
        };
        let exec_argv = std::mem::take(&mut outcome.exec_argv);
        self.through_links(&mut outcome.effects, &redirects, &cmd_cwd);
        if matches!(name.as_deref(), Some("ln" | "link"))
            && cmd_cwd == CwdChange::Unchanged
            && let ([target], [link]) = (
                outcome.effects.reads.as_slice(),
                outcome.effects.writes.as_slice(),
            )
            && link.literal
            && link.value != "."
        {
            self.links.insert(norm_path(&link.value), target.clone());
        }
        let mut effects = outcome.effects;
        if effects.privilege.is_some() && effects.class == Class::ReadOnly {
            effects.class = Class::Mutating;
        }
        let program_literal = program.literal;
        let idx = self.emit(
            SimpleCommand {
                text: s.text.clone(),
                program: Some(program),
                args,
                assignments,
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

        // Nested code run by this command: in this shell (`eval`, `source`, an
        // alias), later in this shell (`trap`), or in a child process that inherits
        // only exported variables (`bash -c`, a script, `find -exec`).
        let same_shell = peeled
            .wrappers
            .iter()
            .all(|w| w == "command" || w == "builtin");
        let sourcing = same_shell && matches!(name.as_deref(), Some("source" | "."));
        if scope.depth < MAX_DEPTH {
            for (label, code) in &to_run {
                let how = match label.as_str() {
                    "eval" if same_shell => Where::ThisShell,
                    "trap" => Where::Later,
                    _ => Where::Child,
                };
                self.run_nested(code, scope, Context::ShellString, how, &temp);
            }
            if let Some(body) = heredoc_code {
                self.run_nested(&body, scope, Context::Heredoc, Where::Child, &temp);
            }
            if let Some(script) = &written_script {
                // The script's text is known: analyze it as what the command runs.
                let how = if sourcing {
                    Where::Sourced
                } else {
                    Where::Child
                };
                self.run_nested(script, scope, Context::ShellString, how, &temp);
            }
            if let Some(text) = &alias_text {
                // Aliases expand only with `expand_aliases`: the alias may not run.
                self.run_nested(text, scope, Context::Alias, Where::Sourced, &[]);
            }
            for (label, argv) in &exec_argv {
                if argv.is_empty() {
                    continue;
                }
                let text = exec_argv_text(label, argv);
                self.run_nested(&text, scope, Context::ExecArgument, Where::Child, &temp);
            }
            if function_call && let Some(n) = &name {
                self.call_function(n, scope);
            }
        } else if function_call {
            self.env.kill_all();
        }

        for p in variants {
            if self.variant_budget == 0 {
                break;
            }
            self.variant_budget -= 1;
            let mut v = s.clone();
            if let Some(first) = v.args.first_mut() {
                *first = Arg::Word(shell_quote(&p));
            }
            self.in_variant = true;
            self.simple(&v, scope);
            self.in_variant = false;
        }

        // What the command does to the variables of this shell.
        if !program_literal || (unseen_code && same_shell) {
            // Any builtin could run under that name (`eval`, `read`, `declare`), or
            // `eval` runs code only known at run time.
            self.env.kill_all();
        } else if same_shell && let Some(n) = name.as_deref() {
            // A function or alias of that name runs instead of the builtin.
            if ENV_BUILTINS.contains(&n) && !function_call && alias_text.is_none() {
                let args_now = self
                    .out
                    .commands
                    .get(idx)
                    .map(|c| c.args.clone())
                    .unwrap_or_default();
                self.builtin_env(n, &args_now, decl_assigns, feed.as_ref(), &temp);
            }
            if sourcing && written_script.is_none() {
                self.env.kill_all();
            }
            if n == "trap" && strings.iter().any(|(l, _)| l == "trap") {
                // The trap's code can run between any two later commands.
                self.env.freeze();
            }
        }

        // Builtins that change the shell's state for later commands.
        match name.as_deref() {
            Some("alias") if peeled.wrappers.is_empty() => {
                for w in self
                    .out
                    .commands
                    .get(idx)
                    .map(|c| c.args.clone())
                    .unwrap_or_default()
                {
                    if let Some((n, v)) = w.value.split_once('=') {
                        self.aliases.insert(n.to_owned(), v.to_owned());
                    }
                }
            }
            Some("unalias") => {
                for w in self
                    .out
                    .commands
                    .get(idx)
                    .map(|c| c.args.clone())
                    .unwrap_or_default()
                {
                    self.aliases.remove(&w.value);
                }
            }
            Some("unset") => {
                let args = self
                    .out
                    .commands
                    .get(idx)
                    .map(|c| c.args.clone())
                    .unwrap_or_default();
                if args.iter().any(|w| w.value == "-f") {
                    for w in args.iter().filter(|w| !w.value.starts_with('-')) {
                        self.functions.remove(&w.value);
                    }
                }
            }
            _ => {}
        }
        if let Some(cd) = cd {
            scope.cwd = match cd {
                Cd::To(w) => join_cwd(&scope.cwd, &w),
                Cd::Unknown => CwdChange::Dynamic,
            };
        }
        Some(idx)
    }

    /// The recipe lines of the makefile `make ARGS` would read, when the text wrote it.
    fn written_makefile(&self, args: &[Word]) -> Option<String> {
        if args
            .iter()
            .any(|w| w.value.starts_with("-C") || w.value.starts_with("--directory"))
        {
            return None;
        }
        let named = args
            .iter()
            .enumerate()
            .find_map(|(k, w)| match w.value.as_str() {
                "-f" | "--file" | "--makefile" => args.get(k + 1).map(|v| v.value.clone()),
                v => v
                    .strip_prefix("--file=")
                    .or_else(|| v.strip_prefix("--makefile="))
                    .or_else(|| v.strip_prefix("-f").filter(|r| !r.is_empty()))
                    .map(str::to_owned),
            });
        let text = match named {
            Some(f) => self.written.get(&norm_path(&f))?,
            None => ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .find_map(|f| self.written.get(*f))?,
        };
        let recipes: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix('\t'))
            .map(|l| l.trim_start_matches(['@', '-', '+']).replace("$$", "$"))
            .collect();
        (!recipes.is_empty()).then(|| recipes.join("\n"))
    }
}
