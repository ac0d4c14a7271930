//! Paths derived from `__file__` that the folder cannot follow: a search of the
//! ancestors (`next(p for p in here.parents if …)`, a `for` over `.parents`), an index
//! it cannot fold (`parents[-3]`, `parents[i]`, a slice), the parts of the path taken
//! apart (`.parts`, `str(p).split('/')`), and a name climbed in a loop (`root =
//! root.parent` under `for`/`while`, `d = os.path.dirname(d)`, `p /= '..'`). Each is a
//! place known only at run time, possibly above the package: `climb` treats it as
//! outside, so a path built on it is a review, and the file it names is judged with
//! its known parts.

use super::{Unit, all_nodes};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Attributes that hand on the ancestors or the components of a path.
const TAKEN_APART: &[&str] = &["parents", "parts"];

/// String methods that take a path's text apart.
const SPLITS: &[&str] = &["split", "rsplit", "partition", "rpartition", "splitlines"];

/// Text that climbs one level in a binding (a loop repeats it).
const CLIMBS: &[&str] = &[".parent", "dirname", "..", "pardir", "parents"];

/// What of a unit derived from `__file__` the folder cannot follow.
#[derive(Default)]
pub(crate) struct Lost<'a> {
    /// Names whose value it cannot follow.
    pub(super) names: HashSet<&'a str>,
    /// Where a path from `__file__` is taken apart (byte ranges).
    apart: Vec<std::ops::Range<usize>>,
}

impl<'a> Unit<'a> {
    /// Compute [`Lost`] once, after the bindings: the names first, then the places a
    /// path (possibly through a lost name) is taken apart.
    pub(super) fn lost_file_paths(&mut self, nodes: &[Node<'a>]) {
        self.file_lost.names = self.lost_file_names(nodes);
        let apart = nodes
            .iter()
            .filter(|&&n| {
                self.takes_apart(n) && self.apart_of(n).is_some_and(|o| self.climbs_from_file(o))
            })
            .map(|n| n.byte_range())
            .collect();
        self.file_lost.apart = apart;
    }

    /// Names derived from `__file__` whose value the folder cannot follow (see the
    /// module docs).
    fn lost_file_names(&self, nodes: &[Node<'a>]) -> HashSet<&'a str> {
        // Every binding: the names it binds, its value, and whether it is `op=`.
        let mut bindings: Vec<(Vec<&'a str>, Node<'a>, bool)> = Vec::new();
        for &n in nodes {
            let (target, value) = match n.kind() {
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => (
                    n.child_by_field_name("left"),
                    n.child_by_field_name("right"),
                ),
                "named_expression" => (
                    n.child_by_field_name("name"),
                    n.child_by_field_name("value"),
                ),
                _ => continue,
            };
            let (Some(target), Some(value)) = (target, value) else {
                continue;
            };
            // Only names are bound (`sys.path += …` binds neither `sys` nor `path`).
            let names: Vec<&'a str> = all_nodes(target)
                .into_iter()
                .filter(|t| {
                    t.kind() == "identifier"
                        && self
                            .parents
                            .get(&t.id())
                            .is_none_or(|p| !matches!(p.kind(), "attribute" | "subscript" | "call"))
                })
                .map(|t| self.text(t))
                .collect();
            let aug = n.kind() == "augmented_assignment";
            bindings.push((names, value, aug));
        }
        // How often each name is bound, and whether by `op=` (a loop may repeat either).
        let mut count: HashMap<&'a str, (usize, bool)> = HashMap::new();
        for (names, _, aug) in &bindings {
            for &name in names {
                let e = count.entry(name).or_insert((0, false));
                e.0 += 1;
                e.1 |= *aug;
            }
        }
        let mentions = |value: Node<'a>, set: &HashSet<&'a str>| {
            all_nodes(value)
                .into_iter()
                .any(|i| i.kind() == "identifier" && set.contains(self.text(i)))
        };
        let from_script = |value: Node<'a>| {
            all_nodes(value)
                .into_iter()
                .any(|i| self.script_path(i).is_some())
        };
        // Derived from `__file__`, then lost among those (both to a fixed point).
        let mut derived: HashSet<&'a str> = HashSet::from(["__file__"]);
        let mut lost: HashSet<&'a str> = HashSet::new();
        for _ in 0..8 {
            let before = (derived.len(), lost.len());
            for (names, value, aug) in &bindings {
                // `p /= '..'` is `p = p / '..'`.
                let again = *aug && names.iter().any(|n| derived.contains(n));
                if !again && !mentions(*value, &derived) && !from_script(*value) {
                    continue;
                }
                derived.extend(names.iter().copied());
                let text = self.text(*value);
                let apart = all_nodes(*value).into_iter().any(|v| {
                    self.takes_apart(v)
                        && self.apart_of(v).is_some_and(|o| self.climbs_from_file(o))
                });
                for &name in names {
                    let (n, aug) = count.get(name).copied().unwrap_or((1, false));
                    let repeated = (n > 1 || aug) && CLIMBS.iter().any(|c| text.contains(c));
                    if apart || repeated || mentions(*value, &lost) {
                        lost.insert(name);
                    }
                }
            }
            if (derived.len(), lost.len()) == before {
                break;
            }
        }
        lost
    }

    /// Is `n` an ancestor list or the components of a path, or its text split, used
    /// other than as `parents[k]` with a literal `k` (syntactically; the receiver is
    /// checked by the caller)?
    fn takes_apart(&self, n: Node<'_>) -> bool {
        match n.kind() {
            "attribute" => {
                let Some(a) = n.child_by_field_name("attribute").map(|a| self.text(a)) else {
                    return false;
                };
                TAKEN_APART.contains(&a) && !(a == "parents" && self.literal_index(n))
            }
            "call" => n
                .child_by_field_name("function")
                .filter(|f| f.kind() == "attribute")
                .and_then(|f| f.child_by_field_name("attribute"))
                .is_some_and(|a| SPLITS.contains(&self.text(a))),
            _ => false,
        }
    }

    /// Is the attribute `n` subscripted right away by a non-negative integer literal?
    fn literal_index(&self, n: Node<'_>) -> bool {
        self.parents.get(&n.id()).is_some_and(|p| {
            p.kind() == "subscript"
                && p.child_by_field_name("value") == Some(n)
                && p.child_by_field_name("subscript")
                    .is_some_and(|s| self.text(s).parse::<usize>().is_ok())
        })
    }

    /// Does `node` hold a path from `__file__` taken apart? (A lost name is lost where
    /// it is named, see `climb`.)
    pub(super) fn lost_inside(&self, node: Node<'_>) -> bool {
        let r = node.byte_range();
        self.file_lost
            .apart
            .iter()
            .any(|a| r.start <= a.start && a.end <= r.end)
    }

    /// What a path taken apart is taken from: the object of `.parents`/`.parts`, the
    /// receiver of `.split(…)`.
    fn apart_of<'t>(&self, n: Node<'t>) -> Option<Node<'t>> {
        match n.kind() {
            "attribute" => n.child_by_field_name("object"),
            _ => self.receiver(n),
        }
    }
}
