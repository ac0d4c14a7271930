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

use crate::knowledge::{self, Cd, Invocation, Outcome};
use crate::model::{
    Analysis, Class, Context, CwdChange, Dynamic, Effects, Hazard, HazardKind, NetTarget, Redirect,
    RedirectKind, SimpleCommand, Word,
};
use crate::parse::{
    self, Arg, Compound, CompoundKind, Item, Pipeline, RawRedirect, RawTarget, Script, Simple,
};
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
    let mut a = Analyzer::default();
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
    let mut a = Analyzer::default();
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
        }
    }
}

/// Most bytes of scripts written in the text that are analyzed where they are run.
const WRITTEN_SCRIPT_BUDGET: usize = 1 << 20;

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
        for p in &s.pipelines {
            self.pipeline(p, scope);
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
        for stage in &p.stages {
            // Each stage of a pipeline (and a background job) runs in a subshell.
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
            let primary = self.item(stage, &mut sc);
            self.pipe_feed = None;
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
                None
            }
        }
    }

    fn compound(&mut self, c: &Compound, scope: &mut Scope) {
        if let Some(e) = &c.error
            && self.out.parse_error.is_none()
        {
            self.out.parse_error = Some(e.clone());
        }
        let mut nested = Nested::default();
        let mut head_dynamic = Vec::new();
        for w in &c.words {
            let d = word::decode(w);
            nested.merge(self.nested(&d.substs, scope));
            // Inside `[[ ]]` words are not split or globbed; what still runs code is
            // prompt expansion (`${x@P}`) and arithmetic, handled below.
            for x in &d.dynamic {
                if matches!(x, Dynamic::ParameterExpansion(p) if p.contains("@P")) {
                    push_all(&mut head_dynamic, std::slice::from_ref(x));
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
        if let Some(var) = &c.loop_var {
            let safe = c.words.iter().all(|w| {
                let d = word::decode(w);
                d.literal() && is_int(&d.value)
            });
            self.vars.insert(var.clone(), safe);
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
            for b in &c.bodies {
                self.script(b, &mut sc);
            }
        } else {
            scope.nest += 1;
            for b in &c.bodies {
                self.script(b, scope);
            }
            scope.nest -= 1;
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
            self.run_text(&s.body, &mut sc);
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
        self.script(script, &mut sc);
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
                    let d = word::decode(w);
                    let n = self.nested(&d.substs, scope);
                    nested.merge(n);
                    let target = Word {
                        value: d.value.clone(),
                        literal: d.literal(),
                    };
                    if !matches!(
                        r.kind,
                        RedirectKind::DupIn | RedirectKind::DupOut | RedirectKind::Close
                    ) {
                        push_all(&mut dynamic, &d.dynamic);
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
                        let d = word::decode_heredoc(body);
                        let n = self.nested(&d.substs, scope);
                        nested.merge(n);
                        (
                            Word {
                                value: body.clone(),
                                literal: d.literal(),
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
        let mut dynamic: Vec<Dynamic> = Vec::new();
        let mut nested = Nested::default();
        // Taken first, so that no substitution of this command sees it.
        let piped = self.pipe_feed.take();

        // Assignments before the command.
        let mut assignments = Vec::with_capacity(s.assignments.len());
        let mut influences = Vec::new();
        for (name, values) in &s.assignments {
            let mut w = Word::literal("");
            for (i, raw) in values.iter().enumerate() {
                let d = word::decode(raw);
                nested.merge(self.nested(&d.substs, scope));
                if i > 0 {
                    w.value.push(' ');
                }
                w.value.push_str(&d.value);
                w.literal &= d.literal();
                if knowledge::influential(name) {
                    push_all(&mut dynamic, &d.dynamic);
                }
            }
            if knowledge::influential(name) {
                influences.push(name.clone());
            }
            assignments.push((name.clone(), w));
        }

        // Words: the command name and its arguments.
        let mut words = Vec::with_capacity(s.args.len());
        let mut decoded: Vec<Vec<Dynamic>> = Vec::with_capacity(s.args.len());
        let mut fetched = Vec::with_capacity(s.args.len());
        for a in &s.args {
            match a {
                Arg::Word(raw) => {
                    let d = word::decode(raw);
                    let n = self.nested(&d.substs, scope);
                    nested.merge(n);
                    fetched.push(n.unseen);
                    words.push(Word {
                        value: d.value,
                        literal: d.dynamic.is_empty(),
                    });
                    decoded.push(d.dynamic);
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
        if s.assignments.iter().any(|(n, _)| {
            n.split_once('[')
                .is_some_and(|(_, sub)| self.arith_unsafe(sub))
        }) {
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
                            Arg::Word(raw) => text.push_str(raw),
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
        let mut to_run: Vec<String> = Vec::new();
        for (label, code) in &strings {
            if code.literal {
                to_run.push(code.value.clone());
            } else {
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

        // Nested code run by this command.
        if scope.depth < MAX_DEPTH {
            for code in to_run {
                let mut sc = scope.child(Context::ShellString);
                self.run_text(&code, &mut sc);
            }
            if let Some(body) = heredoc_code {
                let mut sc = scope.child(Context::Heredoc);
                self.run_text(&body, &mut sc);
            }
            if let Some(script) = written_script {
                // The script's text is known: analyze it as what the command runs.
                let mut sc = scope.child(Context::ShellString);
                self.run_text(&script, &mut sc);
            }
            if let Some(text) = alias_text {
                let mut sc = scope.child(Context::Alias);
                self.run_text(&text, &mut sc);
            }
            for (label, argv) in &exec_argv {
                if argv.is_empty() {
                    continue;
                }
                let text = exec_argv_text(label, argv);
                let mut sc = scope.child(Context::ExecArgument);
                self.run_text(&text, &mut sc);
            }
            if function_call && let Some(n) = &name {
                self.call_function(n, scope);
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
        if self.active.iter().any(|a| a == name) || self.expansions >= MAX_EXPANSIONS {
            return;
        }
        let key = (name.to_owned(), format!("{:?}", scope.cwd));
        if !self.expanded.insert(key) {
            return;
        }
        self.expand(name, scope);
    }

    fn expand(&mut self, name: &str, scope: &mut Scope) {
        let Some(body) = self.functions.get(name).cloned() else {
            return;
        };
        self.expansions += 1;
        self.analyzed.insert(name.to_owned());
        self.active.push(name.to_owned());
        let mut sc = scope.child(Context::FunctionBody);
        self.compound(&body, &mut sc);
        self.active.pop();
        // A function runs in the calling shell: its `cd` persists.
        scope.cwd = sc.cwd;
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
