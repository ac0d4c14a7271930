//! Word expansion as bash performs it, as far as the text fixes the result: brace
//! expansion, tilde prefixes, parameter expansion (with the variables of [`Env`]),
//! quote removal, word splitting on `IFS`, and the marking of globs.
//!
//! Owns: turning the raw text of one word into the fields bash would pass to the
//! program, each either fully known or marked with why it is not ([`Dynamic`]), plus
//! the nested code the word runs (command and process substitutions) and the
//! arithmetic it evaluates. Globs are kept as patterns ([`Dynamic::Glob`]): the
//! analyzer never lists a file system.
//!
//! Bounded: a brace expansion yields at most [`MAX_BRACE_WORDS`] words (beyond, the
//! word stays opaque); every byte that evaluation produces (brace words, variable
//! values) is charged to a budget proportional to the input, so no text can make the
//! output — or the work — grow faster than the text; values longer than
//! [`MAX_VALUE`] are unknown; pattern operators give up past a fixed amount of
//! matching work.

use crate::env::{Env, HOME, Val};
use crate::model::Dynamic;
use crate::pattern::Pattern;
use crate::word::{Subst, next_char};

mod brace;
mod fields;
mod params;
mod printf;
mod scan;
pub(crate) use brace::brace_expands;
use brace::{Work, brace_expand};
pub(crate) use printf::printf;

/// Most words one brace expansion may produce; a larger expansion stays opaque.
pub(crate) const MAX_BRACE_WORDS: usize = 256;

/// Deepest nesting of braces inside one brace expansion.
const MAX_BRACE_DEPTH: usize = 16;

/// Budget bytes one brace-expanded word costs beyond its length.
const BRACE_WORD_COST: usize = 32;

/// Deepest nesting of parameter expansions inside operands (`${a:-${b:-…}}`).
const MAX_OPERAND_DEPTH: usize = 16;

/// Most matching steps (characters × pattern elements) of one pattern operator.
const MAX_MATCH_WORK: usize = 1 << 22;

/// Matching steps paid for with one byte of the evaluation budget.
const MATCH_STEPS_PER_BYTE: usize = 16;

/// How a word is expanded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A command word or redirection target: brace expansion, word splitting, globs.
    Command,
    /// The value of an assignment: no splitting or globs, `~` also after `:`.
    Assign,
    /// A here-string, `case` subject or `[[ ]]` operand: no splitting or globs.
    Quoted,
}

/// One resulting field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Field {
    /// The value; a leading `~` is the home directory. Unknown parts are kept as
    /// written.
    pub value: String,
    /// Why the value at run time can differ (empty when it cannot). A glob is
    /// [`Dynamic::Glob`] with the pattern.
    pub dynamic: Vec<Dynamic>,
}

impl Field {
    pub(crate) fn literal(&self) -> bool {
        self.dynamic.is_empty()
    }
}

/// The result of expanding one word.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    pub fields: Vec<Field>,
    /// Nested code the word runs.
    pub substs: Vec<Subst>,
    /// Arithmetic text the word evaluates (it may assign variables).
    pub arith: Vec<String>,
    /// Why the word is not fully known when it yields no field at all.
    pub dynamic: Vec<Dynamic>,
}

impl Expansion {
    /// Every reason any field differs at run time.
    pub(crate) fn all_dynamic(&self) -> Vec<Dynamic> {
        let mut out = self.dynamic.clone();
        for f in &self.fields {
            for d in &f.dynamic {
                if !out.contains(d) {
                    out.push(d.clone());
                }
            }
        }
        out
    }

    /// The fields joined by spaces as one value, literal only when all are.
    pub(crate) fn joined(&self) -> Field {
        let mut f = Field::default();
        for (i, x) in self.fields.iter().enumerate() {
            if i > 0 {
                f.value.push(' ');
            }
            f.value.push_str(&x.value);
        }
        f.dynamic = self.all_dynamic();
        f
    }
}

/// A run of text on its way to becoming fields.
#[derive(Debug, Clone)]
enum Piece {
    /// Text of the word itself: never split; globbed when unquoted.
    Lit { s: String, quoted: bool },
    /// The value of an expansion: split and globbed when unquoted.
    Exp {
        s: String,
        quoted: bool,
        written: String,
    },
    /// A part only known at run time, kept as written.
    Atom { text: String, why: Vec<Dynamic> },
    /// A field boundary between the elements of `"${a[@]}"`.
    Break,
    /// The field exists even when empty (`""`).
    Has,
}

/// Where the scanner is.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    /// Inside double quotes (an operand of an expansion inside `"…"`).
    dq: bool,
    /// `~` is expanded after an unquoted `:` too (assignment values).
    assign: bool,
    /// A leading `~` is expanded.
    tilde: bool,
}

/// The value a parameter reference resolves to.
#[derive(Debug, Clone)]
enum Rv {
    Unknown,
    Unset,
    One(String),
    /// Array elements (`[@]` or `[*]`), and whether it was `*`.
    Many(Vec<String>, bool),
}

/// Expands words against the variables of an [`Env`].
pub(crate) struct Expander<'a> {
    pub env: &'a mut Env,
    /// Bytes evaluation may still produce.
    pub budget: &'a mut usize,
    /// Shell options may change what globs match (`shopt -s dotglob`, `GLOBIGNORE`).
    pub globs_changed: bool,
    /// `echo` and `printf` are bash's own: `$(echo …)` may be evaluated.
    pub static_ok: bool,
    substs: Vec<Subst>,
    arith: Vec<String>,
    depth: usize,
}

impl<'a> Expander<'a> {
    pub(crate) fn new(env: &'a mut Env, budget: &'a mut usize) -> Self {
        Self {
            env,
            budget,
            globs_changed: false,
            static_ok: false,
            substs: Vec::new(),
            arith: Vec::new(),
            depth: 0,
        }
    }

    /// Expand one word.
    pub(crate) fn word(&mut self, raw: &str, mode: Mode) -> Expansion {
        let mut out = Expansion::default();
        // Most words have nothing to expand: no quote, expansion, brace, tilde or glob.
        if !raw.is_empty()
            && !raw.bytes().any(|c| {
                matches!(
                    c,
                    b'$' | b'\'' | b'"' | b'`' | b'\\' | b'{' | b'~' | b'*' | b'?' | b'[' | b'('
                ) || (mode == Mode::Assign && c == b':')
            })
        {
            out.fields.push(Field {
                value: raw.to_owned(),
                dynamic: Vec::new(),
            });
            return out;
        }
        let raws = if mode == Mode::Command {
            match self.brace(raw) {
                Some(words) => words,
                None => {
                    out.dynamic.push(Dynamic::BraceExpansion(raw.to_owned()));
                    vec![raw.to_owned()]
                }
            }
        } else {
            vec![raw.to_owned()]
        };
        let ctx = Ctx {
            dq: false,
            assign: mode == Mode::Assign,
            tilde: true,
        };
        let split = mode == Mode::Command;
        for r in &raws {
            let pieces = self.scan(r, ctx);
            let mut fields = self.fields(pieces, split);
            if !out.dynamic.is_empty() {
                for f in &mut fields {
                    for d in &out.dynamic {
                        if !f.dynamic.contains(d) {
                            f.dynamic.push(d.clone());
                        }
                    }
                }
            }
            out.fields.append(&mut fields);
        }
        if mode != Mode::Command {
            // One value, whatever it held: `"${a[@]}"` joins with spaces.
            let f = out.joined();
            out.fields = vec![f];
        }
        out.substs = std::mem::take(&mut self.substs);
        out.arith = std::mem::take(&mut self.arith);
        out
    }

    /// Expand the body of a here-document whose delimiter was not quoted: only `$`,
    /// backticks and backslashes before `$ \` \\` and newline are special.
    pub(crate) fn heredoc(&mut self, raw: &str) -> Expansion {
        let mut pieces = Vec::new();
        let b = raw.as_bytes();
        let mut lit = String::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' if i + 1 < b.len() && matches!(b[i + 1], b'$' | b'`' | b'\\' | b'\n') => {
                    if b[i + 1] != b'\n' {
                        lit.push(b[i + 1] as char);
                    }
                    i += 2;
                }
                b'$' | b'`' => {
                    flush(&mut lit, true, &mut pieces);
                    i = if b[i] == b'$' {
                        self.dollar(raw, i, true, &mut pieces)
                    } else {
                        self.backtick(raw, i, &mut pieces)
                    };
                }
                _ => {
                    let ch = next_char(raw, i);
                    lit.push_str(ch);
                    i += ch.len();
                }
            }
        }
        flush(&mut lit, true, &mut pieces);
        let fields = self.fields(pieces, false);
        let mut out = Expansion::default();
        let mut f = Field::default();
        for x in fields {
            f.value.push_str(&x.value);
            for d in x.dynamic {
                if !f.dynamic.contains(&d) {
                    f.dynamic.push(d);
                }
            }
        }
        out.fields.push(f);
        out.substs = std::mem::take(&mut self.substs);
        out.arith = std::mem::take(&mut self.arith);
        out
    }

    /// The value of an assignment `NAME=raw` as a variable value.
    pub(crate) fn assign_value(&mut self, raw: &str) -> (Val, Expansion) {
        let e = self.word(raw, Mode::Assign);
        let val = match e.fields.first() {
            Some(f) if f.literal() => Val::Str(f.value.clone()),
            _ => Val::Unknown,
        };
        (val, e)
    }

    fn charge(&mut self, n: usize) -> bool {
        if *self.budget >= n {
            *self.budget -= n;
            true
        } else {
            *self.budget = 0;
            false
        }
    }

    // ---- brace expansion ---------------------------------------------------------

    /// Brace-expand `raw`; `None` when the expansion is too large or too deep.
    fn brace(&mut self, raw: &str) -> Option<Vec<String>> {
        if !raw.contains('{') {
            return Some(vec![raw.to_owned()]);
        }
        // Scanning is bounded per word; the words built are paid from the budget,
        // each also for what analyzing one more word costs.
        if *self.budget == 0 {
            return None;
        }
        let scan = 8 * raw.len() + 256;
        let mut work = Work {
            scan,
            build: *self.budget,
        };
        let out = brace_expand(raw, 0, &mut work)?;
        if out.len() > 1 {
            let spent = *self.budget - work.build + (scan - work.scan);
            self.charge(spent + BRACE_WORD_COST * out.len())
                .then_some(())?;
        }
        Some(out)
    }
}

/// Write the home directory as `~` where a path reading can take it so: at the start,
/// or after `=`, `@` or `:` (where programs take a path from an argument, as in
/// `--file=~/x` or curl's `@~/x`), followed by `/` or the end. Elsewhere it is
/// `$HOME`, and the value is not known (false).
fn render_home(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len() + 4);
    let mut known = true;
    let mut prev: Option<char> = None;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == HOME {
            let after_ok = it.peek().is_none_or(|n| *n == '/');
            let before_ok = prev.is_none_or(|p| matches!(p, '=' | '@' | ':'));
            if after_ok && before_ok {
                out.push('~');
            } else {
                out.push_str("$HOME");
                known = false;
            }
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    (out, known)
}

/// A field value as a variable value: a leading `~` (the home directory in a field)
/// becomes the home marker again.
pub(crate) fn home_marker(v: &str) -> String {
    match v.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{HOME}{rest}"),
        _ => v.to_owned(),
    }
}

fn flush(lit: &mut String, quoted: bool, out: &mut Vec<Piece>) {
    if !lit.is_empty() {
        out.push(Piece::Lit {
            s: std::mem::take(lit),
            quoted,
        });
    }
}

fn atom(written: &str) -> Piece {
    Piece::Atom {
        text: written.to_owned(),
        why: vec![Dynamic::ParameterExpansion(written.to_owned())],
    }
}

/// The text of pieces, `None` when a part is unknown.
fn pieces_text(pieces: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Lit { s: x, .. } | Piece::Exp { s: x, .. } => s.push_str(x),
            Piece::Atom { .. } => return None,
            Piece::Break => s.push(' '),
            Piece::Has => {}
        }
    }
    Some(s)
}

fn is_pattern_char(c: char) -> bool {
    matches!(
        c,
        '*' | '?' | '[' | ']' | '\\' | '(' | ')' | '|' | '!' | '@' | '+'
    )
}

pub(crate) fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// An integer literal (`3`, `-1`, ` 2 `), as a subscript or offset.
fn int_literal(s: &str) -> Option<i64> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d.trim_start()),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    Some(if neg { -v } else { v })
}

fn arith_int(s: &str) -> Option<i64> {
    let t = s.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(t);
    int_literal(t)
}

/// The prefix length chosen among the matching ones (shortest or longest).
fn pick(ok: &[bool], longest: bool) -> Option<usize> {
    let found = if longest {
        ok.iter().rposition(|x| *x)
    } else {
        ok.iter().position(|x| *x)
    };
    Some(found.unwrap_or(0))
}

/// `${s/p/r}` and friends; `None` past the work bound.
fn replace(s: &str, p: &Pattern, r: &str, mode: u8) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len();
    let work = n.saturating_mul(n + 1).saturating_mul(p.len() + 1);
    if work > MAX_MATCH_WORK {
        return None;
    }
    // The longest match starting at `i`, if any.
    let longest_at = |i: usize| -> Option<usize> {
        let ok = p.prefix_matches(&chars[i..]);
        ok.iter().rposition(|x| *x)
    };
    match mode {
        b'#' => Some(match longest_at(0) {
            Some(m) => format!("{r}{}", chars[m..].iter().collect::<String>()),
            None => s.to_owned(),
        }),
        b'%' => {
            for i in 0..=n {
                let ok = p.prefix_matches(&chars[i..]);
                if ok.get(n - i).copied().unwrap_or(false) {
                    let head: String = chars[..i].iter().collect();
                    return Some(format!("{head}{r}"));
                }
            }
            Some(s.to_owned())
        }
        _ => {
            let all = mode == b'a';
            let mut out = String::new();
            let mut i = 0;
            let mut done = false;
            while i < n {
                if !done && let Some(m) = longest_at(i).filter(|m| *m > 0) {
                    out.push_str(r);
                    i += m;
                    done = !all;
                    continue;
                }
                out.push(chars[i]);
                i += 1;
            }
            Some(out)
        }
    }
}

/// bash's `${x@Q}` for values without control characters.
fn single_quote(s: &str) -> Option<String> {
    if s.chars().any(char::is_control) {
        return None;
    }
    Some(format!("'{}'", s.replace('\'', "'\\''")))
}

#[cfg(test)]
mod tests;
