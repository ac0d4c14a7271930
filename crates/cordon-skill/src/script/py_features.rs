//! Features of harmless Python libraries that run code, write files or fetch, whatever
//! the path they are reached by: a member named here is judged wherever it sits below
//! its package (`yaml.loader.UnsafeLoader` like `yaml.UnsafeLoader`,
//! `pd.io.pickle.read_pickle` like `pd.read_pickle`); constructors that open a file for
//! writing are write sinks (`logging.FileHandler`, `io.FileIO(p, 'a')`,
//! `tempfile.NamedTemporaryFile(dir=…, suffix='.pth')`); and a reader handed a URL
//! (`xml.sax.parse(url)`, `pandas.read_csv(url)`) is a network call.

use super::fold::{RUNTIME, V};
use super::{Call, Facts, Lang, Net, Unit};
use tree_sitter::Node;

/// Members that run code they are handed (or load native code), by package, judged
/// wherever they sit below it.
const CODE_MEMBERS: &[(&str, &[&str])] = &[
    (
        "yaml",
        &[
            "Loader",
            "UnsafeLoader",
            "FullLoader",
            "CLoader",
            "CUnsafeLoader",
            "CFullLoader",
            "Constructor",
            "UnsafeConstructor",
            "FullConstructor",
            "unsafe_load",
            "unsafe_load_all",
            "full_load",
            "full_load_all",
            "add_constructor",
            "add_multi_constructor",
        ],
    ),
    ("pandas", &["read_pickle", "pickle", "eval", "query"]),
    ("numpy", &["ctypeslib", "f2py", "distutils"]),
    ("click", &["edit", "launch"]),
    ("pydantic", &["ImportString", "import_string"]),
    (
        "importlib",
        &["PathDistribution", "Distribution", "distributions"],
    ),
];

/// Is `name` a code-running member of a harmless package, wherever it sits?
pub(super) fn code_member(name: &str) -> bool {
    let mut parts = name.split('.');
    let Some(root) = parts.next() else {
        return false;
    };
    CODE_MEMBERS
        .iter()
        .filter(|(r, _)| *r == root)
        .any(|(_, m)| parts.any(|p| m.contains(&p.trim_end_matches("()"))))
}

/// Submodules the members above sit in (a walk goes on through them).
const CODE_MODULES: &[&str] = &[
    "yaml.loader",
    "yaml.constructor",
    "yaml.cyaml",
    "pandas.io",
    "pandas.io.pickle",
    "pandas.io.api",
    "pandas.api",
    "pandas.core",
    "pandas.core.computation",
    "click.termui",
    "pydantic.types",
    "pydantic.v1",
    "pydantic.v1.types",
    "pydantic.v1.utils",
    "pydantic.utils",
    "importlib.metadata",
];

/// Can a name below `name` be such a member (so a walk from it must go on)?
pub(super) fn code_member_below(name: &str) -> bool {
    CODE_MEMBERS.iter().any(|(r, _)| *r == name) || CODE_MODULES.contains(&name)
}

/// Writers that create or append to the file they are handed, always.
const WRITERS: &[&str] = &[
    "logging.FileHandler",
    "logging.handlers.RotatingFileHandler",
    "logging.handlers.TimedRotatingFileHandler",
    "logging.handlers.WatchedFileHandler",
    "shelve.open",
    "sqlite3.connect",
];

/// Methods that save a document, an image, an array or a table to a path.
const SAVERS: &[&str] = &[
    "save",
    "savefig",
    "savetxt",
    "savez",
    "savez_compressed",
    "tofile",
    "to_csv",
    "to_json",
    "to_excel",
    "to_pickle",
    "to_parquet",
    "to_html",
    "to_markdown",
    "to_latex",
    "to_feather",
    "to_xml",
    "imwrite",
    "imsave",
    "write_image",
    "write_html",
    "write_pdf",
];

/// Openers that write when their mode (the second argument or `mode=`) says so.
const MODE_OPENERS: &[&str] = &[
    "io.FileIO",
    "zipfile.ZipFile",
    "tarfile.open",
    "tarfile.TarFile",
    "gzip.GzipFile",
    "bz2.BZ2File",
    "lzma.LZMAFile",
    "wave.open",
    "dbm.open",
];

/// Positions of `suffix`, `prefix` and `dir` when given positionally.
type Positions = (usize, usize, usize);

/// Temporary files made in a folder the caller names (`dir=`).
const TEMP_MAKERS: &[(&str, Positions)] = &[
    ("tempfile.NamedTemporaryFile", (4, 5, 6)),
    ("tempfile.TemporaryFile", (4, 5, 6)),
    ("tempfile.SpooledTemporaryFile", (5, 6, 7)),
    ("tempfile.mkstemp", (0, 1, 2)),
    ("tempfile.mkdtemp", (0, 1, 2)),
    ("tempfile.TemporaryDirectory", (0, 1, 2)),
];

/// Method names of readers that fetch a URL they are handed in place of a file.
const URL_READERS: &[&str] = &[
    "parse",
    "iterparse",
    "urlopen",
    "load",
    "loads",
    "open",
    "fromfile",
    "loadtxt",
    "genfromtxt",
    "imread",
    "read",
];

impl Unit<'_> {
    /// The file a Python write sink writes (see the module docs).
    pub(super) fn py_write_sink(&self, name: &str, call: &Call<'_>, args: &[V]) -> Option<V> {
        if self.lang != Lang::Python {
            return None;
        }
        let kw = |k: &str| {
            call.kwargs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| self.fold(*v))
        };
        let path = || {
            args.first()
                .cloned()
                .or_else(|| kw("filename"))
                .or_else(|| kw("file"))
                .or_else(|| kw("name"))
                .or_else(|| kw("database"))
        };
        if WRITERS.contains(&name) {
            return path();
        }
        // `img.save(p)`, `np.savetxt(p, rows)`, `df.to_csv(p)`: a document, image or
        // table saved to the path it is handed (when the path is known to be one).
        let method = name.rsplit('.').next().unwrap_or(name);
        if SAVERS.contains(&method) {
            let p = args.first().cloned().or_else(|| {
                [
                    "path",
                    "fname",
                    "filename",
                    "fp",
                    "path_or_buf",
                    "excel_writer",
                    "uri",
                ]
                .iter()
                .find_map(|k| kw(k))
            });
            return p.filter(|p| match p {
                V::Str(s, exact) => *exact || s.starts_with('~') || s.starts_with('/'),
                _ => false,
            });
        }
        if name == "logging.basicConfig" {
            return kw("filename");
        }
        if MODE_OPENERS.contains(&name) {
            let mode = args
                .get(1)
                .cloned()
                .or_else(|| kw("mode"))
                .or_else(|| kw("flag"));
            let writes = match mode {
                None => false,
                Some(V::Str(m, true)) => m.contains(['w', 'a', 'x', '+', 'c', 'n']),
                Some(_) => true,
            };
            return if writes { path() } else { None };
        }
        let (_, pos) = TEMP_MAKERS.iter().find(|(n, _)| *n == name)?;
        let at = |i: usize, k: &str| kw(k).or_else(|| args.get(i).cloned());
        let dir = at(pos.2, "dir")?;
        let suffix = at(pos.0, "suffix").unwrap_or(V::Str(String::new(), true));
        let prefix = at(pos.1, "prefix").unwrap_or(V::Str(String::new(), true));
        Some(V::Str(
            format!("{}/{}{RUNTIME}{}", dir.text(), prefix.text(), suffix.text()),
            false,
        ))
    }

    /// Calls of harmless libraries that run code, spawn an editor or fetch a URL.
    pub(super) fn py_feature_call(
        &self,
        node: Node<'_>,
        name: &str,
        call: &Call<'_>,
        args: &[V],
        facts: &mut Facts,
    ) {
        if self.lang != Lang::Python {
            return;
        }
        let line = self.line(node);
        // `click.edit(text, editor='sh -c …')`: the editor is a shell command line.
        if code_member(name)
            && name.ends_with(".edit")
            && let Some((_, e)) = call.kwargs.iter().find(|(k, _)| k == "editor")
        {
            {
                let v = self.fold(*e);
                facts.spawns.push((
                    line,
                    super::Cmd::Shell {
                        text: v.text(),
                        exact: v.exact(),
                    },
                ));
            }
        }
        let entry = super::python_caps::PY_CODE_ENTRIES
            .iter()
            .any(|(n, _)| *n == name);
        if code_member(name) && !entry {
            let first = args.first().map_or_else(|| "…".to_string(), V::text);
            facts.code.push((line, format!("{name}({first})")));
        }
        // A reader handed a URL fetches it.
        let method = name.rsplit('.').next().unwrap_or(name);
        // (A harmless library's readers: a capable module's calls are judged by its own
        // tables, and the script's own functions are not readers.)
        let root = name.split('.').next().unwrap_or(name);
        if super::calls::NET_CALLS.iter().any(|(n, _)| *n == name)
            || super::python_caps::PY_MODULES.contains(&root)
            || !super::python_caps::is_harmless(root)
        {
            return;
        }
        let reader = URL_READERS.contains(&method)
            || method.starts_with("read_")
            || method.starts_with("load_");
        if !reader {
            return;
        }
        for v in args.iter().take(1).chain(
            [
                "url",
                "source",
                "filepath_or_buffer",
                "path",
                "fname",
                "uri",
            ]
            .iter()
            .filter_map(|k| call.kwargs.iter().find(|(n, _)| n == k))
            .map(|(_, v)| v)
            .map(|v| self.fold(*v))
            .collect::<Vec<_>>()
            .iter(),
        ) {
            if let V::Str(s, exact) = v {
                let lower = s.to_ascii_lowercase();
                if ["http://", "https://", "ftp://", "file://"]
                    .iter()
                    .any(|p| lower.starts_with(p))
                {
                    facts.net.push(Net {
                        line,
                        dest: Some(s.clone()),
                        exact: *exact,
                        fetch: true,
                    });
                    return;
                }
            }
        }
    }
}

/// Calls that put a folder on the module search path (its second argument for
/// `insert`).
const PATH_ADDERS: &[&str] = &[
    "sys.path.insert",
    "sys.path.append",
    "sys.path.extend",
    "site.addsitedir",
];

/// Environment variables that make Python import or run code from a folder: the search
/// path, the prefix of the standard library, the user site (whose `.pth` files run),
/// the interactive startup file and the prefix compiled modules are read from.
const SEARCH_ENV: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "PYTHONSTARTUP",
    "PYTHONPYCACHEPREFIX",
];

impl<'a> Unit<'a> {
    /// A folder put on the module search path that the package does not ship
    /// (`sys.path.insert(0, '/tmp/x')`, `site.addsitedir(d)`, `PYTHONPATH=…`): what is
    /// imported next may be code written there, a load of code known only at run time
    /// (refused after a download, like any).
    pub(super) fn py_search_path(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        if self.lang != Lang::Python {
            return;
        }
        for &n in nodes {
            let value = match n.kind() {
                "call" => {
                    let Some(c) = self.call(n) else { continue };
                    if PATH_ADDERS.contains(&c.callee.as_str()) {
                        let i = usize::from(c.callee == "sys.path.insert");
                        c.args.get(i).copied()
                    } else if matches!(c.callee.as_str(), "os.putenv" | "os.environ.setdefault")
                        && c.args.first().is_some_and(|&k| {
                            self.fold(k)
                                .exact_str()
                                .is_some_and(|e| SEARCH_ENV.contains(&e))
                        })
                    {
                        c.args.get(1).copied()
                    } else {
                        None
                    }
                }
                // `sys.path[:0] = [...]`, `sys.path = [...]`, `os.environ['PYTHONPATH'] = …`
                "assignment" => {
                    let left = n.child_by_field_name("left");
                    let target = left.map(|l| {
                        let o = if l.kind() == "subscript" {
                            l.child_by_field_name("value").unwrap_or(l)
                        } else {
                            l
                        };
                        self.dotted(o)
                    });
                    let env = left.and_then(|l| self.env_name(l));
                    (target.as_deref() == Some("sys.path")
                        || env.as_deref().is_some_and(|e| SEARCH_ENV.contains(&e)))
                    .then(|| n.child_by_field_name("right"))
                    .flatten()
                }
                // `{'PYTHONPATH': d}`, `os.environ.update(PYTHONPATH=d)`
                "pair" | "keyword_argument" => {
                    let key = n
                        .child_by_field_name("key")
                        .or_else(|| n.child_by_field_name("name"));
                    let named = key.is_some_and(|k| {
                        SEARCH_ENV.contains(&self.text(k))
                            || self
                                .fold(k)
                                .exact_str()
                                .is_some_and(|e| SEARCH_ENV.contains(&e))
                    });
                    named.then(|| n.child_by_field_name("value")).flatten()
                }
                _ => None,
            };
            let Some(v) = value else { continue };
            if let Some(dir) = self.foreign_dir(v) {
                facts.code.push((
                    self.line(n),
                    format!("modules imported from {dir}, put on the module search path"),
                ));
            }
        }
    }

    /// A folder the package does not ship: an absolute or home path, or one known only
    /// at run time; `None` for the package's own (from `__file__`) or a relative one.
    pub(super) fn foreign_dir(&self, v: Node<'_>) -> Option<String> {
        if self.inside_package(v) {
            return None;
        }
        let items = match self.fold(v) {
            V::List(items) => items,
            other => vec![other],
        };
        items.iter().find_map(|i| match i {
            V::Str(s, true) if !(s.starts_with('/') || s.starts_with('~')) => None,
            V::Str(s, _) => Some(s.replace(RUNTIME, "…")),
            _ => Some("a folder known only at run time".to_string()),
        })
    }
}
