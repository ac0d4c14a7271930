//! The leading options of build tools and package managers: where the subcommand is,
//! and which directory the tool is told to work in.
//!
//! Two readers need the same answer: the program knowledge (what `cargo -C d test`
//! does) and the executed-file knowledge (which files `cargo -C d test` runs). Both read
//! the head of the argument list through this one scanner, so an option one of them
//! learns the other learns too. Pure: no I/O.

/// The head of a `cargo` command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CargoHead<'a> {
    /// Index of the first word that is not a global option: the subcommand, or a
    /// flag such as `--version`.
    pub at: usize,
    /// `-C DIR`: the directory cargo changes to before it does anything.
    pub dir: Option<&'a str>,
    /// The values of `--config`, in order (a key=value or a file).
    pub config: Vec<&'a str>,
}

/// Global options of cargo that take a value.
/// (`--manifest-path` is read wherever it stands, by `executes`.)
const CARGO_VALUED: &[&str] = &[
    "--config",
    "-Z",
    "-C",
    "--color",
    "--explain",
    "--manifest-path",
];

/// `opt` with a prefix of `--manifest-path` spelled out (`--manifest-pa`).
fn cargo_long(opt: &str) -> &str {
    if opt.starts_with("--ma") && "--manifest-path".starts_with(opt) {
        "--manifest-path"
    } else {
        opt
    }
}
/// Global flags of cargo without a value.
const CARGO_FLAGS: &[&str] = &[
    "--frozen",
    "--locked",
    "--offline",
    "-q",
    "--quiet",
    "-v",
    "-vv",
    "--verbose",
];

/// Read cargo's global options up to its subcommand (`cargo +nightly --color always -C d
/// test`). Stops at the first word it does not know, which is then the subcommand or a
/// flag such as `--version`.
pub(crate) fn cargo_head<'a>(args: &[&'a str]) -> CargoHead<'a> {
    let mut head = CargoHead::default();
    let mut i = 0;
    while let Some(a) = args.get(i).copied() {
        if a.starts_with('+') || CARGO_FLAGS.contains(&a) {
            i += 1;
        } else if CARGO_VALUED.contains(&cargo_long(a)) {
            let v = args.get(i + 1).copied();
            match a {
                "-C" => head.dir = v,
                "--config" => head.config.extend(v),
                _ => {}
            }
            i += 2;
        } else if let Some((opt, v)) = a.split_once('=')
            && CARGO_VALUED.contains(&cargo_long(opt))
        {
            match opt {
                "-C" => head.dir = Some(v),
                "--config" => head.config.push(v),
                _ => {}
            }
            i += 1;
        } else {
            break;
        }
    }
    head.at = i.min(args.len());
    head
}

impl CargoHead<'_> {
    /// The subcommand, if the first unknown word is one.
    pub(crate) fn sub<'s>(&self, args: &[&'s str]) -> Option<&'s str> {
        args.get(self.at).copied().filter(|a| !a.starts_with('-'))
    }
}

/// The head of an `npm`, `pnpm`, `yarn` or `bun` command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JsHead<'a> {
    /// Index of the subcommand in the arguments, if there is one.
    pub sub: Option<usize>,
    /// The directory the package manager works in (`npm --prefix D`, `pnpm -C D`,
    /// `pnpm --dir D`, `yarn --cwd D`), when one is given.
    pub dir: Option<&'a str>,
    /// `pnpm -w` / `--workspace-root`: the workspace root's package, found up the tree.
    pub workspace_root: bool,
}

/// Options before the subcommand that take a value.
const JS_VALUED: &[&str] = &[
    "--prefix",
    "-C",
    "--dir",
    "--cwd",
    "--workspace",
    "--filter",
    "-F",
    "--loglevel",
    "--userconfig",
    "--cache",
    "--registry",
];

/// Read a JS package manager's options up to its subcommand, wherever they stand
/// (`npm --prefix sub test`, `pnpm -C web build`, `yarn --cwd web test`).
pub(crate) fn js_head<'a>(name: &str, args: &[&'a str]) -> JsHead<'a> {
    let mut head = JsHead::default();
    let mut i = 0;
    // `-w` is pnpm's `--workspace-root` (a flag); for npm it names a workspace.
    let w_valued = name != "pnpm";
    while let Some(a) = args.get(i).copied() {
        let (opt, attached) = match a.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (a, None),
        };
        let valued = JS_VALUED.contains(&opt) || (opt == "-w" && w_valued);
        if !a.starts_with('-') {
            if head.sub.is_none() {
                head.sub = Some(i);
            }
            // Options after the subcommand are still read for the directory; the
            // subcommand's own arguments need no more than that.
            i += 1;
            continue;
        }
        if a == "--" {
            break;
        }
        if matches!(opt, "-w" | "--workspace-root") && !w_valued {
            head.workspace_root = true;
        }
        let value = if valued {
            attached.or_else(|| args.get(i + 1).copied())
        } else {
            None
        };
        if matches!(opt, "--prefix" | "-C" | "--dir" | "--cwd") {
            head.dir = value.or(head.dir);
        }
        i += if valued && attached.is_none() { 2 } else { 1 };
    }
    head
}

/// The head of a `go` command line after its subcommand: `-C DIR` (which must come
/// first, as go requires) changes directory before anything else.
pub(crate) fn go_dir<'a>(rest: &[&'a str]) -> Option<&'a str> {
    match rest.first().copied() {
        Some("-C" | "--C") => rest.get(1).copied(),
        Some(a) => a.strip_prefix("-C=").or(a.strip_prefix("--C=")),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_heads() {
        let a = ["+nightly", "--color", "always", "-C", "d", "test"];
        let h = cargo_head(&a);
        assert_eq!((h.sub(&a), h.dir), (Some("test"), Some("d")));
        let a = ["--config=build.rustc-wrapper='x'", "build"];
        let h = cargo_head(&a);
        assert_eq!(h.config, ["build.rustc-wrapper='x'"]);
        assert_eq!(h.sub(&a), Some("build"));
        assert_eq!(cargo_head(&["--version"]).sub(&["--version"]), None);
        assert_eq!(cargo_head(&["-C"]).at, 1);
    }

    #[test]
    fn js_heads() {
        let h = js_head("npm", &["--prefix", "sub", "test"]);
        assert_eq!((h.sub, h.dir), (Some(2), Some("sub")));
        let h = js_head("pnpm", &["-w", "test"]);
        assert!(h.workspace_root);
        assert_eq!(h.sub, Some(1));
        let h = js_head("npm", &["-w", "pkg", "run", "build"]);
        assert_eq!(h.sub, Some(2));
        let h = js_head("yarn", &["--cwd=web", "lint"]);
        assert_eq!((h.sub, h.dir), (Some(1), Some("web")));
        let h = js_head("npm", &["test", "--prefix", "sub"]);
        assert_eq!((h.sub, h.dir), (Some(0), Some("sub")));
    }

    #[test]
    fn go_dirs() {
        assert_eq!(go_dir(&["-C", "pkg", "./..."]), Some("pkg"));
        assert_eq!(go_dir(&["-C=pkg"]), Some("pkg"));
        assert_eq!(go_dir(&["./..."]), None);
    }
}
