//! Paths derived from `__file__`, folded relative to the package root as it is
//! installed (`~/.claude/skills/NAME/`): `Path(__file__).resolve().parents[4]`,
//! `os.path.dirname` chains, `..` joins. A path that stays inside the package folds as
//! before (the package's own files); one that climbs above the package root is the
//! file it is where the skill is installed (`~/.ssh/id_ed25519`), judged like any path
//! named outright, and the climb itself is a review.

use super::fold::{RUNTIME, V};
use super::{Lang, Unit};
use std::cell::RefCell;
use tree_sitter::Node;

thread_local! {
    /// The package-relative path of the script being analyzed, when it is a file.
    static SCRIPT: RefCell<Option<String>> = const { RefCell::new(None) };
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
        let c = self.climb_file(node, d)?;
        c.outside().then(|| c.value())
    }

    /// Is `node` a path inside the package, derived from `__file__`?
    /// (Code outside a file, a Markdown block, is taken to sit two folders deep.)
    pub(super) fn inside_package(&self, node: Node<'_>) -> bool {
        if !self.names_file {
            return false;
        }
        let inside = || self.climb_file(node, 0).is_some_and(|c| !c.outside());
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
        match node.kind() {
            "identifier" => {
                let t = self.text(node);
                if t == "__file__" {
                    let rel = SCRIPT.with(|s| s.borrow().clone())?;
                    let mut c = Climb {
                        parts: INSTALL.iter().map(|s| s.to_string()).collect(),
                        lost: false,
                    };
                    c.push(&V::Str(rel, true));
                    return Some(c);
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
                    _ => None,
                }
            }
            "subscript" => {
                // `p.parents[k]`
                let value = node.child_by_field_name("value")?;
                let k: usize = self
                    .text(node.child_by_field_name("subscript")?)
                    .parse()
                    .ok()?;
                if value.kind() != "attribute"
                    || self.text(value.child_by_field_name("attribute")?) != "parents"
                {
                    return None;
                }
                let mut c = self.climb_file(value.child_by_field_name("object")?, d)?;
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
                let first = call.args.first().copied()?;
                match call.callee.as_str() {
                    "pathlib.Path" | "Path" | "pathlib.PurePath" | "PurePath" | "os.path.join"
                    | "posixpath.join" => {
                        let mut c = self.climb_file(first, d)?;
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
                    _ => None,
                }
            }
            _ => None,
        }
    }
}
