//! Parameter expansion: `${…}` references, their operators, and the values they
//! give when the variables are known.

use super::{
    Ctx, Expander, MATCH_STEPS_PER_BYTE, MAX_MATCH_WORK, MAX_OPERAND_DEPTH, Piece, Rv, arith_int,
    atom, int_literal, is_name, is_pattern_char, pick, pieces_text, replace, single_quote,
};
use crate::env::{HOME, Val};
use crate::model::Dynamic;
use crate::pattern::Pattern;
use crate::word::{self, find_byte, match_brace, match_paren, skip_dq};

impl Expander<'_> {
    /// Resolve a reference (`name`, `name[sub]`, `1`, `@`).
    pub(super) fn resolve(&mut self, r: &Ref<'_>) -> Rv {
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
    pub(super) fn emit(&mut self, rv: Rv, quoted: bool, written: &str, out: &mut Vec<Piece>) {
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
    pub(super) fn param(&mut self, inner: &str, written: &str, quoted: bool, out: &mut Vec<Piece>) {
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
    pub(super) fn operand(&mut self, word: &str, quoted: bool) -> Vec<Piece> {
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
    pub(super) fn pattern(&mut self, word: &str) -> Option<Pattern> {
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

/// A parameter reference inside `${…}`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ref<'s> {
    pub(super) name: &'s str,
    pub(super) sub: Option<&'s str>,
}

/// Split `s` into a reference and the operator text after it.
pub(super) fn parse_ref(s: &str) -> Option<(Ref<'_>, &str)> {
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
    pub(super) fn scan(&self, x: &mut Expander<'_>) {
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
