//! Python introspection: the attributes that reach a function's globals, the
//! builtins, a frame's namespaces or a code object reach every capability without
//! naming one. Any dunder attribute but the data and protocol ones below, any frame,
//! generator, traceback or code-object attribute, a string naming one (for `getattr`,
//! `operator.attrgetter`, `dict(inspect.getmembers(f))[…]`), and a format template whose
//! field reaches an attribute (`'{0.__init__}'.format(x)`) are reported; a call that
//! evaluates its annotations (`eval_str=True`) is code run at run time.

use super::fold::V;
use super::{Facts, Lang, Unit};
use tree_sitter::Node;

/// Dunder attributes that hold data or implement an operator, and reach no namespace.
const HARMLESS_DUNDERS: &[&str] = &[
    "__name__",
    "__qualname__",
    "__doc__",
    "__version__",
    "__version_info__",
    "__author__",
    "__file__",
    "__module__",
    "__all__",
    "__slots__",
    "__members__",
    "__dataclass_fields__",
    "__annotations__",
    "__init__",
    "__new__",
    "__post_init__",
    "__enter__",
    "__exit__",
    "__aenter__",
    "__aexit__",
    "__iter__",
    "__next__",
    "__aiter__",
    "__anext__",
    "__len__",
    "__str__",
    "__repr__",
    "__format__",
    "__hash__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__bool__",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__call__",
    "__traceback__",
    "__cause__",
    "__context__",
    "__main__",
    "__pycache__",
    "__future__",
];

/// Attributes of frames, generators, coroutines, tracebacks and code objects (and the
/// Python 2 names of a function's globals and code).
const FRAME_ATTRS: &[&str] = &[
    "f_builtins",
    "f_globals",
    "f_locals",
    "f_back",
    "f_code",
    "gi_frame",
    "gi_code",
    "cr_frame",
    "cr_code",
    "ag_frame",
    "ag_code",
    "tb_frame",
    "tb_next",
    "func_globals",
    "func_code",
    "co_code",
    "co_names",
    "co_consts",
    "co_varnames",
    "co_freevars",
    "co_cellvars",
    "co_filename",
    "co_name",
    "co_qualname",
    "co_flags",
    "co_argcount",
    "co_nlocals",
    "co_lnotab",
    "co_linetable",
    "co_exceptiontable",
];

/// Does an attribute of this name reach a namespace, a frame or code?
pub(super) fn reaches_namespaces(attr: &str) -> bool {
    let dunder = attr.len() > 4 && attr.starts_with("__") && attr.ends_with("__");
    (dunder && !HARMLESS_DUNDERS.contains(&attr)) || FRAME_ATTRS.contains(&attr)
}

/// Dunder attributes that reach a namespace, code or the objects of the interpreter:
/// named in a string, they are what `getattr` and friends are handed (a string may
/// hold other languages' dunders, C's `__attribute__`, so only these count there).
const NAMESPACE_DUNDERS: &[&str] = &[
    "__globals__",
    "__builtins__",
    "__code__",
    "__closure__",
    "__subclasses__",
    "__getattribute__",
    "__getattr__",
    "__import__",
    "__dict__",
    "__class__",
    "__bases__",
    "__base__",
    "__mro__",
    "__loader__",
    "__spec__",
    "__self__",
    "__func__",
    "__reduce__",
    "__reduce_ex__",
    "__defaults__",
    "__kwdefaults__",
    "__wrapped__",
    "__objclass__",
];

/// The first identifier in `s` that reaches a namespace (`0.__init__.__globals__[os]`).
fn named_in(s: &str) -> Option<&str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|t| NAMESPACE_DUNDERS.contains(t) || FRAME_ATTRS.contains(t))
}

/// Does a format template have a replacement field that reaches an attribute or an
/// item (`{0.x}`, `{a[k]}`)?
fn field_reaches(template: &str) -> bool {
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('{') {
            rest = r;
            continue;
        }
        let end = rest.find(['}', ':', '!']).unwrap_or(rest.len());
        if rest[..end].contains(['.', '[']) {
            return true;
        }
    }
    false
}

const STRINGS: &[&str] = &["string", "concatenated_string", "binary_operator"];

impl<'a> Unit<'a> {
    /// Record introspection that can reach any capability (see the module docs).
    pub(super) fn introspection(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        if self.lang != Lang::Python {
            return;
        }
        for &n in nodes {
            let parent = self.parents.get(&n.id()).copied();
            if let Some(p) = self.climbs_out(n) {
                facts.unresolved.push((
                    self.line(n),
                    format!("a path above the package's own folder, reached from its file ({p}),"),
                ));
            }
            if STRINGS.contains(&n.kind())
                && parent.is_none_or(|p| !STRINGS.contains(&p.kind()))
                // A docstring is not used.
                && parent.is_none_or(|p| p.kind() != "expression_statement")
                && let V::Str(s, _) = self.fold(n)
                && let Some(name) = named_in(&s)
            {
                facts
                    .unresolved
                    .push((self.line(n), format!("a string naming {name}")));
            }
            if n.kind() != "call" {
                continue;
            }
            let Some(c) = self.call(n) else {
                continue;
            };
            // `code.replace(co_names=…)`: a code object rewritten.
            if let Some((k, _)) = c
                .kwargs
                .iter()
                .find(|(k, _)| FRAME_ATTRS.contains(&k.as_str()))
            {
                facts
                    .unresolved
                    .push((self.line(n), format!("a code object rewritten ({k}=…)")));
            }
            if let Some((_, v)) = c.kwargs.iter().find(|(k, _)| k == "eval_str")
                && self.fold(*v).exact_str() != Some("False")
            {
                facts.code.push((
                    self.line(n),
                    format!("{}(eval_str=…), which evaluates annotations", c.callee),
                ));
            }
            // `'{0.__init__}'.format(x)`, `t.format_map(d)`: a field that reaches an
            // attribute or an item reads what the object holds.
            let method = c.callee.rsplit('.').next().unwrap_or("");
            if matches!(method, "format" | "format_map" | "vformat")
                && let Some(template) = self
                    .receiver(n)
                    .filter(|_| method != "vformat")
                    .or_else(|| c.args.first().copied())
            {
                let reaches = match self.fold(template) {
                    V::Str(t, true) => field_reaches(&t),
                    V::Str(..) => true,
                    _ => method != "format",
                };
                if reaches {
                    facts.unresolved.push((
                        self.line(n),
                        format!("a format template whose field reads an attribute ({method})"),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_attributes_are_told_from_data_ones() {
        for a in [
            "__globals__",
            "__builtins__",
            "__code__",
            "__closure__",
            "f_locals",
        ] {
            assert!(reaches_namespaces(a), "{a}");
        }
        for a in ["__name__", "__init__", "__enter__", "name", "co_author"] {
            assert!(!reaches_namespaces(a), "{a}");
        }
        assert_eq!(named_in("0.__init__.__globals__[os]"), Some("__globals__"));
        assert_eq!(named_in("if __name__ == '__main__'"), None);
        assert_eq!(named_in("int f(void) __attribute__((unused));"), None);
        assert!(field_reaches("{0.__class__}"));
        assert!(field_reaches("{m[os]}"));
        assert!(!field_reaches("{0} and {name:>10} {{x.y}}"));
    }
}
