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

use crate::env::{Env, HOME, MAX_VALUE, Val};
use crate::model::Dynamic;
use crate::pattern::Pattern;
use crate::word::{
    self, Subst, SubstKind, find_byte, match_brace, match_paren, next_char, skip_dq, slice,
};

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

    // ---- scanning ----------------------------------------------------------------

    /// Scan a word (or an operand) into pieces.
    fn scan(&mut self, raw: &str, ctx: Ctx) -> Vec<Piece> {
        let mut out = Vec::new();
        let b = raw.as_bytes();
        let mut lit = String::new();
        let mut i = 0;
        let mut at_start = ctx.tilde;
        while i < b.len() {
            if at_start {
                at_start = false;
                if b[i] == b'~' {
                    let used = self.tilde(raw, i, ctx, &mut out);
                    if used > 0 {
                        i += used;
                        continue;
                    }
                }
            }
            match b[i] {
                b'\\' if ctx.dq => {
                    if i + 1 < b.len() && matches!(b[i + 1], b'$' | b'`' | b'"' | b'\\') {
                        flush(&mut lit, false, &mut out);
                        out.push(Piece::Lit {
                            s: (b[i + 1] as char).to_string(),
                            quoted: true,
                        });
                        i += 2;
                    } else if i + 1 < b.len() && b[i + 1] == b'\n' {
                        i += 2;
                    } else {
                        flush(&mut lit, false, &mut out);
                        out.push(Piece::Lit {
                            s: "\\".into(),
                            quoted: true,
                        });
                        i += 1;
                    }
                }
                b'\\' => {
                    if i + 1 < b.len() {
                        if b[i + 1] != b'\n' {
                            flush(&mut lit, false, &mut out);
                            let ch = next_char(raw, i + 1);
                            out.push(Piece::Lit {
                                s: ch.to_owned(),
                                quoted: true,
                            });
                            i += 1 + ch.len();
                        } else {
                            i += 2;
                        }
                    } else {
                        i += 1;
                    }
                }
                b'\'' if !ctx.dq => {
                    flush(&mut lit, false, &mut out);
                    let end = find_byte(b, i + 1, b'\'');
                    out.push(Piece::Lit {
                        s: slice(raw, i + 1, end).to_owned(),
                        quoted: true,
                    });
                    out.push(Piece::Has);
                    i = end + 1;
                }
                b'"' => {
                    flush(&mut lit, false, &mut out);
                    i = self.dq(raw, i + 1, &mut out);
                }
                b'$' => {
                    flush(&mut lit, false, &mut out);
                    i = self.dollar(raw, i, ctx.dq, &mut out);
                }
                b'`' => {
                    flush(&mut lit, false, &mut out);
                    i = self.backtick(raw, i, &mut out);
                }
                b'<' | b'>' if !ctx.dq && b.get(i + 1) == Some(&b'(') => {
                    flush(&mut lit, false, &mut out);
                    let end = match_paren(b, i + 2);
                    self.substs.push(Subst {
                        kind: SubstKind::Process,
                        body: slice(raw, i + 2, end).to_owned(),
                    });
                    out.push(Piece::Atom {
                        text: slice(raw, i, end + 1).to_owned(),
                        why: vec![Dynamic::ProcessSubstitution],
                    });
                    i = end + 1;
                }
                b':' if ctx.assign => {
                    lit.push(':');
                    i += 1;
                    at_start = true;
                }
                _ => {
                    let ch = next_char(raw, i);
                    lit.push_str(ch);
                    i += ch.len();
                }
            }
        }
        flush(&mut lit, ctx.dq, &mut out);
        if ctx.dq {
            for p in &mut out {
                if let Piece::Lit { quoted, .. } | Piece::Exp { quoted, .. } = p {
                    *quoted = true;
                }
            }
        }
        out
    }

    /// A `~` prefix at `i`; returns the bytes consumed (0 when it is not one).
    fn tilde(&mut self, raw: &str, i: usize, ctx: Ctx, out: &mut Vec<Piece>) -> usize {
        let b = raw.as_bytes();
        let mut end = i + 1;
        while end < b.len() && b[end] != b'/' && !(ctx.assign && b[end] == b':') {
            end += 1;
        }
        let user = slice(raw, i + 1, end);
        if user
            .bytes()
            .any(|c| matches!(c, b'\'' | b'"' | b'\\' | b'$' | b'`'))
        {
            // A quoted tilde prefix is not a tilde expansion.
            return 0;
        }
        if user.is_empty() {
            match self.env.get("HOME") {
                Val::Str(h) => out.push(Piece::Lit { s: h, quoted: true }),
                Val::Unset => out.push(Piece::Lit {
                    s: HOME.to_string(),
                    quoted: true,
                }),
                _ => out.push(Piece::Atom {
                    text: "~".into(),
                    why: vec![Dynamic::ParameterExpansion("$HOME".into())],
                }),
            }
            return 1;
        }
        out.push(Piece::Atom {
            text: format!("~{user}"),
            why: vec![Dynamic::TildeUser(format!("~{user}"))],
        });
        end - i
    }

    /// A double-quoted section whose content starts at `i`; returns the index after
    /// the closing quote.
    fn dq(&mut self, raw: &str, mut i: usize, out: &mut Vec<Piece>) -> usize {
        let b = raw.as_bytes();
        let start = out.len();
        let mut lit = String::new();
        let mut only_lists = true;
        let mut any = false;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    break;
                }
                b'\\' if i + 1 < b.len() => {
                    match b[i + 1] {
                        b'$' | b'`' | b'"' | b'\\' => lit.push(b[i + 1] as char),
                        b'\n' => {}
                        _ => {
                            lit.push('\\');
                            let ch = next_char(raw, i + 1);
                            lit.push_str(ch);
                            i += 1 + ch.len();
                            continue;
                        }
                    }
                    i += 2;
                }
                b'$' => {
                    flush(&mut lit, true, out);
                    let list = self.is_list_expansion(raw, i);
                    i = self.dollar(raw, i, true, out);
                    any = true;
                    only_lists &= list;
                }
                b'`' => {
                    flush(&mut lit, true, out);
                    i = self.backtick(raw, i, out);
                    any = true;
                    only_lists = false;
                }
                _ => {
                    let ch = next_char(raw, i);
                    lit.push_str(ch);
                    i += ch.len();
                }
            }
        }
        if !lit.is_empty() {
            only_lists = false;
        }
        flush(&mut lit, true, out);
        for p in out.iter_mut().skip(start) {
            if let Piece::Lit { quoted, .. } | Piece::Exp { quoted, .. } = p {
                *quoted = true;
            }
        }
        // `""` makes an empty field; `"${a[@]}"` of an empty array makes none.
        if !(any && only_lists) {
            out.push(Piece::Has);
        }
        i
    }

    /// Does the expansion at `i` expand to a list (`${a[@]}`, `$@`)?
    fn is_list_expansion(&self, raw: &str, i: usize) -> bool {
        let b = raw.as_bytes();
        match b.get(i + 1) {
            Some(b'@') => true,
            Some(b'{') => {
                let end = match_brace(b, i + 2);
                let inner = slice(raw, i + 2, end);
                inner == "@" || parse_ref(inner).is_some_and(|(r, _)| matches!(r.sub, Some("@")))
            }
            _ => false,
        }
    }

    /// Handle a `$` at `i`; returns the index after the construct.
    fn dollar(&mut self, raw: &str, i: usize, quoted: bool, out: &mut Vec<Piece>) -> usize {
        let b = raw.as_bytes();
        match b.get(i + 1) {
            Some(b'(') if b.get(i + 2) == Some(&b'(') => {
                let end = match_paren(b, i + 3);
                if b.get(end + 1) == Some(&b')') {
                    let inner = slice(raw, i + 3, end);
                    self.arith.push(inner.to_owned());
                    self.scan_only(inner);
                    out.push(Piece::Atom {
                        text: slice(raw, i, end + 2).to_owned(),
                        why: vec![Dynamic::Arithmetic],
                    });
                    end + 2
                } else {
                    self.command_subst(raw, i, out)
                }
            }
            Some(b'(') => self.command_subst(raw, i, out),
            Some(b'{') => {
                let end = match_brace(b, i + 2);
                let inner = slice(raw, i + 2, end);
                let written = slice(raw, i, end + 1);
                self.param(inner, written, quoted, out);
                end + 1
            }
            Some(b'\'') if !quoted => {
                let (value, end) = word::ansi_c(raw, i + 2);
                out.push(Piece::Lit {
                    s: value,
                    quoted: true,
                });
                out.push(Piece::Has);
                end
            }
            Some(b'"') if !quoted => self.dq(raw, i + 2, out),
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                let mut end = i + 1;
                while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
                    end += 1;
                }
                let name = slice(raw, i + 1, end);
                let written = slice(raw, i, end);
                let rv = self.resolve(&Ref { name, sub: None });
                self.emit(rv, quoted, written, out);
                end
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(c) => {
                let text = slice(raw, i, i + 2);
                out.push(atom(text));
                i + 2
            }
            _ => {
                out.push(Piece::Lit {
                    s: "$".into(),
                    quoted,
                });
                i + 1
            }
        }
    }

    fn command_subst(&mut self, raw: &str, i: usize, out: &mut Vec<Piece>) -> usize {
        let b = raw.as_bytes();
        let end = match_paren(b, i + 2);
        let body = slice(raw, i + 2, end);
        let written = slice(raw, i, end + 1);
        let value = self.static_output(body);
        self.substs.push(Subst {
            kind: SubstKind::Command,
            body: body.to_owned(),
        });
        match value {
            Some(v) if self.charge(v.len()) => out.push(Piece::Exp {
                s: v,
                quoted: false,
                written: written.to_owned(),
            }),
            _ => out.push(Piece::Atom {
                text: written.to_owned(),
                why: vec![Dynamic::CommandSubstitution],
            }),
        }
        end + 1
    }

    /// The output of a command substitution whose body is one `echo` or `printf` of
    /// words the text fixes (`$(echo ~)`, `$(printf '\143at')`), trailing newlines
    /// removed as bash does; `None` for anything else.
    fn static_output(&mut self, body: &str) -> Option<String> {
        let t = body.trim_start();
        if !self.static_ok
            || !(t.starts_with("echo ") || t.starts_with("printf "))
            || body.len() > 1024
        {
            return None;
        }
        // Reading the body's words again is paid like output.
        if self.depth >= MAX_OPERAND_DEPTH || !self.charge(4 * body.len()) {
            return None;
        }
        let raws = simple_words(body)?;
        let mut words = Vec::new();
        self.depth += 1;
        for raw in raws {
            // Substitutions here are recorded by the caller's analysis of the body.
            let saved = self.substs.len();
            let e = self.word(raw, Mode::Command);
            self.substs.truncate(saved);
            if !e.dynamic.is_empty() || !e.fields.iter().all(Field::literal) {
                self.depth -= 1;
                return None;
            }
            words.extend(e.fields.into_iter().map(|f| home_marker(&f.value)));
        }
        self.depth -= 1;
        let (prog, args) = words.split_first()?;
        let mut out = match prog.as_str() {
            "echo" => {
                let mut newline = true;
                let mut escapes = false;
                let mut k = 0;
                while let Some(flag) = args.get(k).filter(|a| {
                    a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
                }) {
                    newline &= !flag.contains('n');
                    if flag.contains('e') {
                        escapes = true;
                    }
                    if flag.contains('E') {
                        escapes = false;
                    }
                    k += 1;
                }
                let text = args[k..].join(" ");
                let mut s = if escapes {
                    printf("%b", &[text])?
                } else {
                    text
                };
                if newline {
                    s.push('\n');
                }
                s
            }
            "printf" => {
                let (fmt, rest) = args.split_first()?;
                if fmt.starts_with('-') {
                    return None;
                }
                printf(fmt, rest)?
            }
            _ => return None,
        };
        while out.ends_with('\n') {
            out.pop();
        }
        Some(out)
    }

    fn backtick(&mut self, raw: &str, i: usize, out: &mut Vec<Piece>) -> usize {
        let (body, j) = word::backtick_body(raw, i);
        self.substs.push(Subst {
            kind: SubstKind::Command,
            body,
        });
        out.push(Piece::Atom {
            text: slice(raw, i, j + 1).to_owned(),
            why: vec![Dynamic::CommandSubstitution],
        });
        j + 1
    }

    /// Collect the nested code of text that is not evaluated (an operand bash would
    /// not expand): it is analyzed anyway, erring towards seeing more.
    fn scan_only(&mut self, text: &str) {
        let mut d = word::Decoded::default();
        word::scan_expansions(text, &mut d);
        self.substs.extend(d.substs);
    }

    // ---- parameters --------------------------------------------------------------

    /// Resolve a reference (`name`, `name[sub]`, `1`, `@`).
    fn resolve(&mut self, r: &Ref<'_>) -> Rv {
        if !is_name(r.name) {
            return Rv::Unknown;
        }
        let v = self.env.get(r.name);
        match r.sub {
            None => match v {
                Val::Unknown => Rv::Unknown,
                Val::Unset => Rv::Unset,
                Val::Str(s) => Rv::One(s),
                Val::Arr(a) => match a.iter().find(|(k, _)| *k == 0) {
                    Some((_, s)) => Rv::One(s.clone()),
                    None => Rv::Unset,
                },
            },
            Some(s @ ("@" | "*")) => {
                let star = s == "*";
                match v {
                    Val::Unknown => Rv::Unknown,
                    Val::Unset => Rv::Many(Vec::new(), star),
                    Val::Str(s) => Rv::Many(vec![s], star),
                    Val::Arr(a) => Rv::Many(a.into_iter().map(|(_, s)| s).collect(), star),
                }
            }
            Some(sub) => {
                let Some(k) = int_literal(sub) else {
                    self.arith.push(sub.to_owned());
                    self.scan_only(sub);
                    return Rv::Unknown;
                };
                match v {
                    Val::Unknown => Rv::Unknown,
                    Val::Unset => Rv::Unset,
                    Val::Str(s) if k == 0 || k == -1 => Rv::One(s),
                    Val::Str(_) => Rv::Unset,
                    Val::Arr(a) => {
                        let idx = if k < 0 {
                            let top = a.last().map_or(0, |(i, _)| *i as i64 + 1);
                            top + k
                        } else {
                            k
                        };
                        match a.iter().find(|(i, _)| *i as i64 == idx) {
                            Some((_, s)) => Rv::One(s.clone()),
                            None => Rv::Unset,
                        }
                    }
                }
            }
        }
    }

    /// Push the pieces of a resolved value.
    fn emit(&mut self, rv: Rv, quoted: bool, written: &str, out: &mut Vec<Piece>) {
        match rv {
            Rv::Unknown => out.push(atom(written)),
            Rv::Unset => {}
            Rv::One(s) => {
                if self.charge(s.len()) {
                    out.push(Piece::Exp {
                        s,
                        quoted,
                        written: written.to_owned(),
                    });
                } else {
                    out.push(atom(written));
                }
            }
            Rv::Many(v, star) => {
                if star && quoted {
                    let sep = match self.env.get("IFS") {
                        Val::Str(s) => s.chars().next().map(String::from).unwrap_or_default(),
                        Val::Unset => " ".into(),
                        _ => {
                            out.push(atom(written));
                            return;
                        }
                    };
                    self.emit(Rv::One(v.join(&sep)), quoted, written, out);
                    return;
                }
                let total: usize = v.iter().map(String::len).sum();
                if !self.charge(total) {
                    out.push(atom(written));
                    return;
                }
                for (k, s) in v.into_iter().enumerate() {
                    if k > 0 {
                        out.push(Piece::Break);
                    }
                    if quoted {
                        out.push(Piece::Has);
                    }
                    out.push(Piece::Exp {
                        s,
                        quoted,
                        written: written.to_owned(),
                    });
                }
            }
        }
    }

    /// `${inner}`.
    fn param(&mut self, inner: &str, written: &str, quoted: bool, out: &mut Vec<Piece>) {
        if self.depth >= MAX_OPERAND_DEPTH {
            self.scan_only(inner);
            out.push(atom(written));
            return;
        }
        // ${#ref}: the length.
        if let Some(rest) = inner.strip_prefix('#')
            && !rest.is_empty()
            && let Some((r, "")) = parse_ref(rest)
        {
            let n = match self.resolve(&r) {
                Rv::Unknown => None,
                Rv::Unset => Some(0),
                Rv::One(s) => Some(s.chars().count()),
                Rv::Many(v, _) => Some(v.len()),
            };
            match n {
                Some(n) => self.emit(Rv::One(n.to_string()), quoted, written, out),
                None => out.push(atom(written)),
            }
            return;
        }
        // ${!…}: indirection, or the indices / matching names.
        if let Some(rest) = inner.strip_prefix('!')
            && !rest.is_empty()
        {
            if let Some((r, "")) = parse_ref(rest)
                && matches!(r.sub, Some("@" | "*"))
            {
                let rv = match self.env.get(r.name) {
                    Val::Arr(a) => Rv::Many(
                        a.iter().map(|(i, _)| i.to_string()).collect(),
                        r.sub == Some("*"),
                    ),
                    Val::Str(_) => Rv::Many(vec!["0".into()], r.sub == Some("*")),
                    Val::Unset => Rv::Many(Vec::new(), false),
                    Val::Unknown => Rv::Unknown,
                };
                self.emit(rv, quoted, written, out);
                return;
            }
            let Some((r, op)) = parse_ref(rest) else {
                // `${!prefix*}`: names of variables, the inherited ones included.
                out.push(atom(written));
                return;
            };
            let target = match self.resolve(&r) {
                Rv::One(t) => t,
                _ => {
                    self.scan_only(op);
                    out.push(atom(written));
                    return;
                }
            };
            match parse_ref(&target) {
                Some((r2, "")) => {
                    let text = format!("{target}{op}");
                    self.depth += 1;
                    self.param_ref(r2, op, &text, written, quoted, out);
                    self.depth -= 1;
                }
                _ => {
                    self.scan_only(op);
                    out.push(atom(written));
                }
            }
            return;
        }
        let Some((r, op)) = parse_ref(inner) else {
            self.scan_only(inner);
            out.push(atom(written));
            return;
        };
        self.depth += 1;
        self.param_ref(r, op, inner, written, quoted, out);
        self.depth -= 1;
    }

    /// Apply the operator text `op` to the reference `r`.
    fn param_ref(
        &mut self,
        r: Ref<'_>,
        op: &str,
        _inner: &str,
        written: &str,
        quoted: bool,
        out: &mut Vec<Piece>,
    ) {
        let Some(op) = parse_op(op) else {
            self.scan_only(op);
            out.push(atom(written));
            return;
        };
        let rv = self.resolve(&r);
        match op {
            Op::Plain => self.emit(rv, quoted, written, out),
            Op::Default { colon, kind, word } => {
                let set = match &rv {
                    Rv::Unknown => {
                        self.scan_only(word);
                        out.push(atom(written));
                        return;
                    }
                    Rv::Unset => false,
                    Rv::One(s) => !(colon && s.is_empty()),
                    Rv::Many(v, _) => !(v.is_empty() || colon && v.len() == 1 && v[0].is_empty()),
                };
                let use_word = if kind == b'+' { set } else { !set };
                if !use_word {
                    self.scan_only(word);
                    if kind != b'+' {
                        self.emit(rv, quoted, written, out);
                    }
                    return;
                }
                match kind {
                    b'?' => {
                        // Unset: bash reports an error and the command does not run.
                        self.scan_only(word);
                        out.push(atom(written));
                    }
                    b'=' => {
                        let pieces = self.operand(word, quoted);
                        let value = pieces_text(&pieces);
                        if r.sub.is_none() && is_name(r.name) {
                            let v = value.clone().map_or(Val::Unknown, Val::Str);
                            self.env.set(r.name, v);
                        }
                        match value {
                            Some(v) => self.emit(Rv::One(v), quoted, written, out),
                            None => out.push(atom(written)),
                        }
                    }
                    _ => {
                        let pieces = self.operand(word, quoted);
                        out.extend(pieces);
                    }
                }
            }
            op => {
                let values = match rv {
                    Rv::Unknown => {
                        op.scan(self);
                        out.push(unknown_result(&op, written));
                        return;
                    }
                    Rv::Unset => {
                        op.scan(self);
                        return;
                    }
                    Rv::One(s) => Ok(s),
                    Rv::Many(v, star) => Err((v, star)),
                };
                let result = match values {
                    Ok(s) => self.transform(&op, &s, r.name).map(Rv::One),
                    Err((v, star)) => self
                        .transform_list(&op, v, r.name)
                        .map(|v| Rv::Many(v, star)),
                };
                match result {
                    Some(rv) => self.emit(rv, quoted, written, out),
                    None => out.push(unknown_result(&op, written)),
                }
            }
        }
    }

    /// Expand an operand (the word of `${x:-word}`).
    fn operand(&mut self, word: &str, quoted: bool) -> Vec<Piece> {
        self.scan(
            word,
            Ctx {
                dq: quoted,
                assign: false,
                tilde: !quoted,
            },
        )
    }

    /// An operand as a pattern: quoted characters made literal.
    fn pattern(&mut self, word: &str) -> Option<Pattern> {
        let pieces = self.scan(
            word,
            Ctx {
                dq: false,
                assign: false,
                tilde: true,
            },
        );
        let mut p = String::new();
        for piece in &pieces {
            match piece {
                Piece::Lit { s, quoted } | Piece::Exp { s, quoted, .. } => {
                    for c in s.chars() {
                        if *quoted && is_pattern_char(c) {
                            p.push('\\');
                        }
                        p.push(c);
                    }
                }
                Piece::Atom { .. } => return None,
                Piece::Break => p.push(' '),
                Piece::Has => {}
            }
        }
        Some(Pattern::parse(&p))
    }

    fn transform_list(&mut self, op: &Op<'_>, v: Vec<String>, name: &str) -> Option<Vec<String>> {
        match op {
            Op::Substring { off, len } => {
                let Some(off) = arith_int(off) else {
                    self.arith.push((*off).to_owned());
                    return None;
                };
                let len = len.map(arith_int);
                let n = v.len() as i64;
                let start = if off < 0 { n + off } else { off };
                if start < 0 || start > n {
                    return Some(Vec::new());
                }
                let end = match len {
                    None => n,
                    Some(None) => return None,
                    Some(Some(l)) if l < 0 => return None,
                    Some(Some(l)) => (start + l).min(n),
                };
                Some(v[start as usize..end.max(start) as usize].to_vec())
            }
            Op::Transform(b'A' | b'K' | b'k' | b'a') => None,
            _ => v.iter().map(|s| self.transform(op, s, name)).collect(),
        }
    }

    /// Apply an operator to one value; `None` when the result is not known.
    fn transform(&mut self, op: &Op<'_>, s: &str, name: &str) -> Option<String> {
        if s.contains(HOME)
            && !matches!(op, Op::Transform(b'U' | b'u' | b'L') | Op::Substring { .. })
        {
            // The home directory's spelling is not known here.
            op.scan(self);
            return None;
        }
        match op {
            Op::Remove {
                suffix,
                longest,
                pat,
            } => {
                let p = self.pattern(pat)?;
                let chars: Vec<char> = s.chars().collect();
                let work = chars.len().saturating_mul(p.len() + 1);
                if work > MAX_MATCH_WORK || !self.charge(work / MATCH_STEPS_PER_BYTE) {
                    return None;
                }
                if *suffix {
                    let rev: Vec<char> = chars.iter().rev().copied().collect();
                    let ok = p.reversed().prefix_matches(&rev);
                    let n = pick(&ok, *longest)?;
                    Some(chars[..chars.len() - n].iter().collect())
                } else {
                    let ok = p.prefix_matches(&chars);
                    let n = pick(&ok, *longest)?;
                    Some(chars[n..].iter().collect())
                }
            }
            Op::Replace { mode, pat, rep } => {
                let p = self.pattern(pat)?;
                let r = match rep {
                    Some(r) => {
                        let pieces = self.operand(r, false);
                        pieces_text(&pieces)?
                    }
                    None => String::new(),
                };
                let n = s.chars().count();
                let work = n.saturating_mul(n + 1).saturating_mul(p.len() + 1);
                if work > MAX_MATCH_WORK || !self.charge(work / MATCH_STEPS_PER_BYTE) {
                    return None;
                }
                replace(s, &p, &r, *mode)
            }
            Op::Case { upper, all, pat } => {
                let p = if pat.is_empty() {
                    None
                } else {
                    Some(self.pattern(pat)?)
                };
                let mut out = String::with_capacity(s.len());
                for (k, c) in s.chars().enumerate() {
                    let hit = (*all || k == 0)
                        && p.as_ref()
                            .is_none_or(|p| p.matches(c.encode_utf8(&mut [0; 4])));
                    if hit && *upper {
                        out.extend(c.to_uppercase());
                    } else if hit {
                        out.extend(c.to_lowercase());
                    } else {
                        out.push(c);
                    }
                }
                Some(out)
            }
            Op::Substring { off, len } => {
                let chars: Vec<char> = s.chars().collect();
                let n = chars.len() as i64;
                let Some(off) = arith_int(off) else {
                    self.arith.push((*off).to_owned());
                    return None;
                };
                let start = if off < 0 { n + off } else { off };
                if start < 0 || start > n {
                    return Some(String::new());
                }
                let end = match len {
                    None => n,
                    Some(l) => {
                        let Some(l) = arith_int(l) else {
                            self.arith.push((*l).to_owned());
                            return None;
                        };
                        if l < 0 { n + l } else { (start + l).min(n) }
                    }
                };
                if end < start {
                    return None;
                }
                Some(chars[start as usize..end as usize].iter().collect())
            }
            Op::Transform(t) => self.transform_at(*t, s, name),
            Op::Plain | Op::Default { .. } => None,
        }
    }

    /// `${x@t}`.
    fn transform_at(&mut self, t: u8, s: &str, name: &str) -> Option<String> {
        match t {
            b'U' => Some(s.to_uppercase()),
            b'L' => Some(s.to_lowercase()),
            b'u' => {
                let mut c = s.chars();
                Some(match c.next() {
                    Some(f) => f.to_uppercase().chain(c).collect(),
                    None => String::new(),
                })
            }
            b'Q' | b'K' | b'k' => single_quote(s),
            b'E' => {
                let escaped = s.replace('\'', "\\'");
                let (v, _) = word::ansi_c(&format!("{escaped}'"), 0);
                Some(v)
            }
            b'A' => {
                let q = single_quote(s)?;
                if self.env.exported(name) {
                    Some(format!("declare -x {name}={q}"))
                } else {
                    Some(format!("{name}={q}"))
                }
            }
            b'P' => {
                // Prompt expansion decodes backslash escapes (user, host, time: not
                // known here), then expands parameters and runs command substitutions.
                if s.contains(['\\', '\'', '"']) {
                    self.scan_only(s);
                    return None;
                }
                let pieces = self.scan(
                    s,
                    Ctx {
                        dq: true,
                        assign: false,
                        tilde: false,
                    },
                );
                pieces_text(&pieces)
            }
            _ => None,
        }
    }

    // ---- fields ------------------------------------------------------------------

    /// Split pieces into fields and mark globs.
    fn fields(&mut self, pieces: Vec<Piece>, split: bool) -> Vec<Field> {
        let ifs = if split
            && pieces
                .iter()
                .any(|p| matches!(p, Piece::Exp { quoted: false, .. }))
        {
            match self.env.get("IFS") {
                Val::Str(s) => Some(s),
                Val::Unset => Some(" \t\n".into()),
                _ => None,
            }
        } else {
            None
        };
        let mut b = Builder::new(split, self.globs_changed);
        for p in pieces {
            match p {
                Piece::Lit { s, quoted } => {
                    for c in s.chars() {
                        b.ch(c, quoted);
                    }
                }
                Piece::Exp { s, quoted, written } => {
                    if quoted || !split {
                        for c in s.chars() {
                            b.ch(c, true);
                        }
                        b.has = true;
                        continue;
                    }
                    let Some(ifs) = &ifs else {
                        b.atom(&written, &[Dynamic::ParameterExpansion(written.clone())]);
                        continue;
                    };
                    for c in s.chars() {
                        if ifs.contains(c) {
                            b.delimit(c.is_ascii_whitespace());
                        } else {
                            b.ch(c, false);
                        }
                    }
                }
                Piece::Atom { text, why } => b.atom(&text, &why),
                // Quoted elements carry their own `Has`; unquoted empty ones vanish.
                Piece::Break => b.finish(),
                Piece::Has => b.has = true,
            }
        }
        b.finish();
        b.out
    }
}

/// Builds fields character by character.
struct Builder {
    out: Vec<Field>,
    value: String,
    /// Byte offsets in `value` of pattern characters that were quoted.
    quoted_at: Vec<usize>,
    /// Byte ranges in `value` of parts only known at run time.
    atoms: Vec<(usize, usize)>,
    /// An unquoted pattern character was seen: the field may be a glob.
    maybe_glob: bool,
    dynamic: Vec<Dynamic>,
    has: bool,
    /// The last delimiter was IFS white space (a following non-white delimiter joins
    /// it), or a non-white one.
    after_white: bool,
    at_start: bool,
    split: bool,
    glob: bool,
    globs_changed: bool,
}

impl Builder {
    fn new(split: bool, globs_changed: bool) -> Self {
        Self {
            out: Vec::new(),
            value: String::new(),
            quoted_at: Vec::new(),
            atoms: Vec::new(),
            maybe_glob: false,
            dynamic: Vec::new(),
            has: false,
            after_white: false,
            at_start: true,
            split,
            glob: split,
            globs_changed,
        }
    }

    fn ch(&mut self, c: char, quoted: bool) {
        if is_pattern_char(c) {
            if quoted || !self.glob {
                self.quoted_at.push(self.value.len());
            } else {
                self.maybe_glob = true;
            }
        }
        self.value.push(c);
        self.has = true;
        self.at_start = false;
        self.after_white = false;
    }

    fn atom(&mut self, text: &str, why: &[Dynamic]) {
        let start = self.value.len();
        self.value.push_str(text);
        self.atoms.push((start, self.value.len()));
        for d in why {
            if !self.dynamic.contains(d) {
                self.dynamic.push(d.clone());
            }
        }
        self.has = true;
        self.at_start = false;
        self.after_white = false;
    }

    /// An IFS character from an unquoted expansion.
    fn delimit(&mut self, white: bool) {
        if white {
            if self.has {
                self.finish();
                self.after_white = true;
            }
        } else if self.has {
            self.finish();
            self.after_white = false;
        } else if self.after_white {
            self.after_white = false;
        } else {
            // `,a` or `a,,b` with IFS=,: an empty field.
            self.has = true;
            self.finish();
        }
        self.at_start = false;
    }

    /// End the current field, if something made it exist.
    fn finish(&mut self) {
        if !self.has {
            return;
        }
        let mut value = std::mem::take(&mut self.value);
        let quoted_at = std::mem::take(&mut self.quoted_at);
        let atoms = std::mem::take(&mut self.atoms);
        let maybe_glob = std::mem::replace(&mut self.maybe_glob, false);
        let mut dynamic = std::mem::take(&mut self.dynamic);
        self.has = false;
        // The glob pattern (quoted pattern characters escaped) and what glob detection
        // sees (unknown parts replaced by an escaped placeholder), only when needed.
        let mut glob = None;
        if self.glob && maybe_glob {
            let (pattern, detect) = glob_texts(&value, &quoted_at, &atoms);
            if has_wildcard(&detect) || Pattern::parse(&detect).literal().is_none() {
                glob = Some(pattern);
            }
        }
        if value.contains(HOME) {
            let (v, known) = render_home(&value);
            value = v;
            glob = glob.map(|p| render_home(&p).0);
            let d = Dynamic::ParameterExpansion("$HOME".into());
            if !known && !dynamic.contains(&d) {
                dynamic.push(d);
            }
        }
        if let Some(pattern) = glob {
            dynamic.push(Dynamic::Glob(pattern));
            if self.globs_changed {
                dynamic.push(Dynamic::Opaque(
                    "shell options in this text change what globs match".into(),
                ));
            }
        }
        let _ = self.split;
        self.out.push(Field { value, dynamic });
    }
}

/// The glob pattern of a field value and the text glob detection reads: characters at
/// `quoted_at` escaped; unknown parts (`atoms`) kept as written in the pattern and
/// replaced by an escaped placeholder for detection.
fn glob_texts(value: &str, quoted_at: &[usize], atoms: &[(usize, usize)]) -> (String, String) {
    let mut pattern = String::with_capacity(value.len() + quoted_at.len());
    let mut detect = String::with_capacity(value.len() + quoted_at.len());
    let mut q = quoted_at.iter().peekable();
    let mut a = atoms.iter().peekable();
    for (i, c) in value.char_indices() {
        while a.peek().is_some_and(|(_, end)| *end <= i) {
            a.next();
        }
        if let Some((start, _)) = a.peek()
            && *start <= i
        {
            pattern.push(c);
            if *start == i {
                detect.push_str("\\x");
            }
            continue;
        }
        if q.peek() == Some(&&i) {
            q.next();
            pattern.push('\\');
            detect.push('\\');
        }
        pattern.push(c);
        detect.push(c);
    }
    (pattern, detect)
}

/// Does pattern text have an unescaped `*` or `?` (the cheap case of a glob)?
fn has_wildcard(p: &str) -> bool {
    let mut escaped = false;
    for c in p.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' => return true,
            _ => {}
        }
    }
    false
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

/// The words of a command that is one simple command with nothing but words (no
/// operator, redirection, assignment or comment); `None` otherwise.
fn simple_words(body: &str) -> Option<Vec<&str>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut start: Option<usize> = None;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' => {
                if let Some(s) = start.take() {
                    out.push(body.get(s..i)?);
                }
                i += 1;
                continue;
            }
            b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' | b'\n' | b'`' => return None,
            b'#' if start.is_none() => return None,
            _ => {}
        }
        if start.is_none() {
            start = Some(i);
        }
        i = match b[i] {
            b'\\' => i + 2,
            b'\'' => find_byte(b, i + 1, b'\'') + 1,
            b'"' => skip_dq(b, i + 1) + 1,
            b'$' if b.get(i + 1) == Some(&b'{') => match_brace(b, i + 2) + 1,
            b'$' if b.get(i + 1) == Some(&b'(') => match_paren(b, i + 2) + 1,
            _ => i + 1,
        };
    }
    if i > b.len() {
        // An unterminated quote or expansion.
        return None;
    }
    if let Some(s) = start {
        out.push(body.get(s..)?);
    }
    if out.first()?.contains('=') {
        return None;
    }
    Some(out)
}

/// The unknown result of an operator; prompt expansion of an unknown value may run
/// commands.
fn unknown_result(op: &Op<'_>, written: &str) -> Piece {
    let mut why = vec![Dynamic::ParameterExpansion(written.to_owned())];
    if matches!(op, Op::Transform(b'P')) {
        why.push(Dynamic::Opaque(format!(
            "prompt expansion `{written}` of a value only known at run time can run commands"
        )));
    }
    Piece::Atom {
        text: written.to_owned(),
        why,
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

/// A parameter reference inside `${…}`.
#[derive(Debug, Clone, Copy)]
struct Ref<'s> {
    name: &'s str,
    sub: Option<&'s str>,
}

/// Split `s` into a reference and the operator text after it.
fn parse_ref(s: &str) -> Option<(Ref<'_>, &str)> {
    let b = s.as_bytes();
    let first = *b.first()?;
    let end = if first.is_ascii_alphabetic() || first == b'_' {
        b.iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .unwrap_or(b.len())
    } else if first.is_ascii_digit() {
        b.iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(b.len())
    } else if b"@*#?-$!".contains(&first) {
        1
    } else {
        return None;
    };
    let name = &s[..end];
    if b.get(end) == Some(&b'[') && is_name(name) {
        let mut depth = 0usize;
        let mut j = end + 1;
        while j < b.len() {
            match b[j] {
                b'[' => depth += 1,
                b']' if depth == 0 => {
                    let sub = &s[end + 1..j];
                    return Some((
                        Ref {
                            name,
                            sub: Some(sub),
                        },
                        &s[j + 1..],
                    ));
                }
                b']' => depth -= 1,
                _ => {}
            }
            j += 1;
        }
        return None;
    }
    Some((Ref { name, sub: None }, &s[end..]))
}

/// The operator of a parameter expansion.
#[derive(Debug, Clone, Copy)]
enum Op<'s> {
    Plain,
    Default {
        colon: bool,
        kind: u8,
        word: &'s str,
    },
    Remove {
        suffix: bool,
        longest: bool,
        pat: &'s str,
    },
    /// mode: `f` first, `a` all, `#` prefix, `%` suffix.
    Replace {
        mode: u8,
        pat: &'s str,
        rep: Option<&'s str>,
    },
    Case {
        upper: bool,
        all: bool,
        pat: &'s str,
    },
    Substring {
        off: &'s str,
        len: Option<&'s str>,
    },
    Transform(u8),
}

impl Op<'_> {
    /// Collect nested code of the operands without evaluating them.
    fn scan(&self, x: &mut Expander<'_>) {
        match *self {
            Op::Default { word, .. } => x.scan_only(word),
            Op::Remove { pat, .. } | Op::Case { pat, .. } => x.scan_only(pat),
            Op::Replace { pat, rep, .. } => {
                x.scan_only(pat);
                if let Some(r) = rep {
                    x.scan_only(r);
                }
            }
            Op::Substring { off, len } => {
                x.scan_only(off);
                if let Some(l) = len {
                    x.scan_only(l);
                }
            }
            _ => {}
        }
    }
}

/// Does brace expansion change this word (so it is not one assignment)?
pub(crate) fn brace_expands(raw: &str) -> bool {
    if !raw.contains('{') {
        return false;
    }
    let mut work = Work {
        scan: 8 * raw.len() + 256,
        build: 64 * 1024,
    };
    brace_expand(raw, 0, &mut work).is_none_or(|w| w.len() != 1 || w[0] != raw)
}

fn parse_op(s: &str) -> Option<Op<'_>> {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return Some(Op::Plain);
    };
    Some(match first {
        b':' if matches!(b.get(1), Some(b'-' | b'=' | b'?' | b'+')) => Op::Default {
            colon: true,
            kind: b[1],
            word: &s[2..],
        },
        b'-' | b'=' | b'?' | b'+' => Op::Default {
            colon: false,
            kind: first,
            word: &s[1..],
        },
        b'#' | b'%' => {
            let longest = b.get(1) == Some(&first);
            Op::Remove {
                suffix: first == b'%',
                longest,
                pat: &s[if longest { 2 } else { 1 }..],
            }
        }
        b'/' => {
            let (mode, rest) = match b.get(1) {
                Some(b'/') => (b'a', &s[2..]),
                Some(b'#') => (b'#', &s[2..]),
                Some(b'%') => (b'%', &s[2..]),
                _ => (b'f', &s[1..]),
            };
            let cut = pattern_end(rest);
            let (pat, rep) = match cut {
                Some(k) => (&rest[..k], Some(&rest[k + 1..])),
                None => (rest, None),
            };
            Op::Replace { mode, pat, rep }
        }
        b'^' | b',' => {
            let all = b.get(1) == Some(&first);
            Op::Case {
                upper: first == b'^',
                all,
                pat: &s[if all { 2 } else { 1 }..],
            }
        }
        b':' => {
            let rest = &s[1..];
            match rest.find(':') {
                Some(k) => Op::Substring {
                    off: &rest[..k],
                    len: Some(&rest[k + 1..]),
                },
                None => Op::Substring {
                    off: rest,
                    len: None,
                },
            }
        }
        b'@' if b.len() == 2 && b"QEPAKakUuL".contains(&b[1]) => Op::Transform(b[1]),
        _ => return None,
    })
}

/// Index of the `/` ending the pattern of `${x/pattern/string}`.
fn pattern_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => i = find_byte(b, i + 1, b'\''),
            b'"' => i = skip_dq(b, i + 1),
            b'$' if b.get(i + 1) == Some(&b'{') => i = match_brace(b, i + 2),
            b'$' if b.get(i + 1) == Some(&b'(') => i = match_paren(b, i + 2),
            b'/' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

// ---- brace expansion -------------------------------------------------------------

/// What one brace expansion may still spend: scanning steps and bytes of words built.
struct Work {
    scan: usize,
    build: usize,
}

/// Brace-expand a word; `None` when it would make more than [`MAX_BRACE_WORDS`]
/// words, nest deeper than [`MAX_BRACE_DEPTH`], or spend more than `work` allows.
fn brace_expand(raw: &str, depth: usize, work: &mut Work) -> Option<Vec<String>> {
    if depth > MAX_BRACE_DEPTH {
        return None;
    }
    let b = raw.as_bytes();
    let mut out = vec![String::new()];
    let mut i = 0;
    let mut chunk_start = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' => i = find_byte(b, i + 1, b'\'') + 1,
            b'"' => i = skip_dq(b, i + 1) + 1,
            b'`' => i = find_byte(b, i + 1, b'`') + 1,
            b'$' if matches!(b.get(i + 1), Some(b'{')) => i = match_brace(b, i + 2) + 1,
            b'$' if matches!(b.get(i + 1), Some(b'(')) => i = match_paren(b, i + 2) + 1,
            b'{' => match brace_group(raw, i, work)? {
                Some((alts, end)) => {
                    let head = slice(raw, chunk_start, i);
                    let mut items: Vec<String> = Vec::new();
                    for alt in alts {
                        let sub = match alt {
                            Alt::Text(t) => brace_expand(&t, depth + 1, work)?,
                            Alt::Plain(t) => vec![t],
                        };
                        items.extend(sub);
                        if items.len() > MAX_BRACE_WORDS {
                            return None;
                        }
                    }
                    if out.len().saturating_mul(items.len()) > MAX_BRACE_WORDS {
                        return None;
                    }
                    let mut next = Vec::with_capacity(out.len() * items.len());
                    for o in &out {
                        for it in &items {
                            let len = o.len() + head.len() + it.len();
                            work.build = work.build.checked_sub(len)?;
                            let mut w = String::with_capacity(len);
                            w.push_str(o);
                            w.push_str(head);
                            w.push_str(it);
                            next.push(w);
                        }
                    }
                    out = next;
                    i = end + 1;
                    chunk_start = i;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    let tail = slice(raw, chunk_start, b.len());
    for o in &mut out {
        o.push_str(tail);
    }
    Some(out)
}

/// One alternative of a brace group: text to expand further, or a generated
/// sequence item.
enum Alt {
    Text(String),
    Plain(String),
}

/// A brace group at `i`: its alternatives and the index of the closing `}`; `Some(None)`
/// when the braces at `i` are not a brace expansion, `None` when the scanning budget is
/// spent (an unclosed `{` scans to the end of the word, so many of them would cost
/// quadratic time).
#[allow(clippy::option_option)]
fn brace_group(raw: &str, i: usize, work: &mut Work) -> Option<Option<(Vec<Alt>, usize)>> {
    let b = raw.as_bytes();
    let mut depth = 0usize;
    let mut j = i + 1;
    let mut commas = Vec::new();
    while j < b.len() {
        work.scan = work.scan.checked_sub(1)?;
        match b[j] {
            b'\\' => j += 1,
            b'\'' => j = find_byte(b, j + 1, b'\''),
            b'"' => j = skip_dq(b, j + 1),
            b'`' => j = find_byte(b, j + 1, b'`'),
            b'$' if matches!(b.get(j + 1), Some(b'{')) => j = match_brace(b, j + 2),
            b'$' if matches!(b.get(j + 1), Some(b'(')) => j = match_paren(b, j + 2),
            b'{' => depth += 1,
            b'}' if depth == 0 => break,
            b'}' => depth -= 1,
            b',' if depth == 0 => commas.push(j),
            _ => {}
        }
        j += 1;
    }
    if j >= b.len() {
        return Some(None);
    }
    let inner = slice(raw, i + 1, j);
    if commas.is_empty() {
        return Some(sequence(inner).map(|items| (items.into_iter().map(Alt::Plain).collect(), j)));
    }
    let mut alts = Vec::with_capacity(commas.len() + 1);
    let mut start = i + 1;
    for c in commas.into_iter().chain(std::iter::once(j)) {
        alts.push(Alt::Text(slice(raw, start, c).to_owned()));
        start = c + 1;
    }
    Some(Some((alts, j)))
}

/// `x..y[..step]` of integers or single letters.
fn sequence(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return None;
    }
    let step = match parts.get(2) {
        Some(s) => int_literal(s)?.unsigned_abs().max(1),
        None => 1,
    };
    let (a, z) = (parts[0], parts[1]);
    if let (Some(x), Some(y)) = (int_literal(a), int_literal(z)) {
        if a.trim() != a || z.trim() != z {
            return None;
        }
        let count = x.abs_diff(y) / step + 1;
        if count > MAX_BRACE_WORDS as u64 {
            // Too many: more items than the caller accepts, so the word stays opaque
            // (`None` would make the braces literal text).
            return Some(vec![String::new(); MAX_BRACE_WORDS + 1]);
        }
        let width = if has_leading_zero(a) || has_leading_zero(z) {
            a.len().max(z.len())
        } else {
            0
        };
        let mut out = Vec::with_capacity(count as usize);
        let mut v = x;
        for _ in 0..count {
            out.push(if width > 0 {
                if v < 0 {
                    format!("-{:0w$}", v.unsigned_abs(), w = width - 1)
                } else {
                    format!("{v:0width$}")
                }
            } else {
                v.to_string()
            });
            if x <= y {
                v += step as i64;
            } else {
                v -= step as i64;
            }
        }
        return Some(out);
    }
    let (mut ca, mut cz) = (a.chars(), z.chars());
    let (Some(x), None, Some(y), None) = (ca.next(), ca.next(), cz.next(), cz.next()) else {
        return None;
    };
    if !x.is_ascii_alphabetic() || !y.is_ascii_alphabetic() {
        return None;
    }
    let (lo, hi) = (u32::from(x), u32::from(y));
    let mut out = Vec::new();
    let mut v = lo;
    loop {
        let c = char::from_u32(v)?;
        if !c.is_ascii_alphanumeric() {
            // `{Z..a}` passes `[`, `\`, backtick: characters the rest of the word
            // reading would treat specially.
            return None;
        }
        out.push(c.to_string());
        if v == hi {
            break;
        }
        let next = if lo <= hi {
            v + step as u32
        } else {
            v.checked_sub(step as u32)?
        };
        if (lo <= hi && next > hi) || (lo > hi && next < hi) {
            break;
        }
        v = next;
    }
    Some(out)
}

fn has_leading_zero(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    d.len() > 1 && d.starts_with('0')
}

// ---- printf ----------------------------------------------------------------------

/// bash's `printf FORMAT ARGS…` for the simple formats (`%s`, `%b`, `%c`, `%d`, `%%`,
/// escapes); `None` for anything else (widths, precisions, other conversions).
pub(crate) fn printf(fmt: &str, args: &[String]) -> Option<String> {
    let f: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut next = 0usize;
    loop {
        let mut i = 0;
        let mut used = false;
        while i < f.len() {
            match f[i] {
                '\\' => {
                    let (s, n) = escape(&f[i..], false)?;
                    out.push_str(&s);
                    i += n;
                }
                '%' => {
                    let c = *f.get(i + 1)?;
                    i += 2;
                    if c == '%' {
                        out.push('%');
                        continue;
                    }
                    used = true;
                    let arg = args.get(next).map(String::as_str);
                    next += 1;
                    match c {
                        's' => out.push_str(arg.unwrap_or("")),
                        'b' => {
                            let a: Vec<char> = arg.unwrap_or("").chars().collect();
                            let mut k = 0;
                            while k < a.len() {
                                if a[k] == '\\' {
                                    let (s, n) = escape(&a[k..], true)?;
                                    out.push_str(&s);
                                    k += n;
                                } else {
                                    out.push(a[k]);
                                    k += 1;
                                }
                            }
                        }
                        'c' => out.extend(arg.unwrap_or("").chars().next()),
                        'd' | 'i' => {
                            let v = match arg {
                                None => 0,
                                Some(a) => int_literal(a)?,
                            };
                            out.push_str(&v.to_string());
                        }
                        _ => return None,
                    }
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
            if out.len() > MAX_VALUE {
                return None;
            }
        }
        if !used || next >= args.len() {
            break;
        }
    }
    Some(out)
}

/// One backslash escape of printf's format (`b`: of a `%b` argument, where octal is
/// `\0NNN`); returns the text and the characters consumed.
fn escape(s: &[char], b: bool) -> Option<(String, usize)> {
    let c = *s.get(1)?;
    let simple = match c {
        'a' => Some('\u{7}'),
        'b' => Some('\u{8}'),
        'e' | 'E' => Some('\u{1b}'),
        'f' => Some('\u{c}'),
        'n' => Some('\n'),
        'r' => Some('\r'),
        't' => Some('\t'),
        'v' => Some('\u{b}'),
        '\\' => Some('\\'),
        '"' => Some('"'),
        '\'' => Some('\''),
        '?' => Some('?'),
        _ => None,
    };
    if let Some(x) = simple {
        return Some((x.to_string(), 2));
    }
    let digits = |from: usize, max: usize, radix: u32| {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match s.get(from + n).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    match c {
        '0'..='7' => {
            let (from, max) = if b && c == '0' { (2, 3) } else { (1, 3) };
            let (v, n) = digits(from, max, 8);
            Some((char::from_u32(v & 0xff)?.to_string(), from + n))
        }
        'x' => {
            let (v, n) = digits(2, 2, 16);
            if n == 0 {
                return Some(("\\x".into(), 2));
            }
            Some((char::from_u32(v)?.to_string(), 2 + n))
        }
        'u' | 'U' => {
            let (v, n) = digits(2, if c == 'u' { 4 } else { 8 }, 16);
            if n == 0 {
                return Some((format!("\\{c}"), 2));
            }
            Some((char::from_u32(v)?.to_string(), 2 + n))
        }
        'c' if b => None,
        _ => Some((format!("\\{c}"), 2)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(vars: &[(&str, Val)]) -> Env {
        let mut e = Env::default();
        for (n, v) in vars {
            e.set(n, v.clone());
        }
        e
    }

    fn s(v: &str) -> Val {
        Val::Str(v.into())
    }

    /// Expand with the given variables; fields as (value, literal).
    fn ex(vars: &[(&str, Val)], raw: &str) -> Vec<(String, bool)> {
        let mut e = env_with(vars);
        let mut budget = 1 << 20;
        let mut x = Expander::new(&mut e, &mut budget);
        x.word(raw, Mode::Command)
            .fields
            .into_iter()
            .map(|f| {
                let lit = f.literal();
                (f.value, lit)
            })
            .collect()
    }

    fn vals(vars: &[(&str, Val)], raw: &str) -> Vec<String> {
        ex(vars, raw)
            .into_iter()
            .map(|(v, lit)| {
                assert!(lit, "{raw}: {v} should be literal");
                v
            })
            .collect()
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(vals(&[], r#"'a b'"c\"d"e\ f"#), ["a bc\"de f"]);
        assert_eq!(vals(&[], r"$'\x72m'"), ["rm"]);
        assert_eq!(vals(&[], r"$'\162\155'"), ["rm"]);
        assert_eq!(vals(&[], "$\"a b\""), ["a b"]);
        assert_eq!(vals(&[], "a\\\nb"), ["ab"]);
        assert_eq!(vals(&[], "''"), [""]);
        assert!(!ex(&[], "$never_assigned")[0].1, "inherited: unknown");
    }

    #[test]
    fn home_forms() {
        for w in [
            "~/x",
            "$HOME/x",
            "${HOME}/x",
            "\"$HOME\"/x",
            "\"$HOME/x\"",
            "${HOME:?}/x",
        ] {
            assert_eq!(vals(&[], w), ["~/x"], "{w}");
        }
        assert!(!ex(&[], "$HOMEX/y")[0].1);
        assert!(!ex(&[], "~root/x")[0].1);
        assert!(!ex(&[], "x$HOME")[0].1, "home in the middle");
        assert_eq!(vals(&[("HOME", s("/tmp"))], "~/x"), ["/tmp/x"]);
    }

    #[test]
    fn braces() {
        assert_eq!(vals(&[], "{rm,-rf,~}"), ["rm", "-rf", "~"]);
        assert_eq!(vals(&[], "a{1..3}"), ["a1", "a2", "a3"]);
        assert_eq!(vals(&[], "{01..3}"), ["01", "02", "03"]);
        assert_eq!(vals(&[], "{a..e..2}"), ["a", "c", "e"]);
        assert_eq!(vals(&[], "{3..1}"), ["3", "2", "1"]);
        assert_eq!(vals(&[], "~/{.ssh,.aws}"), ["~/.ssh", "~/.aws"]);
        assert_eq!(vals(&[], "x{a,b{c,d}}y"), ["xay", "xbcy", "xbdy"]);
        assert_eq!(vals(&[], "{a}{b,c}"), ["{a}b", "{a}c"]);
        assert_eq!(vals(&[], "'{a,b}'"), ["{a,b}"]);
        assert_eq!(vals(&[], "{a,'b,c'}"), ["a", "b,c"]);
        assert_eq!(vals(&[], "{}"), ["{}"]);
        assert_eq!(vals(&[], "x{,}y"), ["xy", "xy"]);
        assert!(vals(&[], "{,}").is_empty());
        // Too many words: opaque.
        let big = ex(&[], "{1..1000}");
        assert_eq!(big.len(), 1);
        assert!(!big[0].1);
        let wide = ex(&[], &"{a,b}".repeat(9));
        assert_eq!(wide.len(), 1);
        assert!(!wide[0].1);
        assert_eq!(ex(&[], &"{a,b}".repeat(8)).len(), 256);
    }

    #[test]
    fn variables_and_splitting() {
        let v = [
            ("K", s("\0/.ssh/id_rsa")),
            ("D", s(".vscode")),
            ("C", s("rm -rf  /home/dev")),
            ("E", s("")),
        ];
        assert_eq!(vals(&v, "\"$K\""), ["~/.ssh/id_rsa"]);
        assert_eq!(vals(&v, "$D/x"), [".vscode/x"]);
        assert_eq!(vals(&v, "$C"), ["rm", "-rf", "/home/dev"]);
        assert_eq!(vals(&v, "\"$C\""), ["rm -rf  /home/dev"]);
        assert!(vals(&v, "$E").is_empty());
        assert_eq!(vals(&v, "\"$E\""), [""]);
        assert_eq!(vals(&v, "cat${IFS}~/.netrc"), ["cat", "~/.netrc"]);
        assert_eq!(vals(&[("IFS", s(","))], "a${IFS}b"), ["a", "b"]);
        assert_eq!(
            vals(&[("IFS", s(",")), ("X", s(",a,,b,"))], "$X"),
            ["", "a", "", "b"]
        );
        assert!(!ex(&v, "${!V}x")[0].1, "unknown V is not literal");
    }

    #[test]
    fn parameter_operators() {
        let v = [
            ("X", s("path/to/file.tar.gz")),
            ("N", s("D")),
            ("D", s(".vscode")),
            ("E", s("")),
            ("A", Val::Arr(vec![(0, "x".into()), (1, "y z".into())])),
        ];
        assert_eq!(vals(&v, "${X#*/}"), ["to/file.tar.gz"]);
        assert_eq!(vals(&v, "${X##*/}"), ["file.tar.gz"]);
        assert_eq!(vals(&v, "${X%.*}"), ["path/to/file.tar"]);
        assert_eq!(vals(&v, "${X%%.*}"), ["path/to/file"]);
        assert_eq!(vals(&v, "${X/to/from}"), ["path/from/file.tar.gz"]);
        assert_eq!(vals(&v, "${X//[at]/_}"), ["p__h/_o/file.__r.gz"]);
        assert_eq!(vals(&v, "${X:0:4}"), ["path"]);
        assert_eq!(vals(&v, "${X: -2}"), ["gz"]);
        assert_eq!(vals(&v, "${#X}"), ["19"]);
        assert_eq!(vals(&v, "${!N}"), [".vscode"]);
        assert_eq!(vals(&v, "${E:-~/.ssh}"), ["~/.ssh"]);
        assert_eq!(vals(&v, "${E-x}"), Vec::<String>::new());
        assert!(!ex(&v, "${U-x}")[0].1, "U is unknown, not unset");
        assert_eq!(vals(&v, "${D:+set}"), ["set"]);
        assert_eq!(vals(&v, "${D^^}"), [".VSCODE"]);
        assert_eq!(vals(&v, "${D@U}"), [".VSCODE"]);
        assert_eq!(vals(&v, "${D@Q}"), ["'.vscode'"]);
        assert_eq!(vals(&v, "${A[1]}"), ["y", "z"]);
        assert_eq!(vals(&v, "\"${A[1]}\""), ["y z"]);
        assert_eq!(vals(&v, "\"${A[@]}\""), ["x", "y z"]);
        assert_eq!(vals(&v, "\"${A[*]}\""), ["x y z"]);
        assert_eq!(vals(&v, "${#A[@]}"), ["2"]);
        assert_eq!(vals(&v, "${A[-1]}"), ["y", "z"]);
        assert_eq!(vals(&v, "${!A[@]}"), ["0", "1"]);
        assert_eq!(vals(&v, "$A"), ["x"]);
        let e = [(
            "A",
            Val::Arr(vec![(0, "x".into()), (1, String::new()), (2, "y".into())]),
        )];
        assert_eq!(vals(&e, "${A[@]}"), ["x", "y"]);
        assert_eq!(vals(&e, "\"${A[@]}\""), ["x", "", "y"]);
        assert_eq!(vals(&e, "\"<${A[@]}>\""), ["<x", "", "y>"]);
    }

    #[test]
    fn assignment_operators_assign() {
        let mut e = Env::default();
        e.set("E", Val::Unset);
        let mut budget = 1 << 20;
        let mut x = Expander::new(&mut e, &mut budget);
        let f = x.word("${E:=~/.aws}", Mode::Command);
        assert_eq!(f.fields[0].value, "~/.aws");
        assert_eq!(e.get("E"), s("\0/.aws"));
    }

    #[test]
    fn prompt_expansion() {
        let v = [("P", s("$D/x")), ("D", s(".vscode")), ("Q", s("$(id)"))];
        assert_eq!(vals(&v, "${P@P}"), [".vscode/x"]);
        let mut e = env_with(&v);
        let mut budget = 1 << 20;
        let mut x = Expander::new(&mut e, &mut budget);
        let out = x.word("${Q@P}", Mode::Command);
        assert!(!out.fields[0].literal());
        assert_eq!(out.substs.len(), 1, "the command substitution is analyzed");
        let out = x.word("${Z@P}", Mode::Command);
        assert!(
            out.fields[0]
                .dynamic
                .iter()
                .any(|d| matches!(d, Dynamic::Opaque(_)))
        );
    }

    #[test]
    fn globs_are_patterns() {
        let g = |raw: &str| -> Option<String> {
            let mut e = Env::default();
            let mut budget = 1 << 20;
            let mut x = Expander::new(&mut e, &mut budget);
            x.word(raw, Mode::Command).fields[0]
                .dynamic
                .iter()
                .find_map(|d| match d {
                    Dynamic::Glob(p) => Some(p.clone()),
                    _ => None,
                })
        };
        assert_eq!(g("~/.s?h/id_*").as_deref(), Some("~/.s?h/id_*"));
        assert_eq!(g("'*'x*").as_deref(), Some("\\*x*"));
        assert_eq!(g("'*'"), None);
        assert_eq!(g("a[b"), None);
        assert_eq!(g("a[b]").as_deref(), Some("a[b]"));
        assert_eq!(g("\"$HOME\"/.en?").as_deref(), Some("~/.en?"));
    }

    #[test]
    fn printf_formats() {
        let a = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(printf("%s/%s", &a(&["a", "b"])).as_deref(), Some("a/b"));
        assert_eq!(printf("\\x63at", &[]).as_deref(), Some("cat"));
        assert_eq!(printf("\\143\\141\\164", &[]).as_deref(), Some("cat"));
        assert_eq!(printf("%s,", &a(&["a", "b"])).as_deref(), Some("a,b,"));
        assert_eq!(printf("%b", &a(&["\\x41"])).as_deref(), Some("A"));
        assert_eq!(printf("%5s", &a(&["a"])), None);
    }

    #[test]
    fn heredoc_bodies() {
        let mut e = env_with(&[("K", s("\0/.ssh/id_rsa"))]);
        let mut budget = 1 << 20;
        let mut x = Expander::new(&mut e, &mut budget);
        let out = x.heredoc("cat $K 'q' \\$K\n");
        assert_eq!(out.fields[0].value, "cat $HOME/.ssh/id_rsa 'q' $K\n");
        assert!(!out.fields[0].literal());
        let out = x.heredoc("echo 'a'\n");
        assert!(out.fields[0].literal());
    }
}
