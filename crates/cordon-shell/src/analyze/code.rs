//! The code a simple command runs: bytes the reader cannot see reaching an
//! interpreter, scripts and makefiles written earlier in the text, code on standard
//! input, shell strings, and the nested analysis of all the code the text shows.

use super::host::host_computed;
use super::{
    Analyzer, CODE_RUNNERS, FETCHERS, Feed, MAX_DEPTH, SHELLS, Scope, Unseen, Where,
    exec_argv_text, norm_path, prog_name_of,
};
use crate::env::Val;
use crate::knowledge::{self, Outcome};
use crate::model::{Context, Dynamic, HazardKind, Redirect, Word};
use crate::parse::Assign;
use crate::wrappers::Peeled;

/// The code a command runs whose text the analysis can read, gathered before the
/// command is emitted and analyzed after it.
#[derive(Default)]
pub(super) struct Code {
    /// Literal shell strings, with the label of what runs them.
    pub(super) to_run: Vec<(String, String)>,
    /// A shell string whose text is known only at run time is run by `eval`.
    pub(super) unseen_eval: bool,
    /// Shell code a here-document feeds to a shell.
    pub(super) heredoc: Option<String>,
    /// A script written earlier in the text that the command runs, or the recipes of
    /// a makefile written earlier that `make` runs.
    pub(super) written_script: Option<String>,
    /// The text an alias expands to, followed by the command's arguments.
    pub(super) alias_text: Option<String>,
    /// Commands run through an argument (`find -exec CMD ;`).
    pub(super) exec_argv: Vec<(String, Vec<Word>)>,
    /// `trap` sets code to run later.
    pub(super) sets_trap: bool,
}

impl Code {
    /// Code whose analysis the depth limit cuts off, which then marks the command as
    /// too deep: shell strings, a heredoc fed to a shell, an alias, commands run
    /// through an argument (a written script's run is not counted).
    pub(super) fn cut_by_depth(&self) -> bool {
        !self.to_run.is_empty()
            || self.heredoc.is_some()
            || self.alias_text.is_some()
            || !self.exec_argv.is_empty()
    }
}

impl Analyzer {
    /// Hazards of a command that runs code (an interpreter, `eval`, a script) given
    /// bytes the reader cannot see: in its words (a substitution of a download) or on
    /// its standard input.
    pub(super) fn unseen_code_hazards(
        &mut self,
        text: &str,
        name: Option<&str>,
        peeled: &Peeled,
        outcome: &Outcome,
        words: Unseen,
        feed: Unseen,
    ) {
        let code_runner = name.is_some_and(|n| CODE_RUNNERS.contains(&n))
            || !outcome.shell_code.is_empty()
            || !peeled.shell_strings.is_empty()
            || outcome.stdin_code
            || outcome.runs_script;
        if code_runner && words.any() {
            self.hazard(
                words.hazard(),
                text,
                &format!(
                    "{} is substituted into a command that runs it as code",
                    words.what()
                ),
            );
        }
        if code_runner && feed.any() {
            self.hazard(
                feed.hazard(),
                text,
                &format!(
                    "{} is fed to {} as the code it runs",
                    feed.what(),
                    prog_name_of(name)
                ),
            );
        }
    }

    /// Remember the files this command fills with bytes the reader cannot see, so that
    /// running them later is a hazard: `curl -o x.sh URL && bash x.sh`, `base64 -d
    /// p.b64 > x.sh && bash x.sh`. Returns why the command's output is unseen.
    pub(super) fn mark_unseen_outputs(
        &mut self,
        name: Option<&str>,
        outcome: &Outcome,
        feed: Unseen,
        redirects: &[Redirect],
    ) -> Unseen {
        let is_fetcher = name.is_some_and(|n| FETCHERS.contains(&n));
        let mut out = Unseen {
            fetched: outcome.fetches,
            decoded: outcome.decodes,
        };
        out.merge(feed);
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
        if out.any() {
            for r in redirects
                .iter()
                .filter(|r| r.kind.writes_file() && r.fd.is_none_or(|fd| fd == 1))
            {
                self.unseen_files
                    .entry(norm_path(&r.target.value))
                    .or_default()
                    .merge(out);
            }
        }
        out
    }

    /// A script the command runs: a hazard when unseen bytes filled it; its text, to
    /// analyze as what a shell runs, when the text wrote it. Another language's script
    /// written in the text stays opaque, but what it names and runs by shell does not.
    pub(super) fn written_script_it_runs(
        &mut self,
        text: &str,
        name: Option<&str>,
        program: &Word,
        outcome: &mut Outcome,
        dynamic: &mut Vec<Dynamic>,
    ) -> Option<String> {
        if !outcome.runs_script {
            return None;
        }
        let script = if name.is_none() {
            Some(program.value.clone())
        } else {
            outcome.effects.reads.first().map(|w| w.value.clone())
        };
        let key = norm_path(&script?);
        if let Some(u) = self.unseen_file(&key) {
            self.hazard(u.hazard(), text, &format!("{} is run as code", u.file()));
        }
        let shell_runs_it = name.is_none() || SHELLS.contains(&prog_name_of(name));
        if shell_runs_it && let Some(content) = self.written.get(&key) {
            // Re-running a script that grows could make analysis quadratic: past a
            // total budget the run is left opaque.
            if self.written_budget >= content.len() {
                self.written_budget -= content.len();
                return Some(content.clone());
            }
            dynamic.push(Dynamic::Opaque(
                "a script written in this text is run too many times to analyze".into(),
            ));
        } else if !shell_runs_it
            && let Some(content) = self.written.get(&key)
            && self.written_budget >= content.len()
        {
            self.written_budget -= content.len();
            let code = Word::literal(content.clone());
            knowledge::inline_code(outcome, prog_name_of(name), &code);
        }
        None
    }

    /// A Makefile written earlier in the text: its recipes are the shell commands
    /// `make` runs.
    pub(super) fn written_make_recipes(
        &mut self,
        name: Option<&str>,
        args: &[Word],
    ) -> Option<String> {
        if !matches!(name, Some("make" | "gmake" | "bmake")) {
            return None;
        }
        let recipes = self.written_makefile(args)?;
        if self.written_budget < recipes.len() {
            return None;
        }
        self.written_budget -= recipes.len();
        Some(recipes)
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

    /// DNS exfiltration: a lookup whose host name is built from run-time data. A host
    /// that is one expansion and nothing else is only an unknown destination, which
    /// the network operation asks about.
    pub(super) fn dns_exfiltration(&mut self, text: &str, outcome: &Outcome) {
        let lookup_dynamic = outcome
            .lookup_hosts
            .iter()
            .any(|h| !h.literal && host_computed(&h.value, false))
            || outcome
                .urls
                .iter()
                .any(|u| !u.literal && host_computed(&u.value, true));
        if lookup_dynamic {
            self.hazard(
                HazardKind::DnsExfiltration,
                text,
                "a network lookup's host name is built from run-time data, which can carry that data out through DNS",
            );
        }
    }

    /// Standard input that carries code: a heredoc's text a shell runs (returned, to
    /// analyze), another interpreter's heredoc, a file, a process substitution, or a
    /// pipe. Also says whether the code comes from a pipe.
    pub(super) fn stdin_code(
        &mut self,
        text: &str,
        prog_name: &str,
        outcome: &mut Outcome,
        feed: Option<&Feed>,
        xargs_code: bool,
    ) -> (Option<String>, bool) {
        if xargs_code && !outcome.effects.executes.iter().any(|e| e.arg == "stdin") {
            outcome.exec(prog_name, "stdin", "code from xargs' standard input");
        }
        if !outcome.stdin_code {
            return (None, false);
        }
        match feed {
            Some(Feed::Text { text, .. }) if SHELLS.contains(&prog_name) => {
                if !text.literal {
                    outcome.exec(
                        prog_name,
                        "stdin",
                        "code from a here-document with expansions",
                    );
                }
                return (Some(text.value.clone()), false);
            }
            Some(Feed::Text { text, .. }) => {
                outcome.exec(prog_name, "stdin", "code from a here-document");
                knowledge::inline_code(outcome, prog_name, text);
            }
            Some(Feed::File(f)) => {
                if let Some(u) = self.unseen_file(&norm_path(&f.value)) {
                    self.hazard(u.hazard(), text, &format!("{} is run as code", u.file()));
                }
                outcome.reads([f]);
                outcome.exec(prog_name, "stdin", &format!("code read from {}", f.value));
            }
            Some(Feed::Process { .. }) => {
                outcome.exec(prog_name, "stdin", "code from a process substitution");
            }
            None => {
                outcome.exec(prog_name, "stdin", "code from standard input");
                return (None, true);
            }
        }
        (None, false)
    }

    /// An sftp batch the text shows (`echo 'put .env' | sftp host`, `sftp -b f`): its
    /// transfers are what sftp does.
    pub(super) fn sftp_batch(&self, outcome: &mut Outcome, feed: Option<&Feed>) {
        let batch = match feed {
            Some(Feed::Text { text, .. }) if text.literal => Some(text.value.clone()),
            _ => outcome
                .effects
                .reads
                .iter()
                .find_map(|r| self.written.get(&norm_path(&r.value)).cloned()),
        };
        if let Some(b) = batch {
            knowledge::sftp_batch(outcome, &b);
        }
    }
}

/// Gather the code the command runs. The shell strings the wrappers and the program
/// run (`watch 'cmd'`, `bash -c`, `eval`) are analyzed when literal; one known only at
/// run time is an executing argument.
pub(super) fn code_to_run(
    peeled: &Peeled,
    heredoc: Option<String>,
    written_script: Option<String>,
    alias_text: Option<String>,
    outcome: &mut Outcome,
) -> Code {
    let mut code = Code {
        heredoc,
        written_script,
        alias_text,
        ..Code::default()
    };
    let own = std::mem::take(&mut outcome.shell_code);
    for (label, text) in peeled.shell_strings.iter().chain(&own) {
        code.sets_trap |= label == "trap";
        if text.literal {
            code.to_run.push((label.clone(), text.value.clone()));
        } else {
            code.unseen_eval |= label == "eval";
            let (prog, arg) = label.split_once(' ').unwrap_or((label, label));
            outcome.exec(prog, arg, &text.value);
        }
    }
    code.exec_argv = std::mem::take(&mut outcome.exec_argv);
    code
}

/// How the command runs its nested code, for [`Analyzer::run_code`].
pub(super) struct Runner<'a> {
    pub(super) name: Option<&'a str>,
    /// The program is named literally, not computed.
    pub(super) program_literal: bool,
    /// The command runs in this shell: no wrapper but `command` or `builtin`.
    pub(super) same_shell: bool,
    /// `source` or `.` in this shell.
    pub(super) sourcing: bool,
    pub(super) function_call: bool,
    /// Assignments that last for this command only.
    pub(super) temp: &'a [(Assign, Val)],
}

impl Analyzer {
    /// Analyze the nested code the command runs: in this shell (`eval`, `source`, an
    /// alias), later in this shell (`trap`), or in a child process that inherits only
    /// exported variables (`bash -c`, a script, `find -exec`). Past the depth limit a
    /// function call makes every variable unknown instead.
    pub(super) fn run_code(&mut self, code: &Code, r: &Runner<'_>, scope: &mut Scope) {
        if scope.depth >= MAX_DEPTH {
            if r.function_call {
                self.env.kill_all();
            }
            return;
        }
        for (label, text) in &code.to_run {
            let how = match label.as_str() {
                "eval" if r.same_shell => Where::ThisShell,
                "trap" => Where::Later,
                _ => Where::Child,
            };
            self.run_nested(text, scope, Context::ShellString, how, r.temp);
        }
        if let Some(body) = &code.heredoc {
            self.run_nested(body, scope, Context::Heredoc, Where::Child, r.temp);
        }
        if let Some(script) = &code.written_script {
            // The script's text is known: analyze it as what the command runs.
            let how = if r.sourcing {
                Where::Sourced
            } else {
                Where::Child
            };
            self.run_nested(script, scope, Context::ShellString, how, r.temp);
        }
        if let Some(text) = &code.alias_text {
            // Aliases expand only with `expand_aliases`: the alias may not run.
            self.run_nested(text, scope, Context::Alias, Where::Sourced, &[]);
        }
        for (label, argv) in &code.exec_argv {
            if argv.is_empty() {
                continue;
            }
            let text = exec_argv_text(label, argv);
            self.run_nested(&text, scope, Context::ExecArgument, Where::Child, r.temp);
        }
        if r.function_call
            && let Some(n) = r.name
        {
            self.call_function(n, scope);
        }
    }
}
