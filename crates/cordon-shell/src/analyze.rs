//! The walk over parsed shell text: every simple command is decoded, peeled of its
//! wrappers, classified by the knowledge base, and every piece of nested code
//! (substitutions, `bash -c` strings, heredocs fed to a shell, function bodies at their
//! call sites, `find -exec` commands) is analyzed in turn.
//!
//! Owns: scoping (working directory, functions, aliases), the recursion limits that
//! keep analysis bounded on hostile input, and the hazards that span commands
//! (fetch-to-exec through pipes and substitutions, DNS-exfiltration shapes,
//! privilege). Never decides: it reports, the policy judges.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::env::{Env, Val};
use crate::expand::{self, Expander, Expansion, Field, Mode};
use crate::knowledge::{self, Cd, Invocation, Outcome};
use crate::model::{
    Analysis, Class, Context, CwdChange, Dynamic, Effects, Hazard, HazardKind, NetTarget, Redirect,
    RedirectKind, SimpleCommand, Word,
};
use crate::parse::{
    self, AndOr, Arg, Assign, AssignValue, Compound, CompoundKind, Flow, Item, Pipeline,
    RawRedirect, RawTarget, Script, Simple,
};
use crate::pattern::Pattern;
use crate::word::{self, Decoded, Subst, SubstKind};
use crate::wrappers::{self, shell_quote, standard_name};

/// Deepest nesting of analyzed code (substitution in `bash -c` in a function …).
/// Deeper parts are not analyzed and the command carrying them is marked
/// [`Dynamic::TooDeep`].
const MAX_DEPTH: usize = 12;

/// Stack budget, in nesting levels, shared by the walk and the parser. Every compound
/// body entered costs one level and every nested analysis (substitution, shell
/// string, function body) costs [`NESTED_COST`]; nested text is only handed to the
/// parser with the nesting budget that is left, so the total stack stays bounded
/// (measured: fits the 2 MiB test-thread stack in an unoptimized build).
const NESTING_BUDGET: usize = 96;

/// Budget cost of one nested analysis level.
const NESTED_COST: usize = 3;

/// Most function-body expansions in one analysis; beyond it calls are marked opaque.
const MAX_EXPANSIONS: usize = 512;

/// Most items of a `for` list whose iterations are analyzed one by one.
const MAX_UNROLL: usize = 32;

/// Most names remembered as assigned by one function; a function assigning more makes
/// every variable unknown after a call.
const MAX_FN_ASSIGNS: usize = 64;

/// Programs a glob in the command name (`/usr/bin/sud?`, `/???/c?t`) is also analyzed
/// as, when it can name them: those that gain privilege, read or destroy files, reach
/// the network or run code. At most [`MAX_GLOB_PROGRAMS`] of them per command.
const GLOB_PROGRAMS: &[&str] = &[
    "sudo", "doas", "pkexec", "su", "runuser", "sudoedit", "run0", "chroot", "nsenter", "unshare",
    "cat", "tac", "head", "tail", "less", "more", "nl", "od", "xxd", "hexdump", "base64", "base32",
    "strings", "cut", "grep", "rg", "awk", "sed", "cp", "mv", "rm", "rmdir", "shred", "dd", "tee",
    "truncate", "chmod", "chown", "ln", "tar", "zip", "curl", "wget", "nc", "ncat", "socat", "scp",
    "rsync", "ssh", "sh", "bash", "zsh", "dash", "python3", "python", "perl", "ruby", "node",
    "find", "xargs", "env",
];

/// Most programs one glob in a command name is analyzed as.
const MAX_GLOB_PROGRAMS: usize = 8;

/// Builtins that change variables (see `Analyzer::builtin_env`).
const ENV_BUILTINS: &[&str] = &[
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "printf",
    "unset",
    "let",
    "shopt",
    "set",
    "wait",
];

/// Declaration builtins: their assignment-shaped arguments are assignments.
const DECLARATIONS: &[&str] = &["declare", "typeset", "export", "readonly", "local"];

/// POSIX-family shells: text they read from a heredoc is analyzed as shell. `at` and
/// `batch` hand what they read to a shell later.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "source", ".",
    "at", "batch",
];

/// Programs whose output (or output file) is data fetched from the network.
const FETCHERS: &[&str] = &[
    "curl",
    "wget",
    "wget2",
    "http",
    "https",
    "xh",
    "xhs",
    "aria2c",
    "axel",
    "fetch",
    "lwp-request",
    "GET",
];

/// Programs that run code given to them (for fetch-to-exec through substitution).
const CODE_RUNNERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "posh",
    "rbash",
    "fish",
    "csh",
    "tcsh",
    "eval",
    "source",
    ".",
    "python",
    "python2",
    "python3",
    "pypy",
    "pypy3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "luajit",
    "Rscript",
    "julia",
    "tclsh",
    "osascript",
    "pwsh",
    "trap",
    "exec",
];

/// Analyze shell text. Never panics; bounded in time and stack on any input.
pub(crate) fn analyze(text: &str) -> Analysis {
    if text.len() > parse::CHUNK
        && let Some(a) = analyze_in_pieces(text)
    {
        return a;
    }
    let mut a = Analyzer::for_text(text);
    let mut scope = Scope::top_level();
    a.run_text(text, &mut scope);
    a.finish();
    a.out
}

/// Long text: parse and walk one piece at a time (cut at newlines ending a complete
/// top-level command), so only one piece's syntax tree is alive at once. If a piece
/// does not parse (a cut in the wrong place, or a real error) this gives up and the
/// caller analyzes the whole text from scratch.
fn analyze_in_pieces(text: &str) -> Option<Analysis> {
    let cuts = parse::split_points(text, parse::CHUNK);
    if cuts.is_empty() {
        return None;
    }
    let mut a = Analyzer::for_text(text);
    let mut scope = Scope::top_level();
    let mut start = 0;
    for end in cuts.into_iter().chain(std::iter::once(text.len())) {
        let piece = text.get(start..end)?;
        start = end;
        let script = parse::parse_one(piece, NESTING_BUDGET).ok()?;
        a.script(&script, &mut scope);
    }
    a.finish();
    Some(a.out)
}

#[derive(Debug, Clone)]
struct Scope {
    context: Context,
    cwd: CwdChange,
    depth: usize,
    /// Nesting budget used by the enclosing walk.
    nest: usize,
}

impl Scope {
    fn top_level() -> Self {
        Self {
            context: Context::TopLevel,
            cwd: CwdChange::Unchanged,
            depth: 0,
            nest: 0,
        }
    }

    fn child(&self, context: Context) -> Self {
        Self {
            context,
            cwd: self.cwd.clone(),
            depth: self.depth + 1,
            nest: self.nest + NESTED_COST,
        }
    }
}

/// Why bytes are unseen by the analysis: fetched from the network, or decoded or
/// transformed from text the reader sees into text the reader does not. Carried by a
/// command's output, by a substitution, by a file written earlier in the text; when
/// such bytes reach an interpreter, the hazard names which.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Unseen {
    fetched: bool,
    decoded: bool,
}

impl Unseen {
    const FETCHED: Unseen = Unseen {
        fetched: true,
        decoded: false,
    };
    const DECODED: Unseen = Unseen {
        fetched: false,
        decoded: true,
    };

    fn any(self) -> bool {
        self.fetched || self.decoded
    }

    fn merge(&mut self, o: Unseen) {
        self.fetched |= o.fetched;
        self.decoded |= o.decoded;
    }

    /// Network data is the graver source: it names the hazard when both apply.
    fn hazard(self) -> HazardKind {
        if self.fetched {
            HazardKind::FetchToExec
        } else {
            HazardKind::DecodeToExec
        }
    }

    /// What the bytes are, for a hazard's sentence.
    fn what(self) -> &'static str {
        match (self.fetched, self.decoded) {
            (true, true) => "output fetched from the network and decoded",
            (true, false) => "output fetched from the network",
            _ => "decoded text",
        }
    }

    /// How a file holding such bytes came to be, for a hazard's sentence.
    fn file(self) -> &'static str {
        if self.fetched {
            "a file downloaded earlier in the same text"
        } else {
            "a file decoded earlier in the same text"
        }
    }
}

/// Facts about an emitted command that only the analyzer needs.
#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    /// Its standard output is data the analysis cannot see (fetched or decoded).
    unseen: Unseen,
    /// It runs code read from a standard input that comes from a pipe.
    stdin_code: bool,
}

struct Analyzer {
    out: Analysis,
    meta: Vec<Meta>,
    functions: HashMap<String, Rc<Compound>>,
    aliases: HashMap<String, String>,
    expanded: HashSet<(String, String)>,
    expansions: usize,
    active: Vec<String>,
    analyzed: HashSet<String>,
    /// Files written earlier in the text with bytes the analysis cannot see
    /// (downloaded, decoded), and why.
    unseen_files: HashMap<String, Unseen>,
    /// Shell scripts whose whole content the text wrote (`cat > f <<EOF`, `echo … > f`).
    written: HashMap<String, String>,
    /// Bytes of written scripts that may still be analyzed at their runs.
    written_budget: usize,
    /// Links made earlier in the text (`ln -s TARGET NAME`): a later path through
    /// NAME reaches TARGET.
    links: HashMap<String, Word>,
    /// Literal text the previous stage of the current pipeline prints, for the next
    /// simple command to take as its standard input.
    pipe_feed: Option<Word>,
    /// Variables assigned in the text: true when the value is a plain integer. bash
    /// evaluates names in arithmetic recursively, so a name holding `a[$(cmd)]` runs
    /// cmd; names never assigned here come from the inherited environment.
    vars: HashMap<String, bool>,
    /// The values of variables, as far as the text fixes them.
    env: Env,
    /// Bytes that evaluating words may still produce (brace expansion, values).
    eval_budget: usize,
    /// Walk steps that re-analyzing loop bodies may still take.
    loop_budget: usize,
    /// Analyses of a command as a program its glob command name can name still allowed.
    variant_budget: usize,
    /// Walk steps taken (simple and compound commands visited).
    steps: usize,
    /// Names each function assigns (`None`: too many to list), by name.
    fn_assigns: HashMap<String, Option<Vec<String>>>,
    /// Definitions seen per function name: a redefinition is analyzed again.
    fn_generation: HashMap<String, usize>,
    /// Shell options in the text may change what globs match.
    globs_changed: bool,
    /// `shopt -s lastpipe` may be on: the last stage of a pipeline runs in this shell.
    lastpipe: bool,
    /// Analyzing a command as a program its glob command name can name.
    in_variant: bool,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self {
            out: Analysis::default(),
            meta: Vec::new(),
            functions: HashMap::new(),
            aliases: HashMap::new(),
            expanded: HashSet::new(),
            expansions: 0,
            active: Vec::new(),
            analyzed: HashSet::new(),
            unseen_files: HashMap::new(),
            written: HashMap::new(),
            written_budget: WRITTEN_SCRIPT_BUDGET,
            links: HashMap::new(),
            pipe_feed: None,
            vars: HashMap::new(),
            env: Env::default(),
            eval_budget: 0,
            loop_budget: 0,
            variant_budget: 0,
            steps: 0,
            fn_assigns: HashMap::new(),
            fn_generation: HashMap::new(),
            globs_changed: false,
            lastpipe: false,
            in_variant: false,
        }
    }
}

/// Most bytes of scripts written in the text that are analyzed where they are run.
const WRITTEN_SCRIPT_BUDGET: usize = 1 << 20;

/// Bytes evaluation may produce beyond one per byte of input (a brace-expanded word
/// costs its length and 32 more): enough for a command whose brace expansion yields
/// about 150 short words, or a few uses of a long value.
const EVAL_BUDGET_BASE: usize = 8 * 1024;

/// Walk steps (simple and compound commands) that analyzing loop bodies again may take
/// beyond one per 32 bytes of input: enough for a loop nest of 256 body runs in one
/// command.
const LOOP_BUDGET_BASE: usize = 512;

/// Commands that may be analyzed again as a program their glob command name can name,
/// beyond one per 256 bytes of input.
const VARIANT_BUDGET_BASE: usize = 32;

impl Analyzer {
    /// An analyzer whose evaluation budgets are proportional to the text: evaluation
    /// can never make the work grow faster than the input.
    fn for_text(text: &str) -> Self {
        Self {
            eval_budget: EVAL_BUDGET_BASE + text.len(),
            loop_budget: LOOP_BUDGET_BASE + text.len() / 32,
            variant_budget: VARIANT_BUDGET_BASE + text.len() / 256,
            ..Self::default()
        }
    }
}

/// Result of analyzing nested code.
#[derive(Debug, Default, Clone, Copy)]
struct Nested {
    /// The nested code's output is unseen bytes.
    unseen: Unseen,
    too_deep: bool,
}

impl Nested {
    fn merge(&mut self, o: Nested) {
        self.unseen.merge(o.unseen);
        self.too_deep |= o.too_deep;
    }
}

/// What a command's standard input is fed from.
#[derive(Debug, Clone)]
enum Feed {
    Text { text: Word, unseen: Unseen },
    File(Word),
    Process { unseen: Unseen },
}

impl Analyzer {
    fn run_text(&mut self, text: &str, scope: &mut Scope) -> bool {
        match parse::parse(text, NESTING_BUDGET.saturating_sub(scope.nest)) {
            Ok(script) => {
                self.script(&script, scope);
                true
            }
            Err(e) => {
                if self.out.parse_error.is_none() {
                    self.out.parse_error = Some(e);
                }
                false
            }
        }
    }

    fn script(&mut self, s: &Script, scope: &mut Scope) {
        // In `a && b || c`, what b and c assign may not happen: variables they assign
        // are unknown after the list. Inside it, a pipeline after `&&` (`||`) runs only
        // when the previous one ran, as long as the operators do not change; where they
        // do, what the list assigned so far becomes unknown.
        let mut region: Option<u64> = None;
        let mut prev: Option<AndOr> = None;
        for p in &s.pipelines {
            match p.after {
                None => {
                    if let Some(e) = region.take() {
                        self.env.kill_since(e);
                    }
                    prev = None;
                }
                Some(op) => {
                    match region {
                        None => region = Some(self.env.now()),
                        Some(e) if prev != Some(op) => self.env.kill_since(e),
                        Some(_) => {}
                    }
                    prev = Some(op);
                }
            }
            self.pipeline(p, scope);
        }
        if let Some(e) = region {
            self.env.kill_since(e);
        }
    }

    fn pipeline(&mut self, p: &Pipeline, scope: &mut Scope) {
        if p.stages.len() == 1 && !p.background {
            if let Some(stage) = p.stages.first() {
                self.item(stage, scope);
            }
            return;
        }
        let mut ranges = Vec::with_capacity(p.stages.len());
        let mut primaries = Vec::with_capacity(p.stages.len());
        let last = p.stages.len().saturating_sub(1);
        for (k, stage) in p.stages.iter().enumerate() {
            // Each stage of a pipeline (and a background job) runs in a subshell;
            // with `lastpipe` the last one may run in this shell.
            let mut sc = scope.clone();
            let start = self.out.commands.len();
            // Literal text the previous stage prints (`echo 'put .env' | sftp h`) is
            // this stage's standard input, as a here-string would be.
            self.pipe_feed = match (primaries.last(), stage) {
                (Some(Some(k)), Item::Simple(_)) => self
                    .out
                    .commands
                    .get(*k)
                    .and_then(literal_output)
                    .map(Word::literal),
                _ => None,
            };
            let mark = self.env.mark();
            let e0 = self.env.now();
            let primary = self.item(stage, &mut sc);
            self.pipe_feed = None;
            if self.lastpipe && k == last && !p.background {
                self.env.kill_since(e0);
            } else {
                self.env.restore(mark);
            }
            ranges.push(start..self.out.commands.len());
            primaries.push(primary);
        }
        for j in 1..primaries.len() {
            let mut unseen = Unseen::default();
            for c in ranges[..j].iter().flat_map(|r| r.clone()) {
                if let Some(m) = self.meta.get(c) {
                    unseen.merge(m.unseen);
                }
            }
            if unseen.any() {
                // What a later stage writes from such input holds it too
                // (`curl … | tee x.sh`, `… | base64 -d > x.sh`).
                for c in ranges[j].clone() {
                    self.record_unseen_outputs(c, unseen);
                }
            }
            let Some(Some(k)) = primaries.get(j) else {
                continue;
            };
            if !self.meta.get(*k).is_some_and(|m| m.stdin_code) {
                continue;
            }
            if unseen.any() {
                let text = primaries[..=j]
                    .iter()
                    .flatten()
                    .filter_map(|&c| self.out.commands.get(c).map(|x| x.text.clone()))
                    .collect::<Vec<_>>()
                    .join(" | ");
                let runner = self
                    .out
                    .commands
                    .get(*k)
                    .and_then(|c| c.program.as_ref())
                    .map(|w| w.value.clone())
                    .unwrap_or_default();
                self.hazard(
                    unseen.hazard(),
                    &text,
                    &format!(
                        "{} is piped into {runner}, which runs it as code",
                        unseen.what()
                    ),
                );
            }
        }
    }

    fn item(&mut self, item: &Item, scope: &mut Scope) -> Option<usize> {
        match item {
            Item::Simple(s) => self.simple(s, scope),
            Item::Compound(c) => {
                self.compound(c, scope);
                None
            }
            Item::Function(f) => {
                self.functions
                    .insert(f.name.clone(), Rc::new(f.body.clone()));
                // A redefinition is a new body: analyze it at its next call.
                *self.fn_generation.entry(f.name.clone()).or_default() += 1;
                self.analyzed.remove(&f.name);
                self.fn_assigns.remove(&f.name);
                None
            }
        }
    }

    fn compound(&mut self, c: &Compound, scope: &mut Scope) {
        self.steps += 1;
        if let Some(e) = &c.error
            && self.out.parse_error.is_none()
        {
            self.out.parse_error = Some(e.clone());
        }
        let mut nested = Nested::default();
        let mut head_dynamic = Vec::new();
        let mut items: Option<Vec<String>> = (c.loop_var.is_some() && !c.positional).then(Vec::new);
        let mut all_int = true;
        for w in &c.words {
            // A `for` list is split and globbed; `case` and `[[ ]]` words are not.
            let mode = if c.loop_var.is_some() {
                Mode::Command
            } else {
                Mode::Quoted
            };
            let e = self.expand_word(w, mode);
            nested.merge(self.nested(&e.substs, scope));
            self.arith_effects(&e.arith);
            // Inside `[[ ]]` words are not split or globbed; what still runs code is
            // prompt expansion (`${x@P}`) and arithmetic, handled below.
            for x in e.all_dynamic() {
                let prompt = matches!(&x, Dynamic::ParameterExpansion(p) if p.contains("@P"))
                    || matches!(&x, Dynamic::Opaque(_));
                if prompt {
                    push_all(&mut head_dynamic, std::slice::from_ref(&x));
                }
            }
            all_int &= e.fields.iter().all(|f| f.literal() && is_int(&f.value));
            if let Some(list) = &mut items {
                if e.fields.iter().all(Field::literal) && e.dynamic.is_empty() {
                    list.extend(e.fields.into_iter().map(|f| f.value));
                } else {
                    items = None;
                }
            }
        }
        for a in &c.arith {
            let mut d = Decoded::default();
            word::scan_expansions(a, &mut d);
            nested.merge(self.nested(&d.substs, scope));
            push_all(&mut head_dynamic, &d.dynamic);
            if self.arith_unsafe(a) {
                push_all(&mut head_dynamic, &[Dynamic::Arithmetic]);
            }
        }
        self.arith_effects(&c.arith);
        if let Some(var) = &c.loop_var {
            self.vars.insert(var.clone(), all_int && !c.positional);
        }
        let head = match c.kind {
            CompoundKind::Arithmetic => Some("(("),
            CompoundKind::Test => Some("[["),
            _ => None,
        };
        if !c.redirects.is_empty() || head.is_some() {
            let (redirects, mut dynamic, _, n, net) = self.redirects(&c.redirects, scope);
            nested.merge(n);
            if head.is_some() {
                push_all(&mut dynamic, &head_dynamic);
            }
            if nested.too_deep {
                dynamic.push(Dynamic::TooDeep);
            }
            let mut effects = Effects {
                class: Class::ReadOnly,
                ..Effects::default()
            };
            add_dev_tcp(&mut effects, net);
            self.emit(
                SimpleCommand {
                    text: c.text.clone(),
                    program: head.map(Word::literal),
                    args: Vec::new(),
                    assignments: Vec::new(),
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
        }
        if c.kind == CompoundKind::Subshell {
            let mut sc = scope.clone();
            sc.context = Context::Subshell;
            sc.nest += 1;
            let mark = self.env.mark();
            for b in &c.bodies {
                self.script(b, &mut sc);
            }
            self.env.restore(mark);
            return;
        }
        scope.nest += 1;
        match c.flow {
            Flow::Straight => {
                for b in &c.bodies {
                    self.script(b, scope);
                }
            }
            Flow::If | Flow::Case => {
                // An `if` condition always runs; every other body may not: what it
                // assigns is unknown afterwards.
                for (k, b) in c.bodies.iter().enumerate() {
                    if k == 0 && c.flow == Flow::If {
                        self.script(b, scope);
                        continue;
                    }
                    let e = self.env.now();
                    self.script(b, scope);
                    self.env.kill_since(e);
                }
            }
            Flow::Loop => self.run_loop(c, items, scope),
        }
        scope.nest -= 1;
    }

    /// The bodies of a loop. The first pass sees the variables as they are before the
    /// loop (exact for the first iteration). A `for` list of at most [`MAX_UNROLL`]
    /// known words is analyzed once per word; otherwise, when the first pass read a
    /// variable the body later assigns, a second pass sees those variables unknown
    /// (every later iteration). Extra passes are paid from a budget proportional to
    /// the text; with none left, everything known is dropped before the loop so one
    /// pass is sound.
    fn run_loop(&mut self, c: &Compound, items: Option<Vec<String>>, scope: &mut Scope) {
        let start = self.env.now();
        let var = c.loop_var.as_deref();
        let mut items = items.filter(|l| !l.is_empty() && l.len() <= MAX_UNROLL);
        if self.loop_budget == 0 {
            self.env.kill_all();
            items = None;
        }
        let walk = |this: &mut Self, scope: &mut Scope| {
            let s0 = this.steps;
            for b in &c.bodies {
                this.script(b, scope);
            }
            this.steps - s0 + 1
        };
        match items {
            Some(list) => {
                if let Some(v) = var {
                    self.env.set(v, Val::Str(list[0].clone()));
                }
                let cost = walk(self, scope);
                let rest = list.len() - 1;
                if rest > 0 {
                    if self.loop_budget >= cost.saturating_mul(rest) {
                        self.loop_budget -= cost * rest;
                        for item in &list[1..] {
                            self.env.kill_since(start);
                            if let Some(v) = var {
                                self.env.set(v, Val::Str(item.clone()));
                            }
                            walk(self, scope);
                        }
                    } else {
                        self.again(c, start, cost, var, scope);
                    }
                }
            }
            None => {
                if let Some(v) = var {
                    self.env.set(v, Val::Unknown);
                }
                let mark = self.env.mark();
                let watch = self.env.watch();
                let cost = walk(self, scope);
                let read = self.env.unwatch(watch, start);
                let again = !read.is_empty()
                    && (self.env.killed_all_since(mark)
                        || self
                            .env
                            .assigned_since(mark, usize::MAX)
                            .unwrap_or_default()
                            .iter()
                            .any(|n| read.contains(n)));
                if again {
                    self.again(c, start, cost, var, scope);
                }
            }
        }
        // The loop may have run any number of times, or stopped part way.
        self.env.kill_since(start);
    }

    /// Analyze a loop body once more with what the loop assigns unknown, or, past the
    /// budget, report that it was not.
    fn again(
        &mut self,
        c: &Compound,
        start: u64,
        cost: usize,
        var: Option<&str>,
        scope: &mut Scope,
    ) {
        self.env.kill_since(start);
        if self.loop_budget >= cost {
            self.loop_budget -= cost;
            if let Some(v) = var {
                self.env.set(v, Val::Unknown);
            }
            for b in &c.bodies {
                self.script(b, scope);
            }
            return;
        }
        let text = if c.text.is_empty() {
            "(a loop)".to_owned()
        } else {
            c.text.clone()
        };
        self.emit(
            SimpleCommand {
                text,
                program: None,
                args: Vec::new(),
                assignments: Vec::new(),
                redirects: Vec::new(),
                wrappers: Vec::new(),
                context: scope.context,
                cwd: scope.cwd.clone(),
                dynamic: vec![Dynamic::Opaque(
                    "a loop changes variables it reads, and the text is too large to follow every iteration".into(),
                )],
                effects: Effects {
                    class: Class::ReadOnly,
                    ..Effects::default()
                },
                function_call: false,
            },
            Meta::default(),
        );
    }

    /// Expand a word against the variables known here.
    fn expand_word(&mut self, raw: &str, mode: Mode) -> Expansion {
        let static_ok = self.echo_is_builtin();
        let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
        x.globs_changed = self.globs_changed;
        x.static_ok = static_ok;
        x.word(raw, mode)
    }

    /// `echo` and `printf` are the builtins (no function or alias of the text
    /// replaces them), so `$(echo …)` can be evaluated.
    fn echo_is_builtin(&self) -> bool {
        ["echo", "printf"]
            .iter()
            .all(|n| !self.functions.contains_key(*n) && !self.aliases.contains_key(*n))
    }

    /// Arithmetic assigns the names it increments or assigns to (and, through a name
    /// holding an expression, possibly any name).
    fn arith_effects(&mut self, texts: &[String]) {
        for t in texts {
            if self.arith_unsafe(t) {
                self.env.kill_all();
            }
            for n in arith_assigned(t) {
                self.env.set(n, Val::Unknown);
            }
        }
    }

    /// Analyze the bodies of substitutions found in a word.
    fn nested(&mut self, substs: &[Subst], scope: &Scope) -> Nested {
        let mut n = Nested::default();
        for s in substs {
            if scope.depth >= MAX_DEPTH {
                n.too_deep = true;
                continue;
            }
            let context = match s.kind {
                SubstKind::Command => Context::CommandSubstitution,
                SubstKind::Process => Context::ProcessSubstitution,
            };
            let mut sc = scope.child(context);
            let start = self.out.commands.len();
            // A substitution runs in a subshell: its assignments do not last.
            let mark = self.env.mark();
            self.run_text(&s.body, &mut sc);
            self.env.restore(mark);
            n.unseen.merge(self.unseen_since(start));
        }
        n
    }

    fn nested_script(&mut self, script: &Script, scope: &Scope, context: Context) -> Nested {
        if scope.depth >= MAX_DEPTH {
            return Nested {
                unseen: Unseen::default(),
                too_deep: true,
            };
        }
        let mut sc = scope.child(context);
        let start = self.out.commands.len();
        let mark = self.env.mark();
        self.script(script, &mut sc);
        self.env.restore(mark);
        Nested {
            unseen: self.unseen_since(start),
            too_deep: false,
        }
    }

    /// Why the file at `key` (or a directory holding it, such as a repository cloned
    /// earlier in the text) holds bytes the analysis cannot see.
    fn unseen_file(&self, key: &str) -> Option<Unseen> {
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
    fn unseen_since(&self, start: usize) -> Unseen {
        let mut u = Unseen::default();
        for m in self.meta.get(start..).unwrap_or(&[]) {
            u.merge(m.unseen);
        }
        u
    }

    /// Files command `c` writes (through its arguments or by redirecting its standard
    /// output) hold bytes the analysis cannot see.
    fn record_unseen_outputs(&mut self, c: usize, unseen: Unseen) {
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
    fn redirects(
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

    fn emit(&mut self, cmd: SimpleCommand, meta: Meta) -> usize {
        if let Some(why) = &cmd.effects.privilege {
            let detail = format!("the command gains privilege or drops safeguards ({why})");
            let text = cmd.text.clone();
            self.hazard(HazardKind::PrivilegeEscalation, &text, &detail);
        }
        self.out.commands.push(cmd);
        self.meta.push(meta);
        self.out.commands.len() - 1
    }

    fn hazard(&mut self, kind: HazardKind, text: &str, detail: &str) {
        let h = Hazard {
            kind,
            text: parse::truncate(text.to_owned()),
            detail: detail.to_owned(),
        };
        if !self.out.hazards.contains(&h) {
            self.out.hazards.push(h);
        }
    }

    #[allow(clippy::too_many_lines)]
    fn simple(&mut self, s: &Simple, scope: &mut Scope) -> Option<usize> {
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

        // DNS exfiltration: a lookup whose host carries run-time data.
        let lookup_dynamic = outcome.lookup_hosts.iter().any(|h| !h.literal)
            || outcome
                .urls
                .iter()
                .any(|u| !u.literal && url_host_dynamic(&u.value));
        if lookup_dynamic {
            self.hazard(HazardKind::DnsExfiltration, &s.text, "a network lookup's host name contains a substitution or expansion, which can carry data out through DNS");
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

    /// Paths that go through a link made earlier in the text reach its target too:
    /// `ln -s ~/.bashrc notes.txt && echo x >> notes.txt` writes `~/.bashrc`.
    fn through_links(&self, effects: &mut Effects, redirects: &[Redirect], cwd: &CwdChange) {
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
    fn record_written(
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

    /// Arithmetic text names a variable assigned in this text to something other than
    /// a plain integer.
    fn arith_unsafe(&self, text: &str) -> bool {
        arith_identifiers(text).any(|id| self.vars.get(id) == Some(&false))
    }

    /// Builtins that assign variables: record whether the value is a plain integer.
    fn record_vars(&mut self, program: &Word, args: &[Word]) {
        match program.value.as_str() {
            "read" | "mapfile" | "readarray" | "getopts" | "printf" => {
                for w in args {
                    if is_name(&w.value) {
                        self.vars.insert(w.value.clone(), false);
                    }
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for w in args {
                    if let Some((n, v)) = w.value.split_once('=') {
                        let n = n.trim_end_matches('+');
                        if is_name(n) {
                            self.vars.insert(n.to_owned(), w.literal && is_int(v));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn call_function(&mut self, name: &str, scope: &mut Scope) {
        if !self.active.iter().any(|a| a == name) && self.expansions < MAX_EXPANSIONS {
            // A body is analyzed once per definition, directory and state of the
            // inherited variables (see `expand`).
            let mark = self.env.mark();
            self.env.kill_text();
            let key = (
                name.to_owned(),
                format!(
                    "{}:{:?}:{:?}:{:?}",
                    self.fn_generation.get(name).copied().unwrap_or(0),
                    scope.cwd,
                    self.env.get("HOME"),
                    self.env.get("IFS")
                ),
            );
            self.env.restore(mark);
            if self.expanded.insert(key) {
                self.expand(name, scope);
            }
        }
        // What the body assigns is unknown after the call: it may return early.
        match self.fn_assigns.get(name) {
            Some(Some(names)) => {
                for n in names.clone() {
                    self.env.set(&n, Val::Unknown);
                }
            }
            _ => self.env.kill_all(),
        }
    }

    /// Analyze a function body. It may be called from anywhere, with any values, so
    /// every variable the text assigned is unknown inside; what the body assigns is
    /// recorded for the calls.
    fn expand(&mut self, name: &str, scope: &mut Scope) {
        let Some(body) = self.functions.get(name).cloned() else {
            return;
        };
        self.expansions += 1;
        self.analyzed.insert(name.to_owned());
        self.active.push(name.to_owned());
        let mut sc = scope.child(Context::FunctionBody);
        let mark = self.env.mark();
        self.env.kill_text();
        self.compound(&body, &mut sc);
        let assigned = if self.env.killed_all_since(mark) {
            None
        } else {
            self.env.assigned_since(mark, MAX_FN_ASSIGNS)
        };
        self.env.restore(mark);
        self.fn_assigns.insert(name.to_owned(), assigned);
        self.active.pop();
        // A function runs in the calling shell: its `cd` persists.
        scope.cwd = sc.cwd;
    }

    /// Analyze code a command runs, with the variables it sees.
    fn run_nested(
        &mut self,
        text: &str,
        scope: &Scope,
        context: Context,
        how: Where,
        temp: &[(Assign, Val)],
    ) {
        let mut sc = scope.child(context);
        let mark = self.env.mark();
        match how {
            Where::ThisShell if temp.is_empty() => {
                self.run_text(text, &mut sc);
                return;
            }
            Where::ThisShell => {
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                }
                self.run_text(text, &mut sc);
                // The prefix assignments, and what the code assigned with them in
                // place, are not followed past the command.
                let assigned = self.env.assigned_since(mark, MAX_FN_ASSIGNS);
                self.env.restore(mark);
                match assigned {
                    Some(names) if !self.env.killed_all_since(mark) => {
                        for n in names {
                            self.env.set(&n, Val::Unknown);
                        }
                    }
                    _ => self.env.kill_all(),
                }
                return;
            }
            Where::Sourced => {
                // A sourced script may `return` part way.
                let e = self.env.now();
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                }
                self.run_text(text, &mut sc);
                self.env.kill_since(e);
                return;
            }
            Where::Later => self.env.kill_text(),
            Where::Child => {
                for (a, v) in temp {
                    self.apply_assign(a, v.clone());
                    self.env.export(&a.name, true);
                }
                self.env.enter_child();
            }
        }
        self.run_text(text, &mut sc);
        self.env.restore(mark);
    }

    /// Evaluate an assignment's value: the value as a word (array elements joined),
    /// the variable value, why it is not literal, and the nested analysis facts.
    fn eval_assign(&mut self, a: &Assign, scope: &Scope) -> (Word, Val, Vec<Dynamic>, Nested) {
        let mut nested = Nested::default();
        match &a.value {
            AssignValue::Scalar(raw) => {
                let static_ok = self.echo_is_builtin();
                let (val, e) = {
                    let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
                    x.globs_changed = self.globs_changed;
                    x.static_ok = static_ok;
                    x.assign_value(raw)
                };
                nested.merge(self.nested(&e.substs, scope));
                self.arith_effects(&e.arith);
                let f = e.joined();
                (
                    Word {
                        literal: f.literal(),
                        value: f.value,
                    },
                    val,
                    f.dynamic,
                    nested,
                )
            }
            AssignValue::Array(items) => {
                let mut w = Word::literal("");
                let mut dynamic = Vec::new();
                let mut elems: Option<Vec<(usize, String)>> = Some(Vec::new());
                let mut next = 0usize;
                for (k, (key, raw)) in items.iter().enumerate() {
                    let e = match key {
                        Some(_) => self.expand_word(raw, Mode::Assign),
                        None => self.expand_word(raw, Mode::Command),
                    };
                    nested.merge(self.nested(&e.substs, scope));
                    self.arith_effects(&e.arith);
                    let f = e.joined();
                    if k > 0 {
                        w.value.push(' ');
                    }
                    if let Some(key) = key {
                        w.value.push_str(&format!("[{key}]="));
                    }
                    w.value.push_str(&f.value);
                    w.literal &= f.literal();
                    push_all(&mut dynamic, &f.dynamic);
                    if let Some(list) = &mut elems {
                        let start = match key {
                            None => Some(next),
                            Some(key) => key.trim().parse::<usize>().ok().filter(|i| *i < 1 << 20),
                        };
                        match start {
                            Some(i) if f.literal() => {
                                let values: Vec<String> = if key.is_some() {
                                    vec![f.value]
                                } else {
                                    e.fields.into_iter().map(|f| f.value).collect()
                                };
                                for (j, v) in values.into_iter().enumerate() {
                                    list.retain(|(x, _)| *x != i + j);
                                    list.push((i + j, v));
                                    next = i + j + 1;
                                }
                            }
                            _ => elems = None,
                        }
                    }
                }
                let val = match elems {
                    Some(mut list) => {
                        list.sort_by_key(|(i, _)| *i);
                        Val::Arr(list)
                    }
                    None => Val::Unknown,
                };
                (w, val, dynamic, nested)
            }
        }
    }

    /// Give a variable the value of an assignment.
    fn apply_assign(&mut self, a: &Assign, val: Val) {
        let name = a.name.as_str();
        if name == "GLOBIGNORE" {
            // Setting it also makes globs match names with a leading dot.
            self.globs_changed = true;
        }
        let old = self.env.get(name);
        let new = match (&a.index, a.append) {
            (Some(sub), append) => {
                let Some(k) = sub.trim().parse::<usize>().ok().filter(|k| *k < 1 << 20) else {
                    self.arith_effects(std::slice::from_ref(sub));
                    self.env.set(name, Val::Unknown);
                    return;
                };
                let mut list = match old {
                    Val::Arr(l) => l,
                    Val::Str(s) => vec![(0, s)],
                    Val::Unset => Vec::new(),
                    Val::Unknown => {
                        self.env.set(name, Val::Unknown);
                        return;
                    }
                };
                let Val::Str(v) = val else {
                    self.env.set(name, Val::Unknown);
                    return;
                };
                let prev = list.iter().find(|(i, _)| *i == k).map(|(_, s)| s.clone());
                let v = match (append, prev) {
                    (true, Some(p)) => p + &v,
                    _ => v,
                };
                list.retain(|(i, _)| *i != k);
                list.push((k, v));
                list.sort_by_key(|(i, _)| *i);
                Val::Arr(list)
            }
            (None, true) => match (old, val) {
                (Val::Str(o), Val::Str(n)) => Val::Str(o + &n),
                (Val::Unset, v) => v,
                (Val::Arr(mut l), Val::Arr(n)) => {
                    let next = l.last().map_or(0, |(i, _)| i + 1);
                    l.extend((next..).zip(n.into_iter().map(|(_, v)| v)));
                    Val::Arr(l)
                }
                (Val::Str(o), Val::Arr(n)) => {
                    let mut l = vec![(0, o)];
                    l.extend(n.into_iter().map(|(i, v)| (i + 1, v)));
                    Val::Arr(l)
                }
                (Val::Arr(mut l), Val::Str(n)) => {
                    match l.iter_mut().find(|(i, _)| *i == 0) {
                        Some((_, v)) => v.push_str(&n),
                        None => {
                            l.insert(0, (0, n));
                        }
                    }
                    Val::Arr(l)
                }
                _ => Val::Unknown,
            },
            (None, false) => match (old, val) {
                // A scalar assigned to an array sets its element 0.
                (Val::Arr(mut l), Val::Str(n)) => {
                    l.retain(|(i, _)| *i != 0);
                    l.insert(0, (0, n));
                    Val::Arr(l)
                }
                (_, v) => v,
            },
        };
        self.env.set(name, new);
    }

    /// Builtins that change variables: record what they assign.
    fn builtin_env(
        &mut self,
        name: &str,
        args: &[Word],
        decl: Vec<(Assign, Val)>,
        feed: Option<&Feed>,
        temp: &[(Assign, Val)],
    ) {
        match name {
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                let mut export = (name == "export").then_some(true);
                let mut readonly = name == "readonly";
                let mut odd = false;
                let mut nameref = false;
                let mut functions = false;
                let mut names = Vec::new();
                for w in args {
                    if !w.literal {
                        // `declare "$x=…"`: any name.
                        self.env.kill_all();
                        continue;
                    }
                    let v = w.value.as_str();
                    if let Some(flags) = v.strip_prefix('-').or_else(|| v.strip_prefix('+')) {
                        let on = v.starts_with('-');
                        for f in flags.chars() {
                            match f {
                                'x' => export = Some(on),
                                'r' => readonly |= on,
                                'n' => {
                                    nameref = true;
                                    odd = true;
                                }
                                'f' | 'F' => functions = true,
                                'i' | 'l' | 'u' | 'A' | 'c' | 'I' => odd = true,
                                _ => {}
                            }
                        }
                        continue;
                    }
                    match v.split_once('=') {
                        Some((n, _)) if expand::is_name(n.trim_end_matches('+')) => {}
                        _ if expand::is_name(v) => names.push(v.to_owned()),
                        _ => {}
                    }
                }
                if functions {
                    return;
                }
                let mut touched: Vec<String> = names.clone();
                for (a, val) in decl {
                    if nameref && let Val::Str(target) = &val {
                        let t = target.split('[').next().unwrap_or(target);
                        self.env.taint(t);
                        self.env.set(t, Val::Unknown);
                    } else if nameref {
                        self.env.kill_all();
                    }
                    if odd {
                        self.env.taint(&a.name);
                        self.env.set(&a.name, Val::Unknown);
                    } else {
                        self.apply_assign(&a, val);
                    }
                    touched.push(a.name.clone());
                }
                for n in &names {
                    if odd {
                        self.env.taint(n);
                        self.env.set(n, Val::Unknown);
                    } else if name == "local" {
                        // A local without value starts empty (unset) in the function.
                        self.env.set(n, Val::Unknown);
                    }
                }
                for n in &touched {
                    if let Some(on) = export {
                        self.env.export(n, on);
                    }
                    if readonly {
                        self.env.make_readonly(n);
                    }
                }
            }
            "read" => {
                // `IFS=: read a b`: the prefix assignment is what `read` splits on.
                let ifs = temp
                    .iter()
                    .rev()
                    .find(|(a, _)| a.name == "IFS" && a.index.is_none())
                    .map(|(_, v)| v.clone());
                self.read(args, feed, ifs);
            }
            "mapfile" | "readarray" | "getopts" => {
                let mut any = false;
                for w in args {
                    if !w.literal {
                        self.env.kill_all();
                    } else if expand::is_name(&w.value) {
                        self.env.set(&w.value, Val::Unknown);
                        any = true;
                    }
                }
                if !any {
                    self.env.set("MAPFILE", Val::Unknown);
                }
            }
            "printf" => {
                let Some(k) = args.iter().position(|w| w.value == "-v") else {
                    return;
                };
                let Some(target) = args.get(k + 1) else {
                    return;
                };
                if !target.literal {
                    self.env.kill_all();
                    return;
                }
                let var = target
                    .value
                    .split('[')
                    .next()
                    .unwrap_or(&target.value)
                    .to_owned();
                if !expand::is_name(&var) {
                    return;
                }
                let rest = &args[k + 2..];
                let rest = match rest.first() {
                    Some(w) if w.value == "--" => &rest[1..],
                    _ => rest,
                };
                let value = match rest.split_first() {
                    Some((fmt, vals))
                        if var == target.value && fmt.literal && vals.iter().all(|w| w.literal) =>
                    {
                        let vals: Vec<String> =
                            vals.iter().map(|w| expand::home_marker(&w.value)).collect();
                        expand::printf(&expand::home_marker(&fmt.value), &vals)
                    }
                    _ => None,
                };
                self.env.set(&var, value.map_or(Val::Unknown, Val::Str));
            }
            "unset" => {
                let vars_too = !args.iter().any(|w| w.value == "-f");
                for w in args {
                    if !w.literal {
                        self.env.kill_all();
                        continue;
                    }
                    if w.value.starts_with('-') || !vars_too {
                        continue;
                    }
                    match w.value.split_once('[') {
                        Some((n, _)) if expand::is_name(n) => self.env.set(n, Val::Unknown),
                        None if expand::is_name(&w.value) => self.env.set(&w.value, Val::Unset),
                        _ => {}
                    }
                }
            }
            "let" => {
                let texts: Vec<String> = args.iter().map(|w| w.value.clone()).collect();
                self.arith_effects(&texts);
            }
            "shopt" => {
                for w in args {
                    match w.value.as_str() {
                        _ if !w.literal => {
                            self.globs_changed = true;
                            self.lastpipe = true;
                        }
                        "dotglob" | "extglob" | "nocaseglob" | "globstar" | "nullglob"
                        | "failglob" | "globasciiranges" => self.globs_changed = true,
                        "lastpipe" => self.lastpipe = true,
                        _ => {}
                    }
                }
            }
            "set" if args.iter().any(|w| !w.literal) => self.lastpipe = true,
            "wait" => {
                // `wait -p NAME` stores a process id.
                if let Some(k) = args.iter().position(|w| w.value == "-p") {
                    match args.get(k + 1) {
                        Some(w) if w.literal => self.env.set(&w.value, Val::Unknown),
                        _ => self.env.kill_all(),
                    }
                }
            }
            _ => {}
        }
    }

    /// `read [-r] [-a ARRAY] NAME…` from a here-string or here-document the text fixes.
    fn read(&mut self, args: &[Word], feed: Option<&Feed>, ifs: Option<Val>) {
        let mut raw = false;
        let mut array: Option<String> = None;
        let mut names: Vec<String> = Vec::new();
        let mut supported = true;
        let mut i = 0;
        while i < args.len() {
            let w = &args[i];
            if !w.literal {
                self.env.kill_all();
                return;
            }
            let v = w.value.as_str();
            if names.is_empty() && v.starts_with('-') && v.len() > 1 && v != "--" {
                let flags: Vec<char> = v[1..].chars().collect();
                for (k, f) in flags.iter().enumerate() {
                    let takes = matches!(f, 'a' | 'd' | 'i' | 'n' | 'N' | 'p' | 't' | 'u');
                    match f {
                        'r' => raw = true,
                        's' | 'e' => {}
                        'p' | 't' => {}
                        _ => supported = false,
                    }
                    if takes {
                        let value = if k + 1 < flags.len() {
                            Some(flags[k + 1..].iter().collect::<String>())
                        } else {
                            i += 1;
                            args.get(i).map(|w| w.value.clone())
                        };
                        if *f == 'a' {
                            array = value;
                            supported = true;
                        }
                        break;
                    }
                }
                i += 1;
                continue;
            }
            if v == "--" && names.is_empty() {
                i += 1;
                continue;
            }
            names.push(v.to_owned());
            i += 1;
        }
        if names.is_empty() && array.is_none() {
            names.push("REPLY".into());
        }
        let text = match feed {
            Some(Feed::Text { text, .. }) if text.literal && supported => {
                Some(expand::home_marker(&text.value))
            }
            _ => None,
        };
        let ifs = match ifs.unwrap_or_else(|| self.env.get("IFS")) {
            Val::Str(s) => Some(s),
            Val::Unset => Some(" \t\n".into()),
            _ => None,
        };
        let (Some(text), Some(ifs)) = (text, ifs) else {
            for n in names.iter().chain(array.iter()) {
                if expand::is_name(n) {
                    self.env.set(n, Val::Unknown);
                }
            }
            return;
        };
        let line = read_line(&text, raw);
        if let Some(a) = &array {
            let fields = read_fields(&line, &ifs, usize::MAX);
            self.env
                .set(a, Val::Arr(fields.into_iter().enumerate().collect()));
        }
        let fields = read_fields(&line, &ifs, names.len());
        for (k, n) in names.iter().enumerate() {
            if expand::is_name(n) {
                let v = fields.get(k).cloned().unwrap_or_default();
                self.env.set(n, Val::Str(v));
            }
        }
    }

    /// Functions whose body was never analyzed (never called by name, or only past a
    /// depth or expansion limit) may still run: a dynamic call, a trap. Each such body
    /// is analyzed once here, outside the expansion budget, so nothing in the text goes
    /// unseen; this is bounded by the number of functions defined.
    fn finish(&mut self) {
        let mut names: Vec<String> = self
            .functions
            .keys()
            .filter(|n| !self.analyzed.contains(*n))
            .cloned()
            .collect();
        names.sort();
        for n in names {
            let mut scope = Scope {
                context: Context::FunctionBody,
                cwd: CwdChange::Unchanged,
                depth: 0,
                nest: 0,
            };
            self.expand(&n, &mut scope);
        }
    }
}

/// The text a command prints when the text alone fixes it: `echo` and `printf` of
/// literal words with nothing redirected away from standard output.
fn literal_output(c: &SimpleCommand) -> Option<String> {
    let prog = c.program.as_ref()?;
    if !prog.literal
        || !c.wrappers.is_empty()
        || !c.dynamic.is_empty()
        || c.args.iter().any(|w| !w.literal)
        || c.redirects
            .iter()
            .any(|r| r.fd.is_none_or(|fd| fd == 1) && r.kind.writes_file())
    {
        return None;
    }
    match prog.value.as_str() {
        "echo" => {
            let mut args = c.args.as_slice();
            let mut newline = true;
            while let Some((first, rest)) = args.split_first() {
                match first.value.as_str() {
                    "-n" => newline = false,
                    "-E" => {}
                    // Escapes would change the text: not literal any more.
                    "-e" => return None,
                    _ => break,
                }
                args = rest;
            }
            let mut out = args
                .iter()
                .map(|w| w.value.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if newline {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => match c.args.as_slice() {
            [format] if !format.value.contains(['%', '\\']) => Some(format.value.clone()),
            [format] if !format.value.contains('%') => {
                let v = format.value.replace("\\n", "\n").replace("\\t", "\t");
                (!v.contains('\\')).then_some(v)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Where nested code runs, which decides the variables it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    /// In this shell, now (`eval`, an alias).
    ThisShell,
    /// In this shell, and it may stop part way (`source`).
    Sourced,
    /// In this shell, at some later time (`trap`).
    Later,
    /// In a child process: only exported variables are inherited.
    Child,
}

/// Is this simple command a declaration builtin (`export`, `declare`, …), possibly
/// behind `builtin` or `command`? bash decides it from the words as written.
fn is_declaration(args: &[Arg]) -> bool {
    let mut it = args.iter().filter_map(|a| match a {
        Arg::Word(w) => Some(w.as_str()),
        _ => None,
    });
    loop {
        match it.next() {
            Some("builtin" | "command") => continue,
            Some(w) => return DECLARATIONS.contains(&w),
            None => return false,
        }
    }
}

/// The programs of [`GLOB_PROGRAMS`] a glob in the command name can name, with the
/// glob's directory when it has no wildcard (`/usr/bin/sud?` → `/usr/bin/sudo`).
fn glob_programs(g: &str) -> Vec<String> {
    let (dir, base) = match g.rfind('/') {
        Some(i) => (&g[..=i], &g[i + 1..]),
        None => ("", g),
    };
    let p = Pattern::parse(base);
    let dir = Pattern::parse(dir).literal();
    GLOB_PROGRAMS
        .iter()
        .filter(|n| p.matches_name(n))
        .take(MAX_GLOB_PROGRAMS)
        .map(|n| match &dir {
            Some(d) => format!("{d}{n}"),
            None => (*n).to_owned(),
        })
        .collect()
}

/// The first line `read` takes from `text`; without `-r`, backslashes escape the next
/// character and a backslash-newline continues the line.
fn read_line(text: &str, raw: bool) -> String {
    let mut out = String::new();
    let mut it = text.chars();
    while let Some(c) = it.next() {
        match c {
            '\n' => break,
            '\\' if !raw => match it.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Split a line as `read` does into at most `max` fields, the last taking the rest.
fn read_fields(line: &str, ifs: &str, max: usize) -> Vec<String> {
    let white = |c: char| ifs.contains(c) && c.is_ascii_whitespace();
    let delim = |c: char| ifs.contains(c);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() && white(chars[i]) {
        i += 1;
    }
    let mut out = Vec::new();
    while i < chars.len() {
        if out.len() + 1 == max {
            let mut rest: String = chars[i..].iter().collect();
            while rest.ends_with(white) {
                rest.pop();
            }
            out.push(rest);
            return out;
        }
        let start = i;
        while i < chars.len() && !delim(chars[i]) {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
        // One delimiter: white space around at most one non-white IFS character.
        while i < chars.len() && white(chars[i]) {
            i += 1;
        }
        if i < chars.len() && delim(chars[i]) && !white(chars[i]) {
            i += 1;
            while i < chars.len() && white(chars[i]) {
                i += 1;
            }
        }
    }
    out
}

/// Names an arithmetic expression assigns: before `=`, `+=`, … (not `==`), or next to
/// `++` / `--`.
fn arith_assigned(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_') {
                i += 1;
            }
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = &text[start..i];
        let mut j = i;
        if b.get(j) == Some(&b'[') {
            let mut depth = 0usize;
            while j < b.len() {
                match b[j] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        while b.get(j) == Some(&b' ') {
            j += 1;
        }
        let rest = &b[j.min(b.len())..];
        let before = text[..start].trim_end();
        let assigns = (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'='))
            || rest.starts_with(b"++")
            || rest.starts_with(b"--")
            || before.ends_with("++")
            || before.ends_with("--")
            || [
                &b"+="[..],
                b"-=",
                b"*=",
                b"/=",
                b"%=",
                b"&=",
                b"|=",
                b"^=",
                b"<<=",
                b">>=",
            ]
            .iter()
            .any(|op| rest.starts_with(op));
        if assigns {
            out.push(name);
        }
    }
    out
}

/// What a wrapper does when no program follows it (`env`, `sudo -l`, `watch 'cmd'`).
fn wrapper_only(p: &wrappers::Peeled, name: &str) -> Outcome {
    let mut o = Outcome::read_only();
    match name {
        "env" => o.effects.reads_env = true,
        "ionice" => o.mutate(),
        "timeout" | "nice" | "nohup" | "setsid" | "stdbuf" | "chronic" | "flock" | "time"
        | "chroot" | "unshare" | "nsenter" | "su" | "runuser"
            if p.shell_strings.is_empty() && !p.lookup =>
        {
            if matches!(name, "su" | "runuser" | "chroot" | "unshare" | "nsenter") {
                // An interactive shell as another user or in another root.
                o.exec(name, name, "starts an interactive shell");
            }
        }
        _ => {}
    }
    o
}

fn push_all(into: &mut Vec<Dynamic>, from: &[Dynamic]) {
    for d in from {
        if !into.contains(d) {
            into.push(d.clone());
        }
    }
}

/// Join a `cd` operand onto the accumulated working directory.
fn join_cwd(cur: &CwdChange, dir: &Word) -> CwdChange {
    if !dir.literal {
        return CwdChange::Dynamic;
    }
    let d = dir.value.trim_end_matches('/');
    let d = if d.is_empty() { dir.value.as_str() } else { d };
    match cur {
        CwdChange::Dynamic => CwdChange::Dynamic,
        _ if d.starts_with('/') || d.starts_with('~') => CwdChange::Relative(d.to_owned()),
        CwdChange::Unchanged => CwdChange::Relative(d.to_owned()),
        CwdChange::Relative(base) => CwdChange::Relative(format!("{base}/{d}")),
    }
}

/// `host:port` of bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT` redirections.
fn dev_tcp(path: &str) -> Option<String> {
    let rest = path
        .strip_prefix("/dev/tcp/")
        .or_else(|| path.strip_prefix("/dev/udp/"))?;
    let (host, port) = rest.split_once('/')?;
    Some(format!("{host}:{port}"))
}

fn add_dev_tcp(effects: &mut Effects, net: Vec<(Word, bool)>) {
    for (w, _) in net {
        effects.network.push(NetTarget {
            target: w.value,
            literal: w.literal,
        });
        if effects.class == Class::ReadOnly {
            effects.class = Class::Mutating;
        }
    }
}

/// True when a URL's host part contains run-time data: the first `$` or backtick
/// comes before the end of the host.
fn url_host_dynamic(url: &str) -> bool {
    let Some(pos) = url.find(['$', '`']) else {
        return false;
    };
    let prefix = &url[..pos];
    let after_scheme = prefix.split_once("://").map_or(prefix, |(_, r)| r);
    !after_scheme.contains(['/', '?', '#'])
}

/// Rebuild a command run by `find -exec` or `fd -x` as shell text. The placeholders
/// for matched paths (`{}`, and fd's `{/}`, `{//}`, `{.}`, `{/.}`) become a variable
/// so the analysis marks them as known only at run time; fd appends the path when
/// no placeholder is given.
fn exec_argv_text(label: &str, argv: &[Word]) -> String {
    const MATCH: &str = "\"${MATCHED_PATH}\"";
    const PLACEHOLDERS: [&str; 5] = ["{}", "{/}", "{//}", "{.}", "{/.}"];
    let mut seen = false;
    let mut parts = Vec::with_capacity(argv.len() + 1);
    for w in argv {
        if PLACEHOLDERS.contains(&w.value.as_str()) {
            seen = true;
            parts.push(MATCH.to_owned());
        } else if w.value.contains("{}") {
            // Inside a larger word (`sh -c 'echo {}'`): substitute within the quoting.
            seen = true;
            parts.push(shell_quote(&w.value).replace("{}", "'\"${MATCHED_PATH}\"'"));
        } else {
            parts.push(shell_quote(&w.value));
        }
    }
    if !seen && (label.starts_with("fd") || label == "parallel") {
        parts.push(MATCH.to_owned());
    }
    parts.join(" ")
}

/// Variable names in arithmetic text (letters or `_` outside numbers such as `0x1F`
/// or `16#ff`).
fn arith_identifiers(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_')
                {
                    i += 1;
                }
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                return text.get(start..i);
            }
            i += 1;
        }
        None
    })
}

fn is_int(v: &str) -> bool {
    let v = v.strip_prefix('-').unwrap_or(v);
    !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit())
}

fn is_name(v: &str) -> bool {
    v.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && v.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A path as the same file would be named again: `./x.sh` and `x.sh` are one file.
fn norm_path(p: &str) -> String {
    let mut p = p;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.to_owned()
}

fn prog_name_of(name: Option<&str>) -> &str {
    name.unwrap_or("")
}
