//! The one module that knows `brush-parser`: it parses bash text and converts the
//! parser's syntax tree into cordon's own small tree, so a parser upgrade touches
//! this file alone.
//!
//! Owns: calling the parser safely. The parser recurses on nesting and overflows the
//! stack on deeply nested input, so nesting is measured first and text nested deeper
//! than [`MAX_NESTING`] is refused before the parser sees it. Words are kept raw here;
//! `word.rs` decodes them.

use brush_parser::ast;

use crate::model::RedirectKind;

/// Deepest nesting of parentheses, braces, quotes-with-substitutions and compound
/// keywords handed to the parser. Measured: the parser's debug build overflows a
/// 2 MiB stack at about 150 nested `{ … }` groups.
pub(crate) const MAX_NESTING: usize = 64;

/// Longest command text kept in findings.
const MAX_TEXT: usize = 512;

/// The text being converted, with what makes parser positions cheap to map.
struct Src<'a> {
    text: &'a str,
    /// Parser positions count characters; for ASCII text they are byte offsets.
    ascii: bool,
}

/// A parsed piece of shell text.
#[derive(Debug, Clone, Default)]
pub(crate) struct Script {
    pub pipelines: Vec<Pipeline>,
}

/// Commands joined by `|` (a single command is a pipeline of one).
#[derive(Debug, Clone)]
pub(crate) struct Pipeline {
    pub stages: Vec<Item>,
    /// Run in the background (`&`): a `cd` in it does not affect later commands.
    pub background: bool,
    /// For a pipeline after `&&` or `||` in an and-or list, which: it runs only
    /// depending on how the previous one ended.
    pub after: Option<AndOr>,
}

/// The operator before a pipeline of an and-or list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AndOr {
    And,
    Or,
}

/// A variable assignment as written.
#[derive(Debug, Clone)]
pub(crate) struct Assign {
    pub name: String,
    /// The subscript of `name[SUB]=…`.
    pub index: Option<String>,
    pub value: AssignValue,
    /// `+=`.
    pub append: bool,
}

/// The raw value of an assignment.
#[derive(Debug, Clone)]
pub(crate) enum AssignValue {
    Scalar(String),
    /// `(a b [k]=v)`: optional subscript and raw value of each element.
    Array(Vec<(Option<String>, String)>),
}

impl Assign {
    /// The name as written, with its subscript (`a[1]`).
    pub(crate) fn target(&self) -> String {
        match &self.index {
            Some(i) => format!("{}[{i}]", self.name),
            None => self.name.clone(),
        }
    }
}

/// One command of a pipeline.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    Simple(Simple),
    Compound(Compound),
    Function(Function),
}

/// A simple command with raw words.
#[derive(Debug, Clone)]
pub(crate) struct Simple {
    pub text: String,
    /// Prefix assignments.
    pub assignments: Vec<Assign>,
    /// The command name followed by its arguments.
    pub args: Vec<Arg>,
    pub redirects: Vec<RawRedirect>,
}

/// A command argument.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Word(String),
    /// A word that has the form of an assignment (`export P=x`, `declare -a a=(…)`):
    /// declaration builtins treat it as one.
    Assign(String, Assign),
    /// `<(…)` or `>(…)` standing as an argument.
    Process(Script),
}

/// Kinds of compound command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompoundKind {
    Subshell,
    Group,
    /// `(( … ))` and `for (( … ))`: bash evaluates the text arithmetically.
    Arithmetic,
    /// `[[ … ]]`.
    Test,
    Other,
}

/// A compound command: its bodies, the words bash evaluates in its head (a `for`
/// list, a `case` subject and patterns, `[[ ]]` operands), arithmetic text, and
/// redirections applying to the whole.
#[derive(Debug, Clone)]
pub(crate) struct Compound {
    pub kind: CompoundKind,
    pub words: Vec<String>,
    pub arith: Vec<String>,
    pub bodies: Vec<Script>,
    pub redirects: Vec<RawRedirect>,
    /// Text for findings; only filled when there are redirections to report.
    pub text: String,
    /// A part of the compound that failed to parse.
    pub error: Option<String>,
    /// The variable a `for` loop assigns from `words`.
    pub loop_var: Option<String>,
    /// A `for` loop without `in`: it iterates over the positional parameters.
    pub positional: bool,
    /// How often the bodies run.
    pub flow: Flow,
}

/// How the bodies of a compound command run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Each body once, in order.
    Straight,
    /// The bodies (a condition and a body) repeat any number of times.
    Loop,
    /// The first body runs (an `if` condition); each later one may or may not.
    If,
    /// Each body may or may not run (`case` arms).
    Case,
}

/// A function definition.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub name: String,
    pub body: Compound,
}

/// A redirection with a raw target.
#[derive(Debug, Clone)]
pub(crate) struct RawRedirect {
    pub fd: Option<u32>,
    pub kind: RedirectKind,
    pub target: RawTarget,
}

/// The target of a redirection.
#[derive(Debug, Clone)]
pub(crate) enum RawTarget {
    Word(String),
    Process(Script),
    HereDoc { body: String, expand: bool },
}

/// Text longer than this is parsed in pieces split at top-level newlines.
pub(crate) const CHUNK: usize = 8 * 1024;

/// Parse bash text whose nesting may not exceed `limit` (at most [`MAX_NESTING`]).
/// Errors are one sentence.
///
/// Long text is parsed in pieces cut at newlines that end a complete top-level
/// command: the parser's time grows faster than linearly with input size, pieces keep
/// it linear and the peak memory small. A cut in the wrong place leaves a piece with
/// an unterminated construct, which fails to parse; the whole text is then parsed in
/// one go, so cutting never changes the result.
pub(crate) fn parse(text: &str, limit: usize) -> Result<Script, String> {
    if text.len() > CHUNK {
        let cuts = split_points(text, CHUNK);
        if !cuts.is_empty() {
            let mut script = Script::default();
            let mut start = 0;
            let mut ok = true;
            for end in cuts.into_iter().chain(std::iter::once(text.len())) {
                let piece = text.get(start..end).unwrap_or("");
                start = end;
                match parse_one(piece, limit) {
                    Ok(s) => script.pipelines.extend(s.pipelines),
                    Err(_) => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok(script);
            }
        }
    }
    parse_one(text, limit)
}

pub(crate) fn parse_one(text: &str, limit: usize) -> Result<Script, String> {
    let limit = limit.min(MAX_NESTING);
    if let Some(depth) = exceeds_nesting(text, limit) {
        return Err(format!(
            "the text is nested more than {limit} levels deep (at least {depth}) and was not parsed"
        ));
    }
    if odd_heredoc(text) {
        return Err(
            "a here-document has no plain-word delimiter or no line that ends it; the text was not parsed".to_owned(),
        );
    }
    let program = match run_parser(text) {
        Ok(Ok(program)) => program,
        Ok(Err(e)) => return Err(format!("the text does not parse as bash: {e}")),
        Err(()) => return Err("the bash parser failed on this text".to_owned()),
    };
    let src = Src {
        text,
        ascii: text.is_ascii(),
    };
    let mut script = Script::default();
    for list in &program.complete_commands {
        convert_list(&src, list, &mut script);
    }
    Ok(script)
}

/// Is a here-document malformed in a way brush-parser 0.4.0 cannot survive? Its
/// delimiter is not a plain word (it starts, after blanks and an opening quote or
/// backslash, with a substitution, an operator, or nothing), or no later line closes
/// it. On such text the parser can loop, allocating without bound (24 GB seen for
/// `<<$(  `, for `<< >(`, and for a here-document left open inside an unclosed `$(`),
/// so it is refused before the parser sees it. Real here-documents have a word for a
/// delimiter (`EOF`, `'EOF'`, `\EOF`) and a line that ends them. The price: an
/// arithmetic shift by a substitution (`$((1<<$n))`) is refused too, and bash's
/// leniency (a here-document ended by the end of the text) is not copied.
fn odd_heredoc(text: &str) -> bool {
    let b = text.as_bytes();
    let arithmetic = arithmetic_spans(b);
    // Where each line starts, by its text (as is, and without leading tabs for `<<-`):
    // every here-document looks up its terminator here, so the check stays linear.
    let mut lines: std::collections::HashMap<&[u8], Vec<usize>> = Default::default();
    let mut stripped: std::collections::HashMap<&[u8], Vec<usize>> = Default::default();
    let mut at_line = 0;
    for line in b.split(|c| *c == b'\n') {
        lines.entry(line).or_default().push(at_line);
        let tabs = line.iter().take_while(|c| **c == b'\t').count();
        stripped.entry(&line[tabs..]).or_default().push(at_line);
        at_line += line.len() + 1;
    }
    let mut i = 0;
    while let Some(off) = b
        .get(i..)
        .and_then(|rest| rest.windows(2).position(|w| w == b"<<"))
    {
        let at = i + off;
        let mut j = at + 2;
        i = j;
        let k = arithmetic.partition_point(|(_, e)| *e < at);
        if arithmetic.get(k).is_some_and(|(s, _)| *s <= at) {
            // A shift inside a closed `(( … ))`.
            continue;
        }
        if b.get(j) == Some(&b'<') {
            // `<<<`: a here-string.
            i = j + 1;
            continue;
        }
        let strip_tabs = b.get(j) == Some(&b'-');
        if strip_tabs {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let start = j;
        if matches!(b.get(j), Some(b'"' | b'\'' | b'\\')) {
            j += 1;
        }
        match b.get(j) {
            None => return true,
            Some(c) if c.is_ascii_whitespace() || b"$()<>|&;`".contains(c) => return true,
            Some(_) => {}
        }
        // The delimiter word, without its quotes and backslashes.
        let end = b[start..]
            .iter()
            .position(|c| c.is_ascii_whitespace() || b";|&<>()".contains(c))
            .map_or(b.len(), |n| start + n);
        let word: Vec<u8> = b[start..end]
            .iter()
            .copied()
            .filter(|c| !matches!(c, b'"' | b'\'' | b'\\'))
            .collect();
        // A line after the operator's own line that is exactly the delimiter.
        let index = if strip_tabs { &stripped } else { &lines };
        let closed = index
            .get(word.as_slice())
            .is_some_and(|starts| starts.last().is_some_and(|s| *s > end));
        if !closed {
            return true;
        }
    }
    false
}

/// Byte ranges of `(( … ))` groups that close (arithmetic, where `<<` is a shift).
fn arithmetic_spans(b: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while let Some(off) = b
        .get(i..)
        .and_then(|rest| rest.windows(2).position(|w| w == b"(("))
    {
        let start = i + off;
        let mut depth = 0usize;
        let mut end = None;
        for (k, c) in b.iter().enumerate().skip(start) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(e) => {
                spans.push((start, e));
                i = e + 1;
            }
            None => break,
        }
    }
    spans
}

/// Run brush-parser. It panics on some malformed input (0.4.0: an `unwrap` in its
/// tokenizer when a here-document inside `$(…)` ends the text), so a panic is caught
/// and reported as a failure to parse: the text is then never allowed.
fn run_parser(text: &str) -> Result<Result<ast::Program, brush_parser::ParseError>, ()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let options = brush_parser::ParserOptions::default();
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &options);
        parser.parse_program()
    }))
    .map_err(|_| ())
}

/// Raw brush-parser parse time, for the benchmark's comparison column.
#[doc(hidden)]
pub fn raw_parse(text: &str) -> bool {
    !odd_heredoc(text) && matches!(run_parser(text), Ok(Ok(_)))
}

fn convert_list(src: &Src<'_>, list: &ast::CompoundList, out: &mut Script) {
    for ast::CompoundListItem(and_or, sep) in &list.0 {
        let background = matches!(sep, ast::SeparatorOperator::Async);
        let mut push = |p: &ast::Pipeline, after: Option<AndOr>| {
            out.pipelines.push(Pipeline {
                stages: p.seq.iter().map(|c| convert_command(src, c)).collect(),
                background,
                after,
            });
        };
        push(&and_or.first, None);
        for next in &and_or.additional {
            match next {
                ast::AndOr::And(p) => push(p, Some(AndOr::And)),
                ast::AndOr::Or(p) => push(p, Some(AndOr::Or)),
            }
        }
    }
}

fn script_of(src: &Src<'_>, list: &ast::CompoundList) -> Script {
    let mut s = Script::default();
    convert_list(src, list, &mut s);
    s
}

fn convert_command(src: &Src<'_>, cmd: &ast::Command) -> Item {
    match cmd {
        ast::Command::Simple(s) => Item::Simple(convert_simple(src, s)),
        ast::Command::Compound(c, redirects) => {
            Item::Compound(convert_compound(src, c, redirects.as_ref()))
        }
        ast::Command::Function(f) => Item::Function(Function {
            name: f.fname.value.clone(),
            body: convert_compound(src, &f.body.0, f.body.1.as_ref()),
        }),
        ast::Command::ExtendedTest(t, redirects) => {
            let mut words = Vec::new();
            let mut arith = Vec::new();
            test_words(&t.expr, &mut words, &mut arith);
            Item::Compound(Compound {
                kind: CompoundKind::Test,
                words,
                arith,
                bodies: Vec::new(),
                redirects: convert_redirect_list(src, redirects.as_ref()),
                text: truncate(format!("[[ {} ]]", t.expr)),
                error: None,
                loop_var: None,
                positional: false,
                flow: Flow::Straight,
            })
        }
    }
}

/// Operand words of `[[ … ]]`; operands of arithmetic comparisons (`-eq`, `-lt`, …)
/// are also evaluated arithmetically by bash and go to `arith`.
fn test_words(e: &ast::ExtendedTestExpr, out: &mut Vec<String>, arith: &mut Vec<String>) {
    use ast::BinaryPredicate as B;
    match e {
        ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
            test_words(a, out, arith);
            test_words(b, out, arith);
        }
        ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
            test_words(a, out, arith);
        }
        ast::ExtendedTestExpr::UnaryTest(_, w) => out.push(w.value.clone()),
        ast::ExtendedTestExpr::BinaryTest(p, a, b) => {
            out.push(a.value.clone());
            out.push(b.value.clone());
            if matches!(
                p,
                B::ArithmeticEqualTo
                    | B::ArithmeticNotEqualTo
                    | B::ArithmeticLessThan
                    | B::ArithmeticLessThanOrEqualTo
                    | B::ArithmeticGreaterThan
                    | B::ArithmeticGreaterThanOrEqualTo
            ) {
                arith.push(a.value.clone());
                arith.push(b.value.clone());
            }
        }
    }
}

fn text_if(cond: bool, f: impl FnOnce() -> String) -> String {
    if cond { truncate(f()) } else { String::new() }
}

fn convert_compound(
    src: &Src<'_>,
    c: &ast::CompoundCommand,
    redirects: Option<&ast::RedirectList>,
) -> Compound {
    let mut out = Compound {
        kind: CompoundKind::Other,
        words: Vec::new(),
        arith: Vec::new(),
        bodies: Vec::new(),
        redirects: convert_redirect_list(src, redirects),
        text: text_if(
            redirects.is_some()
                || matches!(
                    c,
                    ast::CompoundCommand::Arithmetic(_)
                        | ast::CompoundCommand::ArithmeticForClause(_)
                ),
            || c.to_string(),
        ),
        error: None,
        loop_var: None,
        positional: false,
        flow: Flow::Straight,
    };
    match c {
        ast::CompoundCommand::Arithmetic(a) => match misparsed_subshells(src, &a.loc) {
            // brush-parser reads `( ( cmd ) )` as the arithmetic command `(( cmd ))`;
            // bash runs it as nested subshells. Re-read the inside as commands.
            Some(inner) => {
                out.kind = CompoundKind::Subshell;
                match parse(inner, MAX_NESTING) {
                    Ok(script) => out.bodies.push(script),
                    Err(e) => out.error = Some(e),
                }
            }
            None => {
                out.kind = CompoundKind::Arithmetic;
                out.arith.push(a.expr.value.clone());
            }
        },
        ast::CompoundCommand::ArithmeticForClause(f) => {
            out.kind = CompoundKind::Arithmetic;
            for e in [&f.initializer, &f.condition, &f.updater]
                .into_iter()
                .flatten()
            {
                out.arith.push(e.value.clone());
            }
            out.flow = Flow::Loop;
            out.bodies.push(script_of(src, &f.body.list));
        }
        ast::CompoundCommand::BraceGroup(g) => {
            out.kind = CompoundKind::Group;
            out.bodies.push(script_of(src, &g.list));
        }
        ast::CompoundCommand::Subshell(s) => {
            out.kind = CompoundKind::Subshell;
            out.bodies.push(script_of(src, &s.list));
        }
        ast::CompoundCommand::ForClause(f) => {
            out.loop_var = Some(f.variable_name.clone());
            out.flow = Flow::Loop;
            match &f.values {
                Some(values) => out.words.extend(values.iter().map(|w| w.value.clone())),
                None => out.positional = true,
            }
            out.bodies.push(script_of(src, &f.body.list));
        }
        ast::CompoundCommand::CaseClause(c) => {
            out.flow = Flow::Case;
            out.words.push(c.value.value.clone());
            for item in &c.cases {
                out.words
                    .extend(item.patterns.iter().map(|w| w.value.clone()));
                if let Some(cmd) = &item.cmd {
                    out.bodies.push(script_of(src, cmd));
                }
            }
        }
        ast::CompoundCommand::IfClause(i) => {
            out.flow = Flow::If;
            out.bodies.push(script_of(src, &i.condition));
            out.bodies.push(script_of(src, &i.then));
            for e in i.elses.iter().flatten() {
                if let Some(cond) = &e.condition {
                    out.bodies.push(script_of(src, cond));
                }
                out.bodies.push(script_of(src, &e.body));
            }
        }
        ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
            out.flow = Flow::Loop;
            out.bodies.push(script_of(src, &w.0));
            out.bodies.push(script_of(src, &w.1.list));
        }
        ast::CompoundCommand::Coprocess(c) => {
            out.bodies.push(Script {
                pipelines: vec![Pipeline {
                    stages: vec![convert_command(src, &c.body)],
                    background: true,
                    after: None,
                }],
            });
        }
    }
    out
}

fn convert_simple(src: &Src<'_>, s: &ast::SimpleCommand) -> Simple {
    let mut out = Simple {
        text: command_text(src, s),
        assignments: Vec::new(),
        args: Vec::new(),
        redirects: Vec::new(),
    };
    if let Some(prefix) = &s.prefix {
        for item in &prefix.0 {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    out.assignments.push(convert_assignment(a));
                }
                other => convert_item(src, other, &mut out),
            }
        }
    }
    if let Some(name) = &s.word_or_name {
        out.args.push(Arg::Word(name.value.clone()));
    }
    if let Some(suffix) = &s.suffix {
        for item in &suffix.0 {
            convert_item(src, item, &mut out);
        }
    }
    out
}

fn convert_assignment(a: &ast::Assignment) -> Assign {
    let (name, index) = match &a.name {
        ast::AssignmentName::VariableName(n) => (n.clone(), None),
        ast::AssignmentName::ArrayElementName(n, i) => (n.clone(), Some(i.clone())),
    };
    let value = match &a.value {
        ast::AssignmentValue::Scalar(w) => AssignValue::Scalar(w.value.clone()),
        ast::AssignmentValue::Array(items) => AssignValue::Array(
            items
                .iter()
                .map(|(k, v)| (k.as_ref().map(|k| k.value.clone()), v.value.clone()))
                .collect(),
        ),
    };
    Assign {
        name,
        index,
        value,
        append: a.append,
    }
}

fn convert_item(src: &Src<'_>, item: &ast::CommandPrefixOrSuffixItem, out: &mut Simple) {
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
            out.redirects.push(convert_redirect(src, r))
        }
        ast::CommandPrefixOrSuffixItem::Word(w) => out.args.push(Arg::Word(w.value.clone())),
        // `export X=1`, `declare x=$(…)`: an argument word of the command.
        ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
            out.args
                .push(Arg::Assign(w.value.clone(), convert_assignment(a)));
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
            out.args.push(Arg::Process(script_of(src, &sub.list)));
        }
    }
}

fn convert_redirect_list(src: &Src<'_>, list: Option<&ast::RedirectList>) -> Vec<RawRedirect> {
    list.map(|l| l.0.iter().map(|r| convert_redirect(src, r)).collect())
        .unwrap_or_default()
}

fn convert_redirect(src: &Src<'_>, r: &ast::IoRedirect) -> RawRedirect {
    match r {
        ast::IoRedirect::File(fd, kind, target) => {
            let mut kind = match kind {
                ast::IoFileRedirectKind::Read => RedirectKind::Read,
                ast::IoFileRedirectKind::Write => RedirectKind::Write,
                ast::IoFileRedirectKind::Append => RedirectKind::Append,
                ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                ast::IoFileRedirectKind::Clobber => RedirectKind::Clobber,
                ast::IoFileRedirectKind::DuplicateInput => RedirectKind::DupIn,
                ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::DupOut,
            };
            let target = match target {
                ast::IoFileRedirectTarget::Filename(w) => RawTarget::Word(w.value.clone()),
                ast::IoFileRedirectTarget::Fd(n) => RawTarget::Word(n.to_string()),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    RawTarget::Process(script_of(src, &sub.list))
                }
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    let v = w.value.trim_end_matches('-');
                    if w.value == "-" {
                        kind = RedirectKind::Close;
                    } else if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) {
                        // `>&N` / `>&N-` (move): a descriptor.
                    } else if kind == RedirectKind::DupOut && fd.is_none() {
                        // `>&FILE` is bash's old spelling of `&>FILE`.
                        kind = RedirectKind::WriteBoth;
                    }
                    RawTarget::Word(w.value.clone())
                }
            };
            RawRedirect {
                fd: fd.and_then(|n| u32::try_from(n).ok()),
                kind,
                target,
            }
        }
        ast::IoRedirect::HereDocument(fd, doc) => {
            let body = if doc.remove_tabs {
                doc.doc
                    .value
                    .split_inclusive('\n')
                    .map(|l| l.trim_start_matches('\t'))
                    .collect()
            } else {
                doc.doc.value.clone()
            };
            RawRedirect {
                fd: fd.and_then(|n| u32::try_from(n).ok()),
                kind: RedirectKind::HereDoc,
                target: RawTarget::HereDoc {
                    body,
                    expand: doc.requires_expansion,
                },
            }
        }
        ast::IoRedirect::HereString(fd, w) => RawRedirect {
            fd: fd.and_then(|n| u32::try_from(n).ok()),
            kind: RedirectKind::HereString,
            target: RawTarget::Word(w.value.clone()),
        },
        ast::IoRedirect::OutputAndError(w, append) => RawRedirect {
            fd: None,
            kind: if *append {
                RedirectKind::AppendBoth
            } else {
                RedirectKind::WriteBoth
            },
            target: RawTarget::Word(w.value.clone()),
        },
    }
}

/// When an arithmetic command's source does not start with two adjacent `(`, it was
/// written as nested subshells `( ( … ) )`: returns the text inside the outer pair.
fn misparsed_subshells<'a>(src: &Src<'a>, loc: &brush_parser::SourceSpan) -> Option<&'a str> {
    let start = byte_index(src, loc.start.index)?;
    let end = byte_index(src, loc.end.index).unwrap_or(src.text.len());
    let text = src.text.get(start..end)?;
    // bash reads `((` … `))` as arithmetic only when both pairs are adjacent.
    if text.starts_with("((") && text.trim_end().ends_with("))") {
        return None;
    }
    let inner = text.strip_prefix('(')?;
    let close = inner.rfind(')')?;
    inner.get(..close)
}

/// The parser counts positions in characters; convert one to a byte offset.
fn byte_index(src: &Src<'_>, chars: usize) -> Option<usize> {
    if src.ascii {
        return (chars <= src.text.len()).then_some(chars);
    }
    src.text
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(src.text.len()))
        .nth(chars)
}

/// The source text of a simple command as written, when positions are cheap to map
/// (ASCII text); otherwise the parser's rendering of it.
fn command_text(src: &Src<'_>, s: &ast::SimpleCommand) -> String {
    use brush_parser::ast::SourceLocation;
    let written = src
        .ascii
        .then(|| s.location())
        .flatten()
        .and_then(|loc| src.text.get(loc.start.index..loc.end.index));
    match written {
        Some(t) if !t.is_empty() => truncate(t.to_owned()),
        _ => truncate(s.to_string()),
    }
}

/// Shorten text for findings, on a character boundary.
pub(crate) fn truncate(mut s: String) -> String {
    if s.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// Byte offsets just after newlines that end a complete top-level command, at least
/// `every` bytes apart. Tracks quotes, escapes, brackets, compound keywords and
/// here-document bodies; anything it misjudges makes a piece fail to parse, which
/// [`parse`] answers by parsing the whole text.
pub(crate) fn split_points(text: &str, every: usize) -> Vec<usize> {
    let b = text.as_bytes();
    let mut cuts = Vec::new();
    let mut last = 0;
    let mut depth: isize = 0;
    let mut case_depth: isize = 0;
    let mut in_dq = false;
    let mut heredocs: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut i = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        if in_dq {
            match c {
                b'\\' => i += 1,
                b'"' => in_dq = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'\\' => i += 1,
            b'\'' => {
                i = b
                    .get(i + 1..)
                    .and_then(|r| r.iter().position(|&x| x == b'\''))
                    .map_or(b.len(), |p| i + 1 + p);
            }
            b'"' => in_dq = true,
            b'`' => {
                i = b
                    .get(i + 1..)
                    .and_then(|r| r.iter().position(|&x| x == b'`'))
                    .map_or(b.len(), |p| i + 1 + p);
            }
            // Inside `case`, pattern parentheses need not balance.
            b'(' | b')' if case_depth > 0 => {}
            b'(' | b'{' => depth += 1,
            b')' | b'}' => depth -= 1,
            b'#' if at_word_start => {
                i = b
                    .get(i..)
                    .and_then(|r| r.iter().position(|&x| x == b'\n'))
                    .map_or(b.len(), |p| i + p)
                    .saturating_sub(1);
            }
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                let mut j = i + 2;
                let strip = b.get(j) == Some(&b'-');
                if strip {
                    j += 1;
                }
                while b.get(j).is_some_and(|x| *x == b' ' || *x == b'\t') {
                    j += 1;
                }
                let mut delim = Vec::new();
                while let Some(&x) = b.get(j) {
                    if matches!(
                        x,
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
                    ) {
                        break;
                    }
                    if !matches!(x, b'\'' | b'"' | b'\\') {
                        delim.push(x);
                    }
                    j += 1;
                }
                heredocs.push((delim, strip));
                i = j;
                continue;
            }
            b'\n' => {
                // Skip the bodies of here-documents started on this line.
                let mut j = i + 1;
                for (delim, strip) in heredocs.drain(..) {
                    loop {
                        let end = b
                            .get(j..)
                            .and_then(|r| r.iter().position(|&x| x == b'\n'))
                            .map_or(b.len(), |p| j + p);
                        let line = b.get(j..end).unwrap_or(&[]);
                        let line = if strip {
                            let k = line.iter().position(|&x| x != b'\t').unwrap_or(line.len());
                            &line[k..]
                        } else {
                            line
                        };
                        j = (end + 1).min(b.len());
                        if line == delim.as_slice() || end >= b.len() {
                            break;
                        }
                    }
                }
                i = j;
                if depth == 0
                    && i - last >= every
                    && i < b.len()
                    && !ends_with_continuation(&b[last..i])
                {
                    cuts.push(i);
                    last = i;
                }
                word_start = true;
                continue;
            }
            _ if at_word_start && c.is_ascii_lowercase() => {
                let end = b[i..]
                    .iter()
                    .position(|x| !x.is_ascii_lowercase())
                    .map_or(b.len(), |p| i + p);
                let next_ok = b
                    .get(end)
                    .is_none_or(|x| matches!(x, b' ' | b'\t' | b'\n' | b';' | b')' | b'&' | b'|'));
                if next_ok {
                    match &b[i..end] {
                        b"if" | b"for" | b"while" | b"until" | b"select" => depth += 1,
                        b"fi" | b"done" => depth -= 1,
                        b"case" => case_depth += 1,
                        b"esac" => case_depth -= 1,
                        _ => {}
                    }
                }
                i = end;
                word_start = false;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    cuts
}

/// A line ending in `|`, `&&` or `||` continues on the next line.
fn ends_with_continuation(piece: &[u8]) -> bool {
    let trimmed = piece
        .iter()
        .rposition(|x| !x.is_ascii_whitespace())
        .map_or(&piece[..0], |p| &piece[..=p]);
    trimmed.ends_with(b"|") || trimmed.ends_with(b"&&")
}

/// Returns `Some(depth)` when the text nests deeper than `limit`.
///
/// Over-approximates what the parser will recurse on: every `(`, `{`, `$(`, `${`,
/// backtick and double quote opened inside a substitution, and every `if`, `case`,
/// `for`, `while`, `until`, `select` keyword counts one level until its closer.
/// Over-counting only refuses very odd text; under-counting could crash, so closers
/// pop only the kind they close.
fn exceeds_nesting(text: &str, limit: usize) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Open {
        Paren,
        Brace,
        DoubleQuote,
        Backtick,
        Keyword,
        Case,
    }
    let b = text.as_bytes();
    let mut stack: Vec<Open> = Vec::new();
    let mut i = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let top = stack.last().copied();
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        if top == Some(Open::DoubleQuote) {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    stack.pop();
                }
                b'$' if matches!(b.get(i + 1), Some(b'(') | Some(b'{')) => {
                    stack.push(if b[i + 1] == b'(' {
                        Open::Paren
                    } else {
                        Open::Brace
                    });
                    i += 1;
                }
                b'`' => stack.push(Open::Backtick),
                _ => {}
            }
        } else {
            match c {
                b'\\' => i += 1,
                b'\'' => {
                    i = b
                        .get(i + 1..)
                        .and_then(|r| r.iter().position(|&x| x == b'\''))
                        .map_or(b.len(), |p| i + 1 + p);
                }
                b'"' => stack.push(Open::DoubleQuote),
                b'`' if top == Some(Open::Backtick) => {
                    stack.pop();
                }
                b'`' => stack.push(Open::Backtick),
                b'(' if top == Some(Open::Case) => {}
                b'(' => stack.push(Open::Paren),
                b')' if top == Some(Open::Paren) => {
                    stack.pop();
                }
                b'{' => stack.push(Open::Brace),
                b'}' if top == Some(Open::Brace) => {
                    stack.pop();
                }
                b'#' if at_word_start => {
                    i = b
                        .get(i..)
                        .and_then(|r| r.iter().position(|&x| x == b'\n'))
                        .map_or(b.len(), |p| i + p);
                }
                _ if at_word_start && c.is_ascii_lowercase() => {
                    let end = b[i..]
                        .iter()
                        .position(|x| !x.is_ascii_lowercase())
                        .map_or(b.len(), |p| i + p);
                    let next_ok = b.get(end).is_none_or(|x| {
                        matches!(x, b' ' | b'\t' | b'\n' | b';' | b')' | b'&' | b'|')
                    });
                    if next_ok {
                        match &b[i..end] {
                            b"if" | b"for" | b"while" | b"until" | b"select" => {
                                stack.push(Open::Keyword);
                            }
                            b"case" => stack.push(Open::Case),
                            b"fi" | b"done" if top == Some(Open::Keyword) => {
                                stack.pop();
                            }
                            b"esac" if top == Some(Open::Case) => {
                                stack.pop();
                            }
                            _ => {}
                        }
                    }
                    i = end;
                    word_start = false;
                    continue;
                }
                _ => {}
            }
        }
        if stack.len() > limit {
            return Some(stack.len());
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(s: &Script) -> Vec<usize> {
        s.pipelines.iter().map(|p| p.stages.len()).collect()
    }

    #[test]
    fn pieces_parse_like_the_whole() {
        let block = "ls -la\ncat <<EOF\nnot a command; rm -rf /\n)\nEOF\nif true; then\n  echo a\nfi\nf() {\n  rm x\n}\necho 'multi\nline' | cat\nls &&\n  pwd\ncase x in\n  a) echo;;\nesac\n# comment with ' quote\nbash <<-'X'\n\techo hi\n\tX\n";
        let text = block.repeat(2_000);
        let whole = parse_one(&text, MAX_NESTING).expect("parses");
        assert!(!split_points(&text, CHUNK).is_empty());
        let pieces = parse(&text, MAX_NESTING).expect("parses");
        assert_eq!(shape(&whole), shape(&pieces));
    }

    #[test]
    fn wrong_cut_falls_back_to_whole_text() {
        // A here-document whose delimiter the splitter cannot see (built by a
        // substitution) still parses correctly as a whole.
        let text = format!("cat <<EOF\n{}EOF\n", "line\n".repeat(4_000));
        let a = parse(&text, MAX_NESTING).expect("parses");
        assert_eq!(a.pipelines.len(), 1);
    }

    #[test]
    fn length_expansion_is_not_a_comment() {
        // `${#v}`: the `#` follows `{`, it does not start a comment.
        let text = "v=$v/x; echo ${#v}\n".repeat(200);
        assert!(exceeds_nesting(&text, 64).is_none());
        assert!(parse(&text, MAX_NESTING).is_ok());
    }

    #[test]
    fn nesting_is_measured() {
        assert!(exceeds_nesting("echo $(echo $(echo hi))", 64).is_none());
        let deep = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
        assert!(exceeds_nesting(&deep, 64).is_some());
        let flat = "(a); ".repeat(10_000);
        assert!(exceeds_nesting(&flat, 64).is_none());
        let ifs = "if true; then ".repeat(70) + &"fi; ".repeat(70);
        assert!(exceeds_nesting(&ifs, 64).is_some());
        let cases = "case x in a) echo;; esac; ".repeat(1000);
        assert!(exceeds_nesting(&cases, 64).is_none());
    }
}
