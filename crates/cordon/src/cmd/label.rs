//! `cordon label`: wrap stdin as untrusted content (optionally with secrets redacted)
//! and print it; `--prompt` prints the system-prompt paragraph that explains the wrapper.

use crate::exit::{Code, Exit};
use cordon_policy::label::{PROMPT, SourceName, label, label_redacted};
use std::io::{Read, Write};

/// Exit codes of `cordon label`, for `--help`.
const LABEL_CODES: &str = "Exit status: 0 labelled (or prompt printed); 2 invalid flags, \
source name, or input larger than --max-bytes (nothing is printed); 1 reading stdin or \
writing stdout failed.";

/// Wrap stdin as untrusted content for a model (secrets redacted with --redact).
#[derive(clap::Args)]
#[command(after_help = LABEL_CODES)]
pub struct LabelArgs {
    /// Where the content came from (ASCII letters, digits and `._-:/@+=,#?~`; at most
    /// 200 bytes), written into the wrapper's `source` attribute.
    #[arg(long, required_unless_present = "prompt")]
    source: Option<String>,
    /// Remove secrets (tokens, keys, passwords) in the labelled text.
    #[arg(long)]
    redact: bool,
    /// Print the system-prompt paragraph a harness should give its model, and exit.
    #[arg(long, conflicts_with_all = ["source", "redact"])]
    prompt: bool,
    /// Refuse input larger than this many bytes (the whole input is held in memory).
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    max_bytes: u64,
}

/// Run `cordon label`.
pub fn run(args: LabelArgs) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    if args.prompt {
        writeln!(stdout, "{PROMPT}")?;
        return Ok(Code::Allow.get());
    }
    let raw = args.source.unwrap_or_default();
    let source =
        SourceName::new(&raw).map_err(|e| Exit::new(Code::Invalid, format!("--source: {e}")))?;
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(args.max_bytes.saturating_add(1))
        .read_to_end(&mut input)?;
    if input.len() as u64 > args.max_bytes {
        return Err(Exit::new(
            Code::Invalid,
            format!(
                "the input is larger than {} bytes; raise --max-bytes or split it",
                args.max_bytes
            ),
        )
        .into());
    }
    // Bytes that are not UTF-8 become U+FFFD: the content is data, and a label must
    // never carry bytes a reader could decode differently.
    let text = String::from_utf8_lossy(&input);
    let labelled = if args.redact {
        label_redacted(&source, &text)
    } else {
        label(&source, &text)
    };
    writeln!(stdout, "{labelled}")?;
    stdout.flush()?;
    Ok(Code::Allow.get())
}
