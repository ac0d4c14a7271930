//! Where library calls write, fetch and send (see `py_libs`): write-capable standard
//! entry points judged as writes to their path argument, URL readers handed a value
//! known only at run time, and the Anthropic client and its base URL.

use super::fold::{RUNTIME, V};
use super::{Call, Facts, Net, Unit};
use tree_sitter::Node;

/// Reader methods of libraries that open a URL they are handed in place of a file.
const URL_READERS: &[(&str, &[&str])] = &[
    ("pandas", &["read_"]),
    (
        "numpy",
        &[
            "genfromtxt",
            "loadtxt",
            "fromregex",
            "DataSource",
            "recfromcsv",
        ],
    ),
    (
        "lxml",
        &["parse", "iterparse", "DTD", "XMLSchema", "RelaxNG"],
    ),
    ("xml.sax", &["parse"]),
    ("xml.dom", &["parse"]),
    ("imageio", &["imread", "imopen", "volread", "mimread"]),
    ("matplotlib", &["imread"]),
];

/// Libraries whose objects' `write(path)` writes a document to that path.
const DOC_WRITERS: &[&str] = &[
    "xml", "lxml", "pypdf", "PyPDF2", "fitz", "openpyxl", "docx", "pptx",
];

/// reportlab documents built for a path (written on `save`/`build`).
const DOC_TARGETS: &[&str] = &["Canvas", "SimpleDocTemplate", "BaseDocTemplate"];

/// Temporary-file makers and the positions of `suffix`, `prefix` and `dir`.
const TEMP: &[(&str, (usize, usize, usize))] = &[
    ("tempfile.NamedTemporaryFile", (4, 5, 6)),
    ("tempfile.TemporaryFile", (4, 5, 6)),
    ("tempfile.SpooledTemporaryFile", (5, 6, 7)),
    ("tempfile.mkstemp", (0, 1, 2)),
    ("tempfile.mkdtemp", (0, 1, 2)),
    ("tempfile.TemporaryDirectory", (0, 1, 2)),
];

/// A folded path with `.` and `..` resolved and a home folder (`~`) met past its start
/// taken as where the path starts (`/../~/.x` is `~/.x`).
fn normalize(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut root = if p.starts_with('/') { "/" } else { "" };
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            "~" => {
                out.clear();
                root = "~/";
            }
            c => out.push(c),
        }
    }
    format!("{root}{}", out.join("/"))
}

/// A path outside the working folder, or one known only at run time.
fn foreign(v: &V) -> bool {
    match v {
        V::Str(s, true) => s.starts_with('/') || s.starts_with('~'),
        _ => true,
    }
}

impl Unit<'_> {
    /// Is the expression an Anthropic client (built here, copied, or bound to a name
    /// that is)? Followed through names bound in the script, a few levels deep.
    pub(super) fn is_anthropic_client(&self, n: Node<'_>, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        let d = self.dotted(n);
        if super::python_caps::ANTHROPIC_PY
            .iter()
            .any(|c| d.starts_with(&format!("{c}()")))
        {
            return true;
        }
        // The name the expression starts from.
        let mut base = n;
        loop {
            let next = match base.kind() {
                "attribute" => base.child_by_field_name("object"),
                "call" => base.child_by_field_name("function"),
                "parenthesized_expression" | "await_expression" => {
                    self.named(base).first().copied()
                }
                _ => None,
            };
            match next {
                Some(x) => base = x,
                None => break,
            }
        }
        if base.kind() != "identifier" {
            return false;
        }
        let name = self.text(base);
        self.consts
            .get(name)
            .is_some_and(|vs| vs.iter().any(|&v| self.is_anthropic_client(v, depth + 1)))
    }

    /// A URL reader handed a value known only at run time: an unknown destination.
    pub(super) fn url_reader(&self, line: usize, name: &str, call: &Call<'_>, facts: &mut Facts) {
        let method = name.rsplit('.').next().unwrap_or(name);
        let kw = |k: &str| call.kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
        let reader = URL_READERS.iter().any(|(r, ms)| {
            (name == *r || name.starts_with(&format!("{r}.")))
                && ms
                    .iter()
                    .any(|m| method == *m || (m.ends_with('_') && method.starts_with(m)))
        });
        if reader {
            let src = call
                .args
                .first()
                .copied()
                .or_else(|| kw("filepath_or_buffer"))
                .or_else(|| kw("fname"))
                .or_else(|| kw("source"))
                .or_else(|| kw("url"))
                .or_else(|| kw("uri"))
                .or_else(|| kw("path"));
            if let Some(s) = src
                && self.maybe_url(s)
            {
                facts.net.push(Net {
                    line,
                    dest: None,
                    exact: false,
                    // Whether it fetches at all is not known; where is for a human.
                    fetch: false,
                });
            }
        }
    }

    /// Can the value be a URL the package chose: known only at run time and not a
    /// path (a literal start, a path built with `Path`/`os.path.join`, an open file, a
    /// command-line argument)?
    fn maybe_url(&self, n: Node<'_>) -> bool {
        // A path object joined with `/`, or a file of the package, is no URL.
        let joined = n.kind() == "binary_operator"
            && n.child_by_field_name("operator")
                .is_some_and(|o| self.text(o) == "/");
        if joined || self.inside_package(n) {
            return false;
        }
        match self.fold(n) {
            V::Str(s, true) => {
                let _ = s;
                false
            }
            V::Str(s, false) => s.starts_with(RUNTIME),
            V::List(_) => false,
            V::Unknown => {
                let t = self.text(n);
                if t.starts_with("sys.argv") || t.starts_with("args.") {
                    return false;
                }
                if n.kind() == "call"
                    && let Some(c) = self.call(n)
                {
                    if matches!(c.callee.as_str(), "str" | "os.fspath" | "os.path.abspath")
                        && let Some(&a) = c.args.first()
                    {
                        return self.maybe_url(a);
                    }
                    let m = c.callee.rsplit('.').next().unwrap_or(&c.callee);
                    return !matches!(
                        m,
                        "Path" | "PurePath" | "join" | "joinpath" | "open" | "BytesIO" | "StringIO"
                    );
                }
                !matches!(
                    n.kind(),
                    "string" | "integer" | "list" | "tuple" | "dictionary"
                )
            }
        }
    }

    /// Write-capable standard entry points judged as writes to their path argument.
    pub(super) fn lib_writes(
        &self,
        node: Node<'_>,
        name: &str,
        call: &Call<'_>,
        args: &[V],
        facts: &mut Facts,
    ) {
        let line = self.line(node);
        let method = name.rsplit('.').next().unwrap_or(name);
        let kw = |k: &str| {
            call.kwargs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| self.fold(*v))
        };
        let mut notes = Vec::new();
        let mut push = |v: V| {
            let items = match v {
                V::List(items) => items,
                other => vec![other],
            };
            for v in items {
                facts.targets.push((line, normalize(&v.text()), v.exact()));
            }
        };
        // A library object that writes a document to the path it is handed.
        let made = self.instance_of(name).unwrap_or_else(|| name.to_string());
        let root = made.split('.').next().unwrap_or("");
        let writer = match method {
            "write" | "write_c14n" => DOC_WRITERS.contains(&root),
            m => root == "reportlab" && DOC_TARGETS.contains(&m),
        };
        if writer
            && self.lib_root(&made).is_some()
            && let Some(p) = args
                .first()
                .cloned()
                .or_else(|| kw("file"))
                .or_else(|| kw("filename"))
                .or_else(|| kw("stream"))
            && foreign(&p)
        {
            push(p);
        }
        // `fileinput.input(files, inplace=True)` rewrites each file it reads.
        if matches!(name, "fileinput.input" | "fileinput.FileInput") {
            let inplace = kw("inplace").or_else(|| args.get(1).cloned());
            if inplace.is_some_and(|v| !matches!(v.exact_str(), Some("False" | "0"))) {
                push(
                    args.first()
                        .cloned()
                        .or_else(|| kw("files"))
                        .unwrap_or(V::Unknown),
                );
            }
        }
        // An archive extracted to a folder: every member is written below it.
        if matches!(method, "extractall" | "extract") && recv_is_some(self, node) {
            let i = usize::from(method == "extract");
            if let Some(p) = args.get(i).cloned().or_else(|| kw("path"))
                && foreign(&p)
            {
                push(V::Str(format!("{}/{RUNTIME}", p.text()), false));
            }
        }
        // An archive member named above the folder it is extracted to.
        let member = match method {
            "writestr" | "TarInfo" => args.first().cloned().or_else(|| kw("name")),
            "add" | "write" | "addfile" => kw("arcname").or_else(|| {
                let archive = matches!(root, "zipfile" | "tarfile");
                archive.then(|| args.get(1).cloned()).flatten()
            }),
            _ => None,
        };
        if let Some(V::Str(m, _)) = member
            && (m.starts_with('/') || m.starts_with('~') || m.split('/').any(|c| c == ".."))
        {
            notes.push((
                line,
                format!(
                    "an archive member named {}, which extracting the archive writes outside its folder,",
                    m.replace(RUNTIME, "…")
                ),
            ));
        }
        // A link to a file: what is written through it is written there.
        let link_to = match method {
            "symlink_to" | "hardlink_to" => args.first().cloned(),
            _ if matches!(name, "os.symlink" | "os.link") => args.first().cloned(),
            _ => None,
        };
        if let Some(t) = link_to
            && foreign(&t)
        {
            push(t);
        }
        // A temporary file whose prefix or suffix holds a path is made there.
        if let Some((_, pos)) = TEMP.iter().find(|(n, _)| *n == name) {
            let at = |i: usize, k: &str| kw(k).or_else(|| args.get(i).cloned());
            let suffix = at(pos.0, "suffix").unwrap_or(V::Str(String::new(), true));
            let prefix = at(pos.1, "prefix").unwrap_or(V::Str(String::new(), true));
            let dir = at(pos.2, "dir").unwrap_or(V::Str("/tmp".into(), true));
            if prefix.text().contains('/') || suffix.text().contains('/') {
                let file = format!("{}{RUNTIME}{}", prefix.text(), suffix.text());
                let full = if file.starts_with('/') {
                    file
                } else {
                    format!("{}/{file}", dir.text())
                };
                push(V::Str(full, false));
            }
        }
        facts.unresolved.extend(notes);
    }

    /// Judge a base URL handed to an Anthropic client (see `implied_facts`).
    pub(super) fn anthropic_base_url(&self, line: usize, v: Node<'_>, facts: &mut Facts) {
        let (dest, exact) = match self.fold(v) {
            V::Str(s, e) => (Some(s), e),
            _ => (None, false),
        };
        let host = dest
            .as_deref()
            .filter(|_| exact)
            .and_then(|d| d.split("://").nth(1))
            .map(|r| r.split(['/', ':', '?', '#']).next().unwrap_or(""));
        if !host.is_some_and(|h| h == "api.anthropic.com" || h.ends_with(".anthropic.com")) {
            facts.unresolved.push((
                line,
                format!(
                    "an Anthropic client with its own base URL ({}), which receives the user's ANTHROPIC_API_KEY,",
                    dest.as_deref().unwrap_or("known only at run time")
                ),
            ));
        }
        facts.net.push(Net {
            line,
            dest,
            exact,
            fetch: false,
        });
    }
}

fn recv_is_some(u: &Unit<'_>, node: Node<'_>) -> bool {
    u.receiver(node).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize() {
        assert_eq!(normalize("/../~/.bashrc.d/x"), "~/.bashrc.d/x");
        assert_eq!(normalize("/tmp/../etc/x"), "/etc/x");
        assert_eq!(normalize("~/a/./b"), "~/a/b");
    }
}
