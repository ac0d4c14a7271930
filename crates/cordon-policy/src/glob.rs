//! Globs against the guard lists: can a glob in a command name a guarded path?
//!
//! A word like `~/.s?h/id_*`, `.env*` or `/etc/shado[w]` is expanded by bash from the
//! file system at run time. cordon never lists the file system to find out: it asks
//! whether some file name the glob could match is one the guards protect, by
//! intersecting each component of the glob with the matching component of each guard
//! entry (`cordon_shell::pattern::Pattern::could_match`: automata, no backtracking).
//!
//! A guard entry is anchored (under HOME, at `/`, at a process directory of `/proc`) or
//! holds anywhere (a secret file name, `.git/hooks`). A match counts only when the
//! glob aims at the entry's guarded name: the component lining up with it spells some
//! of the name's own characters and could not name an ordinary file (`a`, `main.rs`).
//! `cat *` or `rm *.o` in a project may touch a `server.pem` or an `id_rsa.o` exactly
//! as `grep -r . .` may, and are not refused for it, while `cat *.pem`, `cat .env*` and
//! `cat ~/.s?h/id_rsa` name the secret. Ancestors of HOME and of the
//! workspace exist for sure, so any glob that can match one of them is a critical
//! delete (`rm -rf ~/*`, `rm -rf /*`).
//!
//! Never decides by itself: it reports a [`GuardHit`] and the caller turns it into a
//! guard operation. Never looks at a file system.

use std::path::{Component, Path};

use cordon_shell::pattern::Pattern;

use crate::guards::{
    self, GuardHit, PROTECTED_ANYWHERE_COMPONENTS, PROTECTED_ANYWHERE_FILES,
    PROTECTED_ANYWHERE_SEQUENCES, PROTECTED_HOME_PATHS, PROTECTED_SYSTEM_PATHS,
    SENSITIVE_HOME_PATHS, SENSITIVE_SYSTEM_PATHS,
};
use crate::secret_files;

/// Secret file names ([`guards::is_secret_file_name`]) as patterns.
const SECRET_NAMES: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ed25519*",
    "id_ecdsa*",
    "id_dsa*",
];

/// Ordinary file names: a glob component that can match one of them names nothing in
/// particular.
const ORDINARY: &[&str] = &[
    "a",
    "z9",
    "file",
    "src",
    "main.rs",
    "README.md",
    "x.py",
    "a.b",
    "b.txt",
    "Makefile",
];

/// One component of a glob path.
#[derive(Debug)]
enum Comp {
    /// From the working directory or HOME: not spelled by the glob.
    Given(String),
    /// Spelled by the glob (a literal part or a pattern); `true` for a search tool's
    /// glob, whose wildcards take a leading dot ([`Pattern::meets_as_tool_glob`]).
    Glob(Pattern, bool),
}

impl Comp {
    /// Can this component be a name the guard component `want` matches, and does the
    /// glob itself aim at it (see [`Pattern::meets`]) with a component that could not
    /// be an ordinary name?
    fn meets(&self, want: &Pattern) -> Option<bool> {
        match self {
            Comp::Given(s) => guard_matches(want, s).then_some(false),
            Comp::Glob(p, tool) => match if *tool {
                p.meets_as_tool_glob(want)
            } else {
                p.meets(want)
            } {
                (false, _) => None,
                (true, aimed) => Some(aimed && !ORDINARY.iter().any(|n| p.matches_name(n))),
            },
        }
    }
}

/// A guard pattern matched against a concrete name, ignoring ASCII case (as the guards
/// do).
fn guard_matches(want: &Pattern, name: &str) -> bool {
    want.matches(name) || want.matches(&name.to_ascii_lowercase())
}

/// The components of a glob path: `pattern` (bash pattern syntax, a leading `~` for
/// HOME) made absolute against `cwd` when it is relative. `None` for the components
/// before the glob when they are not known (a relative glob under a directory only
/// known at run time): only guards that hold anywhere apply then.
fn components(pattern: &str, cwd: Option<&Path>, home: &Path, tool: bool) -> (Vec<Comp>, bool) {
    let mut out = Vec::new();
    let rest = if let Some(r) = pattern
        .strip_prefix('~')
        .filter(|r| r.is_empty() || r.starts_with('/'))
    {
        given(home, &mut out);
        r
    } else if pattern.starts_with('/') {
        pattern
    } else if let Some(cwd) = cwd {
        given(cwd, &mut out);
        pattern
    } else {
        return (split(pattern, Vec::new(), tool), false);
    };
    (split(rest, out, tool), true)
}

fn given(dir: &Path, out: &mut Vec<Comp>) {
    for c in dir.components() {
        match c {
            Component::Normal(s) => out.push(Comp::Given(s.to_string_lossy().into_owned())),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
}

/// Split a pattern at unescaped `/` and append its components (`.` dropped, `..`
/// applied lexically, as for literal paths).
fn split(pattern: &str, mut out: Vec<Comp>, tool: bool) -> Vec<Comp> {
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<Comp>| {
        let c = std::mem::take(cur);
        match c.as_str() {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            _ => out.push(Comp::Glob(Pattern::parse(&c), tool)),
        }
    };
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                cur.push('\\');
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            '/' => flush(&mut cur, &mut out),
            _ => cur.push(c),
        }
    }
    flush(&mut cur, &mut out);
    out
}

/// Does the path `comps` start with `rule` (anchored at the root), the glob aiming at
/// the rule's last component (the guarded name itself: `/proc/*/status` can match
/// `/proc/kcore/…` only through a `*`)? `exact`: the path must end there.
fn anchored(comps: &[Comp], rule: &[Pattern], exact: bool) -> bool {
    if comps.len() < rule.len() || (exact && comps.len() != rule.len()) {
        return false;
    }
    let mut specific = false;
    for (c, want) in comps.iter().zip(rule) {
        match c.meets(want) {
            None => return false,
            Some(s) => specific = s,
        }
    }
    specific
}

/// Like [`anchored`] for a rule relative to HOME.
fn under_home(comps: &[Comp], home: &[Pattern], rule: &[Pattern]) -> bool {
    if comps.len() < home.len() + rule.len() {
        return false;
    }
    let (head, tail) = comps.split_at(home.len());
    head.iter().zip(home).all(|(c, h)| c.meets(h).is_some()) && anchored(tail, rule, false)
}

/// Does a run of components match `seq` anywhere, the glob aiming at its last one?
fn anywhere(comps: &[Comp], seq: &[Pattern], last_only: bool) -> bool {
    if comps.len() < seq.len() {
        return false;
    }
    let starts = if last_only {
        comps.len() - seq.len()..comps.len() - seq.len() + 1
    } else {
        0..comps.len() - seq.len() + 1
    };
    starts.into_iter().any(|s| {
        let mut specific = false;
        for (c, w) in comps[s..s + seq.len()].iter().zip(seq) {
            match c.meets(w) {
                None => return false,
                Some(x) => specific = x,
            }
        }
        specific
    })
}

fn pats(path: &str) -> Vec<Pattern> {
    path.trim_start_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(Pattern::parse)
        .collect()
}

fn literal_pats(path: &Path) -> Vec<Pattern> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(Pattern::parse(&escape(&s.to_string_lossy()))),
            _ => None,
        })
        .collect()
}

/// `s` with every character bash patterns treat specially made literal.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '*' | '?' | '[' | ']' | '\\' | '(' | ')' | '|' | '!' | '@' | '+'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn hit(guard: &'static str, pattern: impl Into<String>) -> Option<GuardHit> {
    Some(GuardHit {
        guard,
        pattern: pattern.into(),
    })
}

/// Can reading a path the glob matches touch a credential?
fn sensitive(comps: &[Comp], anchored_path: bool, home: &[Pattern]) -> Option<GuardHit> {
    const GUARD: &str = "sensitive-read";
    if anchored_path {
        for rel in SENSITIVE_HOME_PATHS {
            if under_home(comps, home, &pats(rel)) {
                return hit(GUARD, format!("~/{rel}"));
            }
        }
        for entry in guards::PROC_PER_PROCESS {
            if anchored(comps, &pats(&format!("proc/*/{entry}")), false)
                || anchored(comps, &pats(&format!("proc/*/task/*/{entry}")), false)
            {
                return hit(GUARD, format!("/proc/*/{entry}"));
            }
        }
        if anchored(comps, &pats("proc/kcore"), false) {
            return hit(GUARD, "/proc/kcore");
        }
        for abs in SENSITIVE_SYSTEM_PATHS {
            if anchored(comps, &pats(abs), false) {
                return hit(GUARD, *abs);
            }
        }
        if anchored(comps, &pats("etc/ssh/ssh_host_*_key"), true) {
            return hit(GUARD, "/etc/ssh/ssh_host_*_key");
        }
    }
    for name in SECRET_NAMES {
        if anywhere(comps, &[Pattern::parse(name)], false) {
            return hit(GUARD, format!("secret file name {name}"));
        }
    }
    for name in secret_files::more_secret_patterns() {
        if anywhere(comps, &[Pattern::parse(&name)], false) {
            return hit(GUARD, format!("secret file name {name}"));
        }
    }
    // HOME's credential paths wherever they lie (`proj/.aws/credentials`).
    for rel in SENSITIVE_HOME_PATHS
        .iter()
        .filter(|r| !secret_files::HOME_ONLY.contains(r))
    {
        if anywhere(comps, &pats(rel), false) {
            return hit(GUARD, format!("credential file {rel}"));
        }
    }
    None
}

/// Can writing a path the glob matches plant code or configuration?
fn protected(comps: &[Comp], anchored_path: bool, home: &[Pattern]) -> Option<GuardHit> {
    const GUARD: &str = "protected-write";
    if anchored_path {
        for rel in PROTECTED_HOME_PATHS {
            if under_home(comps, home, &pats(rel)) {
                return hit(GUARD, format!("~/{rel}"));
            }
        }
        for abs in PROTECTED_SYSTEM_PATHS {
            if anchored(comps, &pats(abs), false) {
                return hit(GUARD, *abs);
            }
        }
    }
    for name in PROTECTED_ANYWHERE_COMPONENTS {
        if anywhere(comps, &[Pattern::parse(&escape(name))], false) {
            return hit(GUARD, format!("{name} (agent or IDE configuration)"));
        }
    }
    for name in PROTECTED_ANYWHERE_FILES {
        if anywhere(comps, &[Pattern::parse(&escape(name))], true) {
            return hit(GUARD, *name);
        }
    }
    for seq in PROTECTED_ANYWHERE_SEQUENCES {
        let p: Vec<Pattern> = seq.iter().map(|s| Pattern::parse(&escape(s))).collect();
        if anywhere(comps, &p, false) {
            return hit(GUARD, seq.join("/"));
        }
    }
    sensitive(comps, anchored_path, home).map(|h| GuardHit {
        guard: GUARD,
        pattern: h.pattern,
    })
}

/// Can deleting the paths the glob matches remove `/`, a top-level directory, HOME,
/// the workspace or an ancestor of them? Those exist, so a glob that can match one
/// will.
fn critical(comps: &[Comp], home: &Path, workspace: &Path) -> Option<GuardHit> {
    const GUARD: &str = "critical-delete";
    if comps.len() <= 1 {
        return hit(GUARD, "/ or a top-level directory");
    }
    for (dir, what) in [(home, "HOME"), (workspace, "the workspace")] {
        let want = literal_pats(dir);
        if comps.len() <= want.len() && comps.iter().zip(&want).all(|(c, w)| c.meets(w).is_some()) {
            return hit(GUARD, format!("{what} or a directory containing it"));
        }
    }
    // Everything in HOME (`rm -rf ~/*`) is HOME, whatever is left of it.
    let want = literal_pats(home);
    if comps.len() == want.len() + 1
        && comps.iter().zip(&want).all(|(c, w)| c.meets(w).is_some())
        && matches!(comps.last(), Some(Comp::Glob(p, _)) if ORDINARY.iter().all(|n| p.matches_name(n)))
    {
        return hit(GUARD, "everything in HOME");
    }
    None
}

/// What a guard says about an operation of `kind` on every path the glob `pattern`
/// can match. `kind` is `"read"` (reads and listings), `"write"` or `"delete"`.
pub(crate) fn guard_hit(
    kind: &str,
    pattern: &str,
    cwd: Option<&Path>,
    home: &Path,
    workspace: &Path,
) -> Option<GuardHit> {
    guard_hit_as(kind, pattern, cwd, home, workspace, false)
}

/// [`guard_hit`] of a search tool's glob, whose wildcards take a leading dot (`**`
/// already replaced by runs of `*` components, see `crate::search`).
pub(crate) fn tool_glob_guard_hit(
    pattern: &str,
    cwd: Option<&Path>,
    home: &Path,
    workspace: &Path,
) -> Option<GuardHit> {
    guard_hit_as("read", pattern, cwd, home, workspace, true)
}

fn guard_hit_as(
    kind: &str,
    pattern: &str,
    cwd: Option<&Path>,
    home: &Path,
    workspace: &Path,
    tool: bool,
) -> Option<GuardHit> {
    let (comps, anchored_path) = components(pattern, cwd, home, tool);
    let home_pats = literal_pats(home);
    match kind {
        "read" => sensitive(&comps, anchored_path, &home_pats),
        "write" => protected(&comps, anchored_path, &home_pats),
        "delete" => {
            let crit = if anchored_path {
                critical(&comps, home, workspace)
            } else {
                None
            };
            crit.or_else(|| protected(&comps, anchored_path, &home_pats))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    const HOME: &str = "/home/u";
    const WS: &str = "/home/u/src/proj";

    fn read(p: &str) -> bool {
        guard_hit(
            "read",
            p,
            Some(Path::new(WS)),
            Path::new(HOME),
            Path::new(WS),
        )
        .is_some()
    }
    fn write(p: &str) -> bool {
        guard_hit(
            "write",
            p,
            Some(Path::new(WS)),
            Path::new(HOME),
            Path::new(WS),
        )
        .is_some()
    }
    fn delete(p: &str) -> bool {
        guard_hit(
            "delete",
            p,
            Some(Path::new(WS)),
            Path::new(HOME),
            Path::new(WS),
        )
        .is_some()
    }

    #[test]
    fn globs_naming_secrets() {
        for g in [
            "~/.s?h/id_rsa",
            "~/.[s]sh/id_rsa",
            "~/.ssh/id_*",
            "~/.aws/cred*",
            "~/.*/credentials",
            ".env*",
            ".en?",
            "config/*.pem",
            "/???/shado?",
            "/etc/shad*",
            "/proc/*/environ",
            "/proc/[0-9]*/environ",
            "~/.SS?/id_rsa",
            "~/.net*",
            "/etc/ssh/ssh_host_*_key",
        ] {
            assert!(read(g), "{g} should name a credential");
        }
    }

    #[test]
    fn globs_naming_nothing_guarded() {
        for g in [
            "*",
            "src/*.rs",
            "*.md",
            "~/*",
            "docs/*",
            "/etc/*.conf",
            "/proc/*/status",
            "/etc/ssh/ssh_host_*_key.pub",
            "*.txt",
        ] {
            assert!(!read(g), "{g} should not name a credential");
        }
    }

    /// The names of `secret_files.rs` and HOME's credential paths in their relative
    /// form, as globs anywhere.
    #[test]
    fn globs_naming_workspace_credentials() {
        for g in [
            "proj/.aws/cred*",
            ".aws/*",
            "infra/*.tfstate",
            ".envr?",
            ".dev.var*",
            "deploy/.kube/conf*",
            ".git-cred*",
            "app/.m2/settings.x*",
        ] {
            assert!(read(g), "{g} should name a credential");
        }
        for g in ["*.tf", "src/*.json", "*/*.toml", ".npmr?"] {
            assert!(!read(g), "{g} should not name a credential");
        }
    }

    #[test]
    fn globs_naming_protected_writes() {
        assert!(write(".vs*/settings.json"));
        assert!(write("~/.bash*"));
        assert!(write(".git/hook?/pre-commit"));
        assert!(write("/etc/cron.*/x"));
        assert!(!write("*.o"));
        assert!(!write("build/*"));
    }

    #[test]
    fn globs_deleting_ancestors() {
        assert!(delete("/*"));
        assert!(delete("~/*"));
        assert!(delete("/home/*"));
        assert!(delete("~/.bash*"));
        assert!(!delete("~/.[!.]*"), "names no entry in particular");
        assert!(!delete("*.o"));
        assert!(!delete("build/*"));
        assert!(!delete("/tmp/*"));
    }

    #[test]
    fn globs_deleting_everything_in_home() {
        let ws = Path::new("/w/proj");
        let del = |p: &str| guard_hit("delete", p, Some(ws), Path::new(HOME), ws).is_some();
        assert!(del("~/*"));
        assert!(del("/home/u/*"));
        assert!(del("~/?*"));
        assert!(!del("~/*.txt"), "some of HOME, not all of it");
        assert!(!del("~/src/*"));
        assert!(!del("/tmp/*"));
    }

    #[test]
    fn relative_glob_under_unknown_directory() {
        let h = Path::new(HOME);
        assert!(guard_hit("read", ".env*", None, h, Path::new(WS)).is_some());
        assert!(guard_hit("read", "*.rs", None, h, Path::new(WS)).is_none());
    }

    #[test]
    fn secret_patterns_agree_with_the_guard() {
        for (name, sample) in [
            (".env", ".env"),
            (".env.*", ".env.local"),
            ("*.pem", "x.pem"),
            ("*.key", "x.key"),
            ("*.p12", "x.p12"),
            ("*.pfx", "x.pfx"),
            ("id_rsa*", "id_rsa"),
            ("id_ed25519*", "id_ed25519.old"),
            ("id_ecdsa*", "id_ecdsa"),
            ("id_dsa*", "id_dsa"),
        ] {
            assert!(SECRET_NAMES.contains(&name));
            assert!(Pattern::parse(name).matches(sample));
            assert!(guards::is_secret_file_name(OsStr::new(sample)), "{sample}");
        }
        assert_eq!(SECRET_NAMES.len(), 10);
    }
}
