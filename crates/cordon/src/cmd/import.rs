//! `cordon import`: convert Claude Code settings or Codex rules into cordon's TOML config.
//! The TOML goes to stdout, the report of what was not converted exactly to stderr.

use crate::exit::{Code, Exit, IMPORT_CODES};
use cordon_policy::import::{self, ClaudeSource, ImportError, Imported};
use cordon_policy::terminal::sanitize_for_terminal as clean;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest settings or rules file read.
const MAX_INPUT_BYTES: u64 = 1 << 20;

/// What to import.
#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// Convert the `permissions` block of a Claude Code settings.json.
    #[command(after_help = IMPORT_CODES)]
    ClaudeSettings {
        /// The settings file (`.claude/settings.json`, `~/.claude/settings.json`); `-` reads
        /// stdin, where `/x` paths are taken as relative to the project.
        file: String,
    },
    /// Convert a Codex exec-policy `.rules` file (Starlark `prefix_rule` calls).
    #[command(after_help = IMPORT_CODES)]
    CodexRules {
        /// The rules file (`~/.codex/rules/default.rules`); `-` reads stdin.
        file: String,
    },
}

/// Run `cordon import`.
pub fn run(c: ImportCommand) -> anyhow::Result<u8> {
    let (file, result) = match &c {
        ImportCommand::ClaudeSettings { file } => {
            let text = read(file)?;
            let source = if file == "-" {
                ClaudeSource::default()
            } else {
                let home = std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default();
                let path = std::path::absolute(file).unwrap_or_else(|_| PathBuf::from(file));
                ClaudeSource::from_path(&path, &home)
            };
            (file, import::claude_settings(&text, &source))
        }
        ImportCommand::CodexRules { file } => {
            let text = read(file)?;
            (file, import::codex_rules(&text))
        }
    };
    let imported = result.map_err(|e| invalid(file, &e))?;
    print!("{}", imported.toml);
    report(&imported);
    Ok(if imported.complete() {
        0
    } else {
        Code::Incomplete.get()
    })
}

fn invalid(file: &str, e: &ImportError) -> Exit {
    let name = if file == "-" { "<stdin>" } else { file };
    let sep = if e.position.is_some() { ":" } else { ": " };
    Exit::new(
        Code::Invalid,
        format!("{name}{sep}{e}; nothing was converted"),
    )
}

fn report(imported: &Imported) {
    for r in &imported.remarks {
        eprintln!("cordon import: {}", clean(&r.to_string()));
    }
    let skipped = imported.skipped().count();
    if skipped > 0 {
        eprintln!(
            "cordon import: {skipped} entr{} not converted; the printed config leaves {} out",
            if skipped == 1 { "y" } else { "ies" },
            if skipped == 1 { "it" } else { "them" }
        );
    }
}

// The file the user named on the command line: a pipe or a FIFO there is meant.
#[allow(clippy::disallowed_methods)]
fn read(file: &str) -> Result<String, Exit> {
    let mut buf = Vec::new();
    let res = if file == "-" {
        std::io::stdin()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
    } else {
        std::fs::File::open(Path::new(file))
            .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut buf))
    };
    res.map_err(|e| Exit::new(Code::Invalid, format!("cannot read {file}: {e}")))?;
    if buf.len() as u64 > MAX_INPUT_BYTES {
        return Err(Exit::new(
            Code::Invalid,
            format!("{file} is larger than {MAX_INPUT_BYTES} bytes; is it the right file?"),
        ));
    }
    String::from_utf8(buf)
        .map_err(|_| Exit::new(Code::Invalid, format!("{file} is not valid UTF-8")))
}
