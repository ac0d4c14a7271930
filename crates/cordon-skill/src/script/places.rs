//! Where a script's paths lead other than where they are written: the working folders
//! it moves to or starts processes in, the links it makes, and the relative paths that
//! only such a place gives a meaning (judged in `review::workdir`).

use super::fold::{RUNTIME, V};
use super::{Lang, Unit};
use tree_sitter::Node;

/// Calls that move the process to another working folder (the first argument).
const CHDIR_CALLS: &[&str] = &[
    "os.chdir",
    "contextlib.chdir",
    "process.chdir",
    "Deno.chdir",
    "Dir.chdir",
    "FileUtils.cd",
    "FileUtils.chdir",
];

/// The link a call makes and what it points to: `Path(l).symlink_to(t)`,
/// `os.symlink(t, l)`, Node's `symlink(t, l)`, Ruby's `FileUtils.ln_s(t, l)`.
impl Unit<'_> {
    pub(super) fn link_made(&self, node: Node<'_>, name: &str, args: &[V]) -> Option<(V, V)> {
        let method = name.rsplit('.').next().unwrap_or(name);
        let second = || Some((args.get(1)?.clone(), args.first()?.clone()));
        match self.lang {
            Lang::Python if matches!(method, "symlink_to" | "hardlink_to") => {
                Some((self.fold(self.receiver(node)?), args.first()?.clone()))
            }
            Lang::Python if matches!(name, "os.symlink" | "os.link") => second(),
            Lang::Ruby
                if matches!(
                    name,
                    "FileUtils.ln_s"
                        | "FileUtils.ln_sf"
                        | "FileUtils.ln"
                        | "File.symlink"
                        | "File.link"
                ) =>
            {
                second()
            }
            _ if matches!(
                super::js_caps::fs_member(self.lang, name),
                Some("symlink" | "link" | "ensureSymlink" | "ensureLink")
            ) =>
            {
                second()
            }
            _ => None,
        }
    }
}

/// A relative path with a folder part (`theme/.aws/credentials`): judged only where a
/// working folder or a link the script makes takes it.
pub(super) fn relative_path(s: &str) -> bool {
    s.contains('/')
        && !s.starts_with(['/', '~'])
        && s.len() < 4096
        && !s.contains("://")
        && !s.contains(RUNTIME)
        && !s.chars().any(char::is_whitespace)
}

/// The working folder a call moves the process to, or starts a process in.
pub(super) fn working_folder(name: &str, args: &[V], kw: impl Fn(&str) -> Option<V>) -> Option<V> {
    match name {
        // `Dir.chdir` without a folder moves to the home folder.
        "Dir.chdir" if args.is_empty() => Some(V::Str("~".into(), true)),
        _ if CHDIR_CALLS.contains(&name) => Some(args.first().cloned().unwrap_or(V::Unknown)),
        "os.fchdir" => Some(V::Unknown),
        _ => kw("cwd").or_else(|| kw("chdir")),
    }
}
