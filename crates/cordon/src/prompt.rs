//! The terminal prompt for "ask": the question goes to stderr, the answer is read from
//! the terminal on stdin, and only when both are terminals. Everything else about the
//! prompt (what is shown, how answers are read, escaping) lives in `cordon-store`.

use cordon_store::{NoPrompter, Prompter, TerminalPrompter};

/// Whether a human can be asked in this process: stdin and stderr are both terminals.
pub fn human_reachable() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The prompter for this process: the terminal when a human is reachable, otherwise
/// one that reports that nobody can be asked (the flow then denies or records a
/// pending approval, as the caller chose).
pub fn prompter() -> Box<dyn Prompter> {
    match TerminalPrompter::from_stdio() {
        Some(terminal) => Box::new(terminal),
        None => Box::new(NoPrompter),
    }
}
