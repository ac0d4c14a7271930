//! What the judgement learns from the host's tree and the layer beyond one entry's path:
//! the repositories below the root (each `.git` is a work tree's root, where the rules
//! anchored at "the top of a repository" apply), the directory each repository's git
//! runs hooks from (`core.hooksPath`, read from the host's configuration), the files
//! its hooks and hook managers run by path, and the files agent instruction files import
//! (`@path`). Gathered on first need and remembered for the whole merge.
//!
//! Everything here is read from the host's files and the layer's, never from the run's
//! word: a file that cannot be read counts as absent, which can only make a hold
//! narrower, never turn a refusal of the rules into a landing.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

/// The largest hook, hook-manager configuration or instruction file read for paths.
const MAX_SCANNED: u64 = 256 << 10;
/// The most hooks read in one hooks directory.
const MAX_HOOKS: usize = 64;
/// How deep `@path` imports are followed (Claude Code follows five).
const MAX_IMPORT_DEPTH: usize = 5;

/// Files of a work tree's root that hook managers read, whose commands name scripts.
const HOOK_MANAGER_FILES: &[&str] = &[
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    ".overcommit.yml",
];
/// Directories of a work tree's root whose every file is a hook a manager installed.
const HOOK_MANAGER_DIRS: &[&str] = &[".husky", ".husky/_"];

/// Agent instruction files that import others with `@path`, relative to a root.
const INSTRUCTION_FILES: &[&str] = &[
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    "AGENTS.md",
    "AGENT.md",
    "GEMINI.md",
    ".gemini/GEMINI.md",
    ".github/copilot-instructions.md",
];

/// One repository found below the root: its work tree's root and what its git runs.
#[derive(Debug, Default)]
pub(super) struct Repo {
    /// The work tree's root (the directory holding `.git`).
    pub(super) top: PathBuf,
    /// The directory git runs hooks from when `core.hooksPath` moves them out of the
    /// git directory (`None`: the git directory's own `hooks/`, which the rules cover).
    pub(super) hooks: Option<PathBuf>,
    /// Host files the repository's hooks and hook managers name by path.
    pub(super) called: HashSet<PathBuf>,
}

/// The facts, gathered once per merge.
pub(super) struct HostFacts<'a> {
    root: &'a Path,
    upper: &'a Path,
    home: &'a Path,
    /// Per directory: the repository whose root it is, if it is one.
    repos: RefCell<HashMap<PathBuf, Option<Rc<Repo>>>>,
    /// The last directory [`HostFacts::repos_of`] was asked about and its answer: the
    /// merge judges a directory's entries one after another.
    last_repos: RefCell<Option<(PathBuf, Vec<Rc<Repo>>)>>,
    /// `core.hooksPath` of the user's and the system's configuration.
    global_hooks: OnceCell<Option<Vec<u8>>>,
    /// Files agent instruction files import.
    imports: OnceCell<HashMap<PathBuf, PathBuf>>,
    /// Per directory: whether the host has a virtualenv there (a `pyvenv.cfg`).
    venvs: RefCell<HashMap<PathBuf, bool>>,
    /// Per site-packages directory: the modules its `.pth` files import at start.
    pth_imports: RefCell<HashMap<PathBuf, Rc<HashSet<Vec<u8>>>>>,
}

impl<'a> HostFacts<'a> {
    pub(super) fn new(root: &'a Path, upper: &'a Path, home: &'a Path) -> HostFacts<'a> {
        HostFacts {
            root,
            upper,
            home,
            repos: RefCell::new(HashMap::new()),
            last_repos: RefCell::new(None),
            global_hooks: OnceCell::new(),
            imports: OnceCell::new(),
            venvs: RefCell::new(HashMap::new()),
            pth_imports: RefCell::new(HashMap::new()),
        }
    }

    /// Why a change at `path` in one of the host's virtualenvs (a directory holding
    /// `pyvenv.cfg`, whatever its name) waits for review (F1): a replaced interpreter or
    /// activation script (IDEs run the interpreter when the folder opens, shells and
    /// direnv source `activate`), or a module that a `.pth` file of the environment
    /// imports at every start of its interpreter. `host_has`: the host has the entry.
    pub(super) fn venv_hold(&self, path: &Path, host_has: bool) -> Option<String> {
        let rel = path.strip_prefix(self.root).ok()?;
        let comps: Vec<&OsStr> = rel.iter().collect();
        let mut dir = self.root.to_path_buf();
        let mut venv = None;
        for (i, c) in comps.iter().enumerate().take(comps.len().saturating_sub(1)) {
            if self.is_venv(&dir) {
                venv = Some((dir.clone(), i));
            }
            dir.push(c);
        }
        let (top, at) = venv?;
        let inner = &comps[at..];
        let name = inner.last()?.as_bytes().to_ascii_lowercase();
        if inner.len() == 2
            && matches!(inner[0].as_bytes(), b"bin" | b"Scripts")
            && host_has
            && (name.starts_with(b"python")
                || name.starts_with(b"pypy")
                || name.starts_with(b"activate"))
        {
            return Some(format!(
                "it replaces the interpreter or activation script of the virtualenv {}: editors run it when the folder opens, shells source it",
                top.display()
            ));
        }
        let sp = inner
            .iter()
            .position(|c| c.as_bytes().eq_ignore_ascii_case(b"site-packages"))?;
        let module = inner.get(sp + 1)?.as_bytes();
        let module = module.split(|b| *b == b'.').next().unwrap_or(module);
        let site: PathBuf = top.join(inner[..=sp].iter().collect::<PathBuf>());
        let imported = self.pth_imports_of(&site);
        imported.contains(module).then(|| {
            format!(
                "a .pth file of {} imports `{}` at every start of the interpreter",
                site.display(),
                String::from_utf8_lossy(module)
            )
        })
    }

    /// The virtualenvs directly below the root (on the host).
    pub(super) fn root_venvs(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(self.root) else {
            return Vec::new();
        };
        rd.flatten()
            .take(4096)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .filter(|p| self.is_venv(p))
            .collect()
    }

    /// The name of `path` when it is an entry of a virtualenv's `bin` directory (the
    /// virtualenv on the host or made by the run).
    pub(super) fn venv_bin_entry<'p>(&self, path: &'p Path) -> Option<&'p OsStr> {
        let name = path.file_name()?;
        let bin = path.parent()?;
        if bin.file_name().is_none_or(|b| b != "bin") {
            return None;
        }
        let venv = bin.parent()?;
        (venv.starts_with(self.root) && self.is_venv(venv)).then_some(name)
    }

    fn is_venv(&self, dir: &Path) -> bool {
        if let Some(known) = self.venvs.borrow().get(dir) {
            return *known;
        }
        let marked =
            |d: &Path| std::fs::symlink_metadata(d.join("pyvenv.cfg")).is_ok_and(|m| m.is_file());
        let found = marked(dir)
            || dir
                .strip_prefix(self.root)
                .is_ok_and(|rel| marked(&self.upper.join(rel)));
        self.venvs.borrow_mut().insert(dir.to_path_buf(), found);
        found
    }

    fn pth_imports_of(&self, site: &Path) -> Rc<HashSet<Vec<u8>>> {
        if let Some(known) = self.pth_imports.borrow().get(site) {
            return known.clone();
        }
        let mut out = HashSet::new();
        let files = std::fs::read_dir(site)
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "pth"))
                    .take(MAX_HOOKS)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        for f in files {
            let Some(text) = read_capped(&f, MAX_SCANNED) else {
                continue;
            };
            for line in text.split(|b| *b == b'\n') {
                // site.py executes lines that start with `import` (space or tab), whole.
                if !(line.starts_with(b"import ") || line.starts_with(b"import\t")) {
                    continue;
                }
                for stmt in line.split(|b| *b == b';') {
                    let stmt = stmt.trim_ascii();
                    let Some(rest) = stmt.strip_prefix(b"import") else {
                        continue;
                    };
                    for m in rest.split(|b| *b == b',') {
                        let m = m.trim_ascii();
                        let m = m
                            .split(|b| b.is_ascii_whitespace() || *b == b'.')
                            .next()
                            .unwrap_or(m);
                        if !m.is_empty() {
                            out.insert(m.to_vec());
                        }
                    }
                }
                // `__import__('_distutils_hack')`, `import_module("x")`.
                for call in [&b"__import__("[..], b"import_module("] {
                    let mut hay = line;
                    while let Some(i) = hay.windows(call.len()).position(|w| w == call) {
                        hay = &hay[i + call.len()..];
                        let arg = hay.strip_prefix(b"'").or_else(|| hay.strip_prefix(b"\""));
                        if let Some(arg) = arg {
                            let end = arg
                                .iter()
                                .position(|b| matches!(b, b'\'' | b'"' | b'.'))
                                .unwrap_or(arg.len());
                            if end > 0 {
                                out.insert(arg[..end].to_vec());
                            }
                        }
                    }
                }
            }
        }
        let out = Rc::new(out);
        self.pth_imports
            .borrow_mut()
            .insert(site.to_path_buf(), out.clone());
        out
    }

    /// The repositories whose work tree holds `path` (below the root, the root included),
    /// innermost first.
    pub(super) fn repos_of(&self, path: &Path) -> Vec<Rc<Repo>> {
        let Ok(rel) = path.strip_prefix(self.root) else {
            return Vec::new();
        };
        if rel.as_os_str().is_empty() {
            // The root itself lies in no repository below it.
            return Vec::new();
        }
        // The answer depends on the entry's parent directory only.
        let parent = path.parent().unwrap_or(path);
        if let Some((dir, repos)) = self.last_repos.borrow().as_ref()
            && dir == parent
        {
            return repos.clone();
        }
        let mut dir = self.root.to_path_buf();
        let mut out = Vec::new();
        let comps: Vec<&OsStr> = rel.iter().collect();
        // Every directory from the root down to the entry's parent.
        for i in 0..comps.len() {
            if i > 0 {
                dir.push(comps[i - 1]);
            }
            if let Some(r) = self.repo_at(&dir) {
                out.push(r);
            }
        }
        out.reverse();
        *self.last_repos.borrow_mut() = Some((parent.to_path_buf(), out.clone()));
        out
    }

    fn repo_at(&self, dir: &Path) -> Option<Rc<Repo>> {
        if let Some(known) = self.repos.borrow().get(dir) {
            return known.clone();
        }
        let found = self.find_repo(dir).map(Rc::new);
        self.repos
            .borrow_mut()
            .insert(dir.to_path_buf(), found.clone());
        found
    }

    fn find_repo(&self, dir: &Path) -> Option<Repo> {
        let host_git = dir.join(".git");
        let in_layer = self
            .upper
            .join(dir.strip_prefix(self.root).ok()?)
            .join(".git");
        let host_meta = std::fs::symlink_metadata(&host_git).ok();
        if host_meta.is_none() && std::fs::symlink_metadata(&in_layer).is_err() {
            return None;
        }
        let mut repo = Repo {
            top: dir.to_path_buf(),
            ..Repo::default()
        };
        // The host's own git directory and configuration: the run's changes to the
        // configuration are judged on their own (a hooksPath it sets is refused).
        let gitdir = match host_meta {
            Some(m) if m.is_dir() => Some(host_git),
            Some(m) if m.is_file() => read_capped(&host_git, 4096).and_then(|b| {
                let text = String::from_utf8(b).ok()?;
                let target = text.trim().strip_prefix("gitdir:")?.trim().to_owned();
                Some(dir.join(target))
            }),
            _ => None,
        };
        let mut configs: Vec<PathBuf> = Vec::new();
        if let Some(g) = &gitdir {
            if let Some(common) =
                read_capped(&g.join("commondir"), 4096).and_then(|b| String::from_utf8(b).ok())
            {
                configs.push(g.join(common.trim()).join("config"));
            }
            configs.push(g.join("config"));
        }
        // The host's git in the repository reads every layer as it will at the next
        // commit (`includeIf` included); where it cannot (not the host's repository yet,
        // another owner's), the files are read one by one.
        let hooks_path = match repo_config_get(dir, "core.hooksPath", self.home) {
            Some(found) => found,
            None => {
                let mut v = self.global_hooks().clone();
                for c in &configs {
                    if let Some(found) = config_get(c, "core.hooksPath", self.home) {
                        v = Some(found);
                    }
                }
                v
            }
        };
        let hooks_dir = match &hooks_path {
            Some(v) if !v.is_empty() => Some(self.resolve(dir, v)),
            _ => gitdir.as_ref().map(|g| g.join("hooks")),
        };
        if hooks_path.as_ref().is_some_and(|v| !v.is_empty()) {
            repo.hooks = hooks_dir.clone();
        }
        let mut scripts: Vec<PathBuf> = Vec::new();
        if let Some(h) = &hooks_dir {
            scripts.extend(hook_files(h));
        }
        for d in HOOK_MANAGER_DIRS {
            scripts.extend(hook_files(&dir.join(d)));
        }
        scripts.extend(HOOK_MANAGER_FILES.iter().map(|f| dir.join(f)));
        for s in scripts {
            if let Some(text) = read_capped(&s, MAX_SCANNED) {
                for token in path_tokens(&text) {
                    let p = self.resolve(dir, token);
                    if p.starts_with(self.root)
                        && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
                    {
                        repo.called.insert(p);
                    }
                }
            }
        }
        Some(repo)
    }

    fn global_hooks(&self) -> &Option<Vec<u8>> {
        self.global_hooks.get_or_init(|| {
            let xdg = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| self.home.join(".config"));
            let mut found = None;
            for f in [
                PathBuf::from("/etc/gitconfig"),
                xdg.join("git/config"),
                self.home.join(".gitconfig"),
            ] {
                if let Some(v) = config_get(&f, "core.hooksPath", self.home) {
                    found = Some(v);
                }
            }
            found
        })
    }

    /// `value` (a path from a hook or configuration) as git and a shell in the work tree
    /// `top` would take it: `~/` from HOME, a relative path from `top`; cleaned.
    fn resolve(&self, top: &Path, value: &[u8]) -> PathBuf {
        let text = Path::new(OsStr::from_bytes(value));
        let joined = if let Ok(rest) = text.strip_prefix("~") {
            self.home.join(rest)
        } else {
            top.join(text)
        };
        clean(&joined)
    }

    /// The instruction file that imports `path` (with `@path`), if one does.
    pub(super) fn imported_by(&self, path: &Path) -> Option<&Path> {
        self.imports
            .get_or_init(|| self.gather_imports())
            .get(path)
            .map(PathBuf::as_path)
    }

    fn gather_imports(&self) -> HashMap<PathBuf, PathBuf> {
        let mut out: HashMap<PathBuf, PathBuf> = HashMap::new();
        let mut todo: Vec<(PathBuf, PathBuf, usize)> = INSTRUCTION_FILES
            .iter()
            .map(|f| {
                let p = self.root.join(f);
                (p.clone(), p, 0)
            })
            .collect();
        let mut seen = HashSet::new();
        while let Some((file, by, depth)) = todo.pop() {
            if depth > MAX_IMPORT_DEPTH || !seen.insert(file.clone()) || seen.len() > 256 {
                continue;
            }
            // The host's version and the run's: either is what the next session reads.
            let mut texts = Vec::new();
            texts.extend(read_capped(&file, MAX_SCANNED));
            if let Ok(rel) = file.strip_prefix(self.root) {
                texts.extend(read_capped(&self.upper.join(rel), MAX_SCANNED));
            }
            let base = file.parent().unwrap_or(self.root).to_path_buf();
            for text in texts {
                for token in at_imports(&text) {
                    let p = self.resolve(&base, token);
                    if p == file {
                        continue;
                    }
                    out.entry(p.clone()).or_insert_with(|| by.clone());
                    todo.push((p, by.clone(), depth + 1));
                }
            }
        }
        out
    }
}

/// The regular files of the directory `dir` (not `*.sample`), at most [`MAX_HOOKS`].
fn hook_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| !p.as_os_str().as_bytes().ends_with(b".sample"))
        .take(MAX_HOOKS)
        .collect()
}

/// At most `cap` bytes of the regular file at `path` (not following a final symlink).
fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    let dir = cordon_fs::Dir::open_ambient(path.parent()?).ok()?;
    let f = dir.open_read(Path::new(path.file_name()?)).ok()?;
    let mut out = Vec::new();
    f.take(cap).read_to_end(&mut out).ok()?;
    Some(out)
}

/// `key` of the git configuration file `file` as the host's git reads it (includes
/// followed), `None` when it is unset or the file cannot be read.
fn config_get(file: &Path, key: &str, home: &Path) -> Option<Vec<u8>> {
    if std::fs::symlink_metadata(file).is_err() {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["config", "--includes", "--file"])
        .arg(file)
        .args(["--get", key])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", home)
        .env("LC_ALL", "C")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v = out.stdout;
    while v.last().is_some_and(|b| *b == b'\n') {
        v.pop();
    }
    Some(v)
}

/// `key` as the host's git reads it in the work tree `top` (every configuration file,
/// conditional includes evaluated): `Some(None)` when it is unset, `None` when git could
/// not read the repository's configuration there.
fn repo_config_get(top: &Path, key: &str, home: &Path) -> Option<Option<Vec<u8>>> {
    if !std::fs::symlink_metadata(top.join(".git")).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let out = std::process::Command::new("git")
        .args(["--no-optional-locks", "config", "--includes", "--get", key])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CEILING_DIRECTORIES", top.parent().unwrap_or(top))
        .env("LC_ALL", "C")
        .current_dir(top)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    match out.status.code() {
        Some(0) => {
            let mut v = out.stdout;
            while v.last().is_some_and(|b| *b == b'\n') {
                v.pop();
            }
            Some(Some(v))
        }
        Some(1) => Some(None),
        _ => None,
    }
}

/// Words of a hook or hook manager's configuration that name a file by path: with a
/// `/`, or ending like a script (`lint.sh`, `check.py`).
fn path_tokens(text: &[u8]) -> Vec<&[u8]> {
    const EXTS: &[&[u8]] = &[
        b".sh", b".bash", b".zsh", b".py", b".js", b".mjs", b".cjs", b".ts", b".rb", b".pl",
        b".php", b".lua",
    ];
    text.split(|b| b.is_ascii_whitespace() || b";|&()<>\"'`=,[]{}".contains(b))
        .map(|t| t.strip_prefix(b"./").unwrap_or(t))
        .filter(|t| !t.is_empty() && !t.starts_with(b"-") && !t.contains(&b'$'))
        .filter(|t| t.contains(&b'/') || EXTS.iter().any(|e| t.to_ascii_lowercase().ends_with(e)))
        .filter(|t| !t.contains(&0) && !t.starts_with(b"/") && !t.contains(&b':'))
        .collect()
}

/// The `@path` imports of an instruction file: an `@` at the start of a word, followed by
/// a path (trailing punctuation dropped).
fn at_imports(text: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    for word in text.split(|b| b.is_ascii_whitespace() || b"()[]<>\"'`".contains(b)) {
        let Some(rest) = word.strip_prefix(b"@") else {
            continue;
        };
        let mut rest = rest;
        while let Some((last, head)) = rest.split_last() {
            if b".,;:!?".contains(last) {
                rest = head;
            } else {
                break;
            }
        }
        // An e-mail address or a mention has no path in it.
        if !rest.is_empty()
            && !rest.contains(&b'@')
            && (rest.contains(&b'/') || rest.contains(&b'.'))
        {
            out.push(rest);
        }
    }
    out
}

/// `p` without `.` and with `..` applied to the text.
fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_that_name_files() {
        let t = b"#!/bin/sh\n./scripts/lint.sh && npm test\nexec python3 tools/check.py \"$@\"\nrun: bash x.sh --flag\n";
        let got: Vec<&[u8]> = path_tokens(t);
        assert!(got.contains(&&b"scripts/lint.sh"[..]));
        assert!(got.contains(&&b"tools/check.py"[..]));
        assert!(got.contains(&&b"x.sh"[..]));
        assert!(!got.contains(&&b"npm"[..]));
        let i =
            at_imports(b"See @docs/agent-guidelines.md. Mail me@x.org or @alice; @~/.claude/x.md");
        assert_eq!(
            i,
            vec![&b"docs/agent-guidelines.md"[..], &b"~/.claude/x.md"[..]]
        );
    }
}
