//! Names a package may not use, and characters that make a name or a text read as
//! something other than it is.
//!
//! Repository metadata: a `.git` directory (or a `.git` file pointing elsewhere), or a
//! bare repository committed as plain files (`HEAD`, `config`, `objects/`, `refs/`),
//! anywhere in a package. Its `config` can name programs (`core.fsmonitor`,
//! `core.pager`, `core.hooksPath`, filter drivers) that the next `git` command run in or
//! below that folder starts, so it is refused, not reviewed.
//!
//! Reserved names are compared the way a case-insensitive, normalizing file system (or a
//! tool that folds names) compares them: compatibility-normalized and case-folded.

use crate::manifest::MANIFEST_NAME;
use std::collections::{BTreeMap, BTreeSet};
use unicode_normalization::UnicodeNormalization;

/// The key reserved names are compared by: NFKC, lower case, NFKC again.
fn fold(s: &str) -> String {
    s.nfkc()
        .flat_map(char::to_lowercase)
        .collect::<String>()
        .nfkc()
        .collect()
}

/// Why the entry `name` may not be in a package, when it may not.
pub(crate) fn reserved(name: &str) -> Option<String> {
    let manifest = fold(MANIFEST_NAME);
    for part in name.split('/') {
        let f = fold(part);
        if f == manifest {
            return Some(format!(
                "{MANIFEST_NAME} is the name of cordon's installation manifest; a package may not carry an entry of that name anywhere, in any case or normalization form"
            ));
        }
        // `git~1` is the DOS short name Windows gives `.git`; `.git::$INDEX_ALLOCATION`
        // is `.git` on NTFS (an alternate data stream name).
        if f == ".git" || f == "git~1" || f.starts_with(".git:") {
            return Some(
                "the package carries git repository metadata (.git); its config can run programs on the next git command in that folder".into(),
            );
        }
        // git follows `commondir` (a worktree's or split repository's pointer to the
        // shared repository) and `gitdir` files: HEAD in one folder, config in another.
        if f == "commondir" || f == "gitdir" {
            return Some(format!(
                "the package carries git repository metadata ({part}): git follows it to a repository whose config can run programs on the next git command in that folder"
            ));
        }
    }
    None
}

/// Directories (package-relative, "" for the root) laid out as a bare git repository:
/// a `HEAD` file and a `config` file beside an `objects` or `refs` directory.
pub(crate) fn bare_repositories<V>(
    files: &BTreeMap<String, V>,
    dirs: &BTreeSet<String>,
) -> Vec<String> {
    let parents: BTreeSet<&str> = files
        .keys()
        .filter_map(|p| {
            let (parent, base) = p.rsplit_once('/').unwrap_or(("", p));
            (fold(base) == "head").then_some(parent)
        })
        .collect();
    fn has<'s>(parent: &str, base: &str, mut set: impl Iterator<Item = &'s String>) -> bool {
        set.any(|p| {
            let (pp, b) = p.rsplit_once('/').unwrap_or(("", p));
            pp == parent && fold(b) == base
        })
    }
    parents
        .into_iter()
        .filter(|parent| {
            has(parent, "config", files.keys())
                && (has(parent, "objects", dirs.iter())
                    || has(parent, "refs", dirs.iter())
                    || files.keys().any(|f| {
                        let prefix = if parent.is_empty() {
                            String::new()
                        } else {
                            format!("{parent}/")
                        };
                        f.strip_prefix(&prefix).is_some_and(|rest| {
                            let first = fold(rest.split('/').next().unwrap_or(""));
                            rest.contains('/') && (first == "objects" || first == "refs")
                        })
                    }))
        })
        .map(str::to_string)
        .collect()
}

/// Bidirectional controls: they reorder how text is shown (Trojan Source).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Characters that show as nothing: zero-width spaces and joiners, word joiners and
/// invisible operators, fillers, soft hyphens, and the tag block (which can carry
/// whole hidden ASCII sentences). Zero-width joiners are left to text, where emoji
/// and some scripts need them; in names nothing invisible is needed (`in_name`, also
/// what the prose reader strips before it reads a command).
pub(crate) fn is_invisible(c: char, in_name: bool) -> bool {
    matches!(c,
        '\u{200B}' | '\u{2060}'..='\u{2064}' | '\u{180E}' | '\u{034F}' | '\u{115F}'
        | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{E0000}'..='\u{E007F}')
        || (in_name && matches!(c, '\u{200C}' | '\u{200D}' | '\u{00AD}' | '\u{FEFF}'))
}

fn describe(c: char) -> String {
    let what = if is_bidi(c) {
        "a bidirectional control"
    } else {
        "an invisible character"
    };
    format!("{what} (U+{:04X})", c as u32)
}

/// Why a name with bidi controls or invisible characters is refused.
pub(crate) fn hidden_in_name(name: &str) -> Option<String> {
    let c = name
        .chars()
        .find(|&c| is_bidi(c) || is_invisible(c, true))?;
    Some(format!(
        "the name contains {}, so it is not shown as what it is",
        describe(c)
    ))
}

/// The line and a description of the first bidi control or invisible character of a text
/// (a byte-order mark at its very start is allowed; right-to-left marks are allowed in
/// text, where right-to-left writing needs them).
pub(crate) fn hidden_in_text(text: &str) -> Option<(usize, String, usize)> {
    let body = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let hidden = |c: char| {
        (is_bidi(c) && !matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}'))
            || is_invisible(c, false)
            || c == '\u{FEFF}'
    };
    let count = body.chars().filter(|&c| hidden(c)).count();
    let (at, c) = body.char_indices().find(|&(_, c)| hidden(c))?;
    let line = body[..at].matches('\n').count() + 1;
    Some((line, describe(c), count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_names_in_any_case_or_form() {
        for n in [
            ".cordon-skill.json",
            ".CORDON-SKILL.JSON",
            "a/.Cordon-Skill.Json",
            ".ｃｏｒｄｏｎ-skill.json",
            ".git",
            "sub/.GIT/config",
            "GIT~1/HEAD",
            ".git::$INDEX_ALLOCATION/config",
            "assets/x/commondir",
            "a/b/gitdir",
            "a/CommonDir",
        ] {
            assert!(reserved(n).is_some(), "{n}");
        }
        for n in ["cordon-skill.json", ".gitignore", "git", "a/.github/x"] {
            assert!(reserved(n).is_none(), "{n}");
        }
    }

    #[test]
    fn bare_repositories_anywhere() {
        let files: BTreeMap<String, ()> = ["x/HEAD", "x/config", "x/objects/ab/cd", "y/HEAD"]
            .iter()
            .map(|s| (s.to_string(), ()))
            .collect();
        let dirs = BTreeSet::new();
        assert_eq!(bare_repositories(&files, &dirs), ["x"]);
        let files: BTreeMap<String, ()> = ["HEAD", "config", "SKILL.md"]
            .iter()
            .map(|s| (s.to_string(), ()))
            .collect();
        let dirs: BTreeSet<String> = ["refs".to_string()].into();
        assert_eq!(bare_repositories(&files, &dirs), [""]);
    }

    #[test]
    fn hidden_characters() {
        assert!(hidden_in_name("run\u{202E}hs.txt").is_some());
        assert!(hidden_in_name("a\u{200B}b").is_some());
        assert!(hidden_in_name("plain-name.md").is_none());
        assert!(hidden_in_text("\u{FEFF}ok\nfine 👩\u{200D}💻").is_none());
        let (line, _, n) = hidden_in_text("a\nb\u{2066}c\u{2069}").unwrap_or_default();
        assert_eq!((line, n), (2, 2));
        assert!(hidden_in_text("x\u{E0041}\u{E0042}").is_some());
    }
}
