//! What each known call does: the tables of process spawns, network calls, code
//! evaluation, file writes and environment reads for Python, JavaScript/TypeScript and
//! Ruby, matched on the canonical callee (`subprocess.run`, `child_process.execSync`,
//! `Open3.capture3`). An unknown call does nothing here; its arguments are still folded
//! for paths.

use super::fold::{RUNTIME, V};
use super::pathvals::{GLOB_CALLS, PATH_BUILDERS, as_pattern, looks_like_path, runtime_glob};
use super::{Call, Cmd, Facts, Lang, Net, Unit};
use tree_sitter::Node;

pub(super) use super::net_calls::{NET_CALLS, NET_METHOD_URL};

/// Python calls whose first argument is a command (a string through the shell when
/// `shell=True`, an argv list otherwise).
pub(super) const PY_SUBPROCESS: &[&str] = &[
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
];

/// Calls whose first argument is shell text, always.
pub(super) const SHELL_STRING: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "commands.getoutput",
    "asyncio.create_subprocess_shell",
    "child_process.exec",
    "child_process.execSync",
    "execa.execaCommand",
    "execa.execaCommandSync",
];

/// Calls whose arguments are a program and its arguments (varargs or a list).
pub(super) const ARGV_CALLS: &[&str] = &[
    "asyncio.create_subprocess_exec",
    "os.execv",
    "os.execvp",
    "os.execve",
    "os.execvpe",
    "os.execl",
    "os.execlp",
    "os.execle",
    "os.execlpe",
    "os.spawnv",
    "os.spawnvp",
    "os.spawnl",
    "os.spawnlp",
    "os.posix_spawn",
    "os.posix_spawnp",
    "pty.spawn",
    "child_process.spawn",
    "child_process.spawnSync",
    "child_process.execFile",
    "child_process.execFileSync",
    "execa",
    "execa.execa",
    "execa.execaSync",
    "Bun.spawn",
    "Bun.spawnSync",
    "new Deno.Command",
    "system",
    "exec",
    "spawn",
    "Process.spawn",
    "Process.exec",
    "IO.popen",
    "Open3.capture2",
    "Open3.capture2e",
    "Open3.capture3",
    "Open3.popen2",
    "Open3.popen2e",
    "Open3.popen3",
    "Open3.pipeline",
    "PTY.spawn",
];

/// Calls that run code they are given (not a file the text names), or load a file as
/// code; the argument is what is run.
pub(super) const CODE_CALLS: &[&str] = &[
    "exec",
    "eval",
    "compile",
    "runpy.run_path",
    "runpy.run_module",
    "importlib.import_module",
    "__import__",
    "importlib.util.spec_from_file_location",
    "imp.load_source",
    "pickle.loads",
    "pickle.load",
    "marshal.loads",
    "new Function",
    "Function",
    "vm.runInThisContext",
    "vm.runInNewContext",
    "vm.runInContext",
    "new vm.Script",
    "require",
    "import",
    "instance_eval",
    "class_eval",
    "module_eval",
    "binding.eval",
    "load",
    "require_relative",
    "repl.start",
    "test.run",
];

/// Calls that write a file named by their first argument (or the second, for
/// `urlretrieve`).
pub(super) const WRITE_CALLS: &[&str] = &[
    "fs.writeFileSync",
    "fs.writeFile",
    "fs.promises.writeFile",
    "fs/promises.writeFile",
    "fs.appendFileSync",
    "fs.createWriteStream",
    "File.write",
    "File.binwrite",
    "IO.write",
    "shutil.copyfileobj",
];

/// Calls that append to the file named by their first argument.
const APPEND_CALLS: &[&str] = &[
    "fs.appendFile",
    "fs.promises.appendFile",
    "fs/promises.appendFile",
    "fs.writeSync",
    "Deno.writeTextFile",
    "Deno.writeFile",
    "Bun.write",
];

/// Calls whose second argument is a file they create or replace (a copy, a move, a link).
const COPY_CALLS: &[&str] = &[
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.move",
    "os.rename",
    "os.replace",
    "os.renames",
    "os.symlink",
    "os.link",
    "fs.copyFileSync",
    "fs.copyFile",
    "fs.promises.copyFile",
    "fs.cpSync",
    "fs.cp",
    "fs.renameSync",
    "fs.rename",
    "fs.promises.rename",
    "fs.symlinkSync",
    "fs.symlink",
    "fs.linkSync",
    "FileUtils.cp",
    "FileUtils.mv",
    "FileUtils.copy",
    "FileUtils.move",
    "FileUtils.install",
    "FileUtils.ln_s",
    "FileUtils.ln",
    "File.rename",
    "File.symlink",
    "File.link",
];

/// Calls that open the file named by their first argument in the mode given second.
const OPEN_CALLS: &[&str] = &[
    "open",
    "io.open",
    "codecs.open",
    "os.open",
    "gzip.open",
    "bz2.open",
    "lzma.open",
    "File.open",
    "File.new",
    "IO.open",
    "fs.openSync",
    "fs.open",
    "fs.promises.open",
];

/// Is `name` a call that reads one environment variable named by its first argument?
pub(crate) fn is_env_getter(name: &str) -> bool {
    matches!(
        name,
        "os.getenv"
            | "os.environ.get"
            | "os.environ.setdefault"
            | "os.environ.pop"
            | "environ.get"
            | "os.environ.__getitem__"
            | "ENV.fetch"
            | "ENV.[]"
            | "Deno.env.get"
            | "process.env.get"
    )
}

/// Is `name` an object whose members are environment variables?
pub(crate) fn is_env_object(name: &str) -> bool {
    matches!(
        name,
        "os.environ" | "environ" | "process.env" | "ENV" | "Bun.env" | "import.meta.env"
    )
}

impl Unit<'_> {
    pub(super) fn classify_call(&self, node: Node<'_>, call: &Call<'_>, facts: &mut Facts) {
        let line = self.line(node);
        let name = call.callee.as_str();
        super::js_caps::take_climb();
        let args: Vec<V> = call.args.iter().map(|&a| self.fold(a)).collect();
        if let Some(climb) = super::js_caps::take_climb() {
            facts.unresolved.push((line, climb));
        }
        self.rb_symbol_call(node, call, facts);
        let kw = |k: &str| {
            call.kwargs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| self.fold(*v))
        };
        if let Some(dir) = super::places::working_folder(name, &args, kw) {
            facts.bases.push((line, dir.text(), dir.exact()));
        }
        for a in &args {
            match a {
                V::Str(s, true) if looks_like_path(s) || super::relread::relative_secret(s) => {
                    facts.paths.push((line, s.clone()));
                }
                V::Str(s, true) if super::places::relative_path(s) => {
                    facts.rel_paths.push((line, s.clone()))
                }
                V::Str(s, false) => facts.globs.extend(runtime_glob(s).map(|g| (line, g, true))),
                _ => {}
            }
        }
        // A path built by a call (`os.path.join`, `Path(…)`, `.joinpath`) is a path
        // named, whatever is done with it next.
        if PATH_BUILDERS.contains(&name) || name.ends_with(".joinpath") {
            match self.fold(node) {
                V::Str(s, true) if looks_like_path(&s) || super::relread::relative_secret(&s) => {
                    facts.paths.push((line, s));
                }
                V::Str(s, true) if super::places::relative_path(&s) => {
                    facts.rel_paths.push((line, s))
                }
                V::Str(s, false) => facts
                    .globs
                    .extend(runtime_glob(&s).map(|g| (line, g, true))),
                _ => {}
            }
        }
        // What a glob, a recursive glob or a walk can read.
        let method = name.rsplit('.').next().unwrap_or(name);
        let base = || self.receiver(node).map(|r| self.fold(r));
        let pattern = match (method, args.first()) {
            _ if GLOB_CALLS.contains(&name) => args
                .first()
                .and_then(|a| as_pattern(a).map(|p| (p, !a.exact()))),
            ("rglob" | "glob", Some(p)) if self.lang == Lang::Python => {
                let b = base();
                let built = !(b.as_ref().is_some_and(V::exact) && p.exact());
                match (b.as_ref().and_then(as_pattern), as_pattern(p)) {
                    (Some(b), Some(p)) if method == "rglob" => Some((format!("{b}/**/{p}"), built)),
                    (Some(b), Some(p)) => Some((format!("{b}/{p}"), built)),
                    _ => None,
                }
            }
            // An archive or a copy of a whole folder reads everything beneath it.
            _ if name == "shutil.make_archive" => kw("root_dir")
                .or_else(|| args.get(2).cloned())
                .and_then(|a| as_pattern(&a).map(|b| (format!("{b}/**"), !a.exact()))),
            _ if name == "shutil.copytree" => args
                .first()
                .and_then(|a| as_pattern(a).map(|b| (format!("{b}/**"), !a.exact()))),
            _ if matches!(name, "os.walk" | "os.fwalk") => args
                .first()
                .and_then(|a| as_pattern(a).map(|b| (format!("{b}/**"), !a.exact()))),
            ("walk", None) if self.lang == Lang::Python => {
                base().and_then(|b| as_pattern(&b).map(|p| (format!("{p}/**"), !b.exact())))
            }
            _ => None,
        };
        if let Some((p, built)) = pattern {
            facts.globs.push((line, p, built));
        }
        if let Some(t) = self.write_target(node, name, call, &args) {
            facts.targets.push((line, t.text(), t.exact()));
            // What is written, when it folds: read later as what the file becomes.
            let content = match (self.lang, method) {
                (Lang::Python, "write_text" | "write_bytes") => args.first(),
                (
                    Lang::JavaScript | Lang::TypeScript | Lang::Tsx,
                    "writeFileSync" | "writeFile" | "appendFileSync" | "appendFile",
                ) => args.get(1),
                _ => None,
            };
            // Content with parts known only at run time keeps their placeholders: what
            // is known of it is still read (a `curl … | bash` around a run-time name).
            if let (Some(path), Some(V::Str(text, _))) = (t.exact_str(), content) {
                facts
                    .written
                    .push((line, path.to_string(), text.to_string()));
            }
        }
        if let Some((link, to)) = self.link_made(node, name, &args) {
            facts
                .links
                .push((line, link.text(), to.text(), link.exact() && to.exact()));
        }
        self.handle_write(node, name, call, &args, facts);
        if super::handles::prints(self.lang, name, call) {
            for a in args.iter().take(8) {
                if let V::Str(t, _) = a {
                    facts.printed.push((line, t.clone(), true));
                }
            }
        }
        self.py_lib_call(node, name, call, &args, facts);
        let ruby_or_js_method = name.rsplit('.').next().unwrap_or(name);
        if is_env_getter(name) || (self.lang == Lang::Ruby && name == "ENV.fetch") {
            if let Some(n) = args.first().and_then(V::exact_str) {
                facts.env.push((line, n.to_string()));
            }
            return;
        }
        if PY_SUBPROCESS.contains(&name) && self.lang == Lang::Python {
            let cmd = args
                .first()
                .cloned()
                .or_else(|| kw("args"))
                .unwrap_or(V::Unknown);
            let shell = kw("shell").is_some_and(|v| v.exact_str() != Some("False"));
            // `subprocess.run(['sh'], input='curl … | sh')`: text a shell reads on stdin.
            if let (Cmd::Argv { argv, .. }, Some(input)) =
                (command(cmd.clone(), shell), kw("input"))
                && argv.len() == 1
                && argv.first().is_some_and(|p| is_shell(p))
            {
                facts.spawns.push((
                    line,
                    Cmd::Shell {
                        text: input.text(),
                        exact: input.exact(),
                    },
                ));
                return;
            }
            facts.spawns.push((line, command(cmd, shell)));
            return;
        }
        if SHELL_STRING.contains(&name) {
            let cmd = args.first().cloned().unwrap_or(V::Unknown);
            facts.spawns.push((line, command(cmd, true)));
            return;
        }
        let ruby_only = matches!(name, "system" | "exec" | "spawn");
        if ARGV_CALLS.contains(&name) && (!ruby_only || self.lang == Lang::Ruby) {
            self.spawn_argv(line, name, call, &args, facts);
            return;
        }
        if self.lang == Lang::Ruby && matches!(name, "open" | "Kernel.open" | "IO.popen") {
            // `open("|cmd")` runs a command; `open("https://…")` with open-uri fetches.
            if let Some(V::Str(s, e)) = args.first()
                && let Some(cmd) = s.strip_prefix('|')
            {
                facts.spawns.push((
                    line,
                    Cmd::Shell {
                        text: cmd.to_string(),
                        exact: *e,
                    },
                ));
                return;
            }
        }
        if let Some((_, fetch)) = NET_CALLS.iter().find(|(n, _)| *n == name) {
            // `axios({url, method})`, `fetch(new Request(...))`: the URL in an options object.
            let dest = match call.args.first() {
                Some(n)
                    if n.kind() == "object" || n.kind() == "dictionary" || n.kind() == "hash" =>
                {
                    None
                }
                _ => args.first().cloned(),
            };
            if name != "new URL" {
                self.net(line, dest.or_else(|| kw("url")), *fetch, facts);
            }
            if name == "urllib.request.urlretrieve" {
                facts
                    .writes
                    .push((line, args.get(1).and_then(V::exact_str).map(str::to_string)));
            }
            return;
        }
        if let Some(url) = self.library_url(name, &args) {
            self.net(line, Some(url), true, facts);
            return;
        }
        if NET_METHOD_URL.contains(&name) {
            let fetch = args
                .first()
                .and_then(V::exact_str)
                .is_some_and(|m| m.eq_ignore_ascii_case("get"));
            self.net(
                line,
                args.get(1).cloned().or_else(|| kw("url")),
                fetch,
                facts,
            );
            return;
        }
        self.py_feature_call(node, name, call, &args, facts);
        self.implied_facts(line, name, call, &args, facts);
        if self.code_entry(line, name, call, &args, facts) {
            return;
        }
        if CODE_CALLS.contains(&name) && code_call_in(self.lang, name) {
            if self.js_literal_code(line, name, &args, facts) {
                return;
            }
            let arg = args.first().cloned().unwrap_or(V::Unknown);
            match (name, arg.exact_str()) {
                // A literal module name is an import, not code built at run time.
                (
                    "importlib.import_module"
                    | "__import__"
                    | "require"
                    | "import"
                    | "require_relative"
                    | "load",
                    Some(m),
                ) => {
                    facts.imports.push((line, m.to_string()));
                }
                ("compile", _) => {}
                ("exec" | "eval", Some(code))
                    if self.lang == Lang::Python && EXEC_DEPTH.with(|d| d.get()) < 8 =>
                {
                    // Literal code is analyzed as the code it is (nested a few levels).
                    EXEC_DEPTH.with(|d| d.set(d.get() + 1));
                    let inner = super::analyze(Lang::Python, code, line);
                    EXEC_DEPTH.with(|d| d.set(d.get() - 1));
                    merge(facts, inner);
                }
                _ => facts.code.push((line, format!("{name}({})", arg.text()))),
            }
            return;
        }
        if WRITE_CALLS.contains(&name)
            || super::js_caps::fs_write_target(self.lang, name, &args).is_some()
        {
            facts.writes.push((
                line,
                args.first().and_then(V::exact_str).map(str::to_string),
            ));
            return;
        }
        match ruby_or_js_method {
            "write" | "write_text" | "write_bytes" | "writelines" | "binwrite" | "pipe"
            | "extractall" | "extract" | "unpack_archive" => {
                facts.writes.push((line, None));
                if matches!(
                    ruby_or_js_method,
                    "extractall" | "extract" | "unpack_archive"
                ) {
                    facts.unpacks.push(line);
                }
            }
            "chmod" | "chmodSync" | "fchmod" => facts.chmods.push(line),
            // Loaders of code or native extensions, whatever the receiver (a database
            // connection's `load_extension`, an interpreter's `runsource`).
            "exec_module"
            | "load_module"
            | "load_extension"
            | "enable_load_extension"
            | "loadExtension"
            | "runsource"
            | "runcode" => facts.code.push((line, format!("{name}(…)"))),
            _ => {}
        }
        if matches!(
            name,
            "open"
                | "io.open"
                | "File.open"
                | "os.open"
                | "codecs.open"
                | "Path.open"
                | "pathlib.Path.open"
        ) || name.ends_with(".open")
        {
            let mode = args.get(1).cloned().or_else(|| kw("mode"));
            if let Some(m) = mode.as_ref().and_then(V::exact_str)
                && m.contains(['w', 'a', 'x', '+'])
            {
                facts.writes.push((
                    line,
                    args.first().and_then(V::exact_str).map(str::to_string),
                ));
            }
            if self.lang == Lang::Ruby
                && let Some(V::Str(s, _)) = args.first()
                && (s.starts_with("http://") || s.starts_with("https://"))
            {
                self.net(line, args.first().cloned(), true, facts);
            }
        }
    }

    /// The file a call writes (or creates, or moves something to), as folded: the
    /// target of a write call, the destination of a copy, move or link, a path object's
    /// `write_text`/`touch`/`mkdir`, an `open` in a writing (or unknown) mode.
    pub(super) fn write_target(
        &self,
        node: Node<'_>,
        name: &str,
        call: &Call<'_>,
        args: &[V],
    ) -> Option<V> {
        let method = name.rsplit('.').next().unwrap_or(name);
        let arg = |i: usize| Some(args.get(i).cloned().unwrap_or(V::Unknown));
        let recv = || self.receiver(node).map(|r| self.fold(r));
        if let Some(t) = self.py_write_sink(name, call, args) {
            return Some(t);
        }
        if let Some(t) = super::js_caps::fs_write_target(self.lang, name, args) {
            return t;
        }
        if WRITE_CALLS.contains(&name) || APPEND_CALLS.contains(&name) {
            return arg(0);
        }
        if name == "urllib.request.urlretrieve" {
            return args.get(1).cloned();
        }
        if COPY_CALLS.contains(&name) {
            return arg(1);
        }
        if self.lang == Lang::Python {
            match method {
                "write_text" | "write_bytes" | "touch" | "mkdir" | "symlink_to" | "hardlink_to" => {
                    return recv();
                }
                "rename" | "replace" if !name.starts_with("os.") && args.len() == 1 => {
                    return arg(0);
                }
                _ => {}
            }
        }
        let kw_mode = || {
            call.kwargs
                .iter()
                .find(|(k, _)| k == "mode" || k == "flags" || k == "flag")
                .map(|(_, v)| self.fold(*v))
        };
        let (path, mode) = if OPEN_CALLS.contains(&name) {
            let mode = match name {
                "os.open" => call.args.get(1).map(|&f| {
                    let t = self.text(f);
                    let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"]
                        .iter()
                        .any(|o| t.contains(o));
                    if writes || !t.contains("O_RDONLY") {
                        V::Str("w".into(), true)
                    } else {
                        V::Str("r".into(), true)
                    }
                }),
                _ => args.get(1).cloned().or_else(kw_mode),
            };
            (arg(0), mode)
        } else if method == "open" && self.receiver(node).is_some() && self.lang == Lang::Python {
            (recv(), args.first().cloned().or_else(kw_mode))
        } else {
            return None;
        };
        let writes = match mode {
            None => false,
            Some(V::Str(m, true)) => m.contains(['w', 'a', 'x', '+']),
            // A mode known only at run time may write.
            Some(_) => true,
        };
        if writes { path } else { None }
    }

    fn net(&self, line: usize, dest: Option<V>, fetch: bool, facts: &mut Facts) {
        let (dest, exact) = match dest {
            Some(V::Str(s, e)) => (Some(s), e),
            _ => (None, false),
        };
        facts.net.push(Net {
            line,
            dest,
            exact,
            fetch,
        });
    }

    fn spawn_argv(&self, line: usize, name: &str, call: &Call<'_>, args: &[V], facts: &mut Facts) {
        // Ruby's and Node's optional leading env hash / trailing options object are not
        // argv; a list argument is the argv (or the rest of it).
        let mut parts: Vec<V> = Vec::new();
        for (i, (a, node)) in args.iter().zip(&call.args).enumerate() {
            if matches!(node.kind(), "object" | "hash" | "dictionary") {
                continue;
            }
            if name.starts_with("os.spawn") && i == 0 {
                continue; // the mode
            }
            match a {
                V::List(items) => parts.extend(items.iter().cloned()),
                v => parts.push(v.clone()),
            }
        }
        if name.starts_with("os.exec")
            || name.starts_with("os.spawn")
            || name.starts_with("os.posix_spawn")
        {
            // `os.execv(path, [argv0, ...])`: the path is the program, argv[0] a name.
            if parts.len() >= 2 {
                parts.remove(1);
            }
        }
        let kw_shell = call
            .kwargs
            .iter()
            .any(|(k, v)| k == "shell" && self.fold(*v).exact_str() != Some("false"));
        let single_string = parts.len() == 1
            && matches!(parts[0], V::Str(..))
            && !matches!(args.first(), Some(V::List(_)));
        // Ruby's `system("a b")` and `IO.popen("a | b")`, Node's spawn with `shell: true`:
        // one string is shell text.
        let through_shell = kw_shell || (self.lang == Lang::Ruby && single_string);
        if through_shell {
            let text = parts.iter().map(V::text).collect::<Vec<_>>().join(" ");
            let exact = parts.iter().all(V::exact);
            facts.spawns.push((line, Cmd::Shell { text, exact }));
            return;
        }
        if parts.is_empty() {
            facts.spawns.push((line, Cmd::Unknown));
            return;
        }
        let exact = parts.iter().all(V::exact);
        let argv = parts.iter().map(V::text).collect();
        facts.spawns.push((line, Cmd::Argv { argv, exact }));
    }
}

thread_local! {
    /// How deep literal `exec("…")` code is being analyzed on this thread.
    pub(super) static EXEC_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Is the program a shell?
fn is_shell(p: &str) -> bool {
    let base = p.rsplit('/').next().unwrap_or(p);
    matches!(base, "sh" | "bash" | "zsh" | "dash" | "ksh" | "ash")
}

/// A command value: shell text, or an argv list.
fn command(v: V, shell: bool) -> Cmd {
    match (v, shell) {
        (V::Unknown, _) => Cmd::Unknown,
        (V::List(items), true) => {
            let exact = items.iter().all(V::exact);
            Cmd::Shell {
                text: items.iter().map(V::text).collect::<Vec<_>>().join(" "),
                exact,
            }
        }
        (V::List(items), false) => {
            let exact = items.iter().all(V::exact);
            Cmd::Argv {
                argv: items.iter().map(V::text).collect(),
                exact,
            }
        }
        (V::Str(s, exact), true) => Cmd::Shell { text: s, exact },
        (V::Str(s, exact), false) => {
            if s == RUNTIME {
                Cmd::Unknown
            } else {
                Cmd::Argv {
                    argv: vec![s],
                    exact,
                }
            }
        }
    }
}

/// Names of [`CODE_CALLS`] that mean running code only in some languages (`exec` is a
/// process spawn in Ruby, a method name anywhere in JavaScript).
fn code_call_in(lang: Lang, name: &str) -> bool {
    match name {
        "exec" | "compile" | "__import__" => lang == Lang::Python,
        "eval" => true,
        "require" => lang != Lang::Python,
        "import" | "Function" | "repl.start" | "test.run" => {
            !matches!(lang, Lang::Python | Lang::Ruby)
        }
        "load" | "require_relative" | "instance_eval" | "class_eval" | "module_eval"
        | "binding.eval" => lang == Lang::Ruby,
        _ => true,
    }
}

pub(super) fn merge(into: &mut Facts, from: Facts) {
    into.spawns.extend(from.spawns);
    into.net.extend(from.net);
    into.writes.extend(from.writes);
    into.chmods.extend(from.chmods);
    into.code.extend(from.code);
    into.imports.extend(from.imports);
    into.env.extend(from.env);
    into.paths.extend(from.paths);
    into.rel_paths.extend(from.rel_paths);
    into.unresolved.extend(from.unresolved);
    into.modules.extend(from.modules);
    into.env_dumps.extend(from.env_dumps);
    into.globs.extend(from.globs);
    into.targets.extend(from.targets);
    into.unpacks.extend(from.unpacks);
    into.written.extend(from.written);
    into.env_sets.extend(from.env_sets);
    into.bases.extend(from.bases);
    into.links.extend(from.links);
    into.printed.extend(from.printed);
    into.parse_errors += from.parse_errors;
}
