//! The contained rewrite: shell text the harness would run becomes a `cordon exec`
//! command line that runs the same text inside the sandbox.
//!
//! Owns quoting and the content-addressed shell files. It must never produce a command
//! line in which any byte of the original text is read by the harness's shell: the text
//! travels as one single-quoted word, or as a file whose name is the hash of its content
//! (checked again by `cordon exec` before it runs anything).

use cordon_policy::Request;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Longest quoted text passed as an argument; longer text goes through a shell file.
/// Linux refuses a single argument over 128 KiB (`MAX_ARG_STRLEN`), and the harness hands
/// the whole rewritten line to its shell as one argument, so the text must stay well
/// below that.
pub const INLINE_LIMIT: usize = 64 * 1024;

/// Largest shell file `cordon exec` reads.
pub const MAX_SHELL_FILE: usize = crate::payload::MAX_PAYLOAD_BYTES;

/// A rewrite or a shell file that could not be made or used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteError(pub String);

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RewriteError {}

/// How to call `cordon exec` for a contained shell call.
#[derive(Debug, Clone)]
pub struct ExecLine {
    /// The absolute path of the cordon binary.
    pub program: PathBuf,
    /// Flags forwarded as they were given to the hook (`--config F`, `--isolated`,
    /// `--store F`, `--audit-file F`, `--no-audit`), one word each.
    pub flags: Vec<String>,
    /// Where shell files are written (0700; `hook-shell` in cordon's state directory).
    pub shell_dir: PathBuf,
}

/// Quote `word` so that bash and sh read it back as exactly these bytes (one word).
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The command line that runs `text` (the shell text of `request`) inside `cordon exec`
/// with the same workspace, session, operation id and config.
pub fn contained_command(
    line: &ExecLine,
    workspace: &Path,
    request: &Request,
    text: &str,
) -> Result<String, RewriteError> {
    if !line.program.is_absolute() {
        return Err(RewriteError(format!(
            "the cordon binary path `{}` is not absolute",
            line.program.display()
        )));
    }
    let mut words = vec![quote(&line.program.to_string_lossy()), "exec".to_string()];
    words.extend(line.flags.iter().map(|f| quote(f)));
    words.push("--workspace".into());
    words.push(quote(&workspace.to_string_lossy()));
    if let Some(s) = &request.session {
        words.push("--session".into());
        words.push(quote(s));
    }
    if let Some(id) = &request.operation_id {
        words.push("--operation-id".into());
        words.push(quote(id));
    }
    words.push("--bash".into());
    // `--shell=TEXT` in one word: a text starting with `-` (`--version`) is the value,
    // never read as an option.
    let quoted = quote(text);
    if quoted.len() <= INLINE_LIMIT {
        words.push(format!("--shell={quoted}"));
    } else {
        let file = write_shell_file(&line.shell_dir, text)?;
        words.push(format!("--shell-file={}", quote(&file.to_string_lossy())));
    }
    Ok(words.join(" "))
}

/// The agent's shell text inside a command line [`contained_command`] made with `line`
/// (what a harness reports after running the rewritten call), or `None` when `command`
/// is not exactly such a line: the program of `line`, `exec`, option words, `--bash`,
/// and the text as the last word (a shell file is read back and checked against its
/// name). Anything else (a line that only starts like one, text after the quoted word)
/// is the agent's own command.
pub fn original(line: &ExecLine, command: &str) -> Option<String> {
    let words = split_words(command)?;
    let program = line.program.to_string_lossy();
    let (first, rest) = words.split_first()?;
    if first.as_str() != program || rest.first().map(String::as_str) != Some("exec") {
        return None;
    }
    let (last, middle) = rest[1..].split_last()?;
    if middle.last().map(String::as_str) != Some("--bash") {
        return None;
    }
    if let Some(text) = last.strip_prefix("--shell=") {
        return Some(text.to_string());
    }
    let file = last.strip_prefix("--shell-file=")?;
    read_shell_file(Path::new(file)).ok()
}

/// Split a line of bare words and `'…'` quoted parts (with `'\''` inside), as
/// [`quote`] writes them; `None` for any other shell syntax.
fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut it = line.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            ' ' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\\' if it.peek() == Some(&'\'') => {
                it.next();
                cur.get_or_insert_with(String::new).push('\'');
            }
            '\'' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match it.next()? {
                        '\'' => break,
                        ch => w.push(ch),
                    }
                }
            }
            c if c.is_ascii_alphanumeric() || "-_=./".contains(c) => {
                cur.get_or_insert_with(String::new).push(c);
            }
            _ => return None,
        }
    }
    if let Some(w) = cur {
        words.push(w);
    }
    Some(words)
}

fn hex(hash: &blake3::Hash) -> String {
    hash.to_hex().to_string()
}

/// Write `text` to `DIR/HASH.sh` (0600, DIR 0700), HASH being the BLAKE3 hash of the
/// text. An existing file of that name is kept only if its content hashes the same. The
/// directory is opened once (never through a link at its name) and the file is written
/// under a new name there and renamed over `HASH.sh` (`cordon-fs`).
pub fn write_shell_file(dir: &Path, text: &str) -> Result<PathBuf, RewriteError> {
    let fail = |what: &str, e: cordon_fs::FsError| {
        RewriteError(format!("cannot {what} in {}: {e}", dir.display()))
    };
    let d = cordon_fs::Dir::create_ambient(dir, 0o700)
        .map_err(|e| fail("create the shell-file directory", e))?;
    let name = format!("{}.sh", hex(&blake3::hash(text.as_bytes())));
    let path = dir.join(&name);
    if read_shell_file_in(&d, &path, &name).is_ok() {
        return Ok(path);
    }
    d.write(Path::new(&name), text.as_bytes(), 0o600)
        .map_err(|e| fail("write a shell file", e))?;
    Ok(path)
}

/// Read a shell file written by [`write_shell_file`], refusing it unless its name is a
/// hash, it is a regular file reached without a symlink, and its content hashes to its
/// name (so a file swapped after the hook decided is never run).
pub fn read_shell_file(path: &Path) -> Result<String, RewriteError> {
    let shown = path.display();
    let bad_name = || {
        RewriteError(format!(
            "the shell file {shown} is not one cordon wrote (its name must be HASH.sh)"
        ))
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(bad_name)?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // The name is checked before anything is opened.
    hash_of_name(name).ok_or_else(bad_name)?;
    let d = cordon_fs::Dir::open_ambient(parent)
        .map_err(|e| RewriteError(format!("cannot open the shell file {shown}: {e}")))?;
    read_shell_file_in(&d, path, name)
}

fn hash_of_name(name: &str) -> Option<&str> {
    name.strip_suffix(".sh")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// [`read_shell_file`] of `name` in the open directory `d` (`path` for messages).
fn read_shell_file_in(d: &cordon_fs::Dir, path: &Path, name: &str) -> Result<String, RewriteError> {
    let shown = path.display();
    let hash = hash_of_name(name).ok_or_else(|| {
        RewriteError(format!(
            "the shell file {shown} is not one cordon wrote (its name must be HASH.sh)"
        ))
    })?;
    let f = d.open_read(Path::new(name)).map_err(|e| match e.kind() {
        cordon_fs::FsErrorKind::WrongType(_) => {
            RewriteError(format!("the shell file {shown} is not a regular file"))
        }
        _ => RewriteError(format!("cannot open the shell file {shown}: {e}")),
    })?;
    let mut bytes = Vec::new();
    f.take(MAX_SHELL_FILE as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| RewriteError(format!("cannot read the shell file {shown}: {e}")))?;
    if bytes.len() > MAX_SHELL_FILE {
        return Err(RewriteError(format!(
            "the shell file {shown} is larger than {MAX_SHELL_FILE} bytes"
        )));
    }
    if hex(&blake3::hash(&bytes)) != hash.to_ascii_lowercase() {
        return Err(RewriteError(format!(
            "the shell file {shown} was changed after cordon wrote it (its content no longer matches its name)"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| RewriteError(format!("the shell file {shown} is not valid UTF-8")))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // fixtures are built with std::fs
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_single_quotes() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn the_agents_text_is_read_back_from_exactly_a_line_cordon_made() {
        let d = tempfile::tempdir().unwrap();
        let line = ExecLine {
            program: "/opt/cordon".into(),
            flags: vec!["--config".into(), "/a b/c.toml".into()],
            shell_dir: d.path().join("hook-shell"),
        };
        let mut req = Request::shell("x", Some("/w".into()));
        req.session = Some("s'1".into());
        req.operation_id = Some("toolu_1".into());
        let big = format!("echo {}", "y".repeat(INLINE_LIMIT));
        for text in ["--version", "echo 'it''s' \\ \"$HOME\"", "-", "", &big] {
            let cmd = contained_command(&line, Path::new("/w"), &req, text).unwrap();
            assert_eq!(original(&line, &cmd).as_deref(), Some(text), "{cmd}");
        }
        let cmd = contained_command(&line, Path::new("/w"), &req, "ls").unwrap();
        for not_ours in [
            format!("{cmd}; rm -rf ~"),
            format!("{cmd} 'x'"),
            cmd.replace("/opt/cordon", "/tmp/cordon"),
            "ls".to_string(),
            format!("echo; {cmd}"),
            cmd.replace(" --bash", ""),
        ] {
            assert_eq!(original(&line, &not_ours), None, "{not_ours}");
        }
    }

    #[test]
    fn shell_files_are_content_addressed() {
        let d = tempfile::tempdir().unwrap();
        let p = write_shell_file(d.path(), "echo hi").unwrap();
        assert_eq!(read_shell_file(&p).unwrap(), "echo hi");
        assert_eq!(write_shell_file(d.path(), "echo hi").unwrap(), p);
        std::fs::write(&p, "rm -rf ~").unwrap();
        assert!(read_shell_file(&p).unwrap_err().0.contains("changed"));
        // A tampered file is replaced by the next write of the same text.
        assert_eq!(write_shell_file(d.path(), "echo hi").unwrap(), p);
        assert_eq!(read_shell_file(&p).unwrap(), "echo hi");
        let link = d.path().join(format!("{}.sh", "0".repeat(64)));
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(read_shell_file(&link).is_err());
        assert!(read_shell_file(&d.path().join("x.sh")).is_err());
    }

    #[test]
    fn a_link_planted_at_a_shell_file_or_its_directory_is_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let victim_dir = t.path().join("victim-dir");
        std::fs::create_dir(&victim_dir).unwrap();
        let dir = t.path().join("hook-shell");
        std::fs::create_dir(&dir).unwrap();
        let text = "echo hi";
        let name = format!("{}.sh", hex(&blake3::hash(text.as_bytes())));
        std::os::unix::fs::symlink(&victim, dir.join(&name)).unwrap();
        let path = write_shell_file(&dir, text).unwrap();
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(read_shell_file(&path).unwrap(), text);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // The directory moved aside and a link left in its place: refused.
        std::fs::rename(&dir, t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&victim_dir, &dir).unwrap();
        assert!(write_shell_file(&dir, "echo other").is_err());
        assert!(read_shell_file(&path).is_err());
        assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
    }
}
