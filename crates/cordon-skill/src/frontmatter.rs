//! The front matter of `SKILL.md`: the YAML block between two `---` lines at its top.
//!
//! Only the keys cordon needs are read: `name` and `description`, as in the Agent Skills
//! format (agentskills.io/specification), and `scripts`, cordon's list of the files that
//! keep their executable bit. The block is parsed as YAML ([`crate::yaml`]); when it is
//! not valid YAML, the flat subset skills use (`key: value`, and `key:` followed by
//! `- item` lines) is read instead, and the review says the YAML does not parse.

/// What `SKILL.md` declares about its package.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FrontMatter {
    /// The package name, also its directory name once installed.
    pub name: Option<String>,
    /// What the skill does.
    pub description: Option<String>,
    /// Paths (relative to the package root) of the files that are scripts.
    pub scripts: Vec<String>,
}

impl FrontMatter {
    /// Parse the front matter of `text`; `None` when it has none.
    pub fn parse(text: &str) -> Option<FrontMatter> {
        let (body, _) = crate::yaml::front_matter(text)?;
        match crate::yaml::parse(&body, 2) {
            Ok(Some(crate::yaml::Node::Map(entries))) => Some(Self::of_yaml(&entries)),
            Ok(None) => Some(FrontMatter::default()),
            _ => Self::parse_lines(text),
        }
    }

    fn of_yaml(entries: &[(crate::yaml::Node, crate::yaml::Node)]) -> FrontMatter {
        let mut fm = FrontMatter::default();
        for (k, v) in entries {
            match (k.as_str(), v) {
                (Some("name"), v) => fm.name = v.as_str().map(str::to_string),
                (Some("description"), v) => fm.description = v.as_str().map(str::to_string),
                (Some("scripts"), v) => {
                    fm.scripts = v
                        .scalars()
                        .into_iter()
                        .map(|(s, _)| s.to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                }
                _ => {}
            }
        }
        fm
    }

    /// The flat subset, line by line, for a block that is not valid YAML.
    fn parse_lines(text: &str) -> Option<FrontMatter> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines();
        if lines.next()?.trim_end() != "---" {
            return None;
        }
        let mut fm = FrontMatter::default();
        let mut list_key: Option<String> = None;
        for line in lines {
            if line.trim_end() == "---" {
                return Some(fm);
            }
            if let Some(item) = line.trim_start().strip_prefix("- ") {
                if list_key.as_deref() == Some("scripts") {
                    fm.scripts.push(unquote(item.trim()).to_string());
                }
                continue;
            }
            if line.starts_with([' ', '\t']) {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim();
            let value = unquote(value.trim());
            list_key = None;
            match (key, value.is_empty()) {
                (k, true) => list_key = Some(k.to_string()),
                ("name", false) => fm.name = Some(value.to_string()),
                ("description", false) => fm.description = Some(value.to_string()),
                ("scripts", false) => {
                    // Flow style: `scripts: [a.sh, b.py]`.
                    let inner = value.trim_start_matches('[').trim_end_matches(']');
                    fm.scripts.extend(
                        inner
                            .split(',')
                            .map(|s| unquote(s.trim()).to_string())
                            .filter(|s| !s.is_empty()),
                    );
                }
                _ => {}
            }
        }
        // No closing `---`: not front matter.
        None
    }
}

fn unquote(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// Why a package name cannot be used as a directory name, if it cannot.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 64 {
        return Some("the name must be 1 to 64 characters long".into());
    }
    if name == "." || name == ".." || name.starts_with('.') {
        return Some("the name must not start with a dot".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Some(
            "the name may hold only ASCII letters, digits, `-` and `_` (no separators or dots)"
                .into(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_name_description_and_scripts() {
        let fm = FrontMatter::parse(
            "---\nname: pdf-tools\ndescription: \"Fill PDFs\"\nscripts:\n  - scripts/fill.py\n  - 'run.sh'\nlicense: MIT\n---\n# Body\n",
        );
        let fm = fm.unwrap_or_default();
        assert_eq!(fm.name.as_deref(), Some("pdf-tools"));
        assert_eq!(fm.description.as_deref(), Some("Fill PDFs"));
        assert_eq!(fm.scripts, vec!["scripts/fill.py", "run.sh"]);
    }

    #[test]
    fn flow_list_and_missing_end() {
        let fm =
            FrontMatter::parse("---\nname: a\nscripts: [x.sh, y.sh]\n---\n").unwrap_or_default();
        assert_eq!(fm.scripts, vec!["x.sh", "y.sh"]);
        assert_eq!(FrontMatter::parse("---\nname: a\n"), None);
        assert_eq!(FrontMatter::parse("# no front matter"), None);
    }

    #[test]
    fn yaml_forms_the_line_reader_missed() {
        let fm = FrontMatter::parse("---\n\"name\": a\nscripts:\n  [x.sh,\n   y.sh]\n---\n")
            .unwrap_or_default();
        assert_eq!(fm.name.as_deref(), Some("a"));
        assert_eq!(fm.scripts, vec!["x.sh", "y.sh"]);
        let folded = FrontMatter::parse("---\nname: a\ndescription: >\n  one\n  two\n---\n")
            .unwrap_or_default();
        assert_eq!(folded.description.as_deref(), Some("one two\n"));
        // Not YAML (an unquoted `: ` in a value): the flat reading still finds the name.
        let bad =
            FrontMatter::parse("---\nname: a\ndescription: Use it: now\n---\n").unwrap_or_default();
        assert_eq!(bad.name.as_deref(), Some("a"));
    }

    #[test]
    fn names() {
        assert!(name_problem("pdf-tools_2").is_none());
        for bad in ["", "..", ".x", "a/b", "a\\b", "a.b", "a b", "ü"] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
    }
}
