//! Asking a human at a terminal: the prompter that shows a question and reads the
//! answer, and the `$VISUAL`/`$EDITOR` launcher behind its "edit" choice. The store keeps
//! only what is asked and answered (`cordon_store::Prompter`, `Question`, `Choice`); the
//! terminal belongs to the flow that asks.

mod editor;
mod terminal;

pub use terminal::TerminalPrompter;
