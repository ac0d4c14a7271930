//! How deep text nests, and how many times brush-parser would read it: both measured on
//! the raw text before the parser sees it.
//!
//! brush-parser 0.4.0's grammars backtrack without memory: where a construct can be read
//! two ways (a `(` as arithmetic or as a subshell, a `case` item with or without `;;`, a
//! `NAME[` as an array element or as literal text), a failure inside it makes the parser
//! read everything inside again the other way, and nested constructs multiply. 30 nested
//! `(` around `a;` took it 19 s, six nested subscripts in an array-element word more
//! than 10 s, 45 bytes of `(` hours. So one estimate covers every such shape: each byte
//! counts once, times the factor of every construct it sits in (how many times the parser
//! may read that construct's inside, measured per kind of opener), and text whose estimate
//! is over [`BUDGET`] is refused before the parser sees it. A construct left unclosed
//! always counts double: the parser gives up on it only after trying every reading.

use super::scan::{find_from, heredoc_start, keyword_at, past_heredoc_bodies};

/// Most byte-readings the estimate allows. The costliest reading measured (a nested
/// subscript's inside) takes the parser about 0.1 µs per byte, so text at the budget
/// parses in well under a second; real scripts measure far below it.
pub(crate) const BUDGET: u64 = 1 << 21;

/// Readings per byte always allowed, however long the text: long text at this rate
/// parses in time linear in its length.
const READINGS_PER_BYTE: u64 = 4;

/// Why text was refused before the parser saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Constructs open at once, more than the limit allows.
    TooDeep(usize),
    /// The estimate of the parser's readings, over [`BUDGET`].
    TooCostly(u64),
}

/// A construct opened in the text, by what its opener was.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Open {
    /// `(` of a subshell, an arithmetic command or a parenthesis in arithmetic.
    Paren,
    /// `$(`, `<(` or `>(`.
    Substitution,
    /// `{` of a group.
    Brace,
    /// `${`.
    Expansion,
    /// `"` holding a substitution.
    DoubleQuote,
    /// `` ` ``.
    Backtick,
    /// `if`, `for`, `while`, `until`, `select`.
    Keyword,
    /// `case`.
    Case,
    /// `[` after a name in a word (`x[`, `a[$i]=`): an array element or literal text.
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
            Open::Paren | Open::Case | Open::Subscript => 2,
            _ if closed => 1,
            _ => 2,
        }
    }

    /// Whether `c` closes this construct.
    fn closed_by(self, c: u8) -> bool {
        match self {
            Open::Paren | Open::Substitution => c == b')',
            Open::Brace | Open::Expansion => c == b'}',
            Open::Subscript | Open::Index => c == b']',
            Open::DoubleQuote => c == b'"',
            Open::Backtick => c == b'`',
            Open::Keyword | Open::Case => false,
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
}

impl Stack {
    fn top(&self) -> Option<Open> {
        self.frames.last().map(|f| f.open)
    }

    /// Whether a `<<` here starts a here-document: only among commands, never inside
    /// arithmetic, a subscript, an expansion or quotes (where the parser reads it as a
    /// shift or as text, and the lines after it as commands).
    fn among_commands(&self) -> bool {
        self.frames.iter().all(|f| {
            matches!(
                f.open,
                Open::Substitution | Open::Brace | Open::Backtick | Open::Keyword | Open::Case
            )
        })
    }

    fn push(&mut self, open: Open) {
        self.frames.push(Frame { open, inside: 0 });
    }

    /// Ends the innermost construct; what it holds counts in its parent times its factor.
    fn pop(&mut self, closed: bool) {
        if let Some(f) = self.frames.pop() {
            let cost = f.inside.saturating_mul(f.open.factor(closed));
            self.add(cost);
        }
    }

    fn add(&mut self, cost: u64) {
        let at = match self.frames.last_mut() {
            Some(f) => &mut f.inside,
            None => &mut self.outside,
        };
        *at = at.saturating_add(cost);
    }

    /// The estimate for the whole text, every construct still open ended unclosed.
    fn finish(mut self) -> u64 {
        while !self.frames.is_empty() {
            self.pop(false);
        }
        self.outside
    }
}

/// Whether `c` may be part of a name (`[` after one opens a subscript).
fn name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Measures the text: the estimate of the parser's byte-readings, or `Err` when it nests deeper than `limit` or when the estimate of
/// the parser's readings is over [`BUDGET`] (or, for long text, over
/// [`READINGS_PER_BYTE`] times its length).
///
/// Over-approximates what the parser will recurse on: every `(`, `{`, `$(`, `${`,
/// backtick, double quote opened inside a substitution, `[` after a name, and every
/// `if`, `case`, `for`, `while`, `until`, `select` keyword counts one level until its
/// closer. Over-counting only refuses very odd text; under-counting could crash or
/// hang, so closers pop only the kind they close.
pub(crate) fn measure(text: &str, limit: usize) -> Result<u64, Refusal> {
    let b = text.as_bytes();
    let mut stack = Stack::default();
    let mut i = 0;
    let mut word_start = true;
    // Here-documents started on the current line: their bodies are text, read once.
    let mut heredocs: Vec<(Vec<u8>, bool)> = Vec::new();
    while i < b.len() {
        let c = b[i];
        let top = stack.top();
        let at_word_start = word_start;
        let after_name = i > 0 && name_byte(b[i - 1]);
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        let from = i;
        if top == Some(Open::DoubleQuote) {
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
            // A word ends at a blank or an operator: a subscript left open in it ends too
            // (not at `<` or `>`, a shift in a subscript's arithmetic).
            if matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b')') {
                while stack.top() == Some(Open::Subscript) {
                    stack.pop(false);
                }
            }
            let top = stack.top();
            match c {
                b'\\' => i += 1,
                b'\'' => i = find_from(b, i + 1, b'\''),
                b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) == Some(&b'<') => i += 2,
                b'<' if b.get(i + 1) == Some(&b'<') && stack.among_commands() => {
                    let (heredoc, end) = heredoc_start(b, i + 2);
                    heredocs.push(heredoc);
                    stack.add((end - from) as u64);
                    i = end;
                    word_start = false;
                    continue;
                }
                b'\n' if !heredocs.is_empty() => {
                    let end = past_heredoc_bodies(b, i + 1, heredocs.drain(..));
                    stack.add((end - from) as u64);
                    i = end;
                    word_start = true;
                    continue;
                }
                _ if top.is_some_and(|t| t.closed_by(c)) => stack.pop(true),
                b'"' => stack.push(Open::DoubleQuote),
                b'`' => stack.push(Open::Backtick),
                b'(' if top == Some(Open::Case) => {}
                b'(' if i > 0 && matches!(b[i - 1], b'$' | b'<' | b'>') => {
                    stack.push(Open::Substitution);
                }
                b'(' => stack.push(Open::Paren),
                b'{' if i > 0 && b[i - 1] == b'$' => stack.push(Open::Expansion),
                // `$[…]`: arithmetic, as old bash spells it.
                b'[' if i > 0 && b[i - 1] == b'$' => stack.push(Open::Subscript),
                b'{' => stack.push(Open::Brace),
                b'[' if after_name && top == Some(Open::Expansion) => stack.push(Open::Index),
                b'[' if after_name => stack.push(Open::Subscript),
                // A comment, to the end of its line (the newline is read as one).
                b'#' if at_word_start => {
                    i = find_from(b, i, b'\n');
                    stack.add((i - from) as u64);
                    continue;
                }
                _ if at_word_start && c.is_ascii_lowercase() => {
                    let (word, end) = keyword_at(b, i);
                    match word {
                        Some(b"if" | b"for" | b"while" | b"until" | b"select") => {
                            stack.push(Open::Keyword);
                        }
                        Some(b"case") => stack.push(Open::Case),
                        Some(b"fi" | b"done") if top == Some(Open::Keyword) => {
                            stack.pop(true);
                        }
                        Some(b"esac") if top == Some(Open::Case) => stack.pop(true),
                        _ => {}
                    }
                    i = end;
                    word_start = false;
                    stack.add((end - from) as u64);
                    if stack.frames.len() > limit {
                        return Err(Refusal::TooDeep(stack.frames.len()));
                    }
                    continue;
                }
                _ => {}
            }
        }
        if stack.frames.len() > limit {
            return Err(Refusal::TooDeep(stack.frames.len()));
        }
        i += 1;
        stack.add((i.min(b.len()) - from) as u64);
    }
    // Long text is read in time that grows with its length; only the readings beyond a
    // few per byte are the parser's backtracking.
    let allowed = BUDGET.max((b.len() as u64).saturating_mul(READINGS_PER_BYTE));
    match stack.finish() {
        cost if cost > allowed => Err(Refusal::TooCostly(cost)),
        cost => Ok(cost),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MAX_NESTING, parse};
    use super::*;

    /// `text` is refused before the parser, saying `why`, at once.
    fn refused_quickly(text: &str, why: &str) {
        let t = std::time::Instant::now();
        let e = parse(text, MAX_NESTING).expect_err("refused");
        assert!(e.contains(why), "{text}: {e}");
        assert!(t.elapsed().as_secs() < 2, "{text}: {:?}", t.elapsed());
    }

    /// A shape's name, and its text of `n` levels.
    type Shape = (&'static str, fn(usize) -> String);

    /// Every shape brush-parser 0.4.0 was seen to backtrack over exponentially, as text
    /// of `n` levels (or pieces). The first two were found by fuzzing
    /// (`fuzz/regressions/shell/timeout-open-*`), the others by reading its grammars.
    const SHAPES: &[Shape] = &[
        ("unclosed parentheses", |n| format!("{}a,", "(( ".repeat(n))),
        ("unclosed substitutions", |n| {
            format!("{}a,", "$(".repeat(n))
        }),
        ("open subscripts", |n| {
            format!("echo U[{}", "${Y[}".repeat(n))
        }),
        ("nested subscripts", |n| {
            format!("x[{}0{}]=1", "${a[".repeat(n), "]}".repeat(n))
        }),
        ("subscripts between pieces", |n| {
            format!("x[{}", "$1b[".repeat(n))
        }),
        ("parentheses around a semicolon", |n| {
            format!("{}a;{}", "(".repeat(n), ")".repeat(n))
        }),
        ("subshells around a semicolon", |n| {
            format!("{}a;{}", "( ".repeat(n), " )".repeat(n))
        }),
        ("case items without ;;", |n| {
            format!("{}:{}", "case x in a) ".repeat(n), ";esac".repeat(n))
        }),
    ];

    /// Each shape is refused once its estimate passes the budget, and the largest one
    /// under the budget still parses (or fails) quickly.
    #[test]
    fn every_backtracking_shape_is_refused_before_it_costs() {
        for (name, shape) in SHAPES {
            let mut n = 1;
            while measure(&shape(n), MAX_NESTING).is_ok() {
                n += 1;
                assert!(n < 60, "{name}: never over the budget");
            }
            refused_quickly(&shape(n), "read again and again");
            refused_quickly(&shape(n + 8), "read again and again");
            let t = std::time::Instant::now();
            let _ = parse(&shape(n - 1), MAX_NESTING);
            assert!(
                t.elapsed().as_secs() < 2,
                "{name} at {}: {:?}",
                n - 1,
                t.elapsed()
            );
        }
    }

    /// The inputs fuzzing and the grammar probe left in `fuzz/`, each refused at once.
    #[test]
    fn the_recorded_inputs_are_refused() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz/regressions/shell");
        for name in [
            "timeout-open-parentheses",
            "timeout-open-subscripts",
            "timeout-open-subscripts-eight",
            "timeout-nested-closed-subscripts",
            "timeout-unclosed-subscripts-between-pieces",
            "timeout-nested-parentheses-semicolon",
            "timeout-nested-case-without-double-semicolon",
        ] {
            let path = std::path::PathBuf::from(format!("{dir}/{name}"));
            let text = cordon_fs::read_regular(&path, 1 << 20).expect("reproducer");
            let text = String::from_utf8_lossy(&text);
            refused_quickly(&text, "");
        }
    }

    /// Real nesting parses: closed subscripts, substitutions, groups, keywords, a dozen
    /// nested subshells, here-documents holding other languages.
    #[test]
    fn real_nesting_is_not_refused() {
        for text in [
            "echo \"${a[0]}${a[1]}${a[2]}${a[3]}${a[4]}${a[5]}\"".to_owned(),
            "echo ${a[${i}]} ${a[${b[${c[0]}]}]} ${!a[@]} ${#a[*]} ${a[@]:1:2}".to_owned(),
            "x[${a[0]}${a[1]}${a[2]}]=${b[$j]}; echo ${x[@]}".to_owned(),
            "echo '${a[}' \"${b[}\"".to_owned(),
            "echo $(( (1 + (2 * (3))) ))".to_owned(),
            "( ( ( ( ( ( ( ( true ) ) ) ) ) ) ) )".to_owned(),
            format!("{}a;{}", "( ".repeat(12), " )".repeat(12)),
            format!("{}x{}", "$(".repeat(40), ")".repeat(40)),
            format!("{}:{}", "if a; then ".repeat(40), "; fi".repeat(40)),
            format!("{}:{}", "case x in a) ".repeat(10), ";; esac".repeat(10)),
            "v=$v/x; echo ${#v}\n".repeat(200),
            "(a); ".repeat(10_000),
            format!(
                "python3 - <<'PY'\n{}PY\necho done\n",
                "print([x[i][j] for (i, j) in ((a, b), (c, [d[e[f[0]]]]))])\n".repeat(300)
            ),
            // Keywords and brackets in comments are not code.
            "# for each file (or if none is left [\n".repeat(100) + "echo hi\n",
        ] {
            assert!(measure(&text, MAX_NESTING).is_ok(), "{text}");
            assert!(parse(&text, MAX_NESTING).is_ok(), "{text}");
        }
    }

    /// The project's own shell scripts, real code with here-documents of Python and TOML,
    /// measure far below the budget.
    #[test]
    fn the_projects_scripts_are_far_below_the_budget() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut seen = 0;
        for dir in ["scripts", "bench", ".ci"] {
            let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(text) = cordon_fs::read_regular_text(&entry.path(), 1 << 20) else {
                    continue;
                };
                if !text.starts_with("#!/bin/sh")
                    && !text.starts_with("#!/usr/bin/env bash")
                    && !text.starts_with("#!/bin/bash")
                {
                    continue;
                }
                seen += 1;
                let cost = measure(&text, MAX_NESTING).expect("measured");
                assert!(cost < BUDGET / 8, "{}: {cost}", entry.path().display());
            }
        }
        assert!(seen >= 10, "only {seen} scripts found");
    }

    /// Here-documents are text only among commands: after a `<<` in arithmetic, a
    /// subscript or quotes the next lines are measured as code.
    #[test]
    fn a_shift_is_not_a_here_document() {
        let costly = format!("{}a;{}", "(".repeat(30), ")".repeat(30));
        for head in [
            "echo $((1<<EOF))",
            "(( x<<EOF ))",
            "a[1<<EOF]=1",
            "echo $[1<<EOF]",
        ] {
            let text = format!("{head}\n{costly}\nEOF\n");
            assert!(measure(&text, MAX_NESTING).is_err(), "{head}");
        }
        let text = format!("cat <<EOF\n{costly}\nEOF\n");
        assert!(measure(&text, MAX_NESTING).is_ok());
    }

    #[test]
    fn nesting_is_measured() {
        assert!(measure("echo $(echo $(echo hi))", 64).is_ok());
        let deep = format!("{}x{}", "$(".repeat(100), ")".repeat(100));
        assert_eq!(measure(&deep, 64), Err(Refusal::TooDeep(65)));
        let ifs = "if true; then ".repeat(70) + &"fi; ".repeat(70);
        assert!(matches!(measure(&ifs, 64), Err(Refusal::TooDeep(_))));
        let cases = "case x in a) echo;; esac; ".repeat(1000);
        assert!(measure(&cases, 64).is_ok());
        // Each byte counts once, times the factors of what holds it.
        assert_eq!(measure("echo hi", 64), Ok(7));
        assert_eq!(measure("(a)", 64), Ok(1 + 2 * 2));
        assert_eq!(measure("$(a)", 64), Ok(2 + 2));
        assert_eq!(measure("$(a", 64), Ok(1 + 2 * 2));
    }
}
