//! A repository's own git config can make ordinary git commands run programs
//! (`core.fsmonitor`, `core.pager`, `diff.external`, `filter.*.smudge`, `!` aliases, …).
//! Whoever wrote the repository chose those values, so a `git status` there is opaque.
//!
//! Read through [`FileFacts`]; includes are followed to a small depth. Parsing is
//! deliberately loose: anything that looks like an executing key counts.

use crate::facts::{FileFacts, FileKind};
use std::path::{Path, PathBuf};

const MAX_CONFIG: u64 = 256 * 1024;
const MAX_INCLUDE_DEPTH: usize = 4;

/// The first executing key set by the repository that contains `cwd`, if any.
pub fn executing_key(cwd: &Path, fs: &dyn FileFacts) -> Option<String> {
    let config = repo_config(cwd, fs)?;
    scan(&config, fs, 0)
}

fn repo_config(cwd: &Path, fs: &dyn FileFacts) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dotgit = dir.join(".git");
        match fs.metadata(&dotgit).map(|m| m.kind) {
            Some(FileKind::Dir) => return Some(dotgit.join("config")),
            Some(FileKind::File) => {
                // A worktree or submodule: `gitdir: PATH`.
                let text = fs.read_small_file(&dotgit, 4096)?;
                let text = String::from_utf8_lossy(&text);
                let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
                let gitdir = crate::paths::clean(&crate::paths::absolute(Path::new(gitdir), dir));
                // Worktrees keep the shared config in the common dir.
                let common = fs
                    .read_small_file(&gitdir.join("commondir"), 4096)
                    .map(|c| {
                        let c = String::from_utf8_lossy(&c).trim().to_string();
                        crate::paths::clean(&crate::paths::absolute(Path::new(&c), &gitdir))
                    })
                    .unwrap_or(gitdir);
                return Some(common.join("config"));
            }
            _ => {}
        }
    }
    None
}

fn is_executing(section: &str, sub: Option<&str>, key: &str, value: &str) -> bool {
    // Includes are followed by `scan`, which judges what they contain.
    if section == "include" || section == "includeif" {
        return false;
    }
    let name = match sub {
        Some(s) => format!("{section}.{s}.{key}"),
        None => format!("{section}.{key}"),
    };
    risky_key(&name, Some(value)).is_some()
}

/// Why a git config key is refused in a file a contained run leaves behind, or `None`
/// when it neither runs a program nor changes where git reads its settings, hooks or
/// objects from.
///
/// `name` is the key as `git config --list` prints it (`section.subsection.key`, section
/// and key in any case, the subsection as written); `value` is `None` for a key without
/// `=`. The list follows git-config(1): every key documented as naming a command, a
/// program, a hook directory, an included file, a URL rewrite or another repository.
/// Whole sections that exist only to configure external programs are refused
/// outright, so a key added to them later is refused too.
pub fn risky_key(name: &str, value: Option<&str>) -> Option<&'static str> {
    use cordon_shell::gitkeys::{GitKey, classify};
    match classify(name, value) {
        GitKey::Plain => None,
        GitKey::Redirects => Some("changes where git reads its settings, hooks or objects"),
        _ => Some("runs a program"),
    }
}

fn scan(path: &Path, fs: &dyn FileFacts, depth: usize) -> Option<String> {
    if depth > MAX_INCLUDE_DEPTH {
        return None;
    }
    let bytes = fs.read_small_file(path, MAX_CONFIG)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut section = String::new();
    let mut sub: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(h) = line.strip_prefix('[') {
            let h = h.split(']').next().unwrap_or("");
            let (s, rest) = match h.split_once(|c: char| c.is_whitespace() || c == '.') {
                Some((s, rest)) => (s, Some(rest.trim().trim_matches('"').to_string())),
                None => (h, None),
            };
            section = s.trim().to_ascii_lowercase();
            sub = rest;
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim().trim_matches('"')),
            None => (line, "true"),
        };
        if is_executing(&section, sub.as_deref(), key, value) {
            return Some(match &sub {
                Some(s) => format!("{section}.{s}.{key}"),
                None => format!("{section}.{key}"),
            });
        }
        if (section == "include" || section == "includeif") && key.eq_ignore_ascii_case("path") {
            let inc = crate::paths::clean(&crate::paths::absolute(
                Path::new(value),
                path.parent().unwrap_or(Path::new("/")),
            ));
            if let Some(k) = scan(&inc, fs, depth + 1) {
                return Some(k);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::FakeFs;

    fn repo(config: &str) -> FakeFs {
        FakeFs::new()
            .dir("/w/proj/.git")
            .dir("/w/proj/src")
            .file_with("/w/proj/.git/config", 1, config.as_bytes())
    }

    #[test]
    fn finds_executing_keys() {
        for (cfg, key) in [
            ("[core]\n\tfsmonitor = ./hook.sh\n", "core.fsmonitor"),
            ("[core]\n\tpager = sh -c 'evil'\n", "core.pager"),
            (
                "[core]\nsshCommand = ssh -o ProxyCommand=x\n",
                "core.sshCommand",
            ),
            ("[diff]\n\texternal = ./x\n", "diff.external"),
            ("[diff \"bin\"]\n\ttextconv = ./x\n", "diff.bin.textconv"),
            ("[filter \"lfs\"]\n\tsmudge = ./x\n", "filter.lfs.smudge"),
            ("[alias]\n\tst = !sh -c evil\n", "alias.st"),
            ("[core]\n\thooksPath = .githooks\n", "core.hooksPath"),
        ] {
            assert_eq!(
                executing_key(Path::new("/w/proj/src"), &repo(cfg)).as_deref(),
                Some(key),
                "{cfg}"
            );
        }
    }

    #[test]
    fn risky_keys_from_git_config_documentation() {
        for (name, value) in [
            ("core.fsmonitor", Some("touch /tmp/x; false")),
            ("core.hooksPath", Some(".githooks")),
            ("core.sshCommand", Some("ssh -o ProxyCommand=x")),
            ("core.pager", Some("less")),
            ("core.editor", Some("vi")),
            ("core.askPass", Some("x")),
            ("core.gitProxy", Some("x")),
            ("core.alternateRefsCommand", Some("x")),
            ("core.worktree", Some("/elsewhere")),
            ("core.attributesFile", Some("/x")),
            ("sequence.editor", Some("x")),
            ("credential.helper", Some("store")),
            ("credential.https://example.com.helper", Some("x")),
            ("filter.lfs.smudge", Some("x")),
            ("filter.x.process", Some("x")),
            ("diff.external", Some("x")),
            ("diff.bin.textconv", Some("x")),
            ("diff.x.command", Some("x")),
            ("difftool.x.cmd", Some("x")),
            ("merge.x.driver", Some("x")),
            ("mergetool.x.cmd", Some("x")),
            ("alias.st", Some("!sh -c evil")),
            ("include.path", Some("/x")),
            ("includeIf.gitdir:/x.path", Some("/y")),
            ("uploadpack.packObjectsHook", Some("x")),
            ("gpg.program", Some("x")),
            ("gpg.ssh.defaultKeyCommand", Some("x")),
            ("gpg.x509.program", Some("x")),
            ("pager.log", Some("sh -c x")),
            ("interactive.diffFilter", Some("x")),
            ("sendemail.sendmailCmd", Some("x")),
            ("sendemail.smtpServer", Some("/usr/bin/x")),
            ("imap.tunnel", Some("x")),
            ("trailer.sign.command", Some("x")),
            ("tar.tgz.command", Some("x")),
            ("remote.origin.uploadpack", Some("x")),
            ("remote.origin.receivepack", Some("x")),
            ("remote.origin.vcs", Some("x")),
            ("url.ext::sh -c x.insteadOf", Some("https://")),
            ("protocol.ext.allow", Some("always")),
            ("protocol.allow", Some("always")),
            ("submodule.x.update", Some("!sh")),
            ("web.browser", Some("x")),
            ("browser.x.cmd", Some("x")),
            ("man.x.cmd", Some("x")),
            ("hook.pre-commit.command", Some("x")),
            ("lfs.customtransfer.x.path", Some("x")),
            ("init.templateDir", Some("/x")),
            ("svn.authorsProg", Some("x")),
        ] {
            assert!(risky_key(name, value).is_some(), "{name} must be refused");
        }
    }

    #[test]
    fn everyday_keys_are_not_risky() {
        for (name, value) in [
            ("core.repositoryformatversion", Some("0")),
            ("core.filemode", Some("true")),
            ("core.bare", Some("false")),
            ("core.fsmonitor", Some("false")),
            ("core.fsmonitor", None),
            ("user.email", Some("a@b")),
            ("user.name", Some("A")),
            ("remote.origin.url", Some("https://example.com/x.git")),
            (
                "remote.origin.fetch",
                Some("+refs/heads/*:refs/remotes/origin/*"),
            ),
            ("branch.main.remote", Some("origin")),
            ("branch.main.merge", Some("refs/heads/main")),
            ("pull.rebase", Some("true")),
            ("pager.branch", Some("false")),
            ("alias.st", Some("status")),
            ("extensions.worktreeConfig", Some("true")),
            ("init.defaultBranch", Some("main")),
        ] {
            assert_eq!(risky_key(name, value), None, "{name}");
        }
    }

    #[test]
    fn ordinary_config_is_fine() {
        let cfg = "[core]\n\tbare = false\n\tfsmonitor = false\n[remote \"origin\"]\n\turl = x\n[alias]\n\tst = status\n";
        assert_eq!(executing_key(Path::new("/w/proj"), &repo(cfg)), None);
        assert_eq!(executing_key(Path::new("/tmp"), &repo(cfg)), None);
    }

    #[test]
    fn follows_includes() {
        let fs = repo("[include]\n\tpath = extra.cfg\n").file_with(
            "/w/proj/.git/extra.cfg",
            1,
            b"[core]\n\tpager = evil\n",
        );
        assert_eq!(
            executing_key(Path::new("/w/proj"), &fs).as_deref(),
            Some("core.pager")
        );
    }
}
