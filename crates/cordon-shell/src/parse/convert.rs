//! Conversion of brush-parser's syntax tree into cordon's own small tree.

use super::{
    AndOr, Arg, Assign, AssignValue, Compound, CompoundKind, Flow, Function, Item, MAX_NESTING,
    MAX_TEXT, Pipeline, RawRedirect, RawTarget, Script, Simple, Src, parse,
};
use crate::model::RedirectKind;
use brush_parser::ast;

pub(super) fn convert_list(src: &Src<'_>, list: &ast::CompoundList, out: &mut Script) {
    for ast::CompoundListItem(and_or, sep) in &list.0 {
        let background = matches!(sep, ast::SeparatorOperator::Async);
        let mut push = |p: &ast::Pipeline, after: Option<AndOr>| {
            out.pipelines.push(Pipeline {
                stages: p.seq.iter().map(|c| convert_command(src, c)).collect(),
                background,
                after,
            });
        };
        push(&and_or.first, None);
        for next in &and_or.additional {
            match next {
                ast::AndOr::And(p) => push(p, Some(AndOr::And)),
                ast::AndOr::Or(p) => push(p, Some(AndOr::Or)),
            }
        }
    }
}

fn script_of(src: &Src<'_>, list: &ast::CompoundList) -> Script {
    let mut s = Script::default();
    convert_list(src, list, &mut s);
    s
}

fn convert_command(src: &Src<'_>, cmd: &ast::Command) -> Item {
    match cmd {
        ast::Command::Simple(s) => Item::Simple(convert_simple(src, s)),
        ast::Command::Compound(c, redirects) => {
            Item::Compound(convert_compound(src, c, redirects.as_ref()))
        }
        ast::Command::Function(f) => Item::Function(Function {
            name: f.fname.value.clone(),
            body: convert_compound(src, &f.body.0, f.body.1.as_ref()),
        }),
        ast::Command::ExtendedTest(t, redirects) => {
            let mut words = Vec::new();
            let mut arith = Vec::new();
            test_words(&t.expr, &mut words, &mut arith);
            Item::Compound(Compound {
                kind: CompoundKind::Test,
                words,
                arith,
                bodies: Vec::new(),
                redirects: convert_redirect_list(src, redirects.as_ref()),
                text: truncate(format!("[[ {} ]]", t.expr)),
                error: None,
                loop_var: None,
                positional: false,
                flow: Flow::Straight,
            })
        }
    }
}

/// Operand words of `[[ … ]]`; operands of arithmetic comparisons (`-eq`, `-lt`, …)
/// are also evaluated arithmetically by bash and go to `arith`.
fn test_words(e: &ast::ExtendedTestExpr, out: &mut Vec<String>, arith: &mut Vec<String>) {
    use ast::BinaryPredicate as B;
    match e {
        ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
            test_words(a, out, arith);
            test_words(b, out, arith);
        }
        ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
            test_words(a, out, arith);
        }
        ast::ExtendedTestExpr::UnaryTest(_, w) => out.push(w.value.clone()),
        ast::ExtendedTestExpr::BinaryTest(p, a, b) => {
            out.push(a.value.clone());
            out.push(b.value.clone());
            if matches!(
                p,
                B::ArithmeticEqualTo
                    | B::ArithmeticNotEqualTo
                    | B::ArithmeticLessThan
                    | B::ArithmeticLessThanOrEqualTo
                    | B::ArithmeticGreaterThan
                    | B::ArithmeticGreaterThanOrEqualTo
            ) {
                arith.push(a.value.clone());
                arith.push(b.value.clone());
            }
        }
    }
}

fn text_if(cond: bool, f: impl FnOnce() -> String) -> String {
    if cond { truncate(f()) } else { String::new() }
}

fn convert_compound(
    src: &Src<'_>,
    c: &ast::CompoundCommand,
    redirects: Option<&ast::RedirectList>,
) -> Compound {
    let mut out = Compound {
        kind: CompoundKind::Other,
        words: Vec::new(),
        arith: Vec::new(),
        bodies: Vec::new(),
        redirects: convert_redirect_list(src, redirects),
        text: text_if(
            redirects.is_some()
                || matches!(
                    c,
                    ast::CompoundCommand::Arithmetic(_)
                        | ast::CompoundCommand::ArithmeticForClause(_)
                ),
            || c.to_string(),
        ),
        error: None,
        loop_var: None,
        positional: false,
        flow: Flow::Straight,
    };
    match c {
        ast::CompoundCommand::Arithmetic(a) => match misparsed_subshells(src, &a.loc) {
            // brush-parser reads `( ( cmd ) )` as the arithmetic command `(( cmd ))`;
            // bash runs it as nested subshells. Re-read the inside as commands.
            Some(inner) => {
                out.kind = CompoundKind::Subshell;
                let mut allowance = src.allowance.get();
                let parsed = parse(inner, MAX_NESTING, &mut allowance);
                src.allowance.set(allowance);
                match parsed {
                    Ok(script) => out.bodies.push(script),
                    Err(e) => out.error = Some(e),
                }
            }
            None => {
                out.kind = CompoundKind::Arithmetic;
                out.arith.push(a.expr.value.clone());
            }
        },
        ast::CompoundCommand::ArithmeticForClause(f) => {
            out.kind = CompoundKind::Arithmetic;
            for e in [&f.initializer, &f.condition, &f.updater]
                .into_iter()
                .flatten()
            {
                out.arith.push(e.value.clone());
            }
            out.flow = Flow::Loop;
            out.bodies.push(script_of(src, &f.body.list));
        }
        ast::CompoundCommand::BraceGroup(g) => {
            out.kind = CompoundKind::Group;
            out.bodies.push(script_of(src, &g.list));
        }
        ast::CompoundCommand::Subshell(s) => {
            out.kind = CompoundKind::Subshell;
            out.bodies.push(script_of(src, &s.list));
        }
        ast::CompoundCommand::ForClause(f) => {
            out.loop_var = Some(f.variable_name.clone());
            out.flow = Flow::Loop;
            match &f.values {
                Some(values) => out.words.extend(values.iter().map(|w| w.value.clone())),
                None => out.positional = true,
            }
            out.bodies.push(script_of(src, &f.body.list));
        }
        ast::CompoundCommand::CaseClause(c) => {
            out.flow = Flow::Case;
            out.words.push(c.value.value.clone());
            for item in &c.cases {
                out.words
                    .extend(item.patterns.iter().map(|w| w.value.clone()));
                if let Some(cmd) = &item.cmd {
                    out.bodies.push(script_of(src, cmd));
                }
            }
        }
        ast::CompoundCommand::IfClause(i) => {
            out.flow = Flow::If;
            out.bodies.push(script_of(src, &i.condition));
            out.bodies.push(script_of(src, &i.then));
            for e in i.elses.iter().flatten() {
                if let Some(cond) = &e.condition {
                    out.bodies.push(script_of(src, cond));
                }
                out.bodies.push(script_of(src, &e.body));
            }
        }
        ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
            out.flow = Flow::Loop;
            out.bodies.push(script_of(src, &w.0));
            out.bodies.push(script_of(src, &w.1.list));
        }
        ast::CompoundCommand::Coprocess(c) => {
            out.bodies.push(Script {
                pipelines: vec![Pipeline {
                    stages: vec![convert_command(src, &c.body)],
                    background: true,
                    after: None,
                }],
            });
        }
    }
    out
}

fn convert_simple(src: &Src<'_>, s: &ast::SimpleCommand) -> Simple {
    let mut out = Simple {
        text: command_text(src, s),
        assignments: Vec::new(),
        args: Vec::new(),
        redirects: Vec::new(),
    };
    if let Some(prefix) = &s.prefix {
        for item in &prefix.0 {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    out.assignments.push(convert_assignment(a));
                }
                other => convert_item(src, other, &mut out),
            }
        }
    }
    if let Some(name) = &s.word_or_name {
        out.args.push(Arg::Word(name.value.clone()));
    }
    if let Some(suffix) = &s.suffix {
        for item in &suffix.0 {
            convert_item(src, item, &mut out);
        }
    }
    out
}

fn convert_assignment(a: &ast::Assignment) -> Assign {
    let (name, index) = match &a.name {
        ast::AssignmentName::VariableName(n) => (n.clone(), None),
        ast::AssignmentName::ArrayElementName(n, i) => (n.clone(), Some(i.clone())),
    };
    let value = match &a.value {
        ast::AssignmentValue::Scalar(w) => AssignValue::Scalar(w.value.clone()),
        ast::AssignmentValue::Array(items) => AssignValue::Array(
            items
                .iter()
                .map(|(k, v)| (k.as_ref().map(|k| k.value.clone()), v.value.clone()))
                .collect(),
        ),
    };
    Assign {
        name,
        index,
        value,
        append: a.append,
    }
}

fn convert_item(src: &Src<'_>, item: &ast::CommandPrefixOrSuffixItem, out: &mut Simple) {
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
            out.redirects.push(convert_redirect(src, r))
        }
        ast::CommandPrefixOrSuffixItem::Word(w) => out.args.push(Arg::Word(w.value.clone())),
        // `export X=1`, `declare x=$(…)`: an argument word of the command.
        ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
            out.args
                .push(Arg::Assign(w.value.clone(), convert_assignment(a)));
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
            out.args.push(Arg::Process(script_of(src, &sub.list)));
        }
    }
}

fn convert_redirect_list(src: &Src<'_>, list: Option<&ast::RedirectList>) -> Vec<RawRedirect> {
    list.map(|l| l.0.iter().map(|r| convert_redirect(src, r)).collect())
        .unwrap_or_default()
}

fn convert_redirect(src: &Src<'_>, r: &ast::IoRedirect) -> RawRedirect {
    match r {
        ast::IoRedirect::File(fd, kind, target) => {
            let mut kind = match kind {
                ast::IoFileRedirectKind::Read => RedirectKind::Read,
                ast::IoFileRedirectKind::Write => RedirectKind::Write,
                ast::IoFileRedirectKind::Append => RedirectKind::Append,
                ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                ast::IoFileRedirectKind::Clobber => RedirectKind::Clobber,
                ast::IoFileRedirectKind::DuplicateInput => RedirectKind::DupIn,
                ast::IoFileRedirectKind::DuplicateOutput => RedirectKind::DupOut,
            };
            let target = match target {
                ast::IoFileRedirectTarget::Filename(w) => RawTarget::Word(w.value.clone()),
                ast::IoFileRedirectTarget::Fd(n) => RawTarget::Word(n.to_string()),
                ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    RawTarget::Process(script_of(src, &sub.list))
                }
                ast::IoFileRedirectTarget::Duplicate(w) => {
                    let v = w.value.trim_end_matches('-');
                    if w.value == "-" {
                        kind = RedirectKind::Close;
                    } else if !v.is_empty() && v.bytes().all(|c| c.is_ascii_digit()) {
                        // `>&N` / `>&N-` (move): a descriptor.
                    } else if kind == RedirectKind::DupOut && fd.is_none() {
                        // `>&FILE` is bash's old spelling of `&>FILE`.
                        kind = RedirectKind::WriteBoth;
                    }
                    RawTarget::Word(w.value.clone())
                }
            };
            RawRedirect {
                fd: fd.and_then(|n| u32::try_from(n).ok()),
                kind,
                target,
            }
        }
        ast::IoRedirect::HereDocument(fd, doc) => {
            let body = if doc.remove_tabs {
                doc.doc
                    .value
                    .split_inclusive('\n')
                    .map(|l| l.trim_start_matches('\t'))
                    .collect()
            } else {
                doc.doc.value.clone()
            };
            RawRedirect {
                fd: fd.and_then(|n| u32::try_from(n).ok()),
                kind: RedirectKind::HereDoc,
                target: RawTarget::HereDoc {
                    body,
                    expand: doc.requires_expansion,
                },
            }
        }
        ast::IoRedirect::HereString(fd, w) => RawRedirect {
            fd: fd.and_then(|n| u32::try_from(n).ok()),
            kind: RedirectKind::HereString,
            target: RawTarget::Word(w.value.clone()),
        },
        ast::IoRedirect::OutputAndError(w, append) => RawRedirect {
            fd: None,
            kind: if *append {
                RedirectKind::AppendBoth
            } else {
                RedirectKind::WriteBoth
            },
            target: RawTarget::Word(w.value.clone()),
        },
    }
}

/// When an arithmetic command's source does not start with two adjacent `(`, it was
/// written as nested subshells `( ( … ) )`: returns the text inside the outer pair.
fn misparsed_subshells<'a>(src: &Src<'a>, loc: &brush_parser::SourceSpan) -> Option<&'a str> {
    let start = byte_index(src, loc.start.index)?;
    let end = byte_index(src, loc.end.index).unwrap_or(src.text.len());
    let text = src.text.get(start..end)?;
    // bash reads `((` … `))` as arithmetic only when both pairs are adjacent.
    if text.starts_with("((") && text.trim_end().ends_with("))") {
        return None;
    }
    let inner = text.strip_prefix('(')?;
    let close = inner.rfind(')')?;
    inner.get(..close)
}

/// The parser counts positions in characters; convert one to a byte offset.
fn byte_index(src: &Src<'_>, chars: usize) -> Option<usize> {
    if src.ascii {
        return (chars <= src.text.len()).then_some(chars);
    }
    src.text
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(src.text.len()))
        .nth(chars)
}

/// The source text of a simple command as written, when positions are cheap to map
/// (ASCII text); otherwise the parser's rendering of it.
fn command_text(src: &Src<'_>, s: &ast::SimpleCommand) -> String {
    use brush_parser::ast::SourceLocation;
    let written = src
        .ascii
        .then(|| s.location())
        .flatten()
        .and_then(|loc| src.text.get(loc.start.index..loc.end.index));
    match written {
        Some(t) if !t.is_empty() => truncate(t.to_owned()),
        _ => truncate(s.to_string()),
    }
}

/// Shorten text for findings, on a character boundary.
pub(crate) fn truncate(mut s: String) -> String {
    if s.len() > MAX_TEXT {
        let mut end = MAX_TEXT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}
