//! Where a package manager or package runner takes the code it installs or runs: a
//! package registry, or somewhere else named on the command line (a VCS URL such as
//! `git+https://…`, `github:user/repo` or npm's `user/repo` shorthand, a tarball URL, an
//! index or registry option). Code from a registry has a name others can look up; code
//! from a URL is whatever that URL serves at the time.

use crate::model::Word;

/// Programs that install or run packages.
const PACKAGE_TOOLS: &[&str] = &[
    "uvx", "uv", "pipx", "pip", "pip3", "poetry", "pipenv", "npx", "pnpx", "bunx", "npm", "pnpm",
    "yarn", "bun", "cargo", "gem", "bundle", "deno",
];

/// Options whose value names where packages come from.
const SOURCE_OPTIONS: &[&str] = &[
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--index",
    "--default-index",
    "--registry",
    "--source",
    "--git",
    "--repo",
];

/// Spec prefixes that name a version-control repository.
const VCS_PREFIXES: &[&str] = &[
    "git+",
    "hg+",
    "svn+",
    "bzr+",
    "git://",
    "github:",
    "gitlab:",
    "bitbucket:",
    "gist:",
];

/// Options whose value is a package spec.
const SPEC_OPTIONS: &[&str] = &[
    "--from",
    "--with",
    "--with-editable",
    "--spec",
    "--package",
    "-p",
    "-e",
    "--editable",
];

/// Subcommands whose every operand is a package spec.
const INSTALLS: &[&str] = &["install", "i", "add", "download", "wheel", "inject"];

/// Subcommands whose first operand is a package spec (the rest are its arguments).
const RUNS: &[&str] = &["dlx", "x"];

/// When `program` (after wrappers) with `args` installs or runs code from outside a
/// package registry, a sentence saying from where.
#[must_use]
pub fn code_outside_registry(program: &str, args: &[Word]) -> Option<String> {
    let base = program.rsplit('/').next().unwrap_or(program);
    let mut args = args;
    let mut tool = base;
    // `python -m pip …`: pip's arguments.
    if base.starts_with("python") {
        let at = args
            .windows(2)
            .position(|w| w[0].value == "-m" && matches!(w[1].value.as_str(), "pip" | "pip3"))?;
        args = &args[at + 2..];
        tool = "pip";
    } else if !PACKAGE_TOOLS.contains(&base) {
        return None;
    }
    let npm_like = matches!(
        tool,
        "npx" | "pnpx" | "bunx" | "npm" | "pnpm" | "yarn" | "bun"
    );
    let mut specs: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut words = args.iter().filter(|w| w.literal);
    while let Some(w) = words.next() {
        let v = w.value.as_str();
        let (opt, inline) = v.split_once('=').unwrap_or((v, ""));
        // `-i`/`-f` are pip's index and find-links; elsewhere (`npm -f`) they are not.
        let source = SOURCE_OPTIONS.contains(&opt)
            && (!matches!(opt, "-i" | "-f")
                || matches!(tool, "pip" | "pip3" | "uv" | "uvx" | "pipx"));
        let takes = source || SPEC_OPTIONS.contains(&opt);
        let value = if takes && inline.is_empty() {
            words.next().map_or("", |n| n.value.as_str())
        } else {
            inline
        };
        if source {
            if !value.is_empty() {
                return Some(format!(
                    "`{base}` takes packages from `{value}` (named by {opt}), not from its package registry"
                ));
            }
        } else if SPEC_OPTIONS.contains(&opt) {
            specs.push(value);
        } else if !v.starts_with('-') {
            operands.push(v);
        }
    }
    match tool {
        // The runners: the first operand is the package.
        "uvx" | "npx" | "pnpx" | "bunx" => specs.extend(operands.first()),
        _ => {
            let (sub, rest) = match operands.split_first() {
                // `uv tool run X`, `uv pip install X`.
                Some((&("tool" | "pip"), rest)) if tool == "uv" => match rest.split_first() {
                    Some((s, r)) => (*s, r),
                    None => ("", &[][..]),
                },
                Some((s, r)) => (*s, r),
                None => ("", &[][..]),
            };
            if INSTALLS.contains(&sub) {
                specs.extend(rest);
            } else if RUNS.contains(&sub)
                || (sub == "run" && matches!(tool, "uv" | "pipx" | "deno") && !operands.is_empty())
            {
                if !(tool == "uv" && operands.first() == Some(&"run")) {
                    specs.extend(rest.first());
                }
            } else if sub == "exec" && tool == "npm" {
                specs.extend(rest.first());
            }
        }
    }
    for v in specs {
        // PEP 508's `name@git+https://…`: the part after `@` is the source.
        let spec = match v.split_once('@') {
            Some((_, rest))
                if rest.contains("://") || VCS_PREFIXES.iter().any(|p| rest.starts_with(p)) =>
            {
                rest
            }
            _ => v,
        }
        .trim();
        let vcs = VCS_PREFIXES.iter().any(|p| spec.starts_with(p));
        let url = spec.starts_with("https://") || spec.starts_with("http://");
        // npm reads `user/repo` as a GitHub repository.
        let shorthand = npm_like
            && !spec.starts_with(['-', '@', '.', '/', '~'])
            && spec.matches('/').count() == 1
            && !spec.contains(':')
            && !spec.ends_with('/');
        if vcs || url || shorthand {
            let what = if url {
                "a URL"
            } else {
                "a version-control repository"
            };
            return Some(format!(
                "`{base}` installs or runs code from {what} (`{spec}`), not from a package registry"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn runners_and_installers_from_outside_a_registry() {
        for (p, a) in [
            ("uvx", "--from git+https://github.com/x/y tool"),
            ("pipx", "run --spec git+https://github.com/x/y tool"),
            ("pip", "install git+https://github.com/x/y.git"),
            ("pip", "install pkg@git+https://github.com/x/y.git"),
            (
                "pip",
                "install --index-url https://pypi.evil.example/simple pkg",
            ),
            ("python3", "-m pip install https://evil.example/p.tar.gz"),
            ("npx", "github:x/y"),
            ("npx", "x/y"),
            ("npm", "install https://evil.example/p.tgz"),
            ("cargo", "install --git https://github.com/x/y"),
            ("uv", "run --with git+https://github.com/x/y script.py"),
            ("uv", "tool install git+https://github.com/x/y"),
            ("pnpm", "dlx github:x/y"),
            ("pip", "install -e git+https://github.com/x/y#egg=y"),
        ] {
            assert!(code_outside_registry(p, &words(a)).is_some(), "{p} {a}");
        }
        for (p, a) in [
            ("uvx", "ruff check ."),
            ("pip", "install -r requirements.txt"),
            ("npx", "@modelcontextprotocol/inspector"),
            ("npm", "install ./local"),
            ("git", "clone https://github.com/x/y"),
            ("python3", "script.py https://example.com"),
            ("pnpm", "exec html-inline dist/index.html"),
            ("npm", "install -f lodash"),
            ("npx", "tool https://example.com a/b"),
            ("uv", "run script.py git+https://x"),
        ] {
            assert!(code_outside_registry(p, &words(a)).is_none(), "{p} {a}");
        }
    }
}
