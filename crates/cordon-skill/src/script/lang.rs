//! The languages cordon parses, and how a file or a Markdown fence names one.

/// A language with a parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Ruby,
}

impl Lang {
    /// The language of a file, by extension or shebang.
    pub(crate) fn of_file(path: &str, text: &str) -> Option<Lang> {
        let lower = path.to_ascii_lowercase();
        let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let by_ext = match ext {
            "py" | "pyw" => Some(Lang::Python),
            "js" | "mjs" | "cjs" | "jsx" => Some(Lang::JavaScript),
            "ts" | "mts" | "cts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "rb" | "rake" | "gemspec" => Some(Lang::Ruby),
            _ => None,
        };
        by_ext.or_else(|| {
            let first = text.lines().next().filter(|l| l.starts_with("#!"))?;
            if first.contains("python") {
                Some(Lang::Python)
            } else if first.contains("node") || first.contains("deno") || first.contains("bun") {
                Some(Lang::JavaScript)
            } else if first.contains("ruby") {
                Some(Lang::Ruby)
            } else {
                None
            }
        })
    }

    /// The language of a Markdown fence's info string.
    pub(crate) fn of_fence(lang: &str) -> Option<Lang> {
        match lang {
            "python" | "py" | "python3" | "pycon" | "ipython" => Some(Lang::Python),
            "javascript" | "js" | "node" | "mjs" | "jsx" => Some(Lang::JavaScript),
            "typescript" | "ts" => Some(Lang::TypeScript),
            "tsx" => Some(Lang::Tsx),
            "ruby" | "rb" => Some(Lang::Ruby),
            _ => None,
        }
    }

    pub(super) fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        }
    }
}
