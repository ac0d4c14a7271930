//! Variables: assignments, the builtins that change them (`declare`, `read`,
//! `printf -v`, …) and the arithmetic that assigns them.

use super::{Analyzer, Feed, Nested, Scope, push_all};
use crate::env::Val;
use crate::expand::{self, Expander, Mode};
use crate::model::{Dynamic, Word};
use crate::parse::{Assign, AssignValue};

impl Analyzer {
    /// Arithmetic text names a variable assigned in this text to something other than
    /// a plain integer.
    pub(super) fn arith_unsafe(&self, text: &str) -> bool {
        arith_identifiers(text).any(|id| self.vars.get(id) == Some(&false))
    }

    /// Builtins that assign variables: record whether the value is a plain integer.
    pub(super) fn record_vars(&mut self, program: &Word, args: &[Word]) {
        match program.value.as_str() {
            "read" | "mapfile" | "readarray" | "getopts" | "printf" => {
                for w in args {
                    if is_name(&w.value) {
                        self.vars.insert(w.value.clone(), false);
                    }
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for w in args {
                    if let Some((n, v)) = w.value.split_once('=') {
                        let n = n.trim_end_matches('+');
                        if is_name(n) {
                            self.vars.insert(n.to_owned(), w.literal && is_int(v));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Evaluate an assignment's value: the value as a word (array elements joined),
    /// the variable value, why it is not literal, and the nested analysis facts.
    pub(super) fn eval_assign(
        &mut self,
        a: &Assign,
        scope: &Scope,
    ) -> (Word, Val, Vec<Dynamic>, Nested) {
        let mut nested = Nested::default();
        match &a.value {
            AssignValue::Scalar(raw) => {
                let static_ok = self.echo_is_builtin();
                let (val, e) = {
                    let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
                    x.globs_changed = self.globs_changed;
                    x.static_ok = static_ok;
                    x.assign_value(raw)
                };
                nested.merge(self.nested(&e.substs, scope));
                self.arith_effects(&e.arith);
                let f = e.joined();
                (
                    Word {
                        literal: f.literal(),
                        value: f.value,
                    },
                    val,
                    f.dynamic,
                    nested,
                )
            }
            AssignValue::Array(items) => {
                let mut w = Word::literal("");
                let mut dynamic = Vec::new();
                let mut elems: Option<Vec<(usize, String)>> = Some(Vec::new());
                let mut next = 0usize;
                for (k, (key, raw)) in items.iter().enumerate() {
                    let e = match key {
                        Some(_) => self.expand_word(raw, Mode::Assign),
                        None => self.expand_word(raw, Mode::Command),
                    };
                    nested.merge(self.nested(&e.substs, scope));
                    self.arith_effects(&e.arith);
                    let f = e.joined();
                    if k > 0 {
                        w.value.push(' ');
                    }
                    if let Some(key) = key {
                        w.value.push_str(&format!("[{key}]="));
                    }
                    w.value.push_str(&f.value);
                    w.literal &= f.literal();
                    push_all(&mut dynamic, &f.dynamic);
                    if let Some(list) = &mut elems {
                        let start = match key {
                            None => Some(next),
                            Some(key) => key.trim().parse::<usize>().ok().filter(|i| *i < 1 << 20),
                        };
                        match start {
                            Some(i) if f.literal() => {
                                let values: Vec<String> = if key.is_some() {
                                    vec![f.value]
                                } else {
                                    e.fields.into_iter().map(|f| f.value).collect()
                                };
                                for (j, v) in values.into_iter().enumerate() {
                                    list.retain(|(x, _)| *x != i + j);
                                    list.push((i + j, v));
                                    next = i + j + 1;
                                }
                            }
                            _ => elems = None,
                        }
                    }
                }
                let val = match elems {
                    Some(mut list) => {
                        list.sort_by_key(|(i, _)| *i);
                        Val::Arr(list)
                    }
                    None => Val::Unknown,
                };
                (w, val, dynamic, nested)
            }
        }
    }

    /// Give a variable the value of an assignment.
    pub(super) fn apply_assign(&mut self, a: &Assign, val: Val) {
        let name = a.name.as_str();
        if name == "GLOBIGNORE" {
            // Setting it also makes globs match names with a leading dot.
            self.globs_changed = true;
        }
        let old = self.env.get(name);
        let new = match (&a.index, a.append) {
            (Some(sub), append) => {
                let Some(k) = sub.trim().parse::<usize>().ok().filter(|k| *k < 1 << 20) else {
                    self.arith_effects(std::slice::from_ref(sub));
                    self.env.set(name, Val::Unknown);
                    return;
                };
                let mut list = match old {
                    Val::Arr(l) => l,
                    Val::Str(s) => vec![(0, s)],
                    Val::Unset => Vec::new(),
                    Val::Unknown => {
                        self.env.set(name, Val::Unknown);
                        return;
                    }
                };
                let Val::Str(v) = val else {
                    self.env.set(name, Val::Unknown);
                    return;
                };
                let prev = list.iter().find(|(i, _)| *i == k).map(|(_, s)| s.clone());
                let v = match (append, prev) {
                    (true, Some(p)) => p + &v,
                    _ => v,
                };
                list.retain(|(i, _)| *i != k);
                list.push((k, v));
                list.sort_by_key(|(i, _)| *i);
                Val::Arr(list)
            }
            (None, true) => match (old, val) {
                (Val::Str(o), Val::Str(n)) => Val::Str(o + &n),
                (Val::Unset, v) => v,
                (Val::Arr(mut l), Val::Arr(n)) => {
                    let next = l.last().map_or(0, |(i, _)| i + 1);
                    l.extend((next..).zip(n.into_iter().map(|(_, v)| v)));
                    Val::Arr(l)
                }
                (Val::Str(o), Val::Arr(n)) => {
                    let mut l = vec![(0, o)];
                    l.extend(n.into_iter().map(|(i, v)| (i + 1, v)));
                    Val::Arr(l)
                }
                (Val::Arr(mut l), Val::Str(n)) => {
                    match l.iter_mut().find(|(i, _)| *i == 0) {
                        Some((_, v)) => v.push_str(&n),
                        None => {
                            l.insert(0, (0, n));
                        }
                    }
                    Val::Arr(l)
                }
                _ => Val::Unknown,
            },
            (None, false) => match (old, val) {
                // A scalar assigned to an array sets its element 0.
                (Val::Arr(mut l), Val::Str(n)) => {
                    l.retain(|(i, _)| *i != 0);
                    l.insert(0, (0, n));
                    Val::Arr(l)
                }
                (_, v) => v,
            },
        };
        self.env.set(name, new);
    }

    /// Builtins that change variables: record what they assign.
    pub(super) fn builtin_env(
        &mut self,
        name: &str,
        args: &[Word],
        decl: Vec<(Assign, Val)>,
        feed: Option<&Feed>,
        temp: &[(Assign, Val)],
    ) {
        match name {
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                self.declare(name, args, decl);
            }
            "read" => {
                // `IFS=: read a b`: the prefix assignment is what `read` splits on.
                let ifs = temp
                    .iter()
                    .rev()
                    .find(|(a, _)| a.name == "IFS" && a.index.is_none())
                    .map(|(_, v)| v.clone());
                self.read(args, feed, ifs);
            }
            "mapfile" | "readarray" | "getopts" => self.mapfile(args),
            "printf" => self.printf_v(args),
            "unset" => self.unset_vars(args),
            "let" => {
                let texts: Vec<String> = args.iter().map(|w| w.value.clone()).collect();
                self.arith_effects(&texts);
            }
            "shopt" => self.shopt(args),
            "set" if args.iter().any(|w| !w.literal) => self.lastpipe = true,
            "wait" => {
                // `wait -p NAME` stores a process id.
                if let Some(k) = args.iter().position(|w| w.value == "-p") {
                    match args.get(k + 1) {
                        Some(w) if w.literal => self.env.set(&w.value, Val::Unknown),
                        _ => self.env.kill_all(),
                    }
                }
            }
            _ => {}
        }
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`: the names they assign (a
    /// value this analysis cannot follow with `-n`, `-i`, `-l`, `-u`, `-A` …), and
    /// which become exported or read-only. `-f` concerns functions: nothing changes.
    fn declare(&mut self, name: &str, args: &[Word], decl: Vec<(Assign, Val)>) {
        let mut export = (name == "export").then_some(true);
        let mut readonly = name == "readonly";
        let mut odd = false;
        let mut nameref = false;
        let mut functions = false;
        let mut names = Vec::new();
        for w in args {
            if !w.literal {
                // `declare "$x=…"`: any name.
                self.env.kill_all();
                continue;
            }
            let v = w.value.as_str();
            if let Some(flags) = v.strip_prefix('-').or_else(|| v.strip_prefix('+')) {
                let on = v.starts_with('-');
                for f in flags.chars() {
                    match f {
                        'x' => export = Some(on),
                        'r' => readonly |= on,
                        'n' => {
                            nameref = true;
                            odd = true;
                        }
                        'f' | 'F' => functions = true,
                        'i' | 'l' | 'u' | 'A' | 'c' | 'I' => odd = true,
                        _ => {}
                    }
                }
                continue;
            }
            match v.split_once('=') {
                Some((n, _)) if expand::is_name(n.trim_end_matches('+')) => {}
                _ if expand::is_name(v) => names.push(v.to_owned()),
                _ => {}
            }
        }
        if functions {
            return;
        }
        let mut touched: Vec<String> = names.clone();
        for (a, val) in decl {
            if nameref && let Val::Str(target) = &val {
                let t = target.split('[').next().unwrap_or(target);
                self.env.taint(t);
                self.env.set(t, Val::Unknown);
            } else if nameref {
                self.env.kill_all();
            }
            if odd {
                self.env.taint(&a.name);
                self.env.set(&a.name, Val::Unknown);
            } else {
                self.apply_assign(&a, val);
            }
            touched.push(a.name.clone());
        }
        for n in &names {
            if odd {
                self.env.taint(n);
                self.env.set(n, Val::Unknown);
            } else if name == "local" {
                // A local without value starts empty (unset) in the function.
                self.env.set(n, Val::Unknown);
            }
        }
        for n in &touched {
            if let Some(on) = export {
                self.env.export(n, on);
            }
            if readonly {
                self.env.make_readonly(n);
            }
        }
    }

    /// `mapfile`, `readarray`, `getopts`: the named variables (or `MAPFILE`) become
    /// unknown.
    fn mapfile(&mut self, args: &[Word]) {
        let mut any = false;
        for w in args {
            if !w.literal {
                self.env.kill_all();
            } else if expand::is_name(&w.value) {
                self.env.set(&w.value, Val::Unknown);
                any = true;
            }
        }
        if !any {
            self.env.set("MAPFILE", Val::Unknown);
        }
    }

    /// `printf -v VAR FORMAT ARGS…`: VAR holds the formatted text when the text fixes
    /// it, is unknown otherwise.
    fn printf_v(&mut self, args: &[Word]) {
        let Some(k) = args.iter().position(|w| w.value == "-v") else {
            return;
        };
        let Some(target) = args.get(k + 1) else {
            return;
        };
        if !target.literal {
            self.env.kill_all();
            return;
        }
        let var = target
            .value
            .split('[')
            .next()
            .unwrap_or(&target.value)
            .to_owned();
        if !expand::is_name(&var) {
            return;
        }
        let rest = &args[k + 2..];
        let rest = match rest.first() {
            Some(w) if w.value == "--" => &rest[1..],
            _ => rest,
        };
        let value = match rest.split_first() {
            Some((fmt, vals))
                if var == target.value && fmt.literal && vals.iter().all(|w| w.literal) =>
            {
                let vals: Vec<String> =
                    vals.iter().map(|w| expand::home_marker(&w.value)).collect();
                expand::printf(&expand::home_marker(&fmt.value), &vals)
            }
            _ => None,
        };
        self.env.set(&var, value.map_or(Val::Unknown, Val::Str));
    }

    /// `unset NAME…` unsets variables (an element makes its array unknown); `unset -f`
    /// concerns functions only.
    fn unset_vars(&mut self, args: &[Word]) {
        let vars_too = !args.iter().any(|w| w.value == "-f");
        for w in args {
            if !w.literal {
                self.env.kill_all();
                continue;
            }
            if w.value.starts_with('-') || !vars_too {
                continue;
            }
            match w.value.split_once('[') {
                Some((n, _)) if expand::is_name(n) => self.env.set(n, Val::Unknown),
                None if expand::is_name(&w.value) => self.env.set(&w.value, Val::Unset),
                _ => {}
            }
        }
    }

    /// `shopt -s OPT`: options that change what globs match, and `lastpipe`.
    fn shopt(&mut self, args: &[Word]) {
        for w in args {
            match w.value.as_str() {
                _ if !w.literal => {
                    self.globs_changed = true;
                    self.lastpipe = true;
                }
                "dotglob" | "extglob" | "nocaseglob" | "globstar" | "nullglob" | "failglob"
                | "globasciiranges" => self.globs_changed = true,
                "lastpipe" => self.lastpipe = true,
                _ => {}
            }
        }
    }

    /// `read [-r] [-a ARRAY] NAME…` from a here-string or here-document the text fixes.
    pub(super) fn read(&mut self, args: &[Word], feed: Option<&Feed>, ifs: Option<Val>) {
        let mut raw = false;
        let mut array: Option<String> = None;
        let mut names: Vec<String> = Vec::new();
        let mut supported = true;
        let mut i = 0;
        while i < args.len() {
            let w = &args[i];
            if !w.literal {
                self.env.kill_all();
                return;
            }
            let v = w.value.as_str();
            if names.is_empty() && v.starts_with('-') && v.len() > 1 && v != "--" {
                let flags: Vec<char> = v[1..].chars().collect();
                for (k, f) in flags.iter().enumerate() {
                    let takes = matches!(f, 'a' | 'd' | 'i' | 'n' | 'N' | 'p' | 't' | 'u');
                    match f {
                        'r' => raw = true,
                        's' | 'e' => {}
                        'p' | 't' => {}
                        _ => supported = false,
                    }
                    if takes {
                        let value = if k + 1 < flags.len() {
                            Some(flags[k + 1..].iter().collect::<String>())
                        } else {
                            i += 1;
                            args.get(i).map(|w| w.value.clone())
                        };
                        if *f == 'a' {
                            array = value;
                            supported = true;
                        }
                        break;
                    }
                }
                i += 1;
                continue;
            }
            if v == "--" && names.is_empty() {
                i += 1;
                continue;
            }
            names.push(v.to_owned());
            i += 1;
        }
        if names.is_empty() && array.is_none() {
            names.push("REPLY".into());
        }
        let text = match feed {
            Some(Feed::Text { text, .. }) if text.literal && supported => {
                Some(expand::home_marker(&text.value))
            }
            _ => None,
        };
        let ifs = match ifs.unwrap_or_else(|| self.env.get("IFS")) {
            Val::Str(s) => Some(s),
            Val::Unset => Some(" \t\n".into()),
            _ => None,
        };
        let (Some(text), Some(ifs)) = (text, ifs) else {
            for n in names.iter().chain(array.iter()) {
                if expand::is_name(n) {
                    self.env.set(n, Val::Unknown);
                }
            }
            return;
        };
        let line = read_line(&text, raw);
        if let Some(a) = &array {
            let fields = read_fields(&line, &ifs, usize::MAX);
            self.env
                .set(a, Val::Arr(fields.into_iter().enumerate().collect()));
        }
        let fields = read_fields(&line, &ifs, names.len());
        for (k, n) in names.iter().enumerate() {
            if expand::is_name(n) {
                let v = fields.get(k).cloned().unwrap_or_default();
                self.env.set(n, Val::Str(v));
            }
        }
    }
}

/// The first line `read` takes from `text`; without `-r`, backslashes escape the next
/// character and a backslash-newline continues the line.
fn read_line(text: &str, raw: bool) -> String {
    let mut out = String::new();
    let mut it = text.chars();
    while let Some(c) = it.next() {
        match c {
            '\n' => break,
            '\\' if !raw => match it.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            },
            _ => out.push(c),
        }
    }
    out
}

/// Split a line as `read` does into at most `max` fields, the last taking the rest.
fn read_fields(line: &str, ifs: &str, max: usize) -> Vec<String> {
    let white = |c: char| ifs.contains(c) && c.is_ascii_whitespace();
    let delim = |c: char| ifs.contains(c);
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() && white(chars[i]) {
        i += 1;
    }
    let mut out = Vec::new();
    while i < chars.len() {
        if out.len() + 1 == max {
            let mut rest: String = chars[i..].iter().collect();
            while rest.ends_with(white) {
                rest.pop();
            }
            out.push(rest);
            return out;
        }
        let start = i;
        while i < chars.len() && !delim(chars[i]) {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
        // One delimiter: white space around at most one non-white IFS character.
        while i < chars.len() && white(chars[i]) {
            i += 1;
        }
        if i < chars.len() && delim(chars[i]) && !white(chars[i]) {
            i += 1;
            while i < chars.len() && white(chars[i]) {
                i += 1;
            }
        }
    }
    out
}

/// Names an arithmetic expression assigns: before `=`, `+=`, … (not `==`), or next to
/// `++` / `--`.
pub(super) fn arith_assigned(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_') {
                i += 1;
            }
            continue;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let name = &text[start..i];
        let mut j = i;
        if b.get(j) == Some(&b'[') {
            let mut depth = 0usize;
            while j < b.len() {
                match b[j] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        while b.get(j) == Some(&b' ') {
            j += 1;
        }
        let rest = &b[j.min(b.len())..];
        let before = text[..start].trim_end();
        let assigns = (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'='))
            || rest.starts_with(b"++")
            || rest.starts_with(b"--")
            || before.ends_with("++")
            || before.ends_with("--")
            || [
                &b"+="[..],
                b"-=",
                b"*=",
                b"/=",
                b"%=",
                b"&=",
                b"|=",
                b"^=",
                b"<<=",
                b">>=",
            ]
            .iter()
            .any(|op| rest.starts_with(op));
        if assigns {
            out.push(name);
        }
    }
    out
}

/// Variable names in arithmetic text (letters or `_` outside numbers such as `0x1F`
/// or `16#ff`).
fn arith_identifiers(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_')
                {
                    i += 1;
                }
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                return text.get(start..i);
            }
            i += 1;
        }
        None
    })
}

pub(super) fn is_int(v: &str) -> bool {
    let v = v.strip_prefix('-').unwrap_or(v);
    !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit())
}

fn is_name(v: &str) -> bool {
    v.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && v.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}
