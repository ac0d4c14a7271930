//! The walk over a parsed script: lists, pipelines and compound commands, with
//! loops analyzed once per iteration of a literal list.

use super::vars::{arith_assigned, is_int};
use super::{
    Analyzer, MAX_UNROLL, Meta, NESTING_BUDGET, Nested, Scope, Unseen, add_dev_tcp, literal_output,
    push_all,
};
use crate::env::Val;
use crate::expand::{Expander, Expansion, Field, Mode};
use crate::model::{Class, Context, Dynamic, Effects, SimpleCommand, Word};
use crate::parse::{self, AndOr, Compound, CompoundKind, Flow, Item, Pipeline, Script};
use crate::word::{self, Decoded};
use std::rc::Rc;

impl Analyzer {
    pub(super) fn run_text(&mut self, text: &str, scope: &mut Scope) -> bool {
        let nest = NESTING_BUDGET.saturating_sub(scope.nest);
        match parse::parse(text, nest, &mut self.parse_allowance) {
            Ok(script) => {
                self.script(&script, scope);
                true
            }
            Err(e) => {
                if self.out.parse_error.is_none() {
                    self.out.parse_error = Some(e);
                }
                false
            }
        }
    }

    pub(super) fn script(&mut self, s: &Script, scope: &mut Scope) {
        // In `a && b || c`, what b and c assign may not happen: variables they assign
        // are unknown after the list. Inside it, a pipeline after `&&` (`||`) runs only
        // when the previous one ran, as long as the operators do not change; where they
        // do, what the list assigned so far becomes unknown.
        let mut region: Option<u64> = None;
        let mut prev: Option<AndOr> = None;
        for p in &s.pipelines {
            match p.after {
                None => {
                    if let Some(e) = region.take() {
                        self.env.kill_since(e);
                    }
                    prev = None;
                }
                Some(op) => {
                    match region {
                        None => region = Some(self.env.now()),
                        Some(e) if prev != Some(op) => self.env.kill_since(e),
                        Some(_) => {}
                    }
                    prev = Some(op);
                }
            }
            self.pipeline(p, scope);
        }
        if let Some(e) = region {
            self.env.kill_since(e);
        }
    }

    fn pipeline(&mut self, p: &Pipeline, scope: &mut Scope) {
        if p.stages.len() == 1 && !p.background {
            if let Some(stage) = p.stages.first() {
                self.item(stage, scope);
            }
            return;
        }
        let mut ranges = Vec::with_capacity(p.stages.len());
        let mut primaries = Vec::with_capacity(p.stages.len());
        let last = p.stages.len().saturating_sub(1);
        for (k, stage) in p.stages.iter().enumerate() {
            // Each stage of a pipeline (and a background job) runs in a subshell;
            // with `lastpipe` the last one may run in this shell.
            let mut sc = scope.clone();
            let start = self.out.commands.len();
            // Literal text the previous stage prints (`echo 'put .env' | sftp h`) is
            // this stage's standard input, as a here-string would be.
            self.pipe_feed = match (primaries.last(), stage) {
                (Some(Some(k)), Item::Simple(_)) => self
                    .out
                    .commands
                    .get(*k)
                    .and_then(literal_output)
                    .map(Word::literal),
                _ => None,
            };
            let mark = self.env.mark();
            let e0 = self.env.now();
            let primary = self.item(stage, &mut sc);
            self.pipe_feed = None;
            if self.lastpipe && k == last && !p.background {
                self.env.kill_since(e0);
            } else {
                self.env.restore(mark);
            }
            ranges.push(start..self.out.commands.len());
            primaries.push(primary);
        }
        for j in 1..primaries.len() {
            let mut unseen = Unseen::default();
            for c in ranges[..j].iter().flat_map(|r| r.clone()) {
                if let Some(m) = self.meta.get(c) {
                    unseen.merge(m.unseen);
                }
            }
            if unseen.any() {
                // What a later stage writes from such input holds it too
                // (`curl … | tee x.sh`, `… | base64 -d > x.sh`).
                for c in ranges[j].clone() {
                    self.record_unseen_outputs(c, unseen);
                }
            }
            let Some(Some(k)) = primaries.get(j) else {
                continue;
            };
            if unseen.fetched {
                self.fetched_piped_into_tree(*k);
            }
            if !self.meta.get(*k).is_some_and(|m| m.stdin_code) {
                continue;
            }
            if unseen.any() {
                let text = primaries[..=j]
                    .iter()
                    .flatten()
                    .filter_map(|&c| self.out.commands.get(c).map(|x| x.text.clone()))
                    .collect::<Vec<_>>()
                    .join(" | ");
                let runner = self
                    .out
                    .commands
                    .get(*k)
                    .and_then(|c| c.program.as_ref())
                    .map(|w| w.value.clone())
                    .unwrap_or_default();
                self.hazard(
                    unseen.hazard(),
                    &text,
                    &format!(
                        "{} is piped into {runner}, which runs it as code",
                        unseen.what()
                    ),
                );
            }
        }
    }

    fn item(&mut self, item: &Item, scope: &mut Scope) -> Option<usize> {
        match item {
            Item::Simple(s) => self.simple(s, scope),
            Item::Compound(c) => {
                self.compound(c, scope);
                None
            }
            Item::Function(f) => {
                self.functions
                    .insert(f.name.clone(), Rc::new(f.body.clone()));
                // A redefinition is a new body: analyze it at its next call.
                *self.fn_generation.entry(f.name.clone()).or_default() += 1;
                self.analyzed.remove(&f.name);
                self.fn_assigns.remove(&f.name);
                None
            }
        }
    }

    pub(super) fn compound(&mut self, c: &Compound, scope: &mut Scope) {
        self.steps += 1;
        if let Some(e) = &c.error
            && self.out.parse_error.is_none()
        {
            self.out.parse_error = Some(e.clone());
        }
        let mut head = self.compound_words(c, scope);
        self.compound_arith(c, scope, &mut head);
        if let Some(var) = &c.loop_var {
            self.vars.insert(var.clone(), head.all_int && !c.positional);
        }
        self.emit_compound_head(c, scope, head.nested, &head.dynamic);
        self.compound_bodies(c, head.items, scope);
    }

    /// Expand a compound's words (a `for` list, a `case` word and patterns, the words
    /// of `[[ ]]`): what they nest, what of them runs code, and the `for` list when it is
    /// known word for word.
    fn compound_words(&mut self, c: &Compound, scope: &Scope) -> CompoundHead {
        let mut head = CompoundHead {
            nested: Nested::default(),
            dynamic: Vec::new(),
            items: (c.loop_var.is_some() && !c.positional).then(Vec::new),
            all_int: true,
        };
        for w in &c.words {
            // A `for` list is split and globbed; `case` and `[[ ]]` words are not.
            let mode = if c.loop_var.is_some() {
                Mode::Command
            } else {
                Mode::Quoted
            };
            let e = self.expand_word(w, mode);
            head.nested.merge(self.nested(&e.substs, scope));
            self.arith_effects(&e.arith);
            // Inside `[[ ]]` words are not split or globbed; what still runs code is
            // prompt expansion (`${x@P}`) and arithmetic, handled below.
            for x in e.all_dynamic() {
                let prompt = matches!(&x, Dynamic::ParameterExpansion(p) if p.contains("@P"))
                    || matches!(&x, Dynamic::Opaque(_));
                if prompt {
                    push_all(&mut head.dynamic, std::slice::from_ref(&x));
                }
            }
            head.all_int &= e.fields.iter().all(|f| f.literal() && is_int(&f.value));
            if let Some(list) = &mut head.items {
                if e.fields.iter().all(Field::literal) && e.dynamic.is_empty() {
                    list.extend(e.fields.into_iter().map(|f| f.value));
                } else {
                    head.items = None;
                }
            }
        }
        head
    }

    /// A compound's arithmetic (`(( ))`, a C-style `for`): what it nests, and whether it
    /// can run code.
    fn compound_arith(&mut self, c: &Compound, scope: &Scope, head: &mut CompoundHead) {
        for a in &c.arith {
            let mut d = Decoded::default();
            word::scan_expansions(a, &mut d);
            head.nested.merge(self.nested(&d.substs, scope));
            push_all(&mut head.dynamic, &d.dynamic);
            if self.arith_unsafe(a) {
                push_all(&mut head.dynamic, &[Dynamic::Arithmetic]);
            }
        }
        self.arith_effects(&c.arith);
    }

    /// A compound with redirections, `(( ))` or `[[ ]]` is emitted as a command of its
    /// own (program `((` or `[[`, or none) carrying the redirections and what of its head
    /// runs code.
    fn emit_compound_head(
        &mut self,
        c: &Compound,
        scope: &Scope,
        mut nested: Nested,
        head_dynamic: &[Dynamic],
    ) {
        let head = match c.kind {
            CompoundKind::Arithmetic => Some("(("),
            CompoundKind::Test => Some("[["),
            _ => None,
        };
        if c.redirects.is_empty() && head.is_none() {
            return;
        }
        let super::flow::Redirected {
            redirects,
            mut dynamic,
            nested: n,
            net,
            ..
        } = self.redirects(&c.redirects, scope);
        nested.merge(n);
        if head.is_some() {
            push_all(&mut dynamic, head_dynamic);
        }
        if nested.too_deep {
            dynamic.push(Dynamic::TooDeep);
        }
        let mut effects = Effects {
            class: Class::ReadOnly,
            ..Effects::default()
        };
        add_dev_tcp(&mut effects, net);
        self.emit(
            SimpleCommand {
                text: c.text.clone(),
                program: head.map(Word::literal),
                args: Vec::new(),
                assignments: Vec::new(),
                redirects,
                wrappers: Vec::new(),
                context: scope.context,
                cwd: scope.cwd.clone(),
                dynamic,
                effects,
                function_call: false,
            },
            Meta::default(),
        );
    }

    /// A compound's bodies: a subshell's in a scope of its own (its assignments undone
    /// afterwards); an `if` condition as always run; every other branch as maybe run
    /// (what it assigns is unknown afterwards); a loop's as [`run_loop`](Self::run_loop)
    /// says.
    fn compound_bodies(&mut self, c: &Compound, items: Option<Vec<String>>, scope: &mut Scope) {
        if c.kind == CompoundKind::Subshell {
            let mut sc = scope.clone();
            sc.context = Context::Subshell;
            sc.nest += 1;
            let mark = self.env.mark();
            for b in &c.bodies {
                self.script(b, &mut sc);
            }
            self.env.restore(mark);
            return;
        }
        scope.nest += 1;
        match c.flow {
            Flow::Straight => {
                for b in &c.bodies {
                    self.script(b, scope);
                }
            }
            Flow::If | Flow::Case => {
                for (k, b) in c.bodies.iter().enumerate() {
                    if k == 0 && c.flow == Flow::If {
                        self.script(b, scope);
                        continue;
                    }
                    let e = self.env.now();
                    self.script(b, scope);
                    self.env.kill_since(e);
                }
            }
            Flow::Loop => self.run_loop(c, items, scope),
        }
        scope.nest -= 1;
    }

    /// The bodies of a loop. The first pass sees the variables as they are before the
    /// loop (exact for the first iteration). A `for` list of at most [`MAX_UNROLL`]
    /// known words is analyzed once per word; otherwise, when the first pass read a
    /// variable the body later assigns, a second pass sees those variables unknown
    /// (every later iteration). Extra passes are paid from a budget proportional to
    /// the text; with none left, everything known is dropped before the loop so one
    /// pass is sound.
    fn run_loop(&mut self, c: &Compound, items: Option<Vec<String>>, scope: &mut Scope) {
        let start = self.env.now();
        let var = c.loop_var.as_deref();
        let mut items = items.filter(|l| !l.is_empty() && l.len() <= MAX_UNROLL);
        if self.loop_budget == 0 {
            self.env.kill_all();
            items = None;
        }
        let walk = |this: &mut Self, scope: &mut Scope| {
            let s0 = this.steps;
            for b in &c.bodies {
                this.script(b, scope);
            }
            this.steps - s0 + 1
        };
        match items {
            Some(list) => {
                if let Some(v) = var {
                    self.env.set(v, Val::Str(list[0].clone()));
                }
                let cost = walk(self, scope);
                let rest = list.len() - 1;
                if rest > 0 {
                    if self.loop_budget >= cost.saturating_mul(rest) {
                        self.loop_budget -= cost * rest;
                        for item in &list[1..] {
                            self.env.kill_since(start);
                            if let Some(v) = var {
                                self.env.set(v, Val::Str(item.clone()));
                            }
                            walk(self, scope);
                        }
                    } else {
                        self.again(c, start, cost, var, scope);
                    }
                }
            }
            None => {
                if let Some(v) = var {
                    self.env.set(v, Val::Unknown);
                }
                let mark = self.env.mark();
                let watch = self.env.watch();
                let cost = walk(self, scope);
                let read = self.env.unwatch(watch, start);
                let again = !read.is_empty()
                    && (self.env.killed_all_since(mark)
                        || self
                            .env
                            .assigned_since(mark, usize::MAX)
                            .unwrap_or_default()
                            .iter()
                            .any(|n| read.contains(n)));
                if again {
                    self.again(c, start, cost, var, scope);
                }
            }
        }
        // The loop may have run any number of times, or stopped part way.
        self.env.kill_since(start);
    }

    /// Analyze a loop body once more with what the loop assigns unknown, or, past the
    /// budget, report that it was not.
    fn again(
        &mut self,
        c: &Compound,
        start: u64,
        cost: usize,
        var: Option<&str>,
        scope: &mut Scope,
    ) {
        self.env.kill_since(start);
        if self.loop_budget >= cost {
            self.loop_budget -= cost;
            if let Some(v) = var {
                self.env.set(v, Val::Unknown);
            }
            for b in &c.bodies {
                self.script(b, scope);
            }
            return;
        }
        let text = if c.text.is_empty() {
            "(a loop)".to_owned()
        } else {
            c.text.clone()
        };
        self.emit(
            SimpleCommand {
                text,
                program: None,
                args: Vec::new(),
                assignments: Vec::new(),
                redirects: Vec::new(),
                wrappers: Vec::new(),
                context: scope.context,
                cwd: scope.cwd.clone(),
                dynamic: vec![Dynamic::Opaque(
                    "a loop changes variables it reads, and the text is too large to follow every iteration".into(),
                )],
                effects: Effects {
                    class: Class::ReadOnly,
                    ..Effects::default()
                },
                function_call: false,
            },
            Meta::default(),
        );
    }

    /// Expand a word against the variables known here.
    pub(super) fn expand_word(&mut self, raw: &str, mode: Mode) -> Expansion {
        let static_ok = self.echo_is_builtin();
        let mut x = Expander::new(&mut self.env, &mut self.eval_budget);
        x.globs_changed = self.globs_changed;
        x.static_ok = static_ok;
        x.word(raw, mode)
    }

    /// `echo` and `printf` are the builtins (no function or alias of the text
    /// replaces them), so `$(echo …)` can be evaluated.
    pub(super) fn echo_is_builtin(&self) -> bool {
        ["echo", "printf"]
            .iter()
            .all(|n| !self.functions.contains_key(*n) && !self.aliases.contains_key(*n))
    }

    /// Arithmetic assigns the names it increments or assigns to (and, through a name
    /// holding an expression, possibly any name).
    pub(super) fn arith_effects(&mut self, texts: &[String]) {
        for t in texts {
            if self.arith_unsafe(t) {
                self.env.kill_all();
            }
            for n in arith_assigned(t) {
                self.env.set(n, Val::Unknown);
            }
        }
    }
}

/// What a compound's words and arithmetic tell before its bodies run.
struct CompoundHead {
    /// Facts of the code nested in them.
    nested: Nested,
    /// What of them runs code.
    dynamic: Vec<Dynamic>,
    /// A `for` list known word for word (`None`: not a `for`, or not known).
    items: Option<Vec<String>>,
    /// Whether every word is a literal integer.
    all_int: bool,
}
