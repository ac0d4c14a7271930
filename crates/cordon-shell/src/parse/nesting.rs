//! How deep text nests, and how many times brush-parser would read it: both measured
//! before the parser's grammar sees the text.
//!
//! brush-parser 0.4.0's grammars backtrack without memory: where a construct can be read
//! two ways (a `(` as arithmetic or as a subshell, a `case` item with or without `;;`, a
//! `NAME[` as an array element or as literal text), a failure inside it makes the parser
//! read everything inside again the other way, and nested constructs multiply. 30 nested
//! `(` around `a;` took it 19 s, six nested subscripts in an array-element word more than
//! 10 s, 45 bytes of `(` hours. So one estimate covers every such shape: each byte counts
//! once, times the factor of every construct it sits in (how many times the parser may
//! read that construct's inside, measured per kind of opener), and text whose estimate is
//! over its allowance ([`spend`]) is refused before the grammar runs. A construct left
//! unclosed always counts double: the parser gives up on it only after every reading.
//!
//! The estimate reads the parser's own tokens ([`estimate`]), so quotes, comments,
//! here-documents, extglobs and backquotes are where the parser's tokenizer put them, not
//! where a second reading of the text would guess them; only inside one word does it read
//! characters, both with quotes and without, keeping the larger. The tokenizer recurses on
//! nesting, so before it runs, [`exceeds_nesting`] bounds the depth on the raw text.

use brush_parser::Token;

use super::scan::find_from;

/// Readings beyond a text's own share that one analysis may spend in all ([`spend`]).
/// The costliest reading measured (a case item's or a nested subscript's inside) takes
/// the parser about 70–90 ns per byte in a release build, so this pool is about 0.1 s;
/// real scripts measure far below it (at most 98,287 of 459 measured).
pub(crate) const BUDGET: u64 = 1 << 20;

/// Readings per byte of its tokens that any text may spend without drawing on the pool:
/// long text at this rate parses in time linear in its length. Tokens, not text: a
/// comment or a blank adds nothing to what the parser reads, so it buys no readings.
const READINGS_PER_BYTE: u64 = 16;

/// Why text was refused before the parser's grammar saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Constructs open at once, more than the limit allows.
    TooDeep(usize),
    /// The estimate of the parser's readings, over the text's share and what is left of
    /// the pool.
    TooCostly(u64),
}

/// A construct opened in the text, by what its opener was.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Open {
    /// `(` of a subshell, an arithmetic command, an extglob or a parenthesis in arithmetic.
    Paren,
    /// `$(`, `<(` or `>(`.
    Substitution,
    /// The second `(` of `$((`: arithmetic.
    Arithmetic,
    /// A `(` inside arithmetic (`$(( (a + b) * c ))`): read as arithmetic only.
    ArithmeticParen,
    /// `{` of a group.
    Brace,
    /// `${`: read twice when an operator inside fails late.
    Expansion,
    /// `"` holding a substitution.
    DoubleQuote,
    /// `` ` ``.
    Backtick,
    /// `if`, `for`, `while`, `until`, `select`.
    Keyword,
    /// `case` up to its `in`.
    CaseHead,
    /// A `case` where a pattern is read.
    CasePattern,
    /// A `case` item's commands: read twice when no `;;` ends them (the parser tries the
    /// item with its terminator first).
    CaseItem,
    /// `[` after a name in a word (`x[`, `a[$i]=`), or `$[`: an array element, arithmetic
    /// or literal text.
    Subscript,
    /// `[` after a name inside `${`: a subscript the parameter grammar reads once per
    /// alternative it tries.
    Index,
}

impl Open {
    /// How many times the parser may read this construct's inside (measured on
    /// brush-parser 0.4.0: each shape's time grows by about this factor per level).
    fn factor(self, closed: bool) -> u64 {
        match self {
            Open::Index => 20,
            // An expansion's inside is read again when an operator fails late (`${a:X:0:0}`:
            // the substring reads X, then finds no `}`, and the word grammar reads `$` as
            // text and X again as word pieces).
            Open::Paren | Open::ArithmeticParen | Open::Subscript | Open::Expansion => 2,
            _ if closed => 1,
            _ => 2,
        }
    }

    /// Whether the character `c` closes this construct (inside a word).
    fn closed_by(self, c: u8) -> bool {
        match self {
            Open::Paren | Open::Substitution | Open::Arithmetic | Open::ArithmeticParen => {
                c == b')'
            }
            Open::Expansion => c == b'}',
            Open::Subscript | Open::Index => c == b']',
            Open::DoubleQuote => c == b'"',
            Open::Backtick => c == b'`',
            _ => false,
        }
    }
}

/// One open construct and the estimate of what is inside it so far.
struct Frame {
    open: Open,
    inside: u64,
}

/// The open constructs, innermost last, and the estimate of what is outside them all.
#[derive(Default)]
struct Stack {
    frames: Vec<Frame>,
    outside: u64,
    /// Inside one word, where the word grammar's alternatives read a substitution's or
    /// a parenthesis' inside up to three times (`$(X)` as a substitution, a subshell and
    /// text; `@(X)` as an extglob, a subshell and text; measured ×3 per level when a
    /// quote inside fails), backquotes counted alike; other constructs as outside.
    word: bool,
}

impl Stack {
    fn top(&self) -> Option<Open> {
        self.frames.last().map(|f| f.open)
    }

    fn push(&mut self, open: Open) {
        self.frames.push(Frame { open, inside: 0 });
    }

    /// Whether the innermost substitution or arithmetic holding the position is
    /// arithmetic (`$((`), where a `(` is arithmetic's own.
    fn in_arithmetic(&self) -> bool {
        self.frames
            .iter()
            .rev()
            .find(|f| {
                matches!(
                    f.open,
                    Open::Substitution | Open::Arithmetic | Open::Backtick
                )
            })
            .is_some_and(|f| f.open == Open::Arithmetic)
    }

    /// The innermost construct becomes `open` (a `case` moving between its parts).
    fn turn(&mut self, open: Open) {
        if let Some(f) = self.frames.last_mut() {
            f.open = open;
        }
    }

    /// Ends the innermost construct; what it holds counts in its parent times its factor.
    fn pop(&mut self, closed: bool) {
        if let Some(f) = self.frames.pop() {
            let factor = match (self.word, f.open) {
                (true, Open::Substitution | Open::Arithmetic | Open::Paren | Open::Backtick) => 3,
                (_, open) => open.factor(closed),
            };
            self.add(f.inside.saturating_mul(factor));
        }
    }

    fn add(&mut self, cost: u64) {
        let at = match self.frames.last_mut() {
            Some(f) => &mut f.inside,
            None => &mut self.outside,
        };
        *at = at.saturating_add(cost);
    }

    /// The estimate of everything, every construct still open ended unclosed.
    fn finish(mut self) -> u64 {
        while !self.frames.is_empty() {
            self.pop(false);
        }
        self.outside
    }
}

/// Operators after which a word is in command position (a keyword there opens or closes
/// a compound command).
fn starts_command(op: &str) -> bool {
    matches!(
        op,
        ";" | "&" | "&&" | "||" | "|" | "|&" | "(" | ")" | "\n" | ";;" | ";&" | ";;&"
    )
}

/// How many of the next words are in command position after `word` (itself there or
/// not): one after a reserved word that begins a command list, two after `coproc`
/// (`coproc NAME {`), `function` (`function NAME {`) and `time` (`time -p case`), one
/// fewer otherwise.
fn command_words_after(word: &str, now: u8) -> u8 {
    match word {
        "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "{" | "!" => 1,
        "coproc" | "function" | "time" if now > 0 => 2,
        _ => now.saturating_sub(1),
    }
}

/// Spends from `pool` what the parser's readings of `tokens` (brush-parser's own, of one
/// text) exceed the text's own share ([`READINGS_PER_BYTE`] per byte of its tokens), or
/// refuses: `Err` when they nest deeper than `limit` or the excess is more than is left.
/// So the readings of every parse of one analysis add up to at most its share of each
/// text plus [`BUDGET`], however often a text is parsed again.
pub(crate) fn spend(tokens: &[Token], limit: usize, pool: &mut u64) -> Result<(), Refusal> {
    let cost = readings(tokens, limit)?;
    let own: u64 = tokens.iter().map(|t| t.to_str().len() as u64).sum();
    let excess = cost.saturating_sub(own.saturating_mul(READINGS_PER_BYTE));
    if excess > *pool {
        return Err(Refusal::TooCostly(cost));
    }
    *pool -= excess;
    Ok(())
}

/// The estimate of the parser's readings for `tokens` (brush-parser's own, of one text),
/// or `Err` when they nest deeper than `limit`.
///
/// Program structure comes from the tokens: `(` and `)` operators, and in command
/// position the keywords and braces; a `case` is followed through its head, patterns and
/// items (a pattern's `)` closes nothing; an item ended by `esac` rather than `;;` is
/// read twice). A here-document's delimiter, body and end tag count once each byte.
/// Every other word is measured by its characters ([`word_estimate`]) as a construct of
/// its own inside the current one.
pub(crate) fn readings(tokens: &[Token], limit: usize) -> Result<u64, Refusal> {
    let mut stack = Stack::default();
    // How many of the next words are in command position.
    let mut command = 1u8;
    // Words of a here-document still to come after its operator: delimiter, body, tag.
    let mut heredoc_words = 0u8;
    for (k, token) in tokens.iter().enumerate() {
        match token {
            Token::Operator(op, _) => {
                stack.add(op.len() as u64);
                for c in op.bytes() {
                    match (c, stack.top()) {
                        (b'(', Some(Open::CasePattern)) => {}
                        (b'(', _) => stack.push(Open::Paren),
                        (b')', Some(Open::Paren)) => stack.pop(true),
                        (b')', Some(Open::CasePattern)) => stack.push(Open::CaseItem),
                        _ => {}
                    }
                }
                if matches!(op.as_str(), ";;" | ";&" | ";;&") && stack.top() == Some(Open::CaseItem)
                {
                    stack.pop(true);
                }
                // Its three words follow the operator at once; any other operator means
                // they are not there.
                heredoc_words = if matches!(op.as_str(), "<<" | "<<-") {
                    3
                } else {
                    0
                };
                command = u8::from(starts_command(op));
            }
            Token::Word(word, _) if heredoc_words > 0 => {
                heredoc_words -= 1;
                stack.add(word.len() as u64);
                command = 0;
            }
            Token::Word(word, _) => {
                let top = stack.top();
                let w = word.as_str();
                stack.add(word.len() as u64);
                match top {
                    Some(Open::CaseHead) => {
                        // The subject, then `in`.
                        if w == "in" {
                            stack.turn(Open::CasePattern);
                        }
                        command = 0;
                        continue;
                    }
                    Some(Open::CasePattern) => {
                        // A pattern, or `esac` (unless it is a pattern: `esac)`).
                        let pattern =
                            matches!(tokens.get(k + 1), Some(Token::Operator(o, _)) if o == ")");
                        if w == "esac" && !pattern {
                            stack.pop(true);
                        }
                        command = 0;
                        continue;
                    }
                    _ => {}
                }
                let keyword = if command > 0 { w } else { "" };
                match keyword {
                    "if" | "for" | "while" | "until" | "select" => stack.push(Open::Keyword),
                    "case" => stack.push(Open::CaseHead),
                    "{" => stack.push(Open::Brace),
                    "fi" | "done" if top == Some(Open::Keyword) => stack.pop(true),
                    "}" if top == Some(Open::Brace) => stack.pop(true),
                    "esac" if top == Some(Open::CaseItem) => {
                        // The last item, without `;;`, then the case.
                        stack.pop(false);
                        stack.pop(true);
                    }
                    _ => {
                        let (cost, depth) = word_estimate(word.as_bytes());
                        if stack.frames.len() + depth > limit {
                            return Err(Refusal::TooDeep(stack.frames.len() + depth));
                        }
                        // The word's characters replace its plain length counted above.
                        stack.add(cost.saturating_sub(word.len() as u64));
                    }
                }
                command = command_words_after(w, command);
            }
        }
        if stack.frames.len() > limit {
            return Err(Refusal::TooDeep(stack.frames.len()));
        }
    }
    Ok(stack.finish())
}

/// Whether `c` may be part of a name (`[` after one opens a subscript).
fn name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The estimate for one word's characters and how deep they nest: read once following
/// quotes (`'…'`, `$'…'` with its escapes, `"…"`) and once ignoring them, the larger
/// estimate kept, so a quote the parser reads otherwise than this reading hides no cost.
/// The depth is the first reading's (quoted text is not parsed; the tokenizer's own
/// recursion is bounded before it runs, [`exceeds_nesting`]).
fn word_estimate(w: &[u8]) -> (u64, usize) {
    let (a, depth) = word_reading(w, true);
    let (b, _) = word_reading(w, false);
    (a.max(b), depth)
}

/// One reading of a word's characters; `quotes`: whether quoted text is skipped.
fn word_reading(b: &[u8], quotes: bool) -> (u64, usize) {
    let mut stack = Stack {
        word: true,
        ..Stack::default()
    };
    // Where the last `$` the word grammar reads as one is (`\$` and the second `$` of
    // `$$` are not: a `'` after them opens a plain quote, not `$'…'`).
    let mut dollar: Option<usize> = None;
    let mut deepest = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let top = stack.top();
        let from = i;
        let after_name = i > 0 && name_byte(b[i - 1]);
        let after_dollar = i > 0 && b[i - 1] == b'$';
        if quotes && top == Some(Open::DoubleQuote) {
            match c {
                b'\\' => i += 1,
                b'"' => stack.pop(true),
                b'$' if matches!(b.get(i + 1), Some(b'(') | Some(b'{')) => {
                    stack.push(if b[i + 1] == b'(' {
                        Open::Substitution
                    } else {
                        Open::Expansion
                    });
                    i += 1;
                }
                b'`' => stack.push(Open::Backtick),
                _ => {}
            }
        } else {
            match c {
                b'\\' => i += 1,
                // A `$` read as one (not escaped, not the second of `$$`).
                b'$' => {
                    dollar = if i > 0 && dollar == Some(i - 1) {
                        None
                    } else {
                        Some(i)
                    }
                }
                // `$'…'`: a backslash escapes a quote inside.
                b'\'' if quotes && i > 0 && dollar == Some(i - 1) => {
                    i += 1;
                    while i < b.len() && b[i] != b'\'' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\'' if quotes => i = find_from(b, i + 1, b'\''),
                _ if top.is_some_and(|t| t.closed_by(c)) => stack.pop(true),
                b'"' if quotes => stack.push(Open::DoubleQuote),
                b'`' => stack.push(Open::Backtick),
                b'(' if i > 0 && matches!(b[i - 1], b'$' | b'<' | b'>') => {
                    stack.push(Open::Substitution);
                }
                // `$((`: arithmetic, whose own parentheses the grammar reads as arithmetic.
                b'(' if top == Some(Open::Substitution)
                    && i > 1
                    && b[i - 2] == b'$'
                    && b[i - 1] == b'(' =>
                {
                    stack.push(Open::Arithmetic);
                }
                b'(' if stack.in_arithmetic() => stack.push(Open::ArithmeticParen),
                b'(' => stack.push(Open::Paren),
                b'{' if after_dollar => stack.push(Open::Expansion),
                b'[' if after_dollar => stack.push(Open::Subscript),
                b'[' if after_name && top == Some(Open::Expansion) => stack.push(Open::Index),
                b'[' if after_name => stack.push(Open::Subscript),
                _ => {}
            }
        }
        deepest = deepest.max(stack.frames.len());
        i += 1;
        stack.add((i.min(b.len()) - from) as u64);
    }
    (stack.finish(), deepest)
}

/// Returns `Some(depth)` when the raw text nests deeper than `limit` in what the parser's
/// tokenizer recurses on (`$(`, `${`, `$[`): checked before it runs. (The grammar's own
/// depth, keywords, groups and subshells included, is [`estimate`]'s, on the tokens.)
///
/// Over-approximates: parentheses, quotes and backquotes are followed only so that a
/// closer pops the construct it closes; a closer pops only the kind it closes, so text
/// this reading misjudges holds its substitutions open longer, never shorter.
pub(super) fn exceeds_nesting(text: &str, limit: usize) -> Option<usize> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Opened {
        Paren,
        Substitution,
        Expansion,
        Arithmetic,
        DoubleQuote,
        Backtick,
    }
    let recursive = |o: &Opened| {
        matches!(
            o,
            Opened::Substitution | Opened::Expansion | Opened::Arithmetic
        )
    };
    let b = text.as_bytes();
    let mut stack: Vec<Opened> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        let top = stack.last().copied();
        let at_word_start = word_start;
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        let after_dollar = i > 0 && b[i - 1] == b'$';
        let opened = match (c, top) {
            (b'\\', _) => {
                i += 1;
                None
            }
            (b'"', Some(Opened::DoubleQuote)) | (b'`', Some(Opened::Backtick)) => {
                stack.pop();
                None
            }
            (b'`', _) => Some(Opened::Backtick),
            (b'(', _) if after_dollar => Some(Opened::Substitution),
            (b'{', _) if after_dollar => Some(Opened::Expansion),
            (b'[', _) if after_dollar => Some(Opened::Arithmetic),
            (_, Some(Opened::DoubleQuote)) => None,
            (b'\'', _) => {
                i = find_from(b, i + 1, b'\'');
                None
            }
            (b'"', _) => Some(Opened::DoubleQuote),
            (b'(', _) => Some(Opened::Paren),
            (b')', Some(Opened::Paren | Opened::Substitution))
            | (b'}', Some(Opened::Expansion))
            | (b']', Some(Opened::Arithmetic)) => {
                if stack.pop().as_ref().is_some_and(recursive) {
                    depth -= 1;
                }
                None
            }
            (b'#', _) if at_word_start => {
                i = find_from(b, i, b'\n');
                None
            }
            _ => None,
        };
        if let Some(o) = opened {
            if recursive(&o) {
                depth += 1;
                if depth > limit {
                    return Some(depth);
                }
            }
            stack.push(o);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests;
