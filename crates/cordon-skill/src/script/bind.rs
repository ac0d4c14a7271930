//! Bindings: names assigned once (the constants folding reads), names rebound in ways
//! the folder cannot follow (never folded), and import and `require` aliases.

use super::{Lang, Unit, all_nodes, js_module};
use tree_sitter::Node;

impl<'a> Unit<'a> {
    /// Record bindings and import aliases.
    pub(super) fn bind(&mut self, n: Node<'a>) {
        self.poison(n);
        match (self.lang, n.kind()) {
            (Lang::Python, "assignment") | (Lang::Ruby, "assignment") => {
                if let (Some(l), Some(r)) = (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ) && matches!(l.kind(), "identifier" | "constant")
                {
                    // `run = pkgutil.resolve_name('os:system')`: an alias of what it names.
                    if let Some(name) = self.call(r).and_then(|c| self.resolved_name(r, &c)) {
                        self.aliases.insert(self.text(l).into(), name);
                    } else if let Some(module) = self.imported_module(r) {
                        // `sp = importlib.import_module('subprocess')`: `sp` is the module.
                        self.aliases.insert(self.text(l).into(), module);
                    }
                    self.consts.entry(self.text(l)).or_default().push(r);
                }
            }
            (Lang::Python, "import_statement") => {
                for c in self.named(n) {
                    if c.kind() == "aliased_import"
                        && let (Some(name), Some(alias)) = (
                            c.child_by_field_name("name"),
                            c.child_by_field_name("alias"),
                        )
                    {
                        self.aliases
                            .insert(self.text(alias).into(), self.text(name).into());
                    }
                }
            }
            (Lang::Python, "import_from_statement") => {
                let Some(module) = n.child_by_field_name("module_name") else {
                    return;
                };
                let module = self.text(module).to_string();
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    let (orig, local) = match name.kind() {
                        "aliased_import" => (
                            name.child_by_field_name("name").map(|x| self.text(x)),
                            name.child_by_field_name("alias").map(|x| self.text(x)),
                        ),
                        _ => (Some(self.text(name)), Some(self.text(name))),
                    };
                    if let (Some(o), Some(l)) = (orig, local) {
                        self.aliases.insert(l.into(), format!("{module}.{o}"));
                    }
                }
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
                let (Some(name), Some(value)) = (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ) else {
                    return;
                };
                let value = if value.kind() == "await_expression" {
                    self.named(value).into_iter().next().unwrap_or(value)
                } else {
                    value
                };
                if let Some(module) = self.required_module(value) {
                    self.bind_pattern(name, &module);
                } else if name.kind() == "identifier" && self.is_code_constructor(value) {
                    self.aliases
                        .insert(self.text(name).into(), "Function".into());
                } else if name.kind() == "identifier" {
                    self.consts.entry(self.text(name)).or_default().push(value);
                }
            }
            (Lang::JavaScript | Lang::TypeScript | Lang::Tsx, "import_statement") => {
                let Some(source) = n.child_by_field_name("source") else {
                    return;
                };
                let module = js_module(&self.fold(source).text());
                for clause in self
                    .named(n)
                    .into_iter()
                    .filter(|c| c.kind() == "import_clause")
                {
                    for part in self.named(clause) {
                        match part.kind() {
                            "identifier" => {
                                self.aliases.insert(self.text(part).into(), module.clone());
                            }
                            "namespace_import" => {
                                if let Some(id) = self.named(part).into_iter().next() {
                                    self.aliases.insert(self.text(id).into(), module.clone());
                                }
                            }
                            "named_imports" => {
                                for spec in self.named(part) {
                                    let name =
                                        spec.child_by_field_name("name").map(|x| self.text(x));
                                    let alias = spec
                                        .child_by_field_name("alias")
                                        .map(|x| self.text(x))
                                        .or(name);
                                    if let (Some(nm), Some(al)) = (name, alias) {
                                        self.aliases.insert(al.into(), format!("{module}.{nm}"));
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Names bound by anything but one plain assignment (augmented assignment, tuple,
    /// `for`, walrus, parameters, mutation in place) hold values the folder cannot know.
    fn poison(&mut self, n: Node<'a>) {
        let targets: Vec<Node<'a>> = match n.kind() {
            "augmented_assignment"
            | "augmented_assignment_expression"
            | "operator_assignment"
            | "assignment_expression"
            | "update_expression" => n
                .child_by_field_name("left")
                .or(n.child_by_field_name("argument"))
                .into_iter()
                .collect(),
            // `d[k] = v` changes `d`, not `k`.
            "assignment" => n
                .child_by_field_name("left")
                .filter(|l| !matches!(l.kind(), "identifier" | "constant"))
                .map(|l| match l.kind() {
                    "subscript" => l.child_by_field_name("value").unwrap_or(l),
                    _ => l,
                })
                .into_iter()
                .collect(),
            "for_statement" | "for_in_statement" | "for_in_clause" => {
                n.child_by_field_name("left").into_iter().collect()
            }
            "named_expression" => n.child_by_field_name("name").into_iter().collect(),
            "as_pattern" => n.child_by_field_name("alias").into_iter().collect(),
            "parameters"
            | "lambda_parameters"
            | "formal_parameters"
            | "block_parameters"
            | "method_parameters"
            | "global_statement"
            | "nonlocal_statement"
            | "left_assignment_list"
            | "array_pattern"
            | "object_pattern" => vec![n],
            "binary" if self.text(n).contains("<<") => {
                n.child_by_field_name("left").into_iter().collect()
            }
            "call" | "call_expression" => {
                // `c.append(…)`, `c.concat(…)`, `c.push(…)`, `c.gsub!(…)`: mutated in place.
                let method = n
                    .child_by_field_name("method")
                    .or_else(|| {
                        n.child_by_field_name("function").and_then(|f| {
                            f.child_by_field_name("attribute")
                                .or(f.child_by_field_name("property"))
                        })
                    })
                    .map(|m| self.text(m))
                    .unwrap_or("");
                if matches!(
                    method,
                    "append"
                        | "extend"
                        | "insert"
                        | "push"
                        | "unshift"
                        | "concat"
                        | "replace"
                        | "prepend"
                        | "update"
                        | "setdefault"
                        | "splice"
                        | "sub!"
                        | "gsub!"
                        | "insert!"
                        | "<<"
                        | "__setitem__"
                        | "__iadd__"
                ) {
                    self.receiver(n).into_iter().collect()
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        };
        for t in targets {
            for id in all_nodes(t) {
                if matches!(
                    id.kind(),
                    "identifier" | "constant" | "shorthand_property_identifier_pattern"
                ) {
                    self.poisoned.insert(self.text(id));
                }
            }
        }
    }

    /// The module a Python call that imports one by a literal name returns
    /// (`importlib.import_module('os')`, `__import__('os')`, any re-export of them).
    fn imported_module(&self, value: Node<'_>) -> Option<String> {
        if self.lang != Lang::Python || value.kind() != "call" {
            return None;
        }
        let c = self.call(value)?;
        let last = c.callee.rsplit('.').next().unwrap_or("");
        if !matches!(last, "import_module" | "__import__") {
            return None;
        }
        self.fold(*c.args.first()?).exact_str().map(str::to_string)
    }

    /// `require('x')` → `x`, `require('x').y` → `x.y`.
    pub(super) fn required_module(&self, value: Node<'_>) -> Option<String> {
        if value.kind() == "member_expression"
            && let (Some(o), Some(p)) = (
                value.child_by_field_name("object"),
                value.child_by_field_name("property"),
            )
        {
            return self
                .required_module(o)
                .map(|m| format!("{m}.{}", self.text(p)));
        }
        if value.kind() != "call_expression" {
            return None;
        }
        let f = value.child_by_field_name("function")?;
        if self.text(f) != "require" {
            return None;
        }
        let args = value.child_by_field_name("arguments")?;
        let first = self.named(args).into_iter().next()?;
        self.fold(first).exact_str().map(js_module)
    }

    fn bind_pattern(&mut self, pattern: Node<'_>, module: &str) {
        match pattern.kind() {
            "identifier" => {
                self.aliases
                    .insert(self.text(pattern).into(), module.into());
            }
            "object_pattern" => {
                for p in self.named(pattern) {
                    match p.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let n = self.text(p);
                            self.aliases.insert(n.into(), format!("{module}.{n}"));
                        }
                        "pair_pattern" => {
                            if let (Some(k), Some(v)) =
                                (p.child_by_field_name("key"), p.child_by_field_name("value"))
                            {
                                self.aliases.insert(
                                    self.text(v).into(),
                                    format!("{module}.{}", self.text(k)),
                                );
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}
