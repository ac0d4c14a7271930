//! XML a package carries, read for the files an XML parser would load because the
//! document says so: the external subset and external entities of its document type
//! (`<!ENTITY e SYSTEM "../../../../.ssh/id_ed25519">`) and XInclude elements
//! (`<xi:include href=".env" parse="text"/>`). A script that parses the package's XML
//! with a library that loads them (Python's SAX with `feature_external_ges`, lxml with
//! `resolve_entities`, `ElementInclude.include`) reads those files and puts them into
//! the document it then sends; no path in the script shows it.
//!
//! The document is read with quick-xml (namespaces resolved, so any prefix bound to the
//! XInclude namespace counts); the document type declaration's internal subset, which
//! quick-xml hands over as text, is read by [`Dtd`], a reader of its declarations.
//! Each file named is judged as a read would be: an entity's path is resolved against
//! the document's installed place (a skill folder under the home folder: climbing out
//! of it names the user's files), an XInclude's also against the working folder (where
//! Python's default loader opens it). A file the guards protect is refused; a file
//! outside the package or a remote document is a review.

use super::{Cx, judge_read};
use crate::report::{Check, Finding, Severity};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

/// The XInclude namespace (both the 2001 Recommendation's and the 2003 draft's).
const XINCLUDE: &[&str] = &[
    "http://www.w3.org/2001/XInclude",
    "http://www.w3.org/2003/XInclude",
];

/// Where a skill's files are when installed, as the review's home folder names it.
const INSTALLED: &str = "~/.claude/skills/pkg";

/// Most references judged per document.
const MAX_REFS: usize = 64;

/// How the document makes a parser load a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// The document type's external subset or an external entity.
    Entity,
    /// An XInclude element.
    Include,
}

/// Is the file XML, by its name or its first characters?
pub(super) fn is_xml(path: &str, text: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    let head = text.trim_start_matches('\u{feff}').trim_start();
    matches!(
        ext,
        "xml"
            | "xsd"
            | "xsl"
            | "xslt"
            | "svg"
            | "xhtml"
            | "dtd"
            | "rss"
            | "atom"
            | "plist"
            | "xlf"
            | "xliff"
            | "ent"
            | "mod"
            | "xinc"
    ) || head.starts_with("<?xml")
        || head.starts_with("<!DOCTYPE")
}

/// Findings on the files `text` (the package file `path`) makes a parser load.
pub(super) fn judge(cx: &Cx<'_>, path: &str, text: &str, out: &mut Vec<Finding>) {
    let (refs, complete) = references(path, text);
    let at = |verdict, check, line: usize, msg: String| {
        Finding::new(check, verdict, Some(path), format!("line {line}: {msg}"))
    };
    let declares = text.contains("<!ENTITY") || text.contains("XInclude");
    if !complete && declares && refs.is_empty() {
        out.push(at(Severity::Review, Check::SensitiveRead, 1,
            "XML that declares entities or uses XInclude and that cordon could not read to its end; a parser that loads them may read files the review does not see".into()));
    }
    for (line, how, target) in refs.into_iter().take(MAX_REFS) {
        let what = match how {
            How::Entity => "an external entity",
            How::Include => "an XInclude",
        };
        if target.contains('&') {
            out.push(at(Severity::Review, Check::SensitiveRead, line, format!(
                "{what} names a location built from the document's own entities, which a parser that loads it reads into the document")));
            continue;
        }
        let shown = crate::report::shown(&super::facts::shorten(&target));
        let lower = target.to_ascii_lowercase();
        let path_part = match lower.split_once("://").map(|(s, _)| s) {
            Some("file") => target[7..].to_string(),
            Some(_) => {
                out.push(at(Severity::Review, Check::Origin, line, format!(
                    "{what} names {shown}: a parser that loads it fetches that document while parsing")));
                continue;
            }
            None if lower.contains(':') && !lower.starts_with(['/', '.', '~']) => {
                // `jar:`, `php://`, `netdoc:`: schemes some parsers follow.
                out.push(at(Severity::Review, Check::SensitiveRead, line, format!(
                    "{what} names {shown}, a location a parser may open in ways cordon does not follow")));
                continue;
            }
            None => target.clone(),
        };
        let mut candidates = Vec::new();
        if path_part.starts_with(['/', '~']) {
            candidates.push(path_part.clone());
        } else {
            let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
            match inside_package(dir, &path_part) {
                Some(_) => {}
                None => {
                    candidates.push(normalize(&format!("{INSTALLED}/{dir}/{path_part}")));
                }
            }
            if how == How::Include && crate::script::relative_secret(&path_part) {
                candidates.push(path_part.trim_start_matches("./").to_string());
            }
        }
        let mut refused = false;
        for c in &candidates {
            let mut got = Vec::new();
            if c.starts_with(['/', '~']) {
                judge_read(cx, path, line, c, &mut got);
            } else {
                // A credential file by its name, in the working folder.
                got.push(at(
                    Severity::Refuse,
                    Check::SensitiveRead,
                    line,
                    format!(
                        "{} is a credential file by its name",
                        crate::report::shown(c)
                    ),
                ));
            }
            if let Some(mut g) = got.into_iter().find(|g| g.verdict == Severity::Refuse) {
                g.message = format!(
                    "line {line}: {what} names {shown}, which a parser that loads it reads into the document: {}",
                    g.message
                        .split_once(": ")
                        .map_or(g.message.as_str(), |(_, m)| m)
                );
                out.push(g);
                refused = true;
                break;
            }
        }
        if !refused && !candidates.is_empty() {
            out.push(at(Severity::Review, Check::SensitiveRead, line, format!(
                "{what} names {shown}, a file outside the package, which a parser that loads it reads into the document")));
        }
    }
}

/// The package-relative path `rel` names from the folder `dir`, when it stays inside.
fn inside_package(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// `a/b/../c` as `a/c`; a `..` above the home folder's `~` stays at `/`.
fn normalize(p: &str) -> String {
    let (root, rest) = match p.strip_prefix("~/") {
        Some(r) => (vec!["home", "user"], r),
        None => (Vec::new(), p.trim_start_matches('/')),
    };
    let mut parts = root;
    for c in rest.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let full = format!("/{}", parts.join("/"));
    match full.strip_prefix("/home/user") {
        Some("") => "~".into(),
        Some(r) if r.starts_with('/') => format!("~{r}"),
        _ => full,
    }
}

/// The files the document makes a parser load, with their lines, and whether the
/// document was read to its end.
fn references(path: &str, text: &str) -> (Vec<(usize, How, String)>, bool) {
    let mut refs = Vec::new();
    if path.to_ascii_lowercase().ends_with(".dtd") || path.to_ascii_lowercase().ends_with(".ent") {
        // An external subset on its own: declarations without a document around them.
        for t in Dtd::new(text).subset() {
            refs.push((1, How::Entity, t));
        }
        return (refs, true);
    }
    let mut r = NsReader::from_str(text);
    loop {
        let pos = usize::try_from(r.buffer_position()).unwrap_or(usize::MAX);
        let line = text
            .get(..pos.min(text.len()))
            .map_or(1, |t| t.matches('\n').count() + 1);
        match r.read_resolved_event() {
            Ok((_, Event::Eof)) => return (refs, true),
            Ok((_, Event::DocType(d))) => {
                let raw = d.into_inner().into_owned();
                refs.extend(
                    Dtd::new(&raw)
                        .doctype()
                        .into_iter()
                        .map(|t| (line, How::Entity, t)),
                );
            }
            Ok((ResolveResult::Bound(ns), Event::Start(e) | Event::Empty(e)))
                if XINCLUDE.contains(&ns.as_ref()) && e.local_name().as_ref() == "include" =>
            {
                let href = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.as_ref() == "href")
                    .map(
                        |a| match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
                            Ok(v) => v.into_owned(),
                            // An entity of the document's own in the location: not known here.
                            Err(_) => "&".into(),
                        },
                    );
                if let Some(h) = href.filter(|h| !h.is_empty()) {
                    refs.push((line, How::Include, h));
                }
            }
            Ok(_) => {}
            Err(_) => return (refs, false),
        }
        if refs.len() > MAX_REFS {
            return (refs, true);
        }
    }
}

/// A reader of a document type declaration's text: its name, external identifier and
/// internal subset of markup declarations (XML 1.0 §2.8, §4.2).
struct Dtd<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Dtd<'a> {
    fn new(s: &'a str) -> Self {
        Self {
            s: s.as_bytes(),
            i: 0,
        }
    }

    /// The system identifiers of a `<!DOCTYPE …>`'s text: its external subset, then the
    /// external entities of its internal subset.
    fn doctype(mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.ws();
        self.name();
        self.ws();
        if let Some(id) = self.external_id() {
            out.push(id);
        }
        self.ws();
        if self.eat(b"[") {
            out.extend(self.subset());
        }
        out
    }

    /// The system identifiers of the external entities declared from here to the end of
    /// an internal subset (`]`) or of the text.
    fn subset(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            self.ws();
            match self.s.get(self.i) {
                None | Some(b']') => return out,
                _ => {}
            }
            if self.eat(b"<!--") {
                self.until(b"-->");
            } else if self.eat(b"<?") {
                self.until(b"?>");
            } else if self.eat(b"<!ENTITY") {
                self.ws();
                if self.eat(b"%") {
                    self.ws();
                }
                self.name();
                self.ws();
                if let Some(id) = self.external_id() {
                    out.push(id);
                }
                self.declaration_end();
            } else if self.eat(b"<![") {
                // A conditional section (external subsets only): its declarations count
                // whether it is included or ignored, as an attacker picks which.
                self.until(b"[");
            } else if self.eat(b"]]>") {
            } else if self.eat(b"<!") {
                self.declaration_end();
            } else {
                self.i += 1;
            }
        }
    }

    fn eat(&mut self, lit: &[u8]) -> bool {
        if self.s[self.i.min(self.s.len())..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            self.i += 1;
        }
    }

    fn name(&mut self) {
        while self.s.get(self.i).is_some_and(|b| {
            !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'[' | b'>' | b'"' | b'\'')
        }) {
            self.i += 1;
        }
    }

    /// A quoted literal's content.
    fn literal(&mut self) -> Option<String> {
        let q = *self.s.get(self.i).filter(|b| matches!(b, b'"' | b'\''))?;
        let start = self.i + 1;
        let end = start + self.s.get(start..)?.iter().position(|&b| b == q)?;
        self.i = end + 1;
        Some(String::from_utf8_lossy(&self.s[start..end]).into_owned())
    }

    /// `SYSTEM "uri"` or `PUBLIC "id" "uri"`: the system identifier.
    fn external_id(&mut self) -> Option<String> {
        if self.eat(b"SYSTEM") {
            self.ws();
            self.literal()
        } else if self.eat(b"PUBLIC") {
            self.ws();
            self.literal()?;
            self.ws();
            self.literal()
        } else {
            None
        }
    }

    fn until(&mut self, end: &[u8]) {
        while self.i < self.s.len() && !self.eat(end) {
            self.i += 1;
        }
    }

    /// To the `>` that ends a declaration, past any quoted literal holding one.
    fn declaration_end(&mut self) {
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'"' | b'\'' => {
                    if self.literal().is_none() {
                        self.i = self.s.len();
                    }
                }
                b'>' => {
                    self.i += 1;
                    return;
                }
                _ => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_doctype_s_external_entities_and_subset_are_named() {
        let dt = r#"Invoice SYSTEM "http://x.example/i.dtd" [
  <!-- <!ENTITY fake SYSTEM "no"> -->
  <!ENTITY inner "text with > and SYSTEM 'x'">
  <!ENTITY party SYSTEM "../../../../.ssh/id_ed25519">
  <!ENTITY % pe PUBLIC "-//X//EN" 'file:///etc/shadow'>
  <!ATTLIST a b CDATA "SYSTEM 'y'">
  %pe;
]"#;
        assert_eq!(
            Dtd::new(dt).doctype(),
            [
                "http://x.example/i.dtd",
                "../../../../.ssh/id_ed25519",
                "file:///etc/shadow"
            ]
        );
    }

    #[test]
    fn xinclude_is_found_under_any_prefix() {
        let doc = "<?xml version=\"1.0\"?>\n<r xmlns:q=\"http://www.w3.org/2001/XInclude\">\n<q:include href=\".env\" parse=\"text\"/>\n<include href=\"not-xinclude\"/>\n</r>\n";
        let (refs, complete) = references("t/report.xml", doc);
        assert!(complete);
        assert_eq!(refs, [(3, How::Include, ".env".to_string())]);
    }

    #[test]
    fn paths_climbing_out_of_the_install_place_reach_the_home_folder() {
        assert_eq!(inside_package("templates", "../../x"), None);
        assert_eq!(
            inside_package("templates", "../schema.dtd").as_deref(),
            Some("schema.dtd")
        );
        assert_eq!(
            normalize("~/.claude/skills/pkg/templates/../../../../.ssh/id_ed25519"),
            "~/.ssh/id_ed25519"
        );
        assert_eq!(normalize("~/../../etc/passwd"), "/etc/passwd");
    }
}
