//! The one module that knows `brush-parser`: it parses bash text and converts the
//! parser's syntax tree into cordon's own small tree, so a parser upgrade touches
//! this file alone.
//!
//! Owns: calling the parser safely. The parser recurses on nesting and overflows the
//! stack on deeply nested input and backtracks exponentially over some nesting, so
//! nesting is measured first (`nesting.rs`) and text nested deeper than [`MAX_NESTING`],
//! or that the parser would read again and again, is refused before the parser sees it.
//! Words are kept raw here;
//! `word.rs` decodes them.

use brush_parser::ast;

use crate::model::RedirectKind;

mod convert;
mod deadline;
pub(crate) mod nesting;
mod scan;
use convert::convert_list;
pub(crate) use convert::truncate;
use deadline::Outcome;
use nesting::{Refusal, exceeds_nesting, readings, spend};
pub(crate) use scan::split_points;

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
    /// What is left of the allowance of parser readings, for text parsed again while
    /// converting (`( ( cmd ) )`, read by the parser as arithmetic).
    allowance: std::cell::Cell<u64>,
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

/// Parse bash text whose nesting may not exceed `limit` (at most [`MAX_NESTING`]),
/// spending the parser's readings from `allowance` ([`parse_one`]).
/// Errors are one sentence.
///
/// Long text is parsed in pieces cut at newlines that end a complete top-level
/// command: the parser's time grows faster than linearly with input size, pieces keep
/// it linear and the peak memory small. A cut in the wrong place leaves a piece with
/// an unterminated construct, which fails to parse; the whole text is then parsed in
/// one go, so cutting never changes the result.
pub(crate) fn parse(text: &str, limit: usize, allowance: &mut u64) -> Result<Script, String> {
    if text.len() > CHUNK {
        let cuts = split_points(text, CHUNK);
        if !cuts.is_empty() {
            let mut script = Script::default();
            let mut start = 0;
            let mut ok = true;
            for end in cuts.into_iter().chain(std::iter::once(text.len())) {
                let piece = text.get(start..end).unwrap_or("");
                start = end;
                match parse_one(piece, limit, allowance) {
                    Ok(s) => script.pipelines.extend(s.pipelines),
                    // Past the grammar's deadline: the whole text holds the same piece.
                    Err(e) if gave_up(&e) => return Err(e),
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
    parse_one(text, limit, allowance)
}

/// Parse one piece of text whose nesting may not exceed `limit`, spending from
/// `allowance` the parser's readings the estimate gives it beyond the text's own share
/// (`parse/nesting.rs` [`spend`]); text that would spend more is refused before the
/// parser's grammar sees it. Every parse of one analysis spends one allowance, so
/// cutting text into pieces or parsing it again gives it no more time.
pub(crate) fn parse_one(text: &str, limit: usize, allowance: &mut u64) -> Result<Script, String> {
    let limit = limit.min(MAX_NESTING);
    let too_deep = |depth: usize| {
        format!(
            "the text is nested more than {limit} levels deep (at least {depth}), and was not parsed"
        )
    };
    if let Some(depth) = exceeds_nesting(text, limit) {
        return Err(too_deep(depth));
    }
    if odd_heredoc(text) {
        return Err(
            "a here-document has no plain-word delimiter or no line that ends it; the text was not parsed".to_owned(),
        );
    }
    let options = brush_parser::ParserOptions::default();
    let tokens = match run_tokenizer(text, &options) {
        Ok(Ok(tokens)) => tokens,
        Ok(Err(e)) => return Err(format!("the text does not parse as bash: {e}")),
        Err(()) => return Err("the bash parser failed on this text".to_owned()),
    };
    match spend(&tokens, limit, allowance) {
        Ok(()) => {}
        Err(Refusal::TooDeep(depth)) => return Err(too_deep(depth)),
        Err(Refusal::TooCostly(cost)) => {
            return Err(format!(
                "the text nests constructs the bash parser would read again and again (about {cost} byte-readings, more than its share and the {} left), and was not parsed",
                *allowance
            ));
        }
    }
    let program = grammar(tokens)?;
    let src = Src {
        text,
        ascii: text.is_ascii(),
        allowance: std::cell::Cell::new(*allowance),
    };
    let mut script = Script::default();
    for list in &program.complete_commands {
        convert_list(&src, list, &mut script);
    }
    *allowance = src.allowance.get();
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

/// The estimate of the parser's readings for `text` as one piece, or `None` when it is
/// refused before the grammar: for `parse_estimate`.
pub(crate) fn estimate_only(text: &str) -> Option<u64> {
    if exceeds_nesting(text, MAX_NESTING).is_some() || odd_heredoc(text) {
        return None;
    }
    let options = brush_parser::ParserOptions::default();
    let tokens = run_tokenizer(text, &options).ok()?.ok()?;
    let cost = readings(&tokens, MAX_NESTING).ok()?;
    let mut pool = nesting::BUDGET;
    spend(&tokens, MAX_NESTING, &mut pool).ok().map(|()| cost)
}

/// Run brush-parser's tokenizer. It panics on some malformed input (0.4.0: an `unwrap`
/// when a here-document inside `$(…)` ends the text), so a panic is caught and reported
/// as a failure to parse: the text is then never allowed.
fn run_tokenizer(
    text: &str,
    options: &brush_parser::ParserOptions,
) -> Result<Result<Vec<brush_parser::Token>, brush_parser::TokenizerError>, ()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        brush_parser::uncached_tokenize_str(text, &options.tokenizer_options())
    }))
    .map_err(|_| ())
}

/// Whether a parse error says the grammar was given up on (its deadline passed, or
/// workers left behind are still running): parsing the same text again cannot do better.
pub(crate) fn gave_up(error: &str) -> bool {
    error.starts_with(GAVE_UP)
}

/// How every error of a grammar given up on begins.
const GAVE_UP: &str = "the bash parser gave up: ";

/// Run brush-parser's grammar on `tokens` under its deadline (`parse/deadline.rs`).
fn grammar(tokens: Vec<brush_parser::Token>) -> Result<ast::Program, String> {
    match deadline::run_grammar(tokens) {
        Outcome::Returned(Ok(program)) => Ok(program),
        Outcome::Returned(Err(e)) => Err(format!("the text does not parse as bash: {e}")),
        Outcome::Panicked => Err("the bash parser failed on this text".to_owned()),
        Outcome::TimedOut => Err(format!(
            "{GAVE_UP}it had not finished after {} s (it reads this text again and again, beyond what its estimate foresaw); the text was not parsed",
            deadline::DEADLINE.as_secs()
        )),
        Outcome::Busy(why) => Err(format!("{GAVE_UP}is busy ({why}); the text was not parsed")),
    }
}

/// The grammar's answer for `text` without the estimate in front of it: for the
/// deadline's own tests.
pub(crate) fn grammar_only(text: &str) -> Result<(), String> {
    if exceeds_nesting(text, MAX_NESTING).is_some() || odd_heredoc(text) {
        return Err("the text was refused before the parser".to_owned());
    }
    let options = brush_parser::ParserOptions::default();
    match run_tokenizer(text, &options) {
        Ok(Ok(tokens)) => grammar(tokens).map(|_| ()),
        Ok(Err(e)) => Err(format!("the text does not parse as bash: {e}")),
        Err(()) => Err("the bash parser failed on this text".to_owned()),
    }
}

/// Run brush-parser as a whole, from text.
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
        let mut unlimited = u64::MAX;
        let whole = parse_one(&text, MAX_NESTING, &mut unlimited).expect("parses");
        assert!(!split_points(&text, CHUNK).is_empty());
        let pieces = parse(&text, MAX_NESTING, &mut { nesting::BUDGET }).expect("parses");
        assert_eq!(shape(&whole), shape(&pieces));
    }

    #[test]
    fn wrong_cut_falls_back_to_whole_text() {
        // A here-document whose delimiter the splitter cannot see (built by a
        // substitution) still parses correctly as a whole.
        let text = format!("cat <<EOF\n{}EOF\n", "line\n".repeat(4_000));
        let a = parse(&text, MAX_NESTING, &mut { nesting::BUDGET }).expect("parses");
        assert_eq!(a.pipelines.len(), 1);
    }
}
