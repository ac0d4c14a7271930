//! The modules a script imports, as an allow-list: every module is capable (its uses
//! are judged by the capability rule), known harmless, local to the package, or
//! unknown; an unknown one is recorded in [`Facts::modules`] and makes the script not
//! pass. A module is not harmless because it is missing from a list of dangerous ones.

use super::python_caps::{is_harmless as py_harmless, is_risky, risky_below};
use super::{Facts, Lang, Unit};
use tree_sitter::Node;

/// Node modules (and packages, by prefix) that compute, format, parse, or read and
/// write files the analysis follows, without starting processes, running code they
/// are handed, or reaching the network.
const JS_HARMLESS: &[&str] = &[
    "fs",
    "fs/promises",
    "path",
    "url",
    "util",
    "os",
    "crypto",
    "events",
    "stream",
    "stream/promises",
    "buffer",
    "assert",
    "assert/strict",
    "string_decoder",
    "querystring",
    "readline",
    "zlib",
    "timers",
    "timers/promises",
    "perf_hooks",
    "console",
    "tty",
    "zod",
    // Browser libraries web templates import (they run in the page, not in Node).
    "react",
    "react-dom",
    "lucide-react",
    "clsx",
    "tailwind-merge",
    "class-variance-authority",
    "@radix-ui",
    "d3",
    "three",
    "p5",
    "chart.js",
    "recharts",
    "marked",
    // Document libraries.
    "docx",
    "pptxgenjs",
    "pdf-lib",
    "pdfjs-dist",
    "sharp",
    "react-icons",
    // The Anthropic SDK (a `baseURL` elsewhere is judged as a destination).
    "@anthropic-ai/sdk",
];

/// Is a JavaScript module known harmless?
fn js_harmless(m: &str) -> bool {
    JS_HARMLESS
        .iter()
        .any(|h| m == *h || m.strip_prefix(h).is_some_and(|r| r.starts_with('/')))
}

/// A module the package itself provides: a relative or absolute path, or a bundler's
/// alias for the project (`@/…`, `~/…`).
fn js_local(m: &str) -> bool {
    m.starts_with('.') || m.starts_with('/') || m.starts_with("@/") || m.starts_with("~/")
}

impl<'a> Unit<'a> {
    /// Record the imported modules that are neither capable, harmless nor local.
    pub(super) fn unknown_modules(
        &self,
        nodes: &[Node<'a>],
        capable_py: &[&str],
        capable_js: &[&str],
        facts: &mut Facts,
    ) {
        let mut named: Vec<(usize, String)> = Vec::new();
        for &n in nodes {
            match (self.lang, n.kind()) {
                (Lang::Python, "import_statement") => {
                    for c in self.named(n) {
                        let m = match c.kind() {
                            "aliased_import" => c.child_by_field_name("name"),
                            "dotted_name" => Some(c),
                            _ => None,
                        };
                        named.extend(m.map(|m| (self.line(n), self.text(m).to_string())));
                    }
                }
                (Lang::Python, "import_from_statement") => {
                    // A relative import (`from . import x`) is the package's own code.
                    if let Some(m) = n
                        .child_by_field_name("module_name")
                        .filter(|m| m.kind() == "dotted_name")
                    {
                        let module = self.text(m).to_string();
                        // `from os import *`: every member under its bare name, which
                        // no table follows.
                        let star = self.named(n).iter().any(|c| c.kind() == "wildcard_import");
                        let root = module.split('.').next().unwrap_or("");
                        if star
                            && (capable_py.contains(&root)
                                || is_risky(&module)
                                || risky_below(&module))
                        {
                            facts
                                .unresolved
                                .push((self.line(n), format!("from {module} import *")));
                        }
                        named.push((self.line(n), module));
                    }
                }
                (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "import_statement")
                | (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "export_statement") => {
                    if let Some(src) = n.child_by_field_name("source") {
                        match self.fold(src).exact_str() {
                            Some(m) => named.push((self.line(n), m.to_string())),
                            None => {
                                named.push((self.line(n), "(a module named at run time)".into()))
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        // `require('m')`, `import('m')`, `__import__('m')`, `importlib.import_module('m')`.
        // (An import statement's entry there is its first name as written, `a as b`.)
        if self.lang != Lang::Ruby {
            let python = self.lang == Lang::Python;
            named.extend(facts.imports.iter().map(|(l, m)| {
                let m = if python {
                    m.split_whitespace().next().unwrap_or("")
                } else {
                    m
                };
                (*l, m.to_string())
            }));
        }
        let mut seen = std::collections::HashSet::new();
        for (line, m) in named {
            if self.lang == Lang::Python && m.starts_with('.') {
                continue;
            }
            let known = match self.lang {
                Lang::Python => {
                    let root = m.split('.').next().unwrap_or("");
                    capable_py.contains(&root) || py_harmless(&m)
                }
                Lang::Ruby => true,
                _ => {
                    let m = m.trim_start_matches("node:");
                    js_local(m) || capable_js.contains(&m) || js_harmless(m)
                }
            };
            if !known && seen.insert(m.clone()) {
                facts.modules.push((line, m));
            }
        }
    }
}
