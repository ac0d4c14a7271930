//! Constant folding: the value an expression has when it is built only from literals,
//! constants assigned once, and the few functions that assemble paths, names and text
//! (`+`, f-strings and templates with foldable parts, `os.path.join`, `expanduser('~')`,
//! `File.join`, `"".join([...])`, base64 decoding). A part known only at run time is a
//! placeholder and makes the value inexact; anything else is [`V::Unknown`].

use super::{Lang, Unit};
use tree_sitter::Node;

/// The word that stands for a part known only at run time.
pub(crate) const RUNTIME: &str = "__runtime__";

/// Deepest expression folded; deeper ones are unknown (an attacker controls the depth).
const MAX_DEPTH: usize = 48;

/// Longest folded string, in bytes; longer ones are unknown.
pub(crate) const MAX_LEN: usize = 16 << 10;

/// The user's Python site directory, as folded.
const USER_SITE: &str = "~/.local/lib/python3/site-packages";

/// The system's Python site directory, as folded.
const SYSTEM_SITE: &str = "/usr/lib/python3/site-packages";

/// Most items of a folded list.
const MAX_ITEMS: usize = 4096;

/// A folded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum V {
    /// A string; `false` when some part of it is a [`RUNTIME`] placeholder.
    Str(String, bool),
    /// A list or tuple.
    List(Vec<V>),
    /// Not known from the text.
    Unknown,
}

impl V {
    /// The string, exact or not, with placeholders for unknown parts.
    pub(crate) fn text(&self) -> String {
        match self {
            V::Str(s, _) => s.clone(),
            V::List(v) => v.iter().map(V::text).collect::<Vec<_>>().join(" "),
            V::Unknown => RUNTIME.into(),
        }
    }

    pub(crate) fn exact(&self) -> bool {
        match self {
            V::Str(_, e) => *e,
            V::List(v) => v.iter().all(V::exact),
            V::Unknown => false,
        }
    }

    /// The exact string, if it is one.
    pub(crate) fn exact_str(&self) -> Option<&str> {
        match self {
            V::Str(s, true) => Some(s),
            _ => None,
        }
    }

    /// Concatenate; a value past [`MAX_LEN`] bytes or [`MAX_ITEMS`] items is unknown
    /// (a chain of doublings of a large literal must not fill memory).
    fn concat(self, other: V) -> V {
        match (self, other) {
            (V::List(mut a), V::List(b)) => {
                if a.len() + b.len() > MAX_ITEMS {
                    return V::Unknown;
                }
                a.extend(b);
                V::List(a)
            }
            (a, b) => {
                let (x, y) = (a.text(), b.text());
                if x.len() + y.len() > MAX_LEN {
                    return V::Unknown;
                }
                V::Str(x + &y, a.exact() && b.exact())
            }
        }
    }
}

/// Join path parts the way `os.path.join`/`File.join`/`path.join` do: an absolute part
/// restarts the path.
fn join(parts: Vec<V>) -> V {
    let mut out = String::new();
    let mut exact = true;
    for p in parts {
        if out.len() > MAX_LEN {
            return V::Unknown;
        }
        exact &= p.exact();
        let s = p.text();
        if s.starts_with('/') {
            out = s;
        } else if out.is_empty() || out.ends_with('/') {
            out.push_str(&s);
        } else {
            out.push('/');
            out.push_str(&s);
        }
    }
    V::Str(out, exact)
}

fn decode_escape(esc: &str, lang: Lang) -> String {
    let body = &esc[1.min(esc.len())..];
    let hex = |h: &str| u32::from_str_radix(h, 16).ok().and_then(char::from_u32);
    let c = match body.chars().next() {
        Some('n') => Some('\n'),
        Some('t') => Some('\t'),
        Some('r') => Some('\r'),
        Some('0') if body.len() == 1 => Some('\0'),
        Some('e') if lang == Lang::Ruby => Some('\u{1b}'),
        Some('x') => hex(&body[1..]),
        Some('u') => hex(body[1..].trim_start_matches('{').trim_end_matches('}')),
        Some('U') => hex(&body[1..]),
        Some('\n') => return String::new(),
        Some(c) => Some(c),
        None => None,
    };
    c.map_or_else(|| esc.to_string(), String::from)
}

impl Unit<'_> {
    /// Fold `node`.
    pub(crate) fn fold(&self, node: Node<'_>) -> V {
        self.fold_at(node, 0)
    }

    pub(crate) fn fold_at(&self, node: Node<'_>, depth: usize) -> V {
        match self.fold_inner(node, depth) {
            V::Str(s, _) if s.len() > MAX_LEN => V::Unknown,
            // A path from the script's own folder, with its climbs applied.
            V::Str(s, e) if s.starts_with(super::js_caps::SCRIPT_DIR) => {
                V::Str(super::js_caps::climb(&s).unwrap_or(s), e)
            }
            v => v,
        }
    }

    fn fold_inner(&self, node: Node<'_>, depth: usize) -> V {
        if depth > MAX_DEPTH {
            return V::Unknown;
        }
        let d = depth + 1;
        if self.names_file
            && let Some(v) = self.climbed(node, d)
        {
            return v;
        }
        let kind = node.kind();
        if let Some(v) = self.js_location(node, d) {
            return v;
        }
        match kind {
            "string" | "template_string" => self.fold_string(node, d),
            "concatenated_string" | "chained_string" => self
                .named(node)
                .into_iter()
                .map(|c| self.fold_at(c, d))
                .fold(V::Str(String::new(), true), V::concat),
            "integer" | "number" | "float" | "true" | "false" => {
                V::Str(self.text(node).into(), true)
            }
            "list" | "tuple" | "array" | "string_array" => V::List(
                self.named(node)
                    .into_iter()
                    .filter(|c| c.kind() != "comment")
                    .map(|c| self.fold_at(c, d))
                    .collect(),
            ),
            "bare_string" => self.fold_string(node, d),
            "parenthesized_expression"
            | "parenthesized_statements"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
            | "expression_statement" => self
                .named(node)
                .into_iter()
                .find(|c| c.kind() != "comment")
                .map_or(V::Unknown, |c| self.fold_at(c, d)),
            "binary_operator" | "binary_expression" | "binary" => {
                let (Some(l), Some(r)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return V::Unknown;
                };
                let op = node
                    .child_by_field_name("operator")
                    .map_or("", |o| self.text(o));
                let (lv, rv) = (self.fold_at(l, d), self.fold_at(r, d));
                match op {
                    "+" => {
                        if lv == V::Unknown && rv == V::Unknown {
                            V::Unknown
                        } else {
                            lv.concat(rv)
                        }
                    }
                    "/" if self.lang == Lang::Python && matches!(lv, V::Str(..)) => {
                        join(vec![lv, rv])
                    }
                    // `'curl %s | sh' % url`: the template with its holes unknown.
                    "%" if self.lang == Lang::Python && matches!(lv, V::Str(..)) => {
                        percent(&lv, &rv)
                    }
                    _ => V::Unknown,
                }
            }
            // A shorthand property (`{ cwd }`) or a Ruby key without its value
            // (`chdir:`) is the variable of its name.
            "shorthand_property_identifier" | "hash_key_symbol" => {
                self.lookup(self.text(node).trim_end_matches(':'), d)
            }
            "identifier" | "constant" => match self.dotted(node).as_str() {
                "os.sep" | "os.path.sep" | "posixpath.sep" | "path.sep" | "File::SEPARATOR" => {
                    V::Str("/".into(), true)
                }
                _ => self.lookup(self.text(node), d),
            },
            // `os.sep`, `path.sep`, `File::SEPARATOR`: the separator is `/` where skills run.
            "attribute" | "scope_resolution"
                if matches!(
                    self.dotted(node).as_str(),
                    "os.sep" | "os.path.sep" | "posixpath.sep" | "File::SEPARATOR"
                ) =>
            {
                V::Str("/".into(), true)
            }
            "call" | "call_expression" => self.fold_call(node, d),
            "member_expression" if self.dotted(node) == "path.sep" => V::Str("/".into(), true),
            "attribute" if self.dotted(node) == "site.USER_SITE" => V::Str(USER_SITE.into(), true),
            // `site.getsitepackages()[0]`: an item of a folded list.
            "subscript"
                if node
                    .child_by_field_name("subscript")
                    .is_some_and(|i| i.kind() == "integer") =>
            {
                let list = node
                    .child_by_field_name("value")
                    .map(|v| self.fold_at(v, d));
                let index = node
                    .child_by_field_name("subscript")
                    .and_then(|i| self.text(i).parse::<usize>().ok());
                match (list, index) {
                    (Some(V::List(items)), Some(i)) => items.get(i).cloned().unwrap_or(V::Unknown),
                    _ => V::Unknown,
                }
            }
            "subscript" | "subscript_expression" | "element_reference" | "member_expression" => {
                match self.env_name(node) {
                    Some(n) if n == "HOME" || n == "USERPROFILE" => V::Str("~".into(), true),
                    _ => V::Unknown,
                }
            }
            _ => V::Unknown,
        }
    }

    /// A string's content: its text, with the escape sequences the grammar nests in it
    /// (Python's `string_content` holds its `\x63`, `\n` as children) decoded.
    fn fold_content(&self, c: Node<'_>, raw: bool) -> V {
        let kids = self.named(c);
        if raw || kids.is_empty() {
            return V::Str(self.text(c).into(), true);
        }
        let (mut out, mut exact) = (String::new(), true);
        let mut at = c.start_byte();
        for k in kids {
            out.push_str(self.src.get(at..k.start_byte()).unwrap_or(""));
            match k.kind() {
                "escape_sequence" => out.push_str(&decode_escape(self.text(k), self.lang)),
                // An interpolation inside the content (not a part of its own): unknown.
                "interpolation" => {
                    out.push_str(RUNTIME);
                    exact = false;
                }
                _ => out.push_str(self.text(k)),
            }
            at = k.end_byte();
        }
        out.push_str(self.src.get(at..c.end_byte()).unwrap_or(""));
        V::Str(out, exact)
    }

    fn fold_string(&self, node: Node<'_>, d: usize) -> V {
        let raw = self.lang == Lang::Python
            && node.child(0).is_some_and(|s| {
                s.kind() == "string_start" && self.text(s).to_ascii_lowercase().contains('r')
            });
        let single_ruby = self.lang == Lang::Ruby && self.text(node).starts_with('\'');
        let children = self.named(node);
        if children.is_empty() {
            // A string node without parts is its own text (a JS fragment-less `""`,
            // a Ruby bare string).
            let t = self.text(node);
            return match kind_is_quoted(t) {
                true => V::Str(String::new(), true),
                false => V::Str(t.to_string(), true),
            };
        }
        let mut out = V::Str(String::new(), true);
        for c in children {
            let part = match c.kind() {
                "string_content" | "string_fragment" if self.text(c).len() > MAX_LEN => V::Unknown,
                "string_content" | "string_fragment" => self.fold_content(c, raw || single_ruby),
                "escape_sequence" if raw || single_ruby => V::Str(self.text(c).into(), true),
                "escape_sequence" => V::Str(decode_escape(self.text(c), self.lang), true),
                "interpolation" | "template_substitution" => {
                    let expr = c
                        .child_by_field_name("expression")
                        .or_else(|| self.named(c).into_iter().next());
                    match expr.map(|e| self.fold_at(e, d)) {
                        Some(V::Str(s, e)) => V::Str(s, e),
                        _ => V::Str(RUNTIME.into(), false),
                    }
                }
                "string_start" | "string_end" => continue,
                _ => V::Str(RUNTIME.into(), false),
            };
            out = out.concat(part);
        }
        out
    }

    fn lookup(&self, name: &str, d: usize) -> V {
        if self.poisoned.contains(name) {
            return V::Unknown;
        }
        let Some(exprs) = self.consts.get(name) else {
            return V::Unknown;
        };
        // A name bound more than once is a constant only when every binding agrees.
        let mut vals = exprs.iter().map(|&n| self.fold_at(n, d + 4));
        let first = vals.next().unwrap_or(V::Unknown);
        if vals.all(|v| v == first) {
            first
        } else {
            V::Unknown
        }
    }

    fn fold_call(&self, node: Node<'_>, d: usize) -> V {
        let Some(call) = self.call(node) else {
            return V::Unknown;
        };
        let args: Vec<V> = call.args.iter().map(|&a| self.fold_at(a, d)).collect();
        let first = || args.first().cloned().unwrap_or(V::Unknown);
        let name = call.callee.as_str();
        match name {
            "os.path.join" | "posixpath.join" | "File.join" | "path.join" | "path.posix.join"
            | "path.resolve" | "pathlib.Path" | "Path" | "pathlib.PurePath" | "PurePath" => {
                if args.is_empty() {
                    V::Str(".".into(), true)
                } else {
                    join(args)
                }
            }
            "os.path.expanduser" | "File.expand_path" | "os.path.abspath" | "os.path.normpath"
            | "os.path.realpath" | "str" | "String" | "os.fsdecode" | "Pathname.new" => first(),
            // Python's site directories, where a `.pth` or `sitecustomize.py` runs at
            // every interpreter start.
            "site.getusersitepackages" => V::Str(USER_SITE.into(), true),
            "site.getsitepackages" => V::List(vec![V::Str(SYSTEM_SITE.into(), true)]),
            "sysconfig.get_path"
                if matches!(
                    args.first().and_then(V::exact_str),
                    Some("purelib" | "platlib")
                ) =>
            {
                V::Str(SYSTEM_SITE.into(), true)
            }
            "distutils.sysconfig.get_python_lib" | "sysconfig.get_python_lib" => {
                V::Str(SYSTEM_SITE.into(), true)
            }
            "pathlib.Path.home" | "Path.home" | "os.homedir" | "Dir.home"
            | "Etc.getpwuid().dir" => V::Str("~".into(), true),
            "base64.b64decode"
            | "base64.standard_b64decode"
            | "base64.urlsafe_b64decode"
            | "Base64.decode64"
            | "Base64.strict_decode64"
            | "atob" => b64(&first()),
            "bytes.fromhex" => match first().exact_str() {
                Some(h) => hex_decode(h),
                None => V::Unknown,
            },
            "Buffer.from" if args.get(1).and_then(V::exact_str) == Some("base64") => b64(&first()),
            _ => self.fold_method(node, name, &args, d),
        }
    }

    /// Methods called on a folded receiver: `"".join([...])`, `.decode()`, `.toString()`,
    /// `.strip()`, `.joinpath(...)`, `.reverse`/`[::-1]` are not followed.
    fn fold_method(&self, node: Node<'_>, name: &str, args: &[V], d: usize) -> V {
        let method = name.rsplit('.').next().unwrap_or("");
        let Some(recv) = self.receiver(node) else {
            return self.env_lookup_call(name, args);
        };
        let r = self.fold_at(recv, d);
        match method {
            "join" if self.lang == Lang::Python => match (&r, args.first()) {
                (V::Str(sep, e), Some(V::List(items))) => {
                    let exact = *e && items.iter().all(V::exact);
                    V::Str(
                        items.iter().map(V::text).collect::<Vec<_>>().join(sep),
                        exact,
                    )
                }
                _ => V::Unknown,
            },
            "join" if self.lang != Lang::Python => match (&r, args.first()) {
                (V::List(items), sep) => {
                    let sep = sep.map_or(",".to_string(), V::text);
                    V::Str(
                        items.iter().map(V::text).collect::<Vec<_>>().join(&sep),
                        items.iter().all(V::exact),
                    )
                }
                _ => V::Unknown,
            },
            // `'curl {} | sh'.format(url)`: the template with its holes unknown.
            "format" if self.lang == Lang::Python => match &r {
                V::Str(t, _) => {
                    let mut out = String::new();
                    let mut depth = 0;
                    for c in t.chars() {
                        match c {
                            '{' => {
                                if depth == 0 {
                                    out.push_str(RUNTIME);
                                }
                                depth += 1;
                            }
                            '}' if depth > 0 => depth -= 1,
                            c if depth == 0 => out.push(c),
                            _ => {}
                        }
                    }
                    V::Str(out, false)
                }
                _ => V::Unknown,
            },
            "joinpath" => {
                let mut parts = vec![r];
                parts.extend(args.iter().cloned());
                join(parts)
            }
            "decode" | "encode" | "toString" | "to_s" | "strip" | "trim" | "rstrip" | "lstrip"
            | "expanduser" | "resolve" | "absolute" | "as_posix" | "chomp" | "freeze" | "dup" => {
                match (&r, method, args.first()) {
                    (_, "toString", Some(enc))
                        if enc.exact_str() != Some("utf8") && enc.exact_str() != Some("utf-8") =>
                    {
                        V::Unknown
                    }
                    _ => r,
                }
            }
            _ => self.env_lookup_call(name, args),
        }
    }

    /// `os.getenv('HOME')`, `os.environ.get('HOME')`, `ENV.fetch('HOME')`.
    fn env_lookup_call(&self, name: &str, args: &[V]) -> V {
        if super::calls::is_env_getter(name)
            && matches!(
                args.first().and_then(V::exact_str),
                Some("HOME" | "USERPROFILE")
            )
        {
            return V::Str("~".into(), true);
        }
        V::Unknown
    }
}

/// `template % values`: each `%s`/`%d`/`%(name)s` filled from the values when they
/// fold, a run-time placeholder otherwise.
fn percent(template: &V, values: &V) -> V {
    let vals: Vec<V> = match values {
        V::List(v) => v.clone(),
        v => vec![v.clone()],
    };
    let mut vals = vals.into_iter();
    let t = template.text();
    let mut out = String::new();
    let mut exact = template.exact();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // A mapping key: the value is not followed.
        if chars.peek() == Some(&'(') {
            for k in chars.by_ref() {
                if k == ')' {
                    break;
                }
            }
            exact = false;
            out.push_str(RUNTIME);
            chars.next();
            continue;
        }
        // Flags, width and precision, then the conversion character.
        while chars
            .peek()
            .is_some_and(|k| "#0- +.*0123456789".contains(*k))
        {
            chars.next();
        }
        chars.next();
        match vals.next() {
            Some(V::Str(s, e)) => {
                exact &= e;
                out.push_str(&s);
            }
            _ => {
                exact = false;
                out.push_str(RUNTIME);
            }
        }
    }
    V::Str(out, exact)
}

fn kind_is_quoted(t: &str) -> bool {
    t.len() >= 2 && (t.starts_with('"') || t.starts_with('\'') || t.starts_with('`'))
}

fn b64(v: &V) -> V {
    let Some(s) = v.exact_str() else {
        return V::Unknown;
    };
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes() {
        let c = match c {
            b'-' => b'+',
            b'_' => b'/',
            c => c,
        };
        let Some(i) = T.iter().position(|&t| t == c) else {
            if c == b'=' || c.is_ascii_whitespace() {
                continue;
            }
            return V::Unknown;
        };
        bits = (bits << 6) | i as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    String::from_utf8(out).map_or(V::Unknown, |s| V::Str(s, true))
}

fn hex_decode(h: &str) -> V {
    let digits: Vec<u8> = h.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return V::Unknown;
    }
    let bytes: Option<Vec<u8>> = digits
        .chunks(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
        })
        .collect();
    bytes
        .and_then(|b| String::from_utf8(b).ok())
        .map_or(V::Unknown, |s| V::Str(s, true))
}
