//! Capable Python values the analysis follows only while they are used in ways it
//! understands. A module is understood through attribute access and the calls its
//! allow-list knows; stored in a list, a dict or a class attribute, returned, or passed
//! to a function it is handed on, and what is done with it there is not followed (a
//! review). Functions that return a module (`inspect.getmodule`,
//! `importlib.metadata.import_module`, `sys.modules`) are capable members wherever they
//! sit. `sys.path` is a capable object: its judged mutations are `insert`/`append`/
//! `extend` and assignment (see `py_features`), `+=` is judged like them, and any other
//! use that is not a read hands it on. Any load that may unpickle (`allow_pickle` not
//! `False`, a pickle reader of any library) is a load of code the data names.

use super::all_nodes;
use super::python_caps::{PY_CODE_ENTRIES, PY_MODULES, PY_SAFE, is_harmless};
use super::{Facts, Lang, Unit};
use tree_sitter::Node;

/// Last segments of members that return a module (or the table of loaded modules),
/// under whatever module re-exports them.
const MODULE_RETURNING: &[&str] = &[
    "import_module",
    "getmodule",
    "__import__",
    "reload",
    "module_from_spec",
    "modules",
    "load_module",
    "exec_module",
    "importfile",
    "find_spec",
    "find_loader",
    "SourceFileLoader",
    "SourcelessFileLoader",
    "ExtensionFileLoader",
    "spec_from_file_location",
    "spec_from_loader",
];

/// Does `name` (a dotted member path) return a module?
pub(super) fn module_returning(name: &str) -> bool {
    let mut parts = name.split('.');
    parts.next().is_some() && parts.any(|p| MODULE_RETURNING.contains(&p.trim_end_matches("()")))
}

/// Capable modules that libraries bind as attributes (`tempfile._os`, `pandas.io.common.os`):
/// one reached through a value is that module.
const HELD_MODULES: &[&str] = &[
    "os",
    "sys",
    "subprocess",
    "importlib",
    "builtins",
    "ctypes",
    "pty",
    "runpy",
    "marshal",
    "posix",
    "posixsubprocess",
    "multiprocessing",
    "pickle",
];

/// Members of `os` (prefixes) that start processes, write or change the environment.
const OS_CAPABLE: &[&str] = &[
    "system",
    "popen",
    "exec",
    "spawn",
    "posix_spawn",
    "fork",
    "kill",
    "putenv",
    "unsetenv",
    "open",
    "write",
    "symlink",
    "link",
    "truncate",
    "dup",
    "pipe",
    "startfile",
    "setuid",
    "chroot",
];

/// Members of `sys` that load code or reach every module.
const SYS_CAPABLE: &[&str] = &[
    "modules",
    "path",
    "meta_path",
    "path_hooks",
    "path_importer_cache",
    "settrace",
    "setprofile",
    "addaudithook",
    "_getframe",
    "breakpointhook",
    "displayhook",
    "excepthook",
];

/// Members of `sys.path` that only read it (or are judged as search-path changes).
const SYS_PATH_MEMBERS: &[&str] = &[
    "insert", "append", "extend", "remove", "pop", "index", "count", "copy", "sort", "reverse",
];

/// Calls handed `sys.path` that only read it.
const SYS_PATH_READERS: &[&str] = &[
    "print",
    "len",
    "list",
    "tuple",
    "str",
    "repr",
    "sorted",
    "set",
    "enumerate",
    "reversed",
    "any",
    "all",
    "frozenset",
    "iter",
    "id",
];

impl<'a> Unit<'a> {
    /// Record the uses of capable values the analysis cannot follow (see the module
    /// docs).
    pub(super) fn py_values(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        if self.lang != Lang::Python {
            return;
        }
        for &n in nodes {
            self.sys_path_use(n, facts);
            self.pickle_load(n, facts);
            self.module_through_value(n, facts);
        }
    }

    /// `x.os.system(…)` where `x` is not a module the tables know (an item of a list,
    /// a call's result, an object, the package's own module): a capable module reached
    /// through a value, whatever held it.
    fn module_through_value(&self, n: Node<'a>, facts: &mut Facts) {
        if n.kind() != "attribute" {
            return;
        }
        let (Some(obj), Some(attr)) = (
            n.child_by_field_name("object"),
            n.child_by_field_name("attribute"),
        ) else {
            return;
        };
        let module = self.text(attr).trim_start_matches('_');
        if !HELD_MODULES.contains(&module) {
            return;
        }
        // A member of it used (`ua.os.family` is data; `x.os.system` is not safe).
        let Some(member) = self
            .parents
            .get(&n.id())
            .filter(|p| p.kind() == "attribute" && p.child_by_field_name("object") == Some(n))
            .and_then(|p| p.child_by_field_name("attribute"))
            .map(|m| self.text(m))
        else {
            return;
        };
        let path = format!("{module}.{member}");
        let safe = PY_SAFE
            .iter()
            .any(|s| path == *s || path.starts_with(&format!("{s}.")));
        // `os` and `sys` are also names of data fields (`ua.os.family`): their members
        // that start processes, load code or change the search path.
        let capable = match module {
            "os" => OS_CAPABLE.iter().any(|c| member.starts_with(c)),
            "sys" => SYS_CAPABLE.contains(&member),
            _ => true,
        };
        if safe || !capable {
            return;
        }
        // A name chain rooted in a module the tables know is followed by them.
        let plain = all_nodes(obj)
            .iter()
            .all(|c| matches!(c.kind(), "identifier" | "attribute" | "."));
        let dotted = self.dotted(obj);
        let root = dotted.split('.').next().unwrap_or("");
        if plain && (PY_MODULES.contains(&root) || is_harmless(root)) {
            return;
        }
        facts.unresolved.push((
            self.line(n),
            format!(
                "{path} through {}, a capable module reached through a value the analysis cannot follow,",
                self.text(obj)
            ),
        ));
    }

    /// Does the parent `p` hand the module value `cur` on (anything but a rebinding of
    /// the name, a test or a bare statement)?
    pub(super) fn hands_on(&self, cur: Node<'_>, p: Node<'_>) -> bool {
        match p.kind() {
            "assignment" | "augmented_assignment" => {
                p.child_by_field_name("left") != Some(cur) || p.kind() == "augmented_assignment"
            }
            "comparison_operator"
            | "not_operator"
            | "expression_statement"
            | "global_statement"
            | "nonlocal_statement"
            | "delete_statement" => false,
            "if_statement" | "elif_clause" | "while_statement" => {
                p.child_by_field_name("condition") != Some(cur)
            }
            _ => true,
        }
    }

    /// A use of `sys.path` that is neither a read nor a judged change.
    fn sys_path_use(&self, n: Node<'a>, facts: &mut Facts) {
        let Some(p) = self.parents.get(&n.id()).copied() else {
            return;
        };
        // (Names are looked up only where the text can be one: `dotted` walks.)
        let is_path = match n.kind() {
            "attribute" | "call" => self.text(n).contains("path") && self.dotted(n) == "sys.path",
            "identifier" => {
                let field_name = matches!(p.kind(), "attribute" | "keyword_argument")
                    && p.child_by_field_name("object") != Some(n)
                    && p.child_by_field_name("value") != Some(n);
                !field_name
                    && !matches!(
                        p.kind(),
                        "import_from_statement" | "aliased_import" | "dotted_name"
                    )
                    && self.aliases.get(self.text(n)).map(String::as_str) == Some("sys.path")
            }
            _ => false,
        };
        if !is_path {
            return;
        }
        let field = |f: &str| p.child_by_field_name(f) == Some(n);
        let understood = match p.kind() {
            // A listed member called right away (`extend = sys.path.extend` hands it on).
            "attribute" if field("object") => {
                p.child_by_field_name("attribute")
                    .is_some_and(|a| SYS_PATH_MEMBERS.contains(&self.text(a)))
                    && self.parents.get(&p.id()).is_some_and(|c| {
                        c.kind() == "call" && c.child_by_field_name("function") == Some(p)
                    })
            }
            "subscript" if field("value") => true,
            "assignment" if field("left") => true,
            "augmented_assignment" if field("left") => {
                // `sys.path += [d]` puts `d` on the search path like `extend`.
                // (Each item of a literal list on its own: the package's folder is not.)
                let items = p.child_by_field_name("right").map(|r| match r.kind() {
                    "list" | "tuple" => self.named(r),
                    _ => vec![r],
                });
                for dir in items
                    .into_iter()
                    .flatten()
                    .filter_map(|i| self.foreign_dir(i))
                {
                    facts.code.push((
                        self.line(p),
                        format!("modules imported from {dir}, put on the module search path"),
                    ));
                }
                true
            }
            "comparison_operator" | "expression_statement" => true,
            "for_statement" | "for_in_clause" => field("right"),
            // A reader, or a string's `join` (`os.pathsep.join(sys.path)`).
            "argument_list" => self
                .parents
                .get(&p.id())
                .and_then(|c| self.call(*c))
                .is_some_and(|c| {
                    SYS_PATH_READERS.contains(&c.callee.as_str()) || c.callee.ends_with(".join")
                }),
            _ => false,
        };
        if !understood {
            facts.unresolved.push((
                self.line(n),
                "sys.path, handed on as a value (the module search path may be changed where the analysis cannot follow it),".to_string(),
            ));
        }
    }

    /// A load that may unpickle: `allow_pickle` not `False`, `pickle_kwargs`, or a
    /// pickle reader of any library (`read_pickle`, `load_pickle`, `unpickle`).
    fn pickle_load(&self, n: Node<'a>, facts: &mut Facts) {
        if n.kind() != "call" {
            return;
        }
        let text = self.text(n);
        if !["pickle", "load", "read_array"]
            .iter()
            .any(|k| text.contains(k))
        {
            return;
        }
        let Some(c) = self.call(n) else { return };
        let last = c
            .callee
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let reader = last.contains("pickle") && !last.starts_with("to_") && !last.contains("dump");
        let allowed = c.kwargs.iter().any(|(k, v)| {
            (k == "allow_pickle" && self.fold(*v).exact_str() != Some("False"))
                || k == "pickle_kwargs"
        });
        // `numpy.load(f, None, True)`, `read_array(f, True)`: by position.
        let numpy = matches!(c.callee.as_str(), "numpy.load" | "numpy.lib.npyio.load")
            || (c.callee.starts_with("numpy.") && c.callee.ends_with(".read_array"));
        let at = if c.callee.ends_with(".read_array") {
            1
        } else {
            2
        };
        let positional = numpy
            && c.args.iter().enumerate().any(|(i, &a)| {
                // `**opts`, `*args`: what they hold is known only at run time.
                matches!(a.kind(), "dictionary_splat" | "list_splat")
                    || (i == at && self.fold(a).exact_str() != Some("False"))
            });
        // (`numpy.load(…, allow_pickle=True)` is judged as a code entry already.)
        let entry =
            PY_CODE_ENTRIES.iter().any(|(e, _)| *e == c.callee) && !self.safe_loader(&c, &c.callee);
        if (reader || allowed || positional) && !entry {
            facts.code.push((
                self.line(n),
                format!(
                    "{}(…), a load that may unpickle (pickled data names code that runs when it is loaded)",
                    c.callee
                ),
            ));
        }
    }
}
