//! Paths derived from `__file__`, folded relative to the package root as it is
//! installed (`~/.claude/skills/NAME/`): `Path(__file__).resolve().parents[4]`,
//! `os.path.dirname` chains, `..` joins. A path that stays inside the package folds as
//! before (the package's own files); one that climbs above the package root is the
//! file it is where the skill is installed (`~/.ssh/id_ed25519`), judged like any path
//! named outright, and the climb itself is a review. The script's path by another name
//! (`sys.argv[0]`, `__spec__.origin`, `inspect.getfile(…)`, `sys.path[0]` as its
//! folder) is `__file__`; a path the folder cannot follow from there is lost, possibly
//! above the package (see `climb_lost`).

use super::fold::{RUNTIME, V};
use super::{Lang, Unit};
use std::cell::RefCell;
use tree_sitter::Node;

thread_local! {
    /// The package-relative path of the script being analyzed, when it is a file.
    static SCRIPT: RefCell<Option<String>> = const { RefCell::new(None) };
}

thread_local! {
    /// The node a fold of a path starts from, plus one (0: none).
    static TOP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Run `f` with `node` as the node the fold starts from.
pub(super) fn top<T>(node: Node<'_>, f: impl FnOnce() -> T) -> T {
    let before = TOP.with(|t| t.replace(node.id() + 1));
    let out = f();
    TOP.with(|t| t.set(before));
    out
}

/// Does the text name the script's own path in a way `script_path` reads?
pub(crate) fn names_script_path(src: &str) -> bool {
    [
        "__file__",
        "argv",
        "__spec__",
        "__loader__",
        "getfile",
        "getsourcefile",
        "getabsfile",
        "path[0]",
    ]
    .iter()
    .any(|k| src.contains(k))
}

/// Where a skill is installed: the components of its root.
const INSTALL: &[&str] = &["~", ".claude", "skills", "skill"];

/// Run `f` with `path` (package-relative) as the script's own `__file__`.
pub(crate) fn with_script<T>(path: &str, f: impl FnOnce() -> T) -> T {
    let before = SCRIPT.with(|s| s.replace(Some(path.to_string())));
    let out = f();
    SCRIPT.with(|s| *s.borrow_mut() = before);
    out
}

/// An absolute path as components; `lost` when it climbed above `/`.
#[derive(Clone)]
struct Climb {
    parts: Vec<String>,
    lost: bool,
}

impl Climb {
    /// A place known only at run time, possibly above the package (see `climb_lost`).
    fn lost() -> Climb {
        Climb {
            parts: Vec::new(),
            lost: true,
        }
    }

    fn up(&mut self, n: usize) {
        for _ in 0..n {
            if self.parts.pop().is_none() {
                self.lost = true;
            }
        }
    }

    fn push(&mut self, v: &V) {
        let (s, exact) = match v {
            V::Str(s, e) => (s.clone(), *e),
            _ => (RUNTIME.to_string(), false),
        };
        if !exact && !s.contains('/') {
            self.parts.push(RUNTIME.to_string());
            return;
        }
        if s.starts_with('/') {
            self.parts.clear();
        }
        for c in s.split('/') {
            match c {
                "" | "." => {}
                ".." => self.up(1),
                c => self.parts.push(c.to_string()),
            }
        }
    }

    fn outside(&self) -> bool {
        self.lost
            || self.parts.len() < INSTALL.len()
            || self.parts.iter().zip(INSTALL).any(|(a, b)| a != b)
    }

    fn value(&self) -> V {
        let text = self.parts.join("/");
        let exact = !self.lost && !text.contains(RUNTIME);
        if self.lost {
            return V::Str(format!("{RUNTIME}/{text}"), false);
        }
        V::Str(text, exact)
    }
}

impl Unit<'_> {
    /// The value of a path expression that climbs out of the package from `__file__`.
    pub(super) fn climbed(&self, node: Node<'_>, d: usize) -> Option<V> {
        if !self.names_file
            || self.lang != Lang::Python
            || !matches!(
                node.kind(),
                "attribute" | "subscript" | "binary_operator" | "call"
            )
        {
            return None;
        }
        let c = top(node, || self.climb_file(node, d))?;
        c.outside().then(|| c.value())
    }

    /// Is `node` a path inside the package, derived from `__file__`?
    /// (Code outside a file, a Markdown block, is taken to sit two folders deep.)
    pub(super) fn inside_package(&self, node: Node<'_>) -> bool {
        if !self.names_file {
            return false;
        }
        let inside = || top(node, || self.climb_file(node, 0)).is_some_and(|c| !c.outside());
        if SCRIPT.with(|s| s.borrow().is_none()) {
            return with_script("scripts/lib/x.py", inside);
        }
        inside()
    }

    /// Does `node` climb out of the package (for the review's own note)?
    pub(super) fn climbs_out(&self, node: Node<'_>) -> Option<String> {
        let v = self.climbed(node, 0)?;
        Some(v.text().replace(RUNTIME, "…"))
    }

    /// A part joined to a climbing path: a literal or a name (anything else is not
    /// folded here, so nested joins are not folded once per level).
    fn part(&self, node: Node<'_>, d: usize) -> V {
        match node.kind() {
            "string" | "concatenated_string" | "identifier" => self.fold_at(node, d),
            _ => V::Unknown,
        }
    }

    fn climb_file(&self, node: Node<'_>, d: usize) -> Option<Climb> {
        if d > 24 {
            return None;
        }
        let d = d + 1;
        if let Some(up) = self.script_path(node) {
            let rel = SCRIPT.with(|s| s.borrow().clone())?;
            let mut c = Climb {
                parts: INSTALL.iter().map(|s| s.to_string()).collect(),
                lost: false,
            };
            c.push(&V::Str(rel, true));
            c.up(up);
            return Some(c);
        }
        match node.kind() {
            "identifier" => {
                let t = self.text(node);
                if self.file_lost.names.contains(t) {
                    return Some(Climb::lost());
                }
                if self.poisoned.contains(t) {
                    return None;
                }
                // (A name costs what it costs the folder: four levels.)
                match self.consts.get(t)?.as_slice() {
                    [one] => self.climb_file(*one, d + 4),
                    _ => None,
                }
            }
            "parenthesized_expression" => self.climb_file(self.named(node).into_iter().next()?, d),
            "attribute" => {
                let attr = self.text(node.child_by_field_name("attribute")?);
                let obj = node.child_by_field_name("object")?;
                match attr {
                    "parent" => {
                        let mut c = self.climb_file(obj, d)?;
                        c.up(1);
                        Some(c)
                    }
                    _ => self.lost_climb(node, d),
                }
            }
            "subscript" => {
                // `p.parents[k]`
                let value = node.child_by_field_name("value")?;
                let k: Option<usize> = self
                    .text(node.child_by_field_name("subscript")?)
                    .parse()
                    .ok();
                // `os.path.split(p)[0]` is `p`'s folder.
                if value.kind() == "call"
                    && let Some(c) = self.call(value)
                    && matches!(c.callee.as_str(), "os.path.split" | "posixpath.split")
                {
                    let mut c = self.climb_file(*c.args.first()?, d)?;
                    return (k == Some(0)).then(|| {
                        c.up(1);
                        c
                    });
                }
                if value.kind() != "attribute"
                    || self.text(value.child_by_field_name("attribute")?) != "parents"
                {
                    // An item of a lost name (`found[0]`) is lost too.
                    if value.kind() == "identifier"
                        && self.file_lost.names.contains(self.text(value))
                    {
                        return Some(Climb::lost());
                    }
                    return self.lost_climb(node, d);
                }
                let mut c = self.climb_file(value.child_by_field_name("object")?, d)?;
                // `parents[-3]`, `parents[i]`, `parents[1:]`: not folded.
                let Some(k) = k else {
                    return Some(Climb::lost());
                };
                c.up(k + 1);
                Some(c)
            }
            "binary_operator" => {
                let op = self.text(node.child_by_field_name("operator")?);
                if op != "/" {
                    return None;
                }
                let mut c = self.climb_file(node.child_by_field_name("left")?, d)?;
                c.push(&self.part(node.child_by_field_name("right")?, d));
                Some(c)
            }
            "call" => {
                let call = self.call(node)?;
                let f = node.child_by_field_name("function")?;
                if f.kind() == "attribute"
                    && let Some(m) = f.child_by_field_name("attribute").map(|a| self.text(a))
                    && matches!(
                        m,
                        "resolve" | "absolute" | "expanduser" | "as_posix" | "joinpath"
                    )
                {
                    let mut c = self.climb_file(f.child_by_field_name("object")?, d)?;
                    for a in &call.args {
                        c.push(&self.part(*a, d));
                    }
                    return Some(c);
                }
                // `p.with_name(x)` is a sibling; `with_suffix`/`with_stem` stay where `p` is.
                if f.kind() == "attribute"
                    && let Some(m) = f.child_by_field_name("attribute").map(|a| self.text(a))
                    && matches!(m, "with_name" | "with_suffix" | "with_stem")
                {
                    let mut c = self.climb_file(f.child_by_field_name("object")?, d)?;
                    if m == "with_name" {
                        c.up(1);
                        c.push(&call.args.first().map_or(V::Unknown, |a| self.part(*a, d)));
                    }
                    return Some(c);
                }
                let Some(first) = call.args.first().copied() else {
                    return self.lost_call(node, d);
                };
                match call.callee.as_str() {
                    "pathlib.Path" | "Path" | "pathlib.PurePath" | "PurePath" | "os.path.join"
                    | "posixpath.join" => {
                        // `Path(*Path(__file__).parts[:3])`: not folded.
                        let Some(mut c) = self.climb_file(first, d) else {
                            return self.lost_climb(node, d);
                        };
                        for a in call.args.iter().skip(1) {
                            c.push(&self.part(*a, d));
                        }
                        Some(c)
                    }
                    "os.path.abspath" | "os.path.realpath" | "os.path.normpath" | "str"
                    | "os.fspath" => self.climb_file(first, d),
                    "os.path.dirname" => {
                        let mut c = self.climb_file(first, d)?;
                        c.up(1);
                        Some(c)
                    }
                    _ => self.lost_call(node, d),
                }
            }
            _ => None,
        }
    }

    /// A call the folder does not know whose result is used as a path: lost when it is
    /// handed a path from `__file__` (`up(Path(__file__), 5) / '.ssh'`,
    /// `reduce(lambda p, _: p.parent, range(5), Path(__file__))`). (The call a fold
    /// starts from is not: `open(here / 'x')` is the file read, not a path built on.)
    fn lost_call(&self, node: Node<'_>, d: usize) -> Option<Climb> {
        let started_here = TOP.with(|t| t.get()) == node.id() + 1;
        if !started_here && let Some(c) = self.call(node) {
            let handed = c
                .args
                .iter()
                .chain(c.kwargs.iter().map(|(_, v)| v))
                .copied()
                .chain(self.receiver(node))
                .any(|a| self.climb_file(a, d + 1).is_some());
            if handed {
                return Some(Climb::lost());
            }
        }
        self.lost_climb(node, d)
    }

    /// Is `node` the script's own path (`up` 0) or its folder (`up` 1), by any name:
    /// `__file__`, `sys.argv[0]`, `__spec__.origin`, `inspect.getfile(…)`, `sys.path[0]`?
    pub(super) fn script_path(&self, node: Node<'_>) -> Option<usize> {
        match node.kind() {
            "identifier" => (self.text(node) == "__file__").then_some(0),
            "attribute" => matches!(
                self.text(node),
                "__spec__.origin" | "__loader__.path" | "__spec__.loader.path"
            )
            .then_some(0),
            "subscript" => {
                let value = node.child_by_field_name("value")?;
                let index = node.child_by_field_name("subscript")?;
                if self.text(index) != "0"
                    || !self.text(value).ends_with("path") && !self.text(value).ends_with("argv")
                {
                    return None;
                }
                match self.dotted(value).as_str() {
                    "sys.argv" => Some(0),
                    "sys.path" => Some(1),
                    _ => None,
                }
            }
            "call" if self.text(node).contains("file") => {
                let c = self.call(node)?;
                matches!(
                    c.callee.as_str(),
                    "inspect.getfile" | "inspect.getsourcefile" | "inspect.getabsfile"
                )
                .then_some(0)
            }
            _ => None,
        }
    }

    /// Does `node`, folded on its own, climb from `__file__`?
    pub(super) fn climbs_from_file(&self, node: Node<'_>) -> bool {
        top(node, || self.climb_file(node, 0)).is_some()
    }

    /// A lost place when `node` holds a part derived from `__file__` that the folder
    /// cannot follow (see `climb_lost`).
    fn lost_climb(&self, node: Node<'_>, _d: usize) -> Option<Climb> {
        self.lost_inside(node).then(Climb::lost)
    }
}
