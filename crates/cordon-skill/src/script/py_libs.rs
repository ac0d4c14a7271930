//! Library surfaces of Python that the call tables alone do not see: code a script plugs
//! into a library (a subclass overriding a library class, a class or function
//! registered with it), keywords naming a program a library runs, library APIs that
//! evaluate a string as code (pydantic types, XSLT stylesheets), an Anthropic client
//! whose destination changes after it is built, write-capable standard entry points
//! (`fileinput` in place, archive extraction to a path, temporary files whose prefix
//! holds a path, links, modules' command-line `main`), and URL readers handed a value
//! known only at run time. Each is judged as what it amounts to: a run, a code load, a
//! destination, a write; what cannot be followed is a review with one sentence.

use super::calls::{EXEC_DEPTH, merge};
use super::fold::{RUNTIME, V};
use super::python_caps::{PY_MODULES, is_harmless};
use super::{Call, Cmd, Facts, Lang, Unit};
use tree_sitter::Node;

/// Library base classes a script may subclass and override: their methods' results are
/// not run, fetched or written by the library (prefixes of the canonical name).
const SUBCLASS_OK: &[&str] = &[
    "enum",
    "typing",
    "typing_extensions",
    "abc",
    "dataclasses",
    "collections",
    "argparse",
    "json.JSONEncoder",
    "json.JSONDecoder",
    "html.parser.HTMLParser",
    "threading.Thread",
    "logging.Handler",
    "logging.StreamHandler",
    "logging.NullHandler",
    "logging.Formatter",
    "logging.Filter",
    "logging.LoggerAdapter",
    "contextlib",
    "queue",
    "io",
    "numbers",
    "datetime",
    "decimal",
    "fractions",
    "string.Template",
    "textwrap.TextWrapper",
    "pprint.PrettyPrinter",
    "reprlib.Repr",
    "csv.Dialect",
    "configparser",
    "pydantic.BaseModel",
    "pydantic.RootModel",
];

/// Calls that take a script's function without running what it returns.
const CALLBACK_OK: &[&str] = &[
    "atexit.register",
    "csv.register_dialect",
    "abc.ABC.register",
];

/// Programs a library is told to run by a `<tool>_path=` keyword (a file or its folder).
const TOOLS: &[&str] = &[
    "poppler",
    "tesseract",
    "ghostscript",
    "gs",
    "ffmpeg",
    "ffprobe",
    "magick",
    "imagemagick",
    "convert",
    "libreoffice",
    "soffice",
    "pandoc",
    "wkhtmltopdf",
    "wkhtmltoimage",
    "chromedriver",
    "chrome",
    "chromium",
    "browser",
    "driver",
    "executable",
    "binary",
    "bin",
    "exe",
    "program",
    "tool",
    "cmd",
    "node",
    "java",
    "inkscape",
    "latex",
    "pdflatex",
    "xelatex",
    "lualatex",
    "dot",
    "graphviz",
    "qpdf",
    "mutool",
    "unoconv",
    "exiftool",
    "git",
];

/// Does a keyword (or attribute) name a program to run?
fn names_program(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    let k = k.trim_start_matches('_');
    k.contains("executable")
        || matches!(k, "binary" | "command" | "cmd" | "program")
        || ["_executable", "_cmd", "_command", "_binary", "_bin", "_exe"]
            .iter()
            .any(|s| k.ends_with(s))
        || k.starts_with("executable_")
        || k.strip_suffix("_path")
            .or_else(|| k.strip_suffix("_dir"))
            .or_else(|| k.strip_suffix("_home"))
            .is_some_and(|t| TOOLS.contains(&t))
}

impl<'a> Unit<'a> {
    /// The root module a canonical name starts with, when the script imports it.
    pub(super) fn lib_root(&self, name: &str) -> Option<String> {
        let root = name.split('.').next()?;
        let imported = self
            .aliases
            .values()
            .any(|a| a.split('.').next() == Some(root))
            || self.imports_module(root);
        (imported && is_harmless(root) && !PY_MODULES.contains(&root)).then(|| root.to_string())
    }

    /// Does the script `import ROOT` (or a module below it)?
    pub(super) fn imports_module(&self, root: &str) -> bool {
        let first = |m: &str| m.trim().split(['.', ' ']).next() == Some(root);
        self.src.lines().any(|l| {
            let l = l.trim_start();
            if let Some(r) = l.strip_prefix("import ") {
                return r.split(',').any(first);
            }
            l.strip_prefix("from ").is_some_and(first)
        })
    }

    /// Calls of library surfaces (see the module docs).
    pub(super) fn py_lib_call(
        &self,
        node: Node<'a>,
        name: &str,
        call: &Call<'a>,
        args: &[V],
        facts: &mut Facts,
    ) {
        if self.lang != Lang::Python {
            return;
        }
        // `T = pydantic.TypeAdapter; T(…)`: the name bound to a library member is it.
        let bound = self.through_binding(name);
        let name = bound.as_deref().unwrap_or(name);
        let line = self.line(node);
        let method = name.rsplit('.').next().unwrap_or(name);
        let kw = |k: &str| call.kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        let recv = self.receiver(node);
        let client = recv.is_some_and(|r| self.is_anthropic_client(r, 0));
        // Keywords spread from a mapping (`**opts`) into a client or a library call
        // may name anything: a base URL, a program.
        let spread = call.args.iter().find(|a| a.kind() == "dictionary_splat");
        if let Some(&sp) = spread
            && (client
                || matches!(method, "with_options" | "copy")
                || super::python_caps::ANTHROPIC_PY.contains(&name))
            && self.imports_module("anthropic")
        {
            self.anthropic_base_url(line, sp, facts);
        }
        // An Anthropic client whose destination changes after it is built.
        // (`with_options`, `copy`, `__init__` again, any other client class of the SDK;
        // the constructors are judged by `implied_facts`.)
        let repointed = client
            || (matches!(method, "with_options" | "copy") && self.imports_module("anthropic"))
            || (name.starts_with("anthropic.")
                && !super::python_caps::ANTHROPIC_PY.contains(&name));
        if repointed && let Some(v) = kw("base_url") {
            self.anthropic_base_url(line, v, facts);
        }
        // A request method given an absolute URL goes there, not to the base URL.
        if client
            && matches!(
                method,
                "post"
                    | "get"
                    | "put"
                    | "patch"
                    | "delete"
                    | "request"
                    | "get_api_list"
                    | "_request"
            )
        {
            let path = call
                .args
                .first()
                .copied()
                .or_else(|| kw("path"))
                .or_else(|| kw("url"));
            if let Some(p) = path {
                let v = self.fold(p);
                let relative =
                    matches!(&v, V::Str(s, _) if s.starts_with('/') && !s.starts_with("//"));
                if !relative {
                    self.anthropic_base_url(line, p, facts);
                }
            }
        }
        // `setattr(ImageShow.Viewer, 'get_command', mine)`: a library member replaced.
        if name == "setattr"
            && let (Some(&o), Some(&v)) = (call.args.first(), call.args.get(2))
            && (v.kind() == "lambda" || self.defines(v))
        {
            let d = self.dotted(o);
            let d = self.through_binding(&d).unwrap_or(d);
            let d = self.instance_of(&d).unwrap_or(d);
            if let Some(root) = self.lib_root(&d) {
                facts.unresolved.push((
                    line,
                    format!(
                        "setattr({d}, …, {}): the package plugs its own code into {root}, which calls it,",
                        self.text(v)
                    ),
                ));
            }
        }
        if name == "setattr"
            && args
                .get(1)
                .and_then(V::exact_str)
                .is_some_and(|a| a.contains("base_url"))
            && let Some(&v) = call.args.get(2)
            && self.imports_module("anthropic")
        {
            self.anthropic_base_url(line, v, facts);
        }
        self.lib_writes(node, name, call, args, facts);
        self.url_reader(line, name, call, facts);
        // `type('V', (ImageShow.Viewer,), {...})`: a subclass built by a call.
        if name == "type"
            && let (Some(&bases), Some(_)) = (call.args.get(1), call.args.get(2))
        {
            for b in self.named(bases) {
                self.library_base(line, "type(…)", b, facts);
            }
        }
        if method == "xslt" && recv.is_some() && self.imports_module("lxml") {
            self.xslt(line, name, call, facts);
        }
        let Some(root) = self.lib_root(name) else {
            return;
        };
        // Keywords naming a program the library runs.
        for (k, v) in &call.kwargs {
            if names_program(k) {
                self.program_set(line, k, *v, facts);
            }
        }
        // A class or function of the script handed to a library that keeps it.
        let registers = method.starts_with("register")
            || method.starts_with("add_")
            || method.starts_with("install")
            || method.ends_with("_hook")
            || method.starts_with("set_") && method.contains("hook");
        if registers && !CALLBACK_OK.contains(&name) {
            let own = call
                .args
                .iter()
                .chain(call.kwargs.iter().map(|(_, v)| v))
                .find(|&&a| a.kind() == "lambda" || self.defines(a));
            if let Some(&a) = own {
                facts.unresolved.push((
                    line,
                    format!(
                        "{name}({}): the package plugs its own code into {root}, which calls it,",
                        self.text(a)
                    ),
                ));
            }
        }
        // Library APIs that evaluate a string as Python.
        if root == "pydantic"
            && matches!(
                method,
                "TypeAdapter" | "parse_obj_as" | "parse_raw_as" | "parse_file_as" | "create_model"
            )
        {
            let skip = usize::from(method == "create_model");
            let nodes = call
                .args
                .iter()
                .skip(skip)
                .chain(call.kwargs.iter().map(|(_, v)| v))
                .copied();
            for n in nodes {
                self.strings_as_code(n, name, facts);
            }
        }
        // An XSLT stylesheet writes files (`exsl:document`), reads and fetches URLs and
        // calls extensions, unless told not to.
        if root == "lxml" && method == "XSLT" {
            self.xslt(line, name, call, facts);
        }
        // A library's command-line entry point acts on the files its arguments name.
        if matches!(method, "main" | "_main" | "_test" | "test") && !root.is_empty() {
            facts.unresolved.push((
                line,
                format!(
                    "{name}, the command-line program of {} (it reads and writes the files its arguments name),",
                    name.trim_end_matches(&format!(".{method}"))
                ),
            ));
        }
    }

    /// An XSLT stylesheet applied: code, unless it may do nothing but transform.
    fn xslt(&self, line: usize, name: &str, call: &Call<'_>, facts: &mut Facts) {
        let kw = |k: &str| call.kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        let denied = kw("access_control").is_some_and(|a| self.text(a).contains("DENY_ALL"));
        if !denied || kw("extensions").is_some() {
            facts.code.push((
                line,
                format!(
                    "{name}(…), an XSLT stylesheet (it can write files, fetch URLs and call extensions unless access_control=XSLTAccessControl.DENY_ALL)"
                ),
            ));
        }
    }

    /// Is the node a class or function the script defines (or an instance of one)?
    pub(super) fn defines(&self, n: Node<'_>) -> bool {
        let n = if n.kind() == "call" {
            match n.child_by_field_name("function") {
                Some(f) => f,
                None => return false,
            }
        } else {
            n
        };
        if n.kind() != "identifier" {
            return false;
        }
        let name = self.text(n);
        self.src.lines().any(|l| {
            let l = l.trim_start();
            ["class ", "def ", "async def "].iter().any(|k| {
                l.strip_prefix(k).is_some_and(|r| {
                    r.strip_prefix(name)
                        .is_some_and(|x| x.starts_with(['(', ':', ' ']))
                })
            })
        })
    }

    /// Every string in the expression, analyzed as the Python it is evaluated as.
    fn strings_as_code(&self, n: Node<'_>, name: &str, facts: &mut Facts) {
        let mut nodes = vec![n];
        nodes.extend(super::all_nodes(n).into_iter().filter(|s| {
            matches!(s.kind(), "string" | "concatenated_string")
                && self
                    .parents
                    .get(&s.id())
                    .is_none_or(|p| p.kind() != "concatenated_string")
        }));
        for s in nodes {
            let line = self.line(s);
            let built = s.kind() == "binary_operator"
                && s.child_by_field_name("operator")
                    .is_some_and(|o| matches!(self.text(o), "+" | "%"));
            match self.fold(s) {
                V::Str(code, true) if EXEC_DEPTH.with(|d| d.get()) < 8 => {
                    EXEC_DEPTH.with(|d| d.set(d.get() + 1));
                    let inner = super::analyze(Lang::Python, &code, line);
                    EXEC_DEPTH.with(|d| d.set(d.get() - 1));
                    merge(facts, inner);
                }
                V::Str(code, _) => facts
                    .code
                    .push((line, format!("{name}({})", code.replace(RUNTIME, "…")))),
                // Text built at run time (a type expression is not text).
                _ if built => facts.code.push((line, format!("{name}({})", self.text(s)))),
                _ => {}
            }
        }
    }

    /// Statements of library surfaces: classes that subclass a library class, and
    /// assignments that repoint an Anthropic client or name a program a library runs.
    pub(super) fn py_lib_nodes(&self, nodes: &[Node<'a>], facts: &mut Facts) {
        if self.lang != Lang::Python {
            return;
        }
        // The script's classes with a library base (empty ones too: a method may be
        // set on them later).
        let mut plugged = std::collections::HashSet::new();
        for &n in nodes {
            if n.kind() == "class_definition"
                && let Some(name) = self.lib_subclass(n, facts)
            {
                plugged.insert(name);
            }
        }
        for &n in nodes {
            if matches!(n.kind(), "assignment" | "augmented_assignment") {
                self.lib_assignment(n, &plugged, facts);
            }
        }
        // The folder temporary files are made in, set by the environment: each file
        // made there is a write in it.
        let tmp: Vec<(usize, String, bool)> = facts
            .env_sets
            .iter()
            .filter(|(_, n, _)| matches!(n.as_deref(), Some("TMPDIR" | "TEMP" | "TMP")))
            .map(|(l, _, v)| match v {
                Some(v) => (*l, format!("{v}/{RUNTIME}"), false),
                None => (*l, RUNTIME.to_string(), false),
            })
            .collect();
        facts.targets.extend(tmp);
        // A search path for programs that starts outside the system's folders: a
        // library that runs a tool by name (pdf2image's `pdftoppm`) runs what is there.
        for &n in nodes {
            let value = match n.kind() {
                "assignment" => n
                    .child_by_field_name("left")
                    .filter(|l| self.env_name(*l).as_deref() == Some("PATH"))
                    .and_then(|_| n.child_by_field_name("right")),
                "call" => self
                    .call(n)
                    .filter(|c| matches!(c.callee.as_str(), "os.putenv" | "os.environ.setdefault"))
                    .filter(|c| {
                        c.args
                            .first()
                            .is_some_and(|&k| self.fold(k).exact_str() == Some("PATH"))
                    })
                    .and_then(|c| c.args.get(1).copied()),
                "keyword_argument" => n
                    .child_by_field_name("name")
                    .filter(|k| self.text(*k) == "PATH")
                    .and_then(|_| n.child_by_field_name("value")),
                _ => None,
            };
            let Some(v) = value else { continue };
            let text = self.fold(v).text();
            let first = text.split(':').next().unwrap_or("");
            let system = ["/usr/", "/bin", "/sbin", "/opt/", "/snap/", "/nix/"];
            if system.iter().any(|d| first.starts_with(d)) {
                continue;
            }
            let first = if first.contains(RUNTIME) || first.is_empty() {
                "a folder known only at run time".to_string()
            } else {
                first.to_string()
            };
            facts.unresolved.push((
                self.line(n),
                format!(
                    "PATH set to start with {first}, so a program run by name (by the script or a library it calls) may be one put there,"
                ),
            ));
        }
    }

    /// Judge a class with library bases; its name when it has one not on the list.
    fn lib_subclass(&self, n: Node<'_>, facts: &mut Facts) -> Option<String> {
        let bases = n.child_by_field_name("superclasses")?;
        let trivial = n.child_by_field_name("body").is_some_and(|b| {
            self.named(b).iter().all(|s| {
                s.kind() == "pass_statement"
                    || (s.kind() == "expression_statement"
                        && self
                            .named(*s)
                            .iter()
                            .all(|e| matches!(e.kind(), "string" | "ellipsis")))
            })
        });
        let class = n.child_by_field_name("name").map_or("", |x| self.text(x));
        let mut sink = Facts::default();
        for b in self.named(bases) {
            if b.kind() != "keyword_argument" {
                self.library_base(self.line(n), &format!("class {class}"), b, &mut sink);
            }
        }
        let found = !sink.unresolved.is_empty();
        if !trivial {
            facts.unresolved.append(&mut sink.unresolved);
        }
        found.then(|| class.to_string())
    }

    /// A library class used as a base: a review unless its overrides are harmless.
    fn library_base(&self, line: usize, class: &str, b: Node<'_>, facts: &mut Facts) {
        let d = self.dotted(b);
        let d = self.through_binding(&d).unwrap_or(d);
        let Some(root) = self.lib_root(&d) else {
            return;
        };
        let ok = SUBCLASS_OK
            .iter()
            .any(|s| d == *s || d.starts_with(&format!("{s}.")));
        if !ok {
            facts.unresolved.push((
                line,
                format!(
                    "{class}({d}): the package plugs its own code into {root}, which calls its methods,"
                ),
            ));
        }
    }

    /// A dotted name whose first part is a name the script binds once to another
    /// dotted name (`V = ImageShow.Viewer`), with that name in its place.
    fn through_binding(&self, name: &str) -> Option<String> {
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (name, None),
        };
        let binding = match self.consts.get(head).map(Vec::as_slice) {
            Some([b]) if matches!(b.kind(), "attribute" | "identifier") => *b,
            _ => return None,
        };
        let d = self.dotted(binding);
        if d == head || self.lib_root(&d).is_none() {
            return None;
        }
        Some(match rest {
            Some(r) => format!("{d}.{r}"),
            None => d,
        })
    }

    /// `v = ImageShow.Viewer()`: the name bound once to a call is what the call makes.
    pub(super) fn instance_of(&self, name: &str) -> Option<String> {
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h, Some(r)),
            None => (name, None),
        };
        let binding = match self.consts.get(head).map(Vec::as_slice) {
            Some([b]) if b.kind() == "call" => *b,
            _ => return None,
        };
        let d = self.dotted(binding);
        Some(match rest {
            Some(r) => format!("{d}.{r}"),
            None => d,
        })
    }

    fn lib_assignment(
        &self,
        n: Node<'_>,
        plugged: &std::collections::HashSet<String>,
        facts: &mut Facts,
    ) {
        let (Some(l), Some(r)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
        ) else {
            return;
        };
        let line = self.line(n);
        match l.kind() {
            "attribute" => {
                let attr = l
                    .child_by_field_name("attribute")
                    .map_or("", |a| self.text(a));
                let obj = l.child_by_field_name("object");
                let client = obj.is_some_and(|o| self.is_anthropic_client(o, 0));
                if attr == "tempdir" && obj.is_some_and(|o| self.dotted(o) == "tempfile") {
                    // Every temporary file is made in this folder next.
                    let v = self.fold(r);
                    facts
                        .targets
                        .push((line, format!("{}/{RUNTIME}", v.text()), false));
                } else if attr.contains("base_url") && (client || self.imports_module("anthropic"))
                {
                    self.anthropic_base_url(line, r, facts);
                } else if client {
                    facts.unresolved.push((
                        line,
                        format!(
                            "{}, a changed attribute of an Anthropic client,",
                            self.text(l)
                        ),
                    ));
                } else if let Some(o) = obj
                    && (r.kind() == "lambda" || self.defines(r))
                {
                    // `ImageShow.Viewer.get_command = mine`: a library's member replaced,
                    // on its class, an instance, or the script's subclass of it.
                    let d = self.dotted(o);
                    let d = self.through_binding(&d).unwrap_or(d);
                    let d = self.instance_of(&d).unwrap_or(d);
                    let head = d.split(['.', '(']).next().unwrap_or("");
                    let root = self
                        .lib_root(&d)
                        .or_else(|| plugged.contains(head).then(|| head.to_string()));
                    if let Some(root) = root {
                        facts.unresolved.push((
                            line,
                            format!(
                                "{d}.{attr} = {}: the package plugs its own code into {root}, which calls it,",
                                self.text(r)
                            ),
                        ));
                    }
                } else if names_program(attr)
                    && obj.is_some_and(|o| self.lib_root(&self.dotted(o)).is_some())
                {
                    self.program_set(line, attr, r, facts);
                }
            }
            // `matplotlib.rcParams['animation.ffmpeg_path'] = …`
            "subscript" => {
                let key = l
                    .child_by_field_name("subscript")
                    .and_then(|k| self.fold(k).exact_str().map(str::to_string));
                let obj = l.child_by_field_name("value").map(|o| self.dotted(o));
                let last = key.as_deref().map(|k| k.rsplit('.').next().unwrap_or(k));
                if let Some(k) = last.filter(|k| names_program(k))
                    && obj.is_some_and(|o| self.lib_root(&o).is_some())
                {
                    self.program_set(line, k, r, facts);
                }
            }
            _ => {}
        }
    }

    /// A program named by a library keyword or attribute `key`: a command line for a
    /// command, a program in the folder for a path or folder, the program otherwise.
    fn program_set(&self, line: usize, key: &str, r: Node<'_>, facts: &mut Facts) {
        let p = self.fold(r);
        let k = key.to_ascii_lowercase();
        // A program of the system's own folders is what the user installed.
        let system = [
            "/usr/",
            "/bin/",
            "/opt/",
            "/snap/",
            "/nix/",
            "/Applications/",
        ];
        if p.exact_str().is_some_and(|s| {
            system
                .iter()
                .any(|d| s.starts_with(d) || s == d.trim_end_matches('/'))
        }) {
            return;
        }
        let cmd = if p == V::Unknown {
            Cmd::Unknown
        } else if ["_path", "_dir", "_home"].iter().any(|s| k.ends_with(s)) {
            Cmd::Argv {
                argv: vec![format!("{}/{RUNTIME}", p.text())],
                exact: false,
            }
        } else if matches!(k.as_str(), "command" | "cmd")
            || k.ends_with("_cmd")
            || k.ends_with("_command")
        {
            Cmd::Shell {
                text: p.text(),
                exact: p.exact(),
            }
        } else {
            Cmd::Argv {
                argv: vec![p.text()],
                exact: p.exact(),
            }
        };
        facts.spawns.push((line, cmd));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_keywords() {
        assert!(names_program("poppler_path"));
        assert!(names_program("ghostscript_path"));
        assert!(names_program("tesseract_cmd"));
        assert!(names_program("executable"));
        assert!(names_program("browser_executable_path"));
        assert!(!names_program("output_path"));
        assert!(!names_program("file_path"));
    }
}
