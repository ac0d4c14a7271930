//! The subset of Starlark that Codex rule files are written in: top-level calls whose
//! arguments are string literals and lists of them, with comments. A small tokenizer and a
//! recursive-descent parser; no evaluation.
//!
//! What a file may hold beyond that subset (assignments, `def`, `for`, `if`, `load`,
//! expressions) is returned as an [`Statement::Other`] with its line, for the caller to
//! report; it is never evaluated or guessed at. Only text that is not Starlark at all
//! (an unterminated string, an unknown escape, unbalanced brackets) is an error.
//!
//! String syntax follows the Starlark language specification
//! (<https://github.com/bazelbuild/starlark/blob/master/spec.md#string-literals>): single,
//! double and triple quotes, the `r` prefix, and the escapes `\a \b \f \n \r \t \v \\ \'
//! \" \ooo \xhh \uhhhh \Uhhhhhhhh` and backslash-newline.

use super::ImportError;

/// A literal value in an argument position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A string literal.
    Str(String),
    /// A list literal.
    List(Vec<Value>),
    /// Anything else (a name, a number, an expression), described for the report.
    Other(String),
}

/// One argument of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arg {
    /// The keyword, for `name = value`.
    pub name: Option<String>,
    pub value: Value,
    pub line: usize,
}

/// One top-level statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Statement {
    /// `name(args…)`.
    Call {
        name: String,
        args: Vec<Arg>,
        line: usize,
        /// The statement's source text, for reports.
        text: String,
    },
    /// Anything else, with its first line and its source text (first line only).
    Other { line: usize, text: String },
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str(String),
    Open(char),
    Close(char),
    Comma,
    Equals,
    /// Any other punctuation or a number: not in the subset.
    Other(String),
    /// End of a logical line at bracket depth 0.
    Newline,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
    /// Byte offset of the token's start.
    at: usize,
    /// Columns of indentation of the logical line this token starts, for first tokens.
    indent: usize,
}

/// An open bracket: the character, and the line and column it was opened at.
type Bracket = (char, usize, usize);

/// End a logical line (at `line`, byte `at`) unless nothing stands on it.
fn end_line(out: &mut Vec<Token>, line: usize, at: usize) {
    if out.last().is_some_and(|t| t.tok != Tok::Newline) {
        out.push(Token {
            tok: Tok::Newline,
            line,
            at,
            indent: 0,
        });
    }
}

struct Lexer<'a> {
    src: &'a str,
    chars: Vec<(usize, char)>,
    i: usize,
    line: usize,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).map(|&(_, c)| c)
    }

    fn pos(&self) -> usize {
        self.chars.get(self.i).map_or(self.src.len(), |&(b, _)| b)
    }

    fn col(&self) -> usize {
        self.src[self.line_start..self.pos()].chars().count() + 1
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.line_start = self.pos();
        }
        Some(c)
    }

    fn err(&self, line: usize, col: usize, m: impl Into<String>) -> ImportError {
        ImportError::at(line, col, m)
    }

    fn tokens(mut self) -> Result<Vec<Token>, ImportError> {
        let mut out: Vec<Token> = Vec::new();
        let mut depth: Vec<Bracket> = Vec::new();
        let mut at_line_start = true;
        let mut indent = 0;
        while let Some(c) = self.peek(0) {
            let (line, col, at) = (self.line, self.col(), self.pos());
            if at_line_start && depth.is_empty() {
                indent = self.indentation();
                at_line_start = false;
                continue;
            }
            if c == '\n' {
                self.bump();
                if depth.is_empty() {
                    end_line(&mut out, line, at);
                    at_line_start = true;
                }
                continue;
            }
            if let Some(tok) = self.token(c, line, col, &mut depth)? {
                out.push(Token {
                    tok,
                    line,
                    at,
                    indent,
                });
            }
        }
        if let Some((o, l, c)) = depth.pop() {
            return Err(self.err(l, c, format!("`{o}` is never closed")));
        }
        end_line(&mut out, self.line, self.src.len());
        Ok(out)
    }

    /// The indentation of the line starting here, in columns, skipped over (blank and
    /// comment-only lines do not count: their newline ends no logical line).
    fn indentation(&mut self) -> usize {
        let mut indent = 0;
        while let Some(' ' | '\t') = self.peek(0) {
            indent += 1;
            self.bump();
        }
        indent
    }

    /// The token starting with `c` (at `line`:`col`), consumed; `None` for white space,
    /// an escaped newline or a comment. Brackets are matched on `depth`.
    fn token(
        &mut self,
        c: char,
        line: usize,
        col: usize,
        depth: &mut Vec<Bracket>,
    ) -> Result<Option<Tok>, ImportError> {
        let tok = match c {
            ' ' | '\t' | '\r' => {
                self.bump();
                return Ok(None);
            }
            '\\' if self.peek(1) == Some('\n') => {
                self.bump();
                self.bump();
                return Ok(None);
            }
            '#' => {
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.bump();
                }
                return Ok(None);
            }
            '(' | '[' | '{' => {
                self.bump();
                depth.push((c, line, col));
                Tok::Open(c)
            }
            ')' | ']' | '}' => {
                self.bump();
                self.close(c, line, col, depth)?;
                Tok::Close(c)
            }
            ',' => {
                self.bump();
                Tok::Comma
            }
            '=' if self.peek(1) != Some('=') => {
                self.bump();
                Tok::Equals
            }
            '"' | '\'' => Tok::Str(self.string(false)?),
            'r' | 'R' if matches!(self.peek(1), Some('"' | '\'')) => {
                self.bump();
                Tok::Str(self.string(true)?)
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.bump();
                }
                Tok::Name(name)
            }
            c => {
                self.bump();
                Tok::Other(c.to_string())
            }
        };
        Ok(Some(tok))
    }

    /// Closing bracket `c` (at `line`:`col`) must close the one last opened.
    fn close(
        &self,
        c: char,
        line: usize,
        col: usize,
        depth: &mut Vec<Bracket>,
    ) -> Result<(), ImportError> {
        let want = match c {
            ')' => '(',
            ']' => '[',
            _ => '{',
        };
        match depth.pop() {
            Some((o, ..)) if o == want => Ok(()),
            Some((o, l, cl)) => Err(self.err(
                line,
                col,
                format!("`{c}` does not close the `{o}` opened at {l}:{cl}"),
            )),
            None => Err(self.err(line, col, format!("`{c}` closes nothing"))),
        }
    }

    /// A string literal starting at the opening quote; `raw` keeps backslashes.
    fn string(&mut self, raw: bool) -> Result<String, ImportError> {
        let (line, col) = (self.line, self.col());
        let q = self.bump().unwrap_or('"');
        let triple = self.peek(0) == Some(q) && self.peek(1) == Some(q);
        if triple {
            self.bump();
            self.bump();
        }
        let mut s = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(self.err(line, col, "a string is never closed"));
            };
            if c == q {
                if !triple {
                    return Ok(s);
                }
                if self.peek(0) == Some(q) && self.peek(1) == Some(q) {
                    self.bump();
                    self.bump();
                    return Ok(s);
                }
                s.push(c);
                continue;
            }
            if c == '\n' && !triple {
                return Err(self.err(line, col, "a string is never closed on its line"));
            }
            if c != '\\' {
                s.push(c);
                continue;
            }
            let (el, ec) = (self.line, self.col());
            let Some(e) = self.bump() else {
                return Err(self.err(line, col, "a string is never closed"));
            };
            if raw {
                // In raw strings a backslash stays, and still keeps a quote from ending it.
                s.push('\\');
                s.push(e);
                continue;
            }
            match e {
                '\n' => {}
                'a' => s.push('\u{7}'),
                'b' => s.push('\u{8}'),
                'f' => s.push('\u{c}'),
                'n' => s.push('\n'),
                'r' => s.push('\r'),
                't' => s.push('\t'),
                'v' => s.push('\u{b}'),
                '\\' | '\'' | '"' => s.push(e),
                '0'..='7' => {
                    let mut v = e.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match self.peek(0).and_then(|c| c.to_digit(8)) {
                            Some(d) => {
                                v = v * 8 + d;
                                self.bump();
                            }
                            None => break,
                        }
                    }
                    s.push(self.code_point(v, el, ec)?);
                }
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let mut v: u32 = 0;
                    for _ in 0..n {
                        let d = self.bump().and_then(|c| c.to_digit(16)).ok_or_else(|| {
                            self.err(el, ec, format!("`\\{e}` needs {n} hexadecimal digits"))
                        })?;
                        v = v * 16 + d;
                    }
                    s.push(self.code_point(v, el, ec)?);
                }
                other => {
                    return Err(self.err(el, ec, format!("`\\{other}` is not a Starlark escape; write `\\\\{other}` for a backslash")));
                }
            }
        }
    }

    fn code_point(&self, v: u32, line: usize, col: usize) -> Result<char, ImportError> {
        char::from_u32(v)
            .ok_or_else(|| self.err(line, col, format!("escape value {v:#x} is not a character")))
    }
}

/// Parse a rules file into top-level statements.
pub(crate) fn parse(src: &str) -> Result<Vec<Statement>, ImportError> {
    let lexer = Lexer {
        src,
        chars: src.char_indices().collect(),
        i: 0,
        line: 1,
        line_start: 0,
    };
    let tokens = lexer.tokens()?;
    let mut out = Vec::new();
    // Split into logical lines; an indented line belongs to the block of the statement
    // before it (`def`, `for`, `if`), which is reported once.
    let mut start = 0;
    let mut in_block = false;
    for (i, t) in tokens.iter().enumerate() {
        if t.tok != Tok::Newline {
            continue;
        }
        let line_toks = &tokens[start..i];
        let end = t.at;
        start = i + 1;
        let Some(first) = line_toks.first() else {
            continue;
        };
        if first.indent > 0 && in_block {
            continue;
        }
        let text = first_line(&src[first.at..end]);
        if first.indent > 0 {
            out.push(Statement::Other {
                line: first.line,
                text,
            });
            continue;
        }
        in_block = matches!(line_toks.last(), Some(Token { tok: Tok::Other(c), .. }) if c == ":");
        out.push(match call(line_toks) {
            Some((name, args)) => Statement::Call {
                name,
                args,
                line: first.line,
                text: src[first.at..end].trim().to_string(),
            },
            None => Statement::Other {
                line: first.line,
                text,
            },
        });
    }
    Ok(out)
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("").trim();
    if s.trim().contains('\n') {
        format!("{l} …")
    } else {
        l.to_string()
    }
}

/// `NAME ( args ) [,]` spanning exactly these tokens, else `None`.
fn call(toks: &[Token]) -> Option<(String, Vec<Arg>)> {
    let [
        Token {
            tok: Tok::Name(name),
            ..
        },
        Token {
            tok: Tok::Open('('),
            ..
        },
        rest @ ..,
    ] = toks
    else {
        return None;
    };
    let mut p = Parser { toks: rest, i: 0 };
    let mut args = Vec::new();
    loop {
        if p.eat(&Tok::Close(')')) {
            break;
        }
        let line = p.toks.get(p.i)?.line;
        let name = match (
            p.toks.get(p.i).map(|t| &t.tok),
            p.toks.get(p.i + 1).map(|t| &t.tok),
        ) {
            (Some(Tok::Name(n)), Some(Tok::Equals)) => {
                p.i += 2;
                Some(n.clone())
            }
            _ => None,
        };
        let value = p.value();
        args.push(Arg { name, value, line });
        if p.eat(&Tok::Comma) {
            continue;
        }
        if p.eat(&Tok::Close(')')) {
            break;
        }
        return None;
    }
    (p.i == p.toks.len()).then_some((name.clone(), args))
}

struct Parser<'t> {
    toks: &'t [Token],
    i: usize,
}

impl Parser<'_> {
    fn eat(&mut self, t: &Tok) -> bool {
        if self.toks.get(self.i).is_some_and(|x| &x.tok == t) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// A literal, or the tokens of something else up to the next `,` or closing bracket
    /// at this depth (described, never evaluated).
    fn value(&mut self) -> Value {
        let start = self.i;
        let simple = match self.toks.get(self.i).map(|t| &t.tok) {
            Some(Tok::Str(s)) => {
                self.i += 1;
                Some(Value::Str(s.clone()))
            }
            Some(Tok::Open('[')) => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.eat(&Tok::Close(']')) {
                        break Some(Value::List(items));
                    }
                    items.push(self.value());
                    if self.eat(&Tok::Comma) {
                        continue;
                    }
                    if self.eat(&Tok::Close(']')) {
                        break Some(Value::List(items));
                    }
                    break None;
                }
            }
            _ => None,
        };
        // A literal followed by more (`"a" + b`, `[…] * 2`) is an expression too.
        if let Some(v) = simple
            && matches!(
                self.toks.get(self.i).map(|t| &t.tok),
                Some(Tok::Comma | Tok::Close(_)) | None
            )
        {
            return v;
        }
        self.i = start;
        let mut depth = 0usize;
        let mut words = Vec::new();
        while let Some(t) = self.toks.get(self.i) {
            match &t.tok {
                Tok::Comma | Tok::Close(_) if depth == 0 => break,
                Tok::Open(_) => depth += 1,
                Tok::Close(_) => depth = depth.saturating_sub(1),
                _ => {}
            }
            words.push(describe(&t.tok));
            self.i += 1;
        }
        Value::Other(words.concat())
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("{n} "),
        Tok::Str(s) => format!("{s:?}"),
        Tok::Open(c) | Tok::Close(c) => c.to_string(),
        Tok::Comma => ", ".into(),
        Tok::Equals => " = ".into(),
        Tok::Other(o) => o.clone(),
        Tok::Newline => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &Value) -> Vec<String> {
        match v {
            Value::List(items) => items
                .iter()
                .map(|i| match i {
                    Value::Str(s) => s.clone(),
                    other => format!("{other:?}"),
                })
                .collect(),
            other => vec![format!("{other:?}")],
        }
    }

    #[test]
    fn calls_keywords_lists_comments() {
        let src = "# header\nprefix_rule(\n    pattern = [\"git\", [\"push\", \"fetch\"]],  # alts\n    decision = 'prompt',\n)\n\nfoo(\"a\", b = [])\n";
        let s = parse(src).unwrap();
        assert_eq!(s.len(), 2);
        let Statement::Call {
            name, args, line, ..
        } = &s[0]
        else {
            panic!("{s:?}")
        };
        assert_eq!((name.as_str(), *line), ("prefix_rule", 2));
        assert_eq!(args[0].name.as_deref(), Some("pattern"));
        assert_eq!(args[1].value, Value::Str("prompt".into()));
        assert_eq!(args[1].line, 4);
        let Value::List(p) = &args[0].value else {
            panic!()
        };
        assert_eq!(strs(&p[1]), vec!["push", "fetch"]);
        assert!(matches!(&s[1], Statement::Call { name, line: 7, .. } if name == "foo"));
    }

    #[test]
    fn string_forms() {
        let src = r#"f("a\tb\x41\u00e9\101\\", 'it\'s', """tri"ple
line""", r"raw\d", '''x''')"#;
        let s = parse(src).unwrap();
        let Statement::Call { args, .. } = &s[0] else {
            panic!()
        };
        let v: Vec<_> = args.iter().map(|a| a.value.clone()).collect();
        assert_eq!(
            v,
            vec![
                Value::Str("a\tbAéA\\".into()),
                Value::Str("it's".into()),
                Value::Str("tri\"ple\nline".into()),
                Value::Str("raw\\d".into()),
                Value::Str("x".into()),
            ]
        );
    }

    #[test]
    fn other_constructs_are_reported_with_their_line() {
        let src = "X = [\"git\"]\nprefix_rule(pattern = X)\nfor p in X:\n    prefix_rule(pattern = [p])\n    pass\ndef f():\n  return 1\nload(\"x.star\", \"y\")\nprefix_rule(pattern = [\"a\"] + [\"b\"])\n";
        let s = parse(src).unwrap();
        let lines: Vec<usize> = s
            .iter()
            .map(|x| match x {
                Statement::Call { line, .. } | Statement::Other { line, .. } => *line,
            })
            .collect();
        assert_eq!(lines, vec![1, 2, 3, 6, 8, 9]);
        assert!(matches!(&s[0], Statement::Other { .. }));
        let Statement::Call { args, .. } = &s[1] else {
            panic!()
        };
        assert!(matches!(&args[0].value, Value::Other(d) if d.contains('X')));
        assert!(matches!(&s[2], Statement::Other { text, .. } if text.starts_with("for p in X")));
        let Statement::Call { args, .. } = &s[5] else {
            panic!()
        };
        assert!(matches!(&args[0].value, Value::Other(_)));
    }

    #[test]
    fn broken_text_is_an_error() {
        for (src, at) in [
            ("f(\"abc)\n", (1, 3)),
            ("f([\"a\", \"b\"\n", (1, 3)),
            ("f(\"a\\q\")", (1, 6)),
            ("f(]", (1, 3)),
            ("f(\"\\x4\")", (1, 5)),
        ] {
            let e = parse(src).unwrap_err();
            assert_eq!(e.position, Some(at), "{src:?}: {e}");
        }
    }
}
