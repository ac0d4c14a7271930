//! Scanning a word into pieces: quotes, tilde prefixes, `$…` references and
//! command substitutions, with the output of those the text alone fixes.

use super::params::{Ref, parse_ref};
use super::printf::printf;
use super::{Ctx, Expander, Field, MAX_OPERAND_DEPTH, Mode, Piece, atom, flush, home_marker};
use crate::env::{HOME, Val};
use crate::model::Dynamic;
use crate::word::{
    self, Subst, SubstKind, find_byte, match_brace, match_paren, next_char, skip_dq, slice,
};

impl Expander<'_> {
    /// Scan a word (or an operand) into pieces.
    pub(super) fn scan(&mut self, raw: &str, ctx: Ctx) -> Vec<Piece> {
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
                b'\\' => i = backslash(raw, i, ctx.dq, &mut lit, &mut out),
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
                    i = self.process_subst(raw, i, &mut out);
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

    /// The process substitution `<(…)` or `>(…)` at `i`: an atom whose body is analyzed
    /// as nested code. Returns the index after it.
    fn process_subst(&mut self, raw: &str, i: usize, out: &mut Vec<Piece>) -> usize {
        let end = match_paren(raw.as_bytes(), i + 2);
        self.substs.push(Subst {
            kind: SubstKind::Process,
            body: slice(raw, i + 2, end).to_owned(),
        });
        out.push(Piece::Atom {
            text: slice(raw, i, end + 1).to_owned(),
            why: vec![Dynamic::ProcessSubstitution],
        });
        end + 1
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
    pub(super) fn dollar(
        &mut self,
        raw: &str,
        i: usize,
        quoted: bool,
        out: &mut Vec<Piece>,
    ) -> usize {
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

    pub(super) fn backtick(&mut self, raw: &str, i: usize, out: &mut Vec<Piece>) -> usize {
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
    pub(super) fn scan_only(&mut self, text: &str) {
        let mut d = word::Decoded::default();
        word::scan_expansions(text, &mut d);
        self.substs.extend(d.substs);
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

/// The backslash at `raw[i]`, in double quotes (`dq`: it quotes only `$`, `` ` ``, `"`,
/// `\` and a newline, else stands for itself) or not (it quotes the next character). A
/// backslash-newline is removed. Returns the index after it.
fn backslash(raw: &str, i: usize, dq: bool, lit: &mut String, out: &mut Vec<Piece>) -> usize {
    let b = raw.as_bytes();
    let quoted = |s: String, lit: &mut String, out: &mut Vec<Piece>| {
        flush(lit, false, out);
        out.push(Piece::Lit { s, quoted: true });
    };
    match b.get(i + 1) {
        Some(b'\n') => i + 2,
        Some(&c) if dq && matches!(c, b'$' | b'`' | b'"' | b'\\') => {
            quoted((c as char).to_string(), lit, out);
            i + 2
        }
        _ if dq => {
            quoted("\\".into(), lit, out);
            i + 1
        }
        Some(_) => {
            let ch = next_char(raw, i + 1);
            quoted(ch.to_owned(), lit, out);
            i + 1 + ch.len()
        }
        None => i + 1,
    }
}
