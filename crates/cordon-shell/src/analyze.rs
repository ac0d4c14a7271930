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

use crate::env::Env;
use crate::knowledge::Outcome;
use crate::model::{
    Analysis, Class, Context, CwdChange, Dynamic, Effects, Hazard, HazardKind, NetTarget,
    SimpleCommand, Word,
};
use crate::parse::{self, Arg, Compound};
use crate::pattern::Pattern;
use crate::wrappers::{self, shell_quote};

mod code;
mod flow;
mod host;
mod nested;
mod simple;
mod state;
mod unpack;
mod vars;
mod walk;

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
        let script = match parse::parse_one(piece, NESTING_BUDGET, &mut a.parse_allowance) {
            Ok(script) => script,
            // Past the grammar's deadline: the whole text holds the same piece.
            Err(e) if parse::gave_up(&e) => {
                a.out.parse_error = Some(e);
                a.finish();
                return Some(a.out);
            }
            Err(_) => return None,
        };
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
    /// The parser's readings every parse of this analysis may still spend, the text's
    /// own and every nested text's (substitutions, `bash -c` strings, function bodies
    /// run again): one allowance, so repeating a costly text gains it no time.
    parse_allowance: u64,
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
            parse_allowance: 0,
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
            parse_allowance: parse::nesting::BUDGET,
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

impl Feed {
    /// Text piped in from the command before (whose bytes the analysis sees).
    fn piped(text: Word) -> Feed {
        Feed::Text {
            text,
            unseen: Unseen::default(),
        }
    }

    /// What of the fed bytes the analysis cannot see (a file's: nothing known here).
    fn unseen(&self) -> Unseen {
        match self {
            Feed::Text { unseen, .. } | Feed::Process { unseen } => *unseen,
            Feed::File(_) => Unseen::default(),
        }
    }
}

impl Analyzer {
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
