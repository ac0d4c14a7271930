//! Two rules on shell text that need the shell analysis itself rather than the policy's
//! verdict on it:
//!
//! - the whole environment is a credential source: a command that prints it (`env`,
//!   `printenv` with no name or a secret-looking one) in the same command line as one
//!   that reaches the network (`env | curl --data-binary @- …`), or that writes it to a
//!   file a network command then names, is refused, whatever form the text takes
//!   (inline code, prose, a fence of any language);
//! - a package manager or runner that installs or runs code from outside a package
//!   registry (`uvx --from git+…`, `pip install git+…`, `npx github:…`, an index
//!   option) is a review, in any form of text: the code is whatever that URL serves.

use crate::report::{Check, Finding, Severity};
use cordon_shell::{Analysis, SimpleCommand, analyze};

fn reaches_network(c: &SimpleCommand) -> bool {
    !c.effects.network.is_empty() || c.effects.network_unknown_target
}

/// The text's command lines: physical lines joined where a line ends in a continuation
/// (`\`, `|`, `&&`, `||`).
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for (i, l) in text.lines().enumerate() {
        if open && let Some((_, last)) = out.last_mut() {
            last.push('\n');
            last.push_str(l);
        } else {
            out.push((i, l.to_string()));
        }
        let t = l.trim_end();
        open = t.ends_with('\\') || t.ends_with('|') || t.ends_with("&&");
    }
    out
}

fn env_sent(a: &Analysis) -> bool {
    let dumps = a.commands.iter().any(|c| c.effects.reads_env);
    dumps && a.commands.iter().any(reaches_network)
}

/// Judge `text` (starting on `line` of `path`) by both rules.
pub(super) fn judge(path: &str, line: usize, text: &str, out: &mut Vec<Finding>) {
    let whole = analyze(text);
    let dumps = whole.commands.iter().any(|c| c.effects.reads_env);
    let mut sent = None;
    if dumps && !text.trim_end().contains('\n') {
        sent = env_sent(&whole).then_some(line);
    } else if dumps {
        sent = logical_lines(text)
            .into_iter()
            .find(|(_, l)| env_sent(&analyze(l)))
            .map(|(i, _)| line + i);
    }
    if dumps && sent.is_none() {
        // `env > /tmp/e` and later `curl -T /tmp/e …`: the file carries it.
        let files: Vec<&str> = whole
            .commands
            .iter()
            .filter(|c| c.effects.reads_env)
            .flat_map(|c| c.redirects.iter())
            .filter(|r| r.kind.writes_file())
            .map(|r| r.target.value.as_str())
            .collect();
        if whole
            .commands
            .iter()
            .filter(|c| reaches_network(c))
            .any(|c| files.iter().any(|f| !f.is_empty() && c.text.contains(f)))
        {
            sent = Some(line);
        }
    }
    if let Some(l) = sent {
        out.push(Finding::new(
            Check::AmbientCredential,
            Severity::Refuse,
            Some(path),
            format!(
                "line {l}: prints the whole environment (every credential of the session) and sends it over the network"
            ),
        ));
    }
    for c in &whole.commands {
        let Some(program) = c.program.as_ref().filter(|p| p.literal) else {
            continue;
        };
        if let Some(why) = cordon_shell::code_outside_registry(&program.value, &c.args) {
            out.push(Finding::new(
                Check::DownloadExec,
                Severity::Review,
                Some(path),
                format!("line {line}: {why}"),
            ));
        }
    }
}
