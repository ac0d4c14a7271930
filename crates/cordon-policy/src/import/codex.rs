//! Codex exec-policy `.rules` files into cordon `[[rule]]` tables.
//!
//! Codex's rules (its execpolicy README and the "Rules" page of its documentation):
//! `prefix_rule(pattern = [...], decision = "allow" | "prompt" | "forbidden",
//! justification = "...", match = [...], not_match = [...])`. A pattern is a list of argv
//! tokens matched from the first; an element that is itself a list is a set of
//! alternatives for that position. `decision` defaults to `allow`; when several rules match,
//! the strictest wins (forbidden > prompt > allow). `match` / `not_match` are examples,
//! strings split like a POSIX shell (`shlex`) or token lists, that Codex checks when it
//! loads the file.
//!
//! A prefix of argv tokens is cordon's `Bash(TOKENS:*)`: cordon matches the words of each
//! sub-command the same way, so each combination of alternatives becomes one rule. Codex's
//! own examples are then judged by cordon through the produced config, and every example
//! whose cordon verdict is not the Codex decision is reported.

use super::starlark::{self, Arg, Statement, Value};
use super::{ImportError, Imported, Remark, RemarkKind, toml_list, toml_string};
use crate::request::Request;
use crate::verdict::Decision;

/// At most this many cordon rules are made from one Codex rule's alternatives; a rule that
/// would expand into more is skipped whole (half of a deny would be a narrower deny).
pub const MAX_EXPANSIONS: usize = 64;

/// One `prefix_rule`, checked.
#[derive(Debug, Clone)]
struct PrefixRule {
    line: usize,
    text: String,
    /// Each position's alternatives (one for a plain token).
    pattern: Vec<Vec<String>>,
    decision: Decision,
    justification: Option<String>,
    matches: Vec<Vec<String>>,
    not_matches: Vec<Vec<String>>,
}

impl PrefixRule {
    /// Does Codex's rule match this argv?
    fn codex_matches(&self, argv: &[String]) -> bool {
        argv.len() >= self.pattern.len()
            && self
                .pattern
                .iter()
                .zip(argv)
                .all(|(alts, t)| alts.contains(t))
    }

    /// Every combination of alternatives, or `None` past `MAX_EXPANSIONS`.
    fn expansions(&self) -> Option<Vec<Vec<String>>> {
        let mut out: Vec<Vec<String>> = vec![Vec::new()];
        for alts in &self.pattern {
            if out.len().saturating_mul(alts.len()) > MAX_EXPANSIONS {
                return None;
            }
            out = out
                .iter()
                .flat_map(|head| {
                    alts.iter().map(move |a| {
                        let mut v = head.clone();
                        v.push(a.clone());
                        v
                    })
                })
                .collect();
        }
        Some(out)
    }
}

/// Convert a Codex `.rules` file.
pub fn codex_rules(text: &str) -> Result<Imported, ImportError> {
    let statements = starlark::parse(text)?;
    let mut remarks = Vec::new();
    let (rules, network_deny) = read_statements(statements, &mut remarks)?;
    let (toml, produced) = write_toml(&rules, &network_deny, &mut remarks);
    let (policy, fs) = super::load_check(&toml)?;
    // Judge each example as a shell call through the produced config.
    let kept: Vec<&PrefixRule> = produced.iter().map(|(i, _)| &rules[*i]).collect();
    for (idx, texts) in &produced {
        let r = &rules[*idx];
        match_examples_differ(r, &kept, &policy, &fs, &mut remarks);
        not_match_examples_differ(r, texts, &policy, &fs, &mut remarks);
    }
    remarks.sort_by_key(|r| r.line);
    Ok(Imported { toml, remarks })
}

/// A remark that the statement `item` at `line` is skipped, and why.
fn skipped(line: usize, item: &str, why: String) -> Remark {
    Remark {
        kind: RemarkKind::Skipped,
        item: item.to_string(),
        line: Some(line),
        why,
    }
}

/// The file's `prefix_rule`s and the hosts of its `network_rule`s; every other statement,
/// and a rule outside what cordon converts, is remarked as skipped.
fn read_statements(
    statements: Vec<Statement>,
    remarks: &mut Vec<Remark>,
) -> Result<(Vec<PrefixRule>, Vec<String>), ImportError> {
    let mut rules = Vec::new();
    let mut network_deny = Vec::new();
    for s in statements {
        let (name, args, line, text) = match s {
            Statement::Other { line, text } => {
                remarks.push(skipped(
                    line,
                    &text,
                    "only top-level prefix_rule(…) calls with literal arguments are converted; this statement is not evaluated".into(),
                ));
                continue;
            }
            Statement::Call {
                name,
                args,
                line,
                text,
            } => (name, args, line, text),
        };
        match name.as_str() {
            "prefix_rule" => match prefix_rule(&args, line, &text)? {
                Ok(r) => rules.push(r),
                Err(why) => remarks.push(skipped(line, &text, why)),
            },
            "network_rule" => match network_rule(&args) {
                Ok(host) => {
                    remarks.push(Remark {
                        kind: RemarkKind::Wider,
                        item: text.clone(),
                        line: Some(line),
                        why: format!("kept as `[network] deny = [\"{host}\"]`, which refuses the host for every protocol"),
                    });
                    network_deny.push(host);
                }
                Err(why) => remarks.push(skipped(line, &text, why)),
            },
            "host_executable" => remarks.push(skipped(
                line,
                &text,
                "cordon matches a program as it is written in the command; it has no list of paths a program name may resolve to".into(),
            )),
            other => remarks.push(skipped(
                line,
                &text,
                format!("`{other}(…)` is not a Codex rule cordon converts; only prefix_rule is"),
            )),
        }
    }
    Ok((rules, network_deny))
}

/// The converted config: the network denies, then for each rule one `[[rule]]` table a
/// combination of its alternatives. A rule that expands too far, or into a prefix cordon
/// cannot write, is remarked as skipped. Also returns, for each rule converted, its index
/// and its `Bash(…)` rules.
fn write_toml(
    rules: &[PrefixRule],
    network_deny: &[String],
    remarks: &mut Vec<Remark>,
) -> (String, Vec<(usize, Vec<String>)>) {
    let mut toml = String::from("# Converted from Codex rules by `cordon import codex-rules`.\n");
    if !network_deny.is_empty() {
        toml.push_str(&format!(
            "\n[network]\ndeny = {}\n",
            toml_list(network_deny)
        ));
    }
    let mut produced: Vec<(usize, Vec<String>)> = Vec::new();
    for (idx, r) in rules.iter().enumerate() {
        let Some(combos) = r.expansions() else {
            remarks.push(skipped(
                r.line,
                &r.text,
                format!(
                    "its alternatives expand into more than {MAX_EXPANSIONS} cordon rules; split it into smaller rules"
                ),
            ));
            continue;
        };
        let texts: Result<Vec<String>, String> = combos.iter().map(|c| bash_prefix(c)).collect();
        let texts = match texts {
            Ok(t) => t,
            Err(why) => {
                remarks.push(skipped(r.line, &r.text, why));
                continue;
            }
        };
        toml.push_str(&format!("\n# line {}: {}\n", r.line, first_line(&r.text)));
        for (combo, rule) in combos.iter().zip(&texts) {
            toml.push_str(&rule_table(r, combo, rule));
        }
        produced.push((idx, texts));
    }
    (toml, produced)
}

/// Each `match` example of `r` whose cordon verdict under the converted config is not
/// the decision Codex gives it (the strictest of the `kept` rules that match it).
fn match_examples_differ(
    r: &PrefixRule,
    kept: &[&PrefixRule],
    policy: &crate::policy::Policy,
    fs: &crate::facts::FakeFs,
    remarks: &mut Vec<Remark>,
) {
    for ex in &r.matches {
        let want = kept
            .iter()
            .filter(|k| k.codex_matches(ex))
            .map(|k| k.decision)
            .max()
            .unwrap_or(r.decision);
        let req = Request::argv(ex, Some(super::CHECK_WORKSPACE.into()));
        let v = policy.decide(&req, fs);
        if v.decision != want {
            remarks.push(Remark {
                kind: RemarkKind::Differs,
                item: shell_words(ex),
                line: Some(r.line),
                why: format!(
                    "a `match` example: Codex decides {}, cordon decides {} ({})",
                    codex_word(want),
                    v.decision,
                    v.reason.trim_end_matches('.')
                ),
            });
        }
    }
}

/// Each `not_match` example of `r` that one of its converted rules (`texts`) matches a
/// command of.
fn not_match_examples_differ(
    r: &PrefixRule,
    texts: &[String],
    policy: &crate::policy::Policy,
    fs: &crate::facts::FakeFs,
    remarks: &mut Vec<Remark>,
) {
    for ex in &r.not_matches {
        let req = Request::argv(ex, Some(super::CHECK_WORKSPACE.into()));
        let ops = policy.operations(&req, fs);
        let hit = ops.commands.iter().any(|c| {
            texts.iter().any(|t| {
                policy
                    .rules()
                    .iter()
                    .find(|x| &x.text == t)
                    .is_some_and(|x| match &x.matcher {
                        crate::rules::Matcher::Command(p) => p.matches(&c.words),
                        _ => false,
                    })
            })
        });
        if hit {
            remarks.push(Remark {
                kind: RemarkKind::Differs,
                item: shell_words(ex),
                line: Some(r.line),
                why: "a `not_match` example: cordon's converted rule matches a command of it"
                    .into(),
            });
        }
    }
}

/// The statement on one line, for a TOML comment (which may hold no control characters).
fn first_line(s: &str) -> String {
    let one: String = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if one.chars().count() > 100 {
        format!("{}…", one.chars().take(100).collect::<String>())
    } else {
        one
    }
}

fn codex_word(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Ask => "prompt",
        Decision::Deny => "forbidden",
    }
}

/// An argv as shell words, for reports.
fn shell_words(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// One `[[rule]]` table; examples are attached only where cordon's own load-time check
/// reads them the same way (whitespace-free tokens), and `match` examples only to the
/// combination they match.
fn rule_table(r: &PrefixRule, combo: &[String], rule: &str) -> String {
    let action = match r.decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    };
    let mut t = format!(
        "[[rule]]\naction = \"{action}\"\nrule = {}\n",
        toml_string(rule)
    );
    if let Some(j) = &r.justification {
        t.push_str(&format!("reason = {}\n", toml_string(j)));
    }
    let plain = |ex: &&Vec<String>| {
        ex.iter()
            .all(|w| !w.is_empty() && !w.contains(char::is_whitespace))
    };
    let m: Vec<String> = r
        .matches
        .iter()
        .filter(plain)
        .filter(|ex| ex.len() >= combo.len() && ex[..combo.len()] == *combo)
        .map(|ex| ex.join(" "))
        .collect();
    let n: Vec<String> = r
        .not_matches
        .iter()
        .filter(plain)
        .map(|ex| ex.join(" "))
        .collect();
    if !m.is_empty() {
        t.push_str(&format!("match = {}\n", toml_list(&m)));
    }
    if !n.is_empty() {
        t.push_str(&format!("not_match = {}\n", toml_list(&n)));
    }
    t
}

/// `Bash(TOKENS:*)` for one combination, if cordon reads it back as exactly these tokens.
fn bash_prefix(tokens: &[String]) -> Result<String, String> {
    for t in tokens {
        if t.is_empty() {
            return Err("an empty token cannot be written in a cordon Bash rule".into());
        }
        if t.contains(char::is_whitespace) {
            return Err(format!(
                "the token {t:?} holds whitespace; cordon's Bash rules separate words by whitespace"
            ));
        }
        if t.contains('*') {
            return Err(format!(
                "the token {t:?} holds `*`, which cordon's Bash rules read as a wildcard"
            ));
        }
    }
    let rule = format!("Bash({}:*)", tokens.join(" "));
    let anchors = crate::rules::Anchors {
        workspace: super::CHECK_WORKSPACE.into(),
        home: super::CHECK_HOME.into(),
    };
    match crate::rules::parse_rule(&rule, &anchors) {
        Ok(crate::rules::Matcher::Command(crate::rules::CommandPattern::Prefix(p)))
            if p == tokens =>
        {
            Ok(rule)
        }
        _ => Err(format!(
            "cordon does not read `{rule}` back as this exact prefix"
        )),
    }
}

/// The parameters of `prefix_rule`, in their positional order.
const PARAMS: [&str; 5] = ["pattern", "decision", "match", "not_match", "justification"];

/// An error of `prefix_rule` at `line`: a file Codex itself would refuse.
fn bad(line: usize, m: String) -> ImportError {
    ImportError::at(line, 1, format!("prefix_rule: {m}"))
}

/// Read `prefix_rule`'s arguments. `Err` is a file Codex itself would refuse; `Ok(Err)` a
/// rule outside what cordon converts.
fn prefix_rule(
    args: &[Arg],
    line: usize,
    text: &str,
) -> Result<Result<PrefixRule, String>, ImportError> {
    let slots = match argument_slots(args, line)? {
        Ok(slots) => slots,
        Err(why) => return Ok(Err(why)),
    };
    let rule = PrefixRule {
        line,
        text: text.to_string(),
        pattern: pattern_of(slots[0], line)?,
        decision: decision_of(slots[1], line)?,
        justification: justification_of(slots[4], line)?,
        matches: examples_of(slots[2], "match", line)?,
        not_matches: examples_of(slots[3], "not_match", line)?,
    };
    examples_agree(&rule)?;
    Ok(Ok(rule))
}

/// Each parameter's value (positional first, then by keyword), each a literal.
fn argument_slots(
    args: &[Arg],
    line: usize,
) -> Result<Result<[Option<&Value>; 5], String>, ImportError> {
    let mut slots: [Option<&Value>; 5] = [None; 5];
    for (i, a) in args.iter().enumerate() {
        let k = match &a.name {
            None if i < PARAMS.len() && args[..i].iter().all(|x| x.name.is_none()) => i,
            None => {
                return Err(bad(
                    line,
                    "a positional argument follows a keyword argument".into(),
                ));
            }
            Some(n) => match PARAMS.iter().position(|p| p == n) {
                Some(k) => k,
                None => {
                    return Ok(Err(format!(
                        "the argument `{n}` is not one cordon knows how to convert"
                    )));
                }
            },
        };
        if slots[k].replace(&a.value).is_some() {
            return Err(bad(line, format!("`{}` is given twice", PARAMS[k])));
        }
    }
    for v in slots.iter().flatten() {
        if let Some(desc) = non_literal(v) {
            return Ok(Err(format!(
                "an argument is not a literal (`{}`); cordon does not evaluate Starlark",
                desc.trim()
            )));
        }
    }
    Ok(Ok(slots))
}

/// `pattern`: required, a non-empty list of tokens or non-empty lists of alternatives.
fn pattern_of(v: Option<&Value>, line: usize) -> Result<Vec<Vec<String>>, ImportError> {
    let Some(Value::List(items)) = v else {
        return Err(bad(line, "`pattern` is required and must be a list".into()));
    };
    if items.is_empty() {
        return Err(bad(line, "`pattern` cannot be empty".into()));
    }
    let mut pattern = Vec::new();
    for it in items {
        match it {
            Value::Str(s) => pattern.push(vec![s.clone()]),
            Value::List(alts) if !alts.is_empty() => {
                let mut v = Vec::new();
                for a in alts {
                    let Value::Str(s) = a else {
                        return Err(bad(line, "pattern alternatives must be strings".into()));
                    };
                    v.push(s.clone());
                }
                pattern.push(v);
            }
            Value::List(_) => {
                return Err(bad(line, "pattern alternatives cannot be empty".into()));
            }
            Value::Other(_) => {
                return Err(bad(
                    line,
                    "pattern elements must be strings or lists of strings".into(),
                ));
            }
        }
    }
    Ok(pattern)
}

/// `decision`: `allow` (the default), `prompt` or `forbidden`.
fn decision_of(v: Option<&Value>, line: usize) -> Result<Decision, ImportError> {
    match v {
        None => Ok(Decision::Allow),
        Some(Value::Str(s)) => match s.as_str() {
            "allow" => Ok(Decision::Allow),
            "prompt" => Ok(Decision::Ask),
            "forbidden" => Ok(Decision::Deny),
            other => Err(bad(
                line,
                format!("`decision` must be allow, prompt or forbidden, not {other:?}"),
            )),
        },
        Some(_) => Err(bad(line, "`decision` must be a string".into())),
    }
}

/// `justification`: a string that is not blank, if given.
fn justification_of(v: Option<&Value>, line: usize) -> Result<Option<String>, ImportError> {
    match v {
        None => Ok(None),
        Some(Value::Str(s)) if s.trim().is_empty() => {
            Err(bad(line, "`justification` cannot be empty".into()))
        }
        Some(Value::Str(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(line, "`justification` must be a string".into())),
    }
}

/// The `match` or `not_match` examples (`what`): a list whose items are shell words in a
/// string or a non-empty list of tokens.
fn examples_of(
    v: Option<&Value>,
    what: &str,
    line: usize,
) -> Result<Vec<Vec<String>>, ImportError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let Value::List(items) = v else {
        return Err(bad(line, format!("`{what}` must be a list")));
    };
    items
        .iter()
        .map(|e| match e {
            Value::Str(s) => match shlex::split(s) {
                Some(t) if !t.is_empty() => Ok(t),
                _ => Err(bad(
                    line,
                    format!("the `{what}` example {s:?} is not valid shell words"),
                )),
            },
            Value::List(ts) if !ts.is_empty() => ts
                .iter()
                .map(|t| match t {
                    Value::Str(s) => Ok(s.clone()),
                    _ => Err(bad(
                        line,
                        format!("`{what}` example tokens must be strings"),
                    )),
                })
                .collect(),
            _ => Err(bad(
                line,
                format!("each `{what}` example must be a string or a non-empty list of strings"),
            )),
        })
        .collect()
}

/// Codex refuses a file whose examples contradict their rule; so does the import.
fn examples_agree(rule: &PrefixRule) -> Result<(), ImportError> {
    for ex in &rule.matches {
        if !rule.codex_matches(ex) {
            return Err(bad(
                rule.line,
                format!(
                    "the `match` example `{}` does not match the rule (Codex would refuse this file)",
                    shell_words(ex)
                ),
            ));
        }
    }
    for ex in &rule.not_matches {
        if rule.codex_matches(ex) {
            return Err(bad(
                rule.line,
                format!(
                    "the `not_match` example `{}` matches the rule (Codex would refuse this file)",
                    shell_words(ex)
                ),
            ));
        }
    }
    Ok(())
}

/// The first non-literal inside a value, described.
fn non_literal(v: &Value) -> Option<String> {
    match v {
        Value::Str(_) => None,
        Value::List(items) => items.iter().find_map(non_literal),
        Value::Other(d) => Some(d.clone()),
    }
}

/// `network_rule(host, protocol, decision, justification)`: only a deny converts, as a host
/// on cordon's network deny list.
fn network_rule(args: &[Arg]) -> Result<String, String> {
    const PARAMS: [&str; 4] = ["host", "protocol", "decision", "justification"];
    let mut slots: [Option<&str>; 4] = [None; 4];
    for (i, a) in args.iter().enumerate() {
        let k = match &a.name {
            None => i,
            Some(n) => PARAMS.iter().position(|p| p == n).unwrap_or(usize::MAX),
        };
        let Value::Str(s) = &a.value else {
            return Err("network_rule arguments must be string literals".into());
        };
        match slots.get_mut(k) {
            Some(slot) => *slot = Some(s),
            None => return Err("network_rule has an argument cordon does not know".into()),
        }
    }
    match (slots[0], slots[2]) {
        (Some(host), Some("deny" | "forbidden")) => {
            crate::net::HostPattern::parse(host)
                .map_err(|e| format!("the host is not one cordon can match: {e}"))?;
            Ok(host.to_string())
        }
        (Some(_), Some(_)) => Err("cordon's network allowlist is per host, not per protocol, so a network allow or prompt would be wider; add hosts to `[network] allow` yourself".into()),
        _ => Err("network_rule needs `host` and `decision`".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &[&[&str]]) -> PrefixRule {
        PrefixRule {
            line: 1,
            text: String::new(),
            pattern: pattern
                .iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect(),
            decision: Decision::Allow,
            justification: None,
            matches: vec![],
            not_matches: vec![],
        }
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn expansion_is_the_cartesian_product() {
        let r = rule(&[&["git"], &["push", "fetch"], &["-f", "--force"]]);
        let e = r.expansions().unwrap();
        assert_eq!(e.len(), 4);
        assert!(e.contains(&argv("git fetch --force")));
        let wide: Vec<&[&str]> = vec![&["a", "b", "c", "d"]; 4];
        assert!(rule(&wide).expansions().is_none(), "4^4 = 256 > cap");
    }

    #[test]
    fn codex_prefix_semantics() {
        let r = rule(&[&["git"], &["push", "fetch"]]);
        assert!(r.codex_matches(&argv("git push origin main")));
        assert!(r.codex_matches(&argv("git fetch")));
        assert!(!r.codex_matches(&argv("git")));
        assert!(!r.codex_matches(&argv("git status")));
    }

    #[test]
    fn tokens_cordon_cannot_write() {
        assert!(bash_prefix(&argv("git push")).is_ok());
        for bad in [
            vec!["echo".to_string(), "a b".into()],
            vec!["ls".into(), "*.rs".into()],
            vec!["x".into(), String::new()],
        ] {
            assert!(bash_prefix(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn invalid_rules_are_errors_with_lines() {
        for (src, line) in [
            ("prefix_rule(pattern = [])", 1),
            ("\nprefix_rule(pattern = [\"a\"], decision = \"maybe\")", 2),
            ("prefix_rule(decision = \"allow\")", 1),
            ("prefix_rule(pattern = [\"a\", []])", 1),
            ("prefix_rule(pattern = [\"a\"], justification = \" \")", 1),
            ("prefix_rule(pattern = [\"a\"], match = [\"b\"])", 1),
            ("prefix_rule(pattern = [\"a\"], not_match = [\"a b\"])", 1),
            ("prefix_rule(pattern = [\"a\"], pattern = [\"b\"])", 1),
            ("prefix_rule(pattern = [\"a\"], match = [\"'unclosed\"])", 1),
        ] {
            let e = codex_rules(src).unwrap_err();
            assert_eq!(e.position.map(|p| p.0), Some(line), "{src}: {e}");
        }
    }

    #[test]
    fn control_characters_stay_out_of_comments() {
        let out =
            codex_rules("prefix_rule(pattern = [\"a\"], justification = \"x\u{1}y\")").unwrap();
        assert!(out.toml.contains("x?y"), "{}", out.toml);
        assert!(out.toml.contains("reason = \"x\\u0001y\""), "{}", out.toml);
    }

    #[test]
    fn positional_arguments_follow_codex_order() {
        let out = codex_rules("prefix_rule([\"git\", \"push\"], \"forbidden\")").unwrap();
        assert!(out.toml.contains("action = \"deny\""), "{}", out.toml);
        assert!(
            out.toml.contains("rule = \"Bash(git push:*)\""),
            "{}",
            out.toml
        );
    }
}
