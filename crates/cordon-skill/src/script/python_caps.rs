//! What Python modules may do, as an allow-list: a module is capable (its uses are
//! judged by the capability rule, see `capability`), known harmless, or unknown, and an
//! unknown module makes the script not pass. Harmless modules can still have members
//! that run code, load native code or reach the network or the user's credentials
//! ([`PY_RISKY`]); those are judged like a capable module's members. Standard-library
//! entry points that run code they are handed ([`PY_CODE_ENTRIES`]) are judged like
//! `exec`: a literal is analyzed as the code it is, anything else is code known only at
//! run time.

use super::calls::{EXEC_DEPTH, merge};
use super::fold::V;
use super::{Call, Facts, Lang, Unit};
use tree_sitter::Node;

/// Python modules every member of which is capable (but for the listed harmless ones).
pub(super) const PY_MODULES: &[&str] = &[
    "subprocess",
    "os",
    "sys",
    "ctypes",
    "pty",
    "importlib",
    "builtins",
    "__builtin__",
    "runpy",
    "sh",
    "pexpect",
    "socket",
    "urllib",
    "urllib2",
    "urllib3",
    "http",
    "requests",
    "httpx",
    "aiohttp",
    "asyncio",
    "code",
    "codeop",
    "marshal",
    "pickle",
    "multiprocessing",
    "commands",
    "platform",
    "imp",
    "ftplib",
    "smtplib",
    "telnetlib",
    "xmlrpc",
    "paramiko",
    "fabric",
    "plumbum",
    "pwntools",
    "cffi",
    "webbrowser",
    "posix",
    "_ctypes",
    "_posixsubprocess",
    "timeit",
    "cProfile",
    "profile",
    "trace",
    "doctest",
    "pdb",
    "bdb",
    "pydoc",
    "pkgutil",
    "netrc",
    "shelve",
    "zipimport",
    "ssl",
];

/// Members of those modules that start nothing and reach nothing (prefixes).
pub(super) const PY_SAFE: &[&str] = &[
    "os.path",
    "os.environ",
    "os.getenv",
    "os.getcwd",
    "os.listdir",
    "os.makedirs",
    "os.mkdir",
    "os.remove",
    "os.unlink",
    "os.rename",
    "os.replace",
    "os.walk",
    "os.scandir",
    "os.stat",
    "os.sep",
    "os.linesep",
    "os.pathsep",
    "os.name",
    "os.rmdir",
    "os.getpid",
    "os.cpu_count",
    "os.devnull",
    "os.fspath",
    "os.access",
    "os.R_OK",
    "os.W_OK",
    "os.X_OK",
    "os.F_OK",
    "os.lstat",
    "os.isatty",
    "os.get_terminal_size",
    "os.curdir",
    "os.pardir",
    "os.chdir",
    "os.getuid",
    "os.geteuid",
    "os.chmod",
    "os.fsencode",
    "os.fsdecode",
    "os.PathLike",
    "os.strerror",
    "os.error",
    "os.extsep",
    "os.urandom",
    "os.utime",
    "os.umask",
    "os.getppid",
    "os.removedirs",
    "os.fdopen",
    "sys.argv",
    "sys.exit",
    "sys.stdin",
    "sys.stdout",
    "sys.stderr",
    "sys.platform",
    "sys.version",
    "sys.version_info",
    "sys.executable",
    "sys.maxsize",
    "sys.byteorder",
    "sys.getdefaultencoding",
    "sys.getsizeof",
    "sys.path",
    "sys.exc_info",
    "sys.getrecursionlimit",
    "sys.setrecursionlimit",
    "sys.float_info",
    "sys.flags",
    "subprocess.PIPE",
    "subprocess.DEVNULL",
    "subprocess.STDOUT",
    "subprocess.CalledProcessError",
    "subprocess.TimeoutExpired",
    "subprocess.CompletedProcess",
    "subprocess.SubprocessError",
    "importlib.metadata",
    "importlib.resources",
    "urllib.parse",
    "urllib.error",
    "http.HTTPStatus",
    "requests.exceptions",
    "requests.RequestException",
    "requests.HTTPError",
    "requests.codes",
    "httpx.HTTPError",
    "httpx.HTTPStatusError",
    "platform.system",
    "platform.machine",
    "platform.python_version",
    "platform.release",
    "platform.platform",
    "platform.node",
    "asyncio.run",
    "asyncio.gather",
    "asyncio.sleep",
    "asyncio.wait_for",
    "asyncio.Queue",
    "asyncio.Lock",
    "asyncio.Event",
    "asyncio.Semaphore",
    "asyncio.TimeoutError",
    "asyncio.CancelledError",
    "asyncio.create_task",
    "asyncio.get_event_loop",
    "asyncio.as_completed",
    "asyncio.wait",
    "asyncio.run_coroutine_threadsafe",
    "asyncio.Future",
    "asyncio.iscoroutinefunction",
    "asyncio.to_thread",
    "asyncio.timeout",
    "multiprocessing.cpu_count",
    "socket.gethostname",
    "socket.timeout",
    "timeit.default_timer",
    "pkgutil.iter_modules",
    "pkgutil.get_data",
];

/// Python builtins that evaluate code or reach every module.
pub(super) const PY_BUILTINS: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "__import__",
    "__builtins__",
    "globals",
    "locals",
    "breakpoint",
    "getattr",
    "get_ipython",
    "help",
    "__build_class__",
];

/// Modules (and packages, by prefix) that compute, format, parse or read without
/// starting processes, running code they are handed, or reaching the network.
pub(super) const PY_HARMLESS: &[&str] = &[
    "__future__",
    "abc",
    "atexit",
    "argparse",
    "array",
    "ast",
    "base64",
    "binascii",
    "bisect",
    "bz2",
    "calendar",
    "cmath",
    "collections",
    "codecs",
    "colorsys",
    "configparser",
    "concurrent.futures",
    "contextlib",
    "contextvars",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email",
    "enum",
    "errno",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "functools",
    "getopt",
    "gettext",
    "glob",
    "graphlib",
    "gzip",
    "hashlib",
    "grp",
    "heapq",
    "hmac",
    "html",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "math",
    "mimetypes",
    "numbers",
    "operator",
    "optparse",
    "pathlib",
    "posixpath",
    "pprint",
    "pwd",
    "queue",
    "random",
    "re",
    "reprlib",
    "secrets",
    "shlex",
    "shutil",
    "signal",
    "sqlite3",
    "stat",
    "statistics",
    "string",
    "struct",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "time",
    "tomllib",
    "traceback",
    "types",
    "typing",
    "typing_extensions",
    "unicodedata",
    "uuid",
    "warnings",
    "wave",
    "weakref",
    "xml",
    "zipfile",
    "zlib",
    "zoneinfo",
    // Third-party document, image and data libraries skills use.
    "PIL",
    "numpy",
    "pandas",
    "openpyxl",
    "docx",
    "pptx",
    "pypdf",
    "PyPDF2",
    "pdfplumber",
    "pypdfium2",
    "pdf2image",
    "pytesseract",
    "lxml",
    "fitz",
    // The Anthropic SDK reaches its own service with the user's key (a `base_url`
    // elsewhere is judged as a destination, see `implied_facts`).
    "anthropic",
    "reportlab",
    "matplotlib",
    "imageio",
    "pydantic",
    "bs4",
    "defusedxml",
    "yaml",
    "tomli",
    "toml",
    "dateutil",
    "pytz",
    "tabulate",
    "tqdm",
    "rich",
    "click",
    "chardet",
    "charset_normalizer",
];

/// Members of harmless modules that run code, load native code, reach the network or
/// read credentials (prefixes).
pub(super) const PY_RISKY: &[&str] = &[
    "typing.get_type_hints",
    "typing_extensions.get_type_hints",
    "typing.ForwardRef",
    "typing._eval_type",
    "inspect.get_annotations",
    "functools.singledispatch",
    "functools.singledispatchmethod",
    "logging.config",
    "logging.handlers.HTTPHandler",
    "logging.handlers.SocketHandler",
    "logging.handlers.DatagramHandler",
    "logging.handlers.SysLogHandler",
    "logging.handlers.SMTPHandler",
    "importlib.metadata.EntryPoint",
    "importlib.metadata.EntryPoints",
    "importlib.metadata.entry_points",
    "yaml.load",
    "yaml.load_all",
    "yaml.unsafe_load",
    "yaml.unsafe_load_all",
    "yaml.full_load",
    "yaml.full_load_all",
    "yaml.Loader",
    "yaml.UnsafeLoader",
    "yaml.FullLoader",
    "yaml.add_constructor",
    "yaml.add_multi_constructor",
    "pandas.read_pickle",
    "numpy.load",
    "PIL.ImageMath.eval",
    "PIL.ImageMath.unsafe_eval",
    "PIL.ImageMath.lambda_eval",
    "shutil.unpack_archive",
    "pytesseract.pytesseract.tesseract_cmd",
    "anthropic.lib.tools.mcp",
    // Introspection: frames, members by name, functions built from code objects.
    "inspect.currentframe",
    "inspect.stack",
    "inspect.trace",
    "inspect.getouterframes",
    "inspect.getinnerframes",
    "inspect.getmembers",
    "inspect.getmembers_static",
    "inspect.getattr_static",
    "inspect.getclosurevars",
    "logging.currentframe",
    "traceback.walk_stack",
    "traceback.walk_tb",
    "string.Formatter",
    "types.FunctionType",
    "types.LambdaType",
    "types.CodeType",
    "types.MethodType",
    "operator.attrgetter",
    "operator.methodcaller",
];

/// How a code-running entry point takes its code.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Code {
    /// The first argument is Python source (analyzed when it is a literal).
    Source,
    /// It runs what a name, a file or a loader it is handed stands for.
    Opaque,
}

/// Standard-library calls that run code they are handed.
pub(super) const PY_CODE_ENTRIES: &[(&str, Code)] = &[
    ("timeit.timeit", Code::Source),
    ("timeit.repeat", Code::Source),
    ("timeit.Timer", Code::Source),
    ("cProfile.run", Code::Source),
    ("cProfile.runctx", Code::Source),
    ("cProfile.Profile().run", Code::Source),
    ("cProfile.Profile().runctx", Code::Source),
    ("profile.run", Code::Source),
    ("profile.runctx", Code::Source),
    ("profile.Profile().run", Code::Source),
    ("profile.Profile().runctx", Code::Source),
    ("trace.Trace().run", Code::Source),
    ("trace.Trace().runctx", Code::Source),
    ("pdb.run", Code::Source),
    ("pdb.runeval", Code::Source),
    ("pdb.runctx", Code::Source),
    ("bdb.Bdb().run", Code::Source),
    ("code.InteractiveInterpreter().runsource", Code::Source),
    ("code.InteractiveConsole().push", Code::Source),
    ("doctest.testfile", Code::Opaque),
    ("doctest.testmod", Code::Opaque),
    ("doctest.run_docstring_examples", Code::Opaque),
    ("doctest.DocFileSuite", Code::Opaque),
    ("pydoc.locate", Code::Opaque),
    ("pkgutil.resolve_name", Code::Opaque),
    ("typing.get_type_hints", Code::Opaque),
    ("typing_extensions.get_type_hints", Code::Opaque),
    ("importlib.metadata.EntryPoint", Code::Opaque),
    ("importlib.metadata.entry_points", Code::Opaque),
    ("logging.config.fileConfig", Code::Opaque),
    ("logging.config.dictConfig", Code::Opaque),
    ("logging.config.listen", Code::Opaque),
    ("yaml.unsafe_load", Code::Opaque),
    ("yaml.unsafe_load_all", Code::Opaque),
    ("yaml.full_load", Code::Opaque),
    ("yaml.full_load_all", Code::Opaque),
    ("yaml.load", Code::Opaque),
    ("yaml.load_all", Code::Opaque),
    ("pandas.read_pickle", Code::Opaque),
    ("numpy.load", Code::Opaque),
    ("shelve.open", Code::Opaque),
    ("ctypes.CDLL", Code::Opaque),
    ("ctypes.cdll.LoadLibrary", Code::Opaque),
    ("ctypes.PyDLL", Code::Opaque),
    ("_ctypes.dlopen", Code::Opaque),
    ("_ctypes.LoadLibrary", Code::Opaque),
    // A function built from a code object runs whatever the code object was made to do.
    ("types.FunctionType", Code::Opaque),
    ("types.LambdaType", Code::Opaque),
    ("types.CodeType", Code::Opaque),
];

/// Anthropic client constructors, by canonical callee.
pub(super) const ANTHROPIC_PY: &[&str] = &[
    "anthropic.Anthropic",
    "anthropic.AsyncAnthropic",
    "anthropic.Client",
    "anthropic.AsyncClient",
];
const ANTHROPIC_JS: &[&str] = &[
    "new @anthropic-ai/sdk",
    "new @anthropic-ai/sdk.Anthropic",
    "new @anthropic-ai/sdk.default",
];

/// Loaders `yaml.load` may be given that build only plain data.
const YAML_SAFE_LOADERS: &[&str] = &["SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"];

fn prefixed(name: &str, table: &[&str]) -> bool {
    table.iter().any(|s| {
        name == *s
            || name
                .strip_prefix(s)
                .is_some_and(|r| r.starts_with('.') || r.starts_with('('))
    })
}

/// Is `name` a member of a harmless module that is not harmless itself?
pub(super) fn is_risky(name: &str) -> bool {
    prefixed(name, PY_RISKY)
        || super::py_features::code_member(name)
        || super::py_values::module_returning(name)
}

/// Can a name below `name` be risky (so a walk from it must go on)?
pub(super) fn risky_below(name: &str) -> bool {
    PY_RISKY.iter().any(|r| {
        r.strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('.'))
    }) || super::py_features::code_member_below(name)
}

/// Is the module (a dotted name) known harmless? A standard-library package whose
/// harmless module is named (`concurrent` of `concurrent.futures`) is: its
/// `__init__` is empty, and `from concurrent import futures` names the module.
pub(super) fn is_harmless(module: &str) -> bool {
    prefixed(module, PY_HARMLESS)
        || PY_HARMLESS
            .iter()
            .any(|h| h.strip_prefix(module).is_some_and(|r| r.starts_with('.')))
}

impl Unit<'_> {
    /// A call of a code-running entry point: its code analyzed when it is a literal
    /// source, recorded as code run at run time otherwise. `true` when it was one.
    pub(super) fn code_entry(
        &self,
        line: usize,
        name: &str,
        call: &Call<'_>,
        args: &[V],
        facts: &mut Facts,
    ) -> bool {
        if self.lang != Lang::Python {
            return false;
        }
        let Some((_, kind)) = PY_CODE_ENTRIES.iter().find(|(n, _)| *n == name) else {
            return false;
        };
        let kw = |k: &str| {
            call.kwargs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| self.fold(*v))
        };
        if self.safe_loader(call, name) {
            return true;
        }
        let code = args
            .first()
            .cloned()
            .or_else(|| kw("stmt"))
            .or_else(|| kw("cmd"))
            .unwrap_or(V::Unknown);
        let setup = args.get(1).cloned().or_else(|| kw("setup"));
        let mut sources = vec![code];
        if name.starts_with("timeit.") {
            sources.extend(setup);
        }
        for src in sources {
            match (kind, src.exact_str()) {
                (Code::Source, Some(text)) if EXEC_DEPTH.with(|d| d.get()) < 8 => {
                    EXEC_DEPTH.with(|d| d.set(d.get() + 1));
                    let inner = super::analyze(Lang::Python, text, line);
                    EXEC_DEPTH.with(|d| d.set(d.get() - 1));
                    merge(facts, inner);
                }
                _ => facts.code.push((line, format!("{name}({})", src.text()))),
            }
        }
        true
    }

    /// String annotations (`def f(x: "…")`, `x: "…" = 1`) are Python expressions that
    /// `typing.get_type_hints`, `inspect.get_annotations(eval_str=True)`,
    /// `functools.singledispatch` and model libraries evaluate: each is analyzed as the
    /// code it is.
    pub(super) fn string_annotations(&self, nodes: &[Node<'_>], facts: &mut Facts) {
        if self.lang != Lang::Python {
            return;
        }
        // (`Optional["…"]`: a string anywhere in an annotation is evaluated.)
        let strings = nodes
            .iter()
            .filter(|n| n.kind() == "type")
            .flat_map(|&n| super::all_nodes(n))
            .filter(|s| {
                matches!(s.kind(), "string" | "concatenated_string")
                    && self
                        .parents
                        .get(&s.id())
                        .is_none_or(|p| p.kind() != "concatenated_string")
            });
        for inner in strings {
            let line = self.line(inner);
            match self.fold(inner) {
                V::Str(code, true) if EXEC_DEPTH.with(|d| d.get()) < 8 => {
                    EXEC_DEPTH.with(|d| d.set(d.get() + 1));
                    let inner = super::analyze(Lang::Python, &code, line);
                    EXEC_DEPTH.with(|d| d.set(d.get() - 1));
                    merge(facts, inner);
                }
                _ => facts
                    .code
                    .push((line, format!("an annotation ({})", self.text(inner)))),
            }
        }
    }

    /// Calls that look a name up and return what it names are, with a literal name,
    /// that name: `pkgutil.resolve_name('os:system')`, `pydoc.locate('os.system')`,
    /// `EntryPoint(value='os:system', …).load()` are `os.system`.
    pub(super) fn resolved_name(&self, n: Node<'_>, c: &Call<'_>) -> Option<String> {
        if self.lang == Lang::Ruby {
            return self.rb_const_get(c);
        }
        if self.lang != Lang::Python {
            return None;
        }
        let lit =
            |v: Option<Node<'_>>| v.and_then(|a| self.fold(a).exact_str().map(str::to_string));
        let name = match c.callee.as_str() {
            "pkgutil.resolve_name" | "pydoc.locate" => lit(c.args.first().copied()),
            "importlib.metadata.EntryPoint().load" => {
                let ep = self.call(self.receiver(n)?)?;
                let value = ep
                    .kwargs
                    .iter()
                    .find(|(k, _)| k == "value")
                    .map(|p| p.1)
                    .or(ep.args.get(1).copied());
                lit(value)
            }
            _ => None,
        }?;
        Some(name.replace(':', "."))
    }

    /// A loader that may build objects told to build only plain data:
    /// `yaml.load(text, Loader=yaml.SafeLoader)`, `numpy.load(f)` without
    /// `allow_pickle`.
    pub(super) fn safe_loader(&self, call: &Call<'_>, name: &str) -> bool {
        if name == "numpy.load" {
            return call
                .kwargs
                .iter()
                .find(|(k, _)| k == "allow_pickle")
                .is_none_or(|(_, v)| self.fold(*v).exact_str() == Some("False"));
        }
        if !matches!(name, "yaml.load" | "yaml.load_all") {
            return false;
        }
        let loader = call
            .args
            .get(1)
            .copied()
            .or_else(|| call.kwargs.iter().find(|(k, _)| k == "Loader").map(|p| p.1))
            .map(|l| self.dotted(l));
        loader.is_some_and(|l| {
            YAML_SAFE_LOADERS
                .iter()
                .any(|s| l == *s || l.ends_with(&format!(".{s}")))
        })
    }

    /// What a call does without saying so: `netrc.netrc()` reads `~/.netrc` (or the
    /// file it is given); an Anthropic client given a base URL elsewhere sends the
    /// user's `ANTHROPIC_API_KEY` there (a review: gateways and proxies are ordinary).
    pub(super) fn implied_facts(
        &self,
        line: usize,
        name: &str,
        call: &Call<'_>,
        args: &[V],
        facts: &mut Facts,
    ) {
        if self.lang == Lang::Python && name == "netrc.netrc" {
            let p = match args.first() {
                None => Some("~/.netrc".to_string()),
                Some(v) => v.exact_str().map(str::to_string),
            };
            facts.paths.extend(p.map(|p| (line, p)));
        }
        let (client, key) = match self.lang {
            Lang::Python => (ANTHROPIC_PY.contains(&name), "base_url"),
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                (ANTHROPIC_JS.contains(&name), "baseURL")
            }
            Lang::Ruby => (false, ""),
        };
        if !client {
            return;
        }
        if let Some((_, v)) = call.kwargs.iter().find(|(k, _)| k == key) {
            self.anthropic_base_url(line, *v, facts);
        }
    }
}
