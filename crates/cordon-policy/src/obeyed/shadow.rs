//! New entries that take the place of a program or module installed on the host.
//!
//! A table of locations cannot say whether `pre_commit/__init__.py` or
//! `node_modules/.bin/git` is dangerous: that depends on what the host has installed. The
//! sandbox crate lists the host's programs and Python modules once ([`HostNames`]);
//! [`shadows`] is the pure rule that compares a left entry with them.
//!
//! - **Programs.** Package managers put a project's bin directory first on `PATH` for the
//!   commands they run (npm, Yarn, pnpm and Bun put every `node_modules/.bin` from the
//!   working directory up; Composer puts `vendor/bin`; an activated virtualenv puts its
//!   `bin`). An entry there named like a program on the host's `PATH` runs instead of it
//!   in every script: `node_modules/.bin/git` is the `git` of every `npm run`. A
//!   virtualenv is recognised by its usual directory names (`.venv`, `venv`, `env`): the
//!   `pyvenv.cfg` that marks one for sure would need a look at the file system. Its own
//!   interpreter and installer (`python3`, `pip`, `activate`, …) are what a virtualenv
//!   is for, not a host program put in its place, and are left to the other rules.
//! - **Python modules.** `python -m tool`, and a script run from the root, put the
//!   working directory first on `sys.path`. A module or package there named like an
//!   installed one is imported instead of it: a `pre_commit` package at a work tree's
//!   root replaces pre-commit for the installed hook, which runs `python -m pre_commit`
//!   from there. Only the top of the writable root is considered (a work tree's root is
//!   the directory holding `.git`, which a pure function cannot see). A package shadows
//!   only once it has an `__init__`: a directory without one is a namespace portion,
//!   which loses to a regular package of the same name anywhere later on `sys.path`. An
//!   installed *namespace* package is different, since its portions merge: any
//!   importable file beneath a directory of that name adds or replaces one of its
//!   modules. A root `x.pth` is inert (only site directories process `.pth` files).
//!
//! Program names match ASCII case-insensitively (a case-folding directory finds `Git`
//! for `git`); Python module names match exactly, as CPython's importer on Linux does.

use super::{Obeyed, name_matches, rel_components};
use crate::planted::LeftKind;
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// The class name [`shadows`] reports.
pub const SHADOWING: &str = "programs and modules that take the place of the host's";

/// Names of what the host has installed: executables on its `PATH` and top-level Python
/// modules of its interpreters. Built by `cordon_sandbox::gather_host_names`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostNames {
    /// Program names, ASCII-lowercased.
    programs: BTreeSet<OsString>,
    /// Top-level modules and regular packages.
    python_modules: BTreeSet<OsString>,
    /// Names found only as namespace packages (a directory without `__init__`).
    python_namespaces: BTreeSet<OsString>,
}

impl HostNames {
    /// No names at all.
    pub fn new() -> HostNames {
        HostNames::default()
    }

    /// Record an executable found on `PATH`.
    pub fn add_program(&mut self, name: &OsStr) {
        self.programs.insert(lowercase(name));
    }

    /// Record a top-level Python module or regular package.
    pub fn add_python_module(&mut self, name: &OsStr) {
        self.python_namespaces.remove(name);
        self.python_modules.insert(name.to_owned());
    }

    /// Record a namespace package (a directory without `__init__`). A regular module of
    /// the same name found anywhere wins, as it does on `sys.path`.
    pub fn add_python_namespace(&mut self, name: &OsStr) {
        if !self.python_modules.contains(name) {
            self.python_namespaces.insert(name.to_owned());
        }
    }

    /// Is there a program of this name on the host's `PATH`?
    pub fn has_program(&self, name: &OsStr) -> bool {
        self.programs.contains(&lowercase(name))
    }

    /// Is there a top-level Python module, regular or namespace package of this name?
    pub fn has_python_module(&self, name: &OsStr) -> bool {
        self.python_modules.contains(name) || self.python_namespaces.contains(name)
    }

    /// Is this name installed only as a namespace package?
    pub fn is_python_namespace(&self, name: &OsStr) -> bool {
        self.python_namespaces.contains(name)
    }

    /// How many program names are known.
    pub fn program_count(&self) -> usize {
        self.programs.len()
    }

    /// How many Python module names (of either kind) are known.
    pub fn python_module_count(&self) -> usize {
        self.python_modules.len() + self.python_namespaces.len()
    }
}

fn lowercase(name: &OsStr) -> OsString {
    OsString::from_vec(name.as_bytes().to_ascii_lowercase())
}

/// A bin directory put first on `PATH`, by the last two components of its path.
struct BinDir {
    dir: [&'static str; 2],
    pattern: &'static str,
    tools: &'static str,
    /// Names the directory holds by its nature, left to the other rules.
    own: &'static [&'static str],
}

/// What a virtualenv's `bin` holds by itself.
const VENV_OWN: &[&str] = &[
    "python",
    "python3",
    "python3.*",
    "pypy",
    "pypy3",
    "pypy3.*",
    "pip",
    "pip3",
    "pip3.*",
    "pip-3.*",
    "activate",
    "activate.*",
    "activate_this.py",
    "wheel",
    "wheel3",
    "wheel3.*",
    "wheel-3.*",
    "easy_install",
    "easy_install-3.*",
];

const VENV_TOOLS: &str = "an activated virtualenv (`source .venv/bin/activate`, `uv run`, \
                          `poetry run`), which puts its bin first on PATH";

const BIN_DIRS: &[BinDir] = &[
    BinDir {
        dir: ["node_modules", ".bin"],
        pattern: "node_modules/.bin/<a program on the host's PATH>",
        tools: "npm, Yarn, pnpm and Bun scripts, which run with node_modules/.bin first on PATH",
        own: &[],
    },
    BinDir {
        dir: [".venv", "bin"],
        pattern: ".venv/bin/<a program on the host's PATH>",
        tools: VENV_TOOLS,
        own: VENV_OWN,
    },
    BinDir {
        dir: ["venv", "bin"],
        pattern: "venv/bin/<a program on the host's PATH>",
        tools: VENV_TOOLS,
        own: VENV_OWN,
    },
    BinDir {
        dir: ["env", "bin"],
        pattern: "env/bin/<a program on the host's PATH>",
        tools: VENV_TOOLS,
        own: VENV_OWN,
    },
    BinDir {
        dir: ["vendor", "bin"],
        pattern: "vendor/bin/<a program on the host's PATH>",
        tools: "Composer scripts, which run with vendor/bin first on PATH",
        own: &[],
    },
];

const PYTHON_TOOLS: &str = "Python run from the root (`python -m`, scripts there, the hooks \
                            pre-commit installs), which puts it first on sys.path";
const PROGRAM_WHY: &str = "a script the host runs calls it instead of the installed program";
const MODULE_WHY: &str = "Python imports it instead of the module installed on the host";

/// Does `path` (a new entry of `kind` the run left in the writable root `root`) take the
/// place of a program or Python module the host has installed ([`HostNames`])?
///
/// Ask about entries the host does not have yet: one that already exists on the host is
/// the project's own (a project named like an installed package) and shadows nothing new.
pub fn shadows(path: &Path, root: &Path, kind: LeftKind, names: &HostNames) -> Option<Obeyed> {
    let rel = rel_components(path, root)?;
    program_shadow(&rel, kind, names).or_else(|| module_shadow(&rel, kind, names))
}

fn program_shadow(rel: &[&OsStr], kind: LeftKind, names: &HostNames) -> Option<Obeyed> {
    // A directory found on PATH is not run; the shell goes on to the next one.
    if kind == LeftKind::Dir {
        return None;
    }
    let [.., d0, d1, name] = rel else {
        return None;
    };
    let bin = BIN_DIRS
        .iter()
        .find(|b| name_matches(d0, b.dir[0]) && name_matches(d1, b.dir[1]))?;
    if bin.own.iter().any(|own| name_matches(name, own)) || !names.has_program(name) {
        return None;
    }
    Some(Obeyed {
        class: SHADOWING,
        tools: bin.tools,
        pattern: bin.pattern,
        why: PROGRAM_WHY,
    })
}

fn module_shadow(rel: &[&OsStr], kind: LeftKind, names: &HostNames) -> Option<Obeyed> {
    let hit = |pattern| {
        Some(Obeyed {
            class: SHADOWING,
            tools: PYTHON_TOOLS,
            pattern,
            why: MODULE_WHY,
        })
    };
    match rel {
        [] => None,
        [name] => {
            let by_stem = module_stem(name).is_some_and(|s| names.has_python_module(s));
            // A symlink named like the package may lead to a directory that has an
            // __init__ under another name.
            let by_link = kind == LeftKind::Symlink && names.has_python_module(name);
            if kind != LeftKind::Dir && (by_stem || by_link) {
                return hit("<an installed module>.py at the root");
            }
            None
        }
        [package, inner @ .., last] => {
            if names.is_python_namespace(package) {
                let importable = module_stem(last).is_some() || kind == LeftKind::Symlink;
                if kind != LeftKind::Dir && importable {
                    return hit("<an installed namespace package>/**/*.py at the root");
                }
                return None;
            }
            let is_init = module_stem(last).is_some_and(|s| s == "__init__");
            if inner.is_empty() && is_init && names.has_python_module(package) {
                return hit("<an installed package>/__init__.py at the root");
            }
            None
        }
    }
}

/// The module name a file name gives Python: `x.py`, `x.pyc`, and extension modules
/// `x.so`, `x.abi3.so`, `x.cpython-312-x86_64-linux-gnu.so`. `None` for other names or
/// stems that are not identifiers.
fn module_stem(name: &OsStr) -> Option<&OsStr> {
    python_module_name(name, false)
}

/// The top-level name Python imports an entry of a `sys.path` directory as: a directory
/// by its own name, a file by its stem when it is a module (`x.py`, `x.pyc`, extension
/// modules `x.so`, `x.abi3.so`, `x.cpython-312-x86_64-linux-gnu.so`). `None` when the
/// name is not an identifier (`x-1.0.dist-info`, `python3.12`) or not a module file.
/// The gatherer of [`HostNames`] and [`shadows`] share it, so both read names alike.
pub fn python_module_name(name: &OsStr, is_dir: bool) -> Option<&OsStr> {
    let bytes = name.as_bytes();
    let stem = if is_dir {
        bytes
    } else if let Some(s) = bytes.strip_suffix(b".py") {
        s
    } else if let Some(s) = bytes.strip_suffix(b".pyc") {
        s
    } else if bytes.ends_with(b".so") {
        bytes.split(|&b| b == b'.').next().unwrap_or_default()
    } else {
        return None;
    };
    // Non-ASCII bytes may be part of a Unicode identifier: counted in, to stay on the
    // side of matching.
    let ident = stem.first().is_some_and(|&b| !b.is_ascii_digit())
        && stem
            .iter()
            .all(|&b| b == b'_' || b.is_ascii_alphanumeric() || !b.is_ascii());
    ident.then(|| OsStr::from_bytes(stem))
}
