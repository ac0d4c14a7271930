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
    let key = key.to_ascii_lowercase();
    match section {
        "core" => {
            matches!(
                key.as_str(),
                "fsmonitor"
                    | "pager"
                    | "sshcommand"
                    | "hookspath"
                    | "editor"
                    | "askpass"
                    | "gitproxy"
            ) && !(key == "fsmonitor"
                && matches!(
                    value.to_ascii_lowercase().as_str(),
                    "false" | "0" | "no" | "off" | ""
                ))
        }
        "diff" => {
            key == "external" || (sub.is_some() && matches!(key.as_str(), "textconv" | "command"))
        }
        "filter" => matches!(key.as_str(), "clean" | "smudge" | "process"),
        "merge" => sub.is_some() && key == "driver",
        "alias" => value.trim_start().starts_with('!'),
        "pager" | "sequence" => true,
        "credential" => key == "helper",
        "gpg" => key == "program",
        "uploadpack" => key == "packobjectshook",
        "sendemail" => key.ends_with("cmd"),
        _ => false,
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
