//! What a script writes through a file handle: `with open(p, "w") as f: f.write(x)`,
//! `f = open(p, "a")`, `print(x, file=f)`, `Path(p).open("w").write(x)`, Node's
//! `fs.createWriteStream(p).write(x)`, Ruby's `File.open(p, "w") { |f| f.puts x }`.
//! The content is recorded as written to the file the handle was opened on, so the
//! review reads it as what the file becomes, as it does for `write_text`.

use super::fold::V;
use super::{Call, Facts, Lang, Unit};
use tree_sitter::Node;

/// Does the call print its arguments to the standard output or error, where an agent
/// that runs the script reads them?
pub(super) fn prints(lang: Lang, name: &str, call: &Call<'_>) -> bool {
    match lang {
        Lang::Python => {
            (name == "print" && !call.kwargs.iter().any(|(k, _)| k == "file"))
                || matches!(
                    name,
                    "sys.stdout.write" | "sys.stderr.write" | "pprint.pprint"
                )
        }
        Lang::Ruby => matches!(
            name,
            "puts"
                | "print"
                | "p"
                | "pp"
                | "warn"
                | "$stdout.puts"
                | "$stdout.write"
                | "$stderr.puts"
                | "STDOUT.puts"
                | "STDERR.puts"
                | "$stdout.print"
        ),
        _ => matches!(
            name,
            "console.log"
                | "console.info"
                | "console.warn"
                | "console.error"
                | "console.debug"
                | "process.stdout.write"
                | "process.stderr.write"
        ),
    }
}

impl<'a> Unit<'a> {
    /// Record a handle a `with … as f` or a Ruby block parameter names.
    pub(super) fn bind_handle(&mut self, n: Node<'a>) {
        match (self.lang, n.kind()) {
            // `with open(p, "w") as f:`
            (Lang::Python, "as_pattern") => {
                let value = self.named(n).into_iter().next();
                let alias = n
                    .child_by_field_name("alias")
                    .and_then(|a| self.named(a).into_iter().next().or(Some(a)))
                    .filter(|a| a.kind() == "identifier");
                if let (Some(v), Some(a)) = (value, alias)
                    && self.call(v).is_some()
                {
                    self.handles.insert(self.text(a), v);
                }
            }
            // `File.open(p, "w") do |f| … end`
            (Lang::Ruby, "call") => {
                let param = n
                    .child_by_field_name("block")
                    .and_then(|b| b.child_by_field_name("parameters"))
                    .and_then(|p| self.named(p).into_iter().next())
                    .filter(|p| p.kind() == "identifier");
                if let Some(p) = param {
                    self.handles.insert(self.text(p), n);
                }
            }
            _ => {}
        }
    }

    /// A write through a handle: the content, with the file the handle was opened on.
    pub(super) fn handle_write(
        &self,
        node: Node<'_>,
        name: &str,
        call: &Call<'_>,
        args: &[V],
        facts: &mut Facts,
    ) {
        let method = name.rsplit('.').next().unwrap_or(name);
        let js = matches!(self.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx);
        let (handle, content, end) = match (self.lang, method) {
            (Lang::Python, "print") if !name.contains('.') => {
                let Some((_, f)) = call.kwargs.iter().find(|(k, _)| k == "file") else {
                    return;
                };
                let text: Vec<String> = args.iter().map(V::text).collect();
                (
                    *f,
                    Some(V::Str(text.join(" "), args.iter().all(V::exact))),
                    "\n",
                )
            }
            (Lang::Python, "write" | "writelines") | (Lang::Ruby, "write" | "print") => {
                let Some(r) = self.receiver(node) else { return };
                (r, args.first().cloned(), "")
            }
            (Lang::Ruby, "puts") => {
                let Some(r) = self.receiver(node) else { return };
                (r, args.first().cloned(), "\n")
            }
            (_, "write" | "end") if js => {
                let Some(r) = self.receiver(node) else { return };
                (r, args.first().cloned(), "")
            }
            _ => return,
        };
        let Some(opener) = self.opener(handle) else {
            return;
        };
        let Some(open) = self.call(opener) else {
            return;
        };
        let open_args: Vec<V> = open.args.iter().map(|&a| self.fold(a)).collect();
        let Some(target) = self.write_target(opener, &open.callee, &open, &open_args) else {
            return;
        };
        let text = match content {
            Some(V::Str(t, _)) => t,
            Some(V::List(items)) => items.iter().map(V::text).collect(),
            _ => return,
        };
        if let Some(path) = target.exact_str() {
            let line = self.line(node);
            facts.written.push((line, path.to_string(), text + end));
        }
    }

    /// The call that opened a handle: the receiver itself when it is a call
    /// (`Path(p).open("w").write(x)`), else the call its name was bound to.
    fn opener(&self, handle: Node<'a>) -> Option<Node<'a>> {
        if self.call(handle).is_some() {
            return Some(handle);
        }
        let name = self.text(handle);
        if let Some(&n) = self.handles.get(name) {
            return Some(n);
        }
        match self.consts.get(name).map(Vec::as_slice) {
            Some([one]) if self.call(*one).is_some() => Some(*one),
            _ => None,
        }
    }
}
