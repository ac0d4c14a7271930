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

mod convert;
mod scan;
use convert::convert_list;
pub(crate) use convert::truncate;
pub(crate) use scan::split_points;
use scan::{exceeds_nesting, too_many_open_subscripts};

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
            "the text is nested more than {limit} levels deep, or leaves open some of more than {} parentheses (at least {depth} levels), and was not parsed",
            scan::MAX_PARENS
        ));
    }
    if odd_heredoc(text) {
        return Err(
            "a here-document has no plain-word delimiter or no line that ends it; the text was not parsed".to_owned(),
        );
    }
    if too_many_open_subscripts(text) {
        return Err(format!(
            "the text holds more than {} parameter expansions whose subscript is left open (`${{a[}}`), which bash rejects; it was not parsed",
            scan::MAX_OPEN_SUBSCRIPTS
        ));
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

    /// `text` is refused before the parser, saying `why`, at once.
    fn refused_quickly(text: &str, why: &str) {
        let t = std::time::Instant::now();
        let e = parse(text, MAX_NESTING).expect_err("refused");
        assert!(e.contains(why), "{text}: {e}");
        assert!(t.elapsed().as_secs() < 2, "{text}: {:?}", t.elapsed());
    }

    /// Found by fuzzing (`fuzz/regressions/shell/timeout-open-subscripts*`): expansions
    /// whose subscript is left open, in a word that begins like an array element, made
    /// the parser backtrack exponentially (six held it for minutes).
    #[test]
    fn many_open_subscripts_are_refused_before_the_parser() {
        let open = |each: &str, n: usize| format!("echo U[{}", each.repeat(n));
        for text in [
            open("${Y[}", 8),
            open("${Y[0}", 3),
            open("a${!Y[}", 3),
            open("${#Y[}}", 3),
            open("\"${Y[}\"", 3),
            format!("echo U[{}", "${Y[".repeat(40)),
            format!("U[Y[Y[${{E[Q[b}}[[{}", "${Y[}".repeat(3)),
        ] {
            refused_quickly(&text, "subscript");
        }
        // At the limit the worst shape still finishes quickly.
        let t = std::time::Instant::now();
        let _ = parse(&open("${Y[}", scan::MAX_OPEN_SUBSCRIPTS), MAX_NESTING);
        assert!(t.elapsed().as_secs() < 2, "{:?}", t.elapsed());
        // Subscripts that close, however many and however nested, parse.
        for text in [
            "echo \"${a[0]}${a[1]}${a[2]}${a[3]}${a[4]}${a[5]}\"",
            "echo ${a[${i}]} ${a[${b[${c[0]}]}]} ${!a[@]} ${#a[*]} ${a[@]:1:2}",
            "x[${a[0]}${a[1]}${a[2]}]=${b[$j]}; echo ${x[@]}",
            "echo '${a[}' \"${b[}\"",
        ] {
            assert!(parse(text, MAX_NESTING).is_ok(), "{text}");
        }
    }

    /// Found by fuzzing (`fuzz/regressions/shell`): unclosed parentheses made the parser
    /// backtrack exponentially; 45 bytes held `analyze` for hours.
    #[test]
    fn many_open_parentheses_are_refused_before_the_parser() {
        for text in [
            format!("{}a,", "(".repeat(43)),
            format!("{}a,", "(( ".repeat(12)),
            format!("{}a,", "( ".repeat(20)),
            format!("{}a,", "$(".repeat(20)),
            format!("echo {}", "$((".repeat(10)),
        ] {
            refused_quickly(&text, "parentheses");
        }
        // At the limit, the worst shapes still finish quickly; real nesting parses.
        for text in [
            format!("{}a,", "(( ".repeat(MAX_PARENS_FOR_TESTS / 2)),
            format!("{}a,", "(".repeat(MAX_PARENS_FOR_TESTS)),
        ] {
            let t = std::time::Instant::now();
            let _ = parse(&text, MAX_NESTING);
            assert!(t.elapsed().as_secs() < 2, "{text}: {:?}", t.elapsed());
        }
        assert!(parse("( ( ( ( ( ( ( ( true ) ) ) ) ) ) ) )", MAX_NESTING).is_ok());
        let deep = format!("{}true{}", "( ".repeat(40), " )".repeat(40));
        assert!(parse(&deep, MAX_NESTING).is_ok(), "balanced nesting parses");
        // Balanced, with a syntax error inside: refused by the parser, quickly.
        let t = std::time::Instant::now();
        let broken = format!("{};{}", "( ".repeat(20), " )".repeat(20));
        assert!(parse(&broken, MAX_NESTING).is_err());
        assert!(t.elapsed().as_secs() < 2, "{:?}", t.elapsed());
        assert!(parse("echo $(( (1 + (2 * (3))) ))", MAX_NESTING).is_ok());
    }

    const MAX_PARENS_FOR_TESTS: usize = scan::MAX_PARENS;

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
