//! A bounded YAML tree for the front matter of `SKILL.md` and for configuration found in
//! instruction files: parsed by a YAML 1.2 parser (`saphyr-parser`), its events built
//! into a tree here with limits on input size, nesting depth and alias expansion, so a
//! document a harness would read as a mapping is read as one here too (flow style,
//! quoted keys, anchors and aliases), and a "billion laughs" document is an error, not
//! a hang.

use saphyr_parser::{Event, Parser};
use std::collections::HashMap;

/// Bytes of YAML parsed; more is an error.
const MAX_BYTES: usize = 256 << 10;
/// Nesting of sequences and mappings.
const MAX_DEPTH: usize = 64;
/// Nodes in the tree once aliases are expanded.
const MAX_NODES: usize = 100_000;

/// One YAML node. Scalars keep their text (and the 1-based line they start on): tags
/// and types are not resolved, so `yes`, `1` and `"1"` are all the text they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// A scalar (plain, quoted or block) and its line.
    Scalar(String, usize),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order (duplicate keys kept).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The scalar's text, if this is a scalar.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Scalar(s, _) => Some(s),
            _ => None,
        }
    }

    /// Every scalar under this node (keys included), with its line, in document order.
    pub(crate) fn scalars(&self) -> Vec<(&str, usize)> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            match n {
                Node::Scalar(s, l) => out.push((s.as_str(), *l)),
                Node::Seq(v) => stack.extend(v.iter().rev()),
                Node::Map(v) => {
                    for (k, val) in v.iter().rev() {
                        stack.push(val);
                        stack.push(k);
                    }
                }
            }
        }
        out
    }
}

/// A key compared the way a reader forgiving of spelling would: lower case, without `-`,
/// `_` or spaces (`allowed-tools`, `allowed_tools`, `allowedTools`, `"Hooks"`).
pub(crate) fn norm_key(k: &str) -> String {
    k.chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

enum Open {
    Seq(Vec<Node>, usize),
    Map(Vec<(Node, Node)>, Option<Node>, usize),
}

fn size(n: &Node) -> usize {
    match n {
        Node::Scalar(..) => 1,
        Node::Seq(v) => 1 + v.iter().map(size).sum::<usize>(),
        Node::Map(v) => 1 + v.iter().map(|(k, x)| size(k) + size(x)).sum::<usize>(),
    }
}

/// Parse `text` as one YAML document (an empty one is `None`); the error is a sentence.
/// `first_line` is the line of the document's first line in its file.
pub(crate) fn parse(text: &str, first_line: usize) -> Result<Option<Node>, String> {
    if text.len() > MAX_BYTES {
        return Err(format!("it is over {} KiB", MAX_BYTES >> 10));
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut nodes = 0usize;
    let mut root: Option<Node> = None;
    let mut docs = 0usize;
    for ev in Parser::new_from_str(text) {
        let (ev, span) =
            ev.map_err(|e| format!("line {}: {}", e.marker().line() + first_line - 1, e.info()))?;
        let line = span.start.line() + first_line - 1;
        let done: Option<(Node, usize)> = match ev {
            Event::DocumentStart(_) => {
                docs += 1;
                if docs > 1 {
                    return Err("it holds more than one YAML document".into());
                }
                None
            }
            Event::Scalar(v, _, anchor, _) => Some((Node::Scalar(v.into_owned(), line), anchor)),
            Event::Alias(id) => {
                let n = anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| format!("line {line}: an alias to an unknown anchor"))?;
                nodes += size(&n);
                Some((n, 0))
            }
            Event::SequenceStart(anchor, _) => {
                stack.push(Open::Seq(Vec::new(), anchor));
                None
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Open::Map(Vec::new(), None, anchor));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq(v, a)) => Some((Node::Seq(v), a)),
                Some(Open::Map(v, _, a)) => Some((Node::Map(v), a)),
                None => return Err("it is not well-formed YAML".into()),
            },
            _ => None,
        };
        if stack.len() > MAX_DEPTH {
            return Err(format!("it nests deeper than {MAX_DEPTH} levels"));
        }
        let Some((node, anchor)) = done else { continue };
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(format!(
                "it expands to more than {MAX_NODES} values (aliases included)"
            ));
        }
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq(v, _)) => v.push(node),
            Some(Open::Map(v, key, _)) => match key.take() {
                None => *key = Some(node),
                Some(k) => v.push((k, node)),
            },
        }
    }
    Ok(root)
}

/// The front matter of a Markdown text: the lines between a first line `---` and the next
/// `---` (or `...`) line, with the 1-based line of its first line. `None` when there is
/// no front matter.
pub(crate) fn front_matter(text: &str) -> Option<(String, usize)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut body = String::new();
    for l in lines {
        let t = l.trim_end();
        if t == "---" || t == "..." {
            return Some((body, 2));
        }
        body.push_str(l);
        body.push('\n');
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(text: &str) -> Vec<(String, Node)> {
        match parse(text, 1) {
            Ok(Some(Node::Map(v))) => v
                .into_iter()
                .map(|(k, v)| (k.as_str().unwrap_or("").to_string(), v))
                .collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flow_quoted_and_aliased_forms_are_one_tree() {
        let flow = top("hooks: {Stop: [{command: \"x y\"}]}\n");
        let block = top("\"hooks\":\n  Stop:\n    - command: x y\n");
        assert_eq!(flow[0].0, "hooks");
        assert_eq!(block[0].0, "hooks");
        assert_eq!(
            flow[0].1.scalars().iter().map(|s| s.0).collect::<Vec<_>>(),
            block[0].1.scalars().iter().map(|s| s.0).collect::<Vec<_>>()
        );
        let alias = top("a: &c {command: \"x y\"}\nhooks: {Stop: [*c]}\n");
        assert!(alias[1].1.scalars().iter().any(|s| s.0 == "x y"));
        assert_eq!(norm_key("Allowed_Tools"), norm_key("allowedTools"));
    }

    #[test]
    fn limits_and_errors_are_sentences() {
        let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            laughs.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(parse(&laughs, 1).is_err_and(|e| e.contains("expands")));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep, 1).is_err_and(|e| e.contains("nests")));
        assert!(parse("a: b: c\n", 3).is_err_and(|e| e.starts_with("line 3")));
        assert_eq!(parse("", 1), Ok(None));
    }
}
