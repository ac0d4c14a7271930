//! brush-parser's grammar run under a deadline, for every caller at once.
//!
//! The estimate (`nesting.rs`) refuses text the parser would read again and again, but it
//! models one parser version's grammar: a construct whose real cost beats the model gets
//! past it. So the grammar runs on a thread of its own, which the caller joins once it
//! has returned (a caller that was single-threaded is so again: `cordon exec` forks its
//! helper only then), and a caller that has waited [`DEADLINE`] refuses the text (a
//! parse error: ask, never allow) and leaves the worker behind. A worker left behind keeps its CPU until the grammar
//! returns (a thread cannot be stopped from outside); at most [`MAX_LEFT_BEHIND`] of
//! them may run at once in a process, and while that many do, every parse is refused at
//! once. A one-shot command (`cordon check`, a hook's judgement) exits and takes them
//! with it; the service keeps answering, fail-closed, with at most that many CPUs busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use brush_parser::{ParseError, ParserOptions, Token, ast};

/// How long a caller waits for the grammar. Real scripts parse in milliseconds (the
/// largest text the estimate allows in about 0.1 s, release build); this is far above.
pub(crate) const DEADLINE: Duration = Duration::from_secs(5);

/// Workers left behind by a caller that stopped waiting, still running at most.
const MAX_LEFT_BEHIND: usize = 2;

/// Workers left behind and still running, in this process.
static LEFT_BEHIND: AtomicUsize = AtomicUsize::new(0);

/// The worker's stack: the grammar recurses on nesting (bounded by `MAX_NESTING`).
const WORKER_STACK: usize = 8 << 20;

/// What the grammar did with the tokens.
pub(crate) enum Outcome {
    /// It returned: a program or its parse error.
    Returned(Result<ast::Program, ParseError>),
    /// It panicked (brush-parser 0.4.0 `unwrap`s on some input).
    Panicked,
    /// It had not returned after [`DEADLINE`].
    TimedOut,
    /// Workers left behind are still running, or no worker could be started.
    Busy(String),
}

/// Tokens of at most this many bytes are parsed on the calling thread: no nesting that
/// short can cost much (the costliest per level, a subscript inside `${`, fits five
/// levels: well under a second), and starting a worker would double the time of a
/// typical short command.
const INLINE_BYTES: usize = 32;

/// A job's state, shared by its caller and its worker: who gave up on whom.
const WAITING: u8 = 0;
const DONE: u8 = 1;
const ABANDONED: u8 = 2;

/// Runs the grammar on `tokens` on a worker thread, waiting at most [`DEADLINE`] (short
/// text on this thread).
pub(crate) fn run_grammar(tokens: Vec<Token>) -> Outcome {
    if tokens.iter().map(|t| t.to_str().len()).sum::<usize>() <= INLINE_BYTES {
        return parse_caught(&tokens).map_or(Outcome::Panicked, Outcome::Returned);
    }
    if LEFT_BEHIND.load(Ordering::SeqCst) >= MAX_LEFT_BEHIND {
        return Outcome::Busy(format!(
            "{MAX_LEFT_BEHIND} earlier parses that ran past their deadline are still running"
        ));
    }
    let state = Arc::new(AtomicU8::new(WAITING));
    let (reply, answer) = mpsc::channel();
    let worker_state = state.clone();
    let worker = std::thread::Builder::new()
        .name("cordon-parse".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let result = parse_caught(&tokens);
            let delivered = worker_state
                .compare_exchange(WAITING, DONE, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if delivered {
                let _ = reply.send(result);
            } else {
                // Its caller gave up on it and counted it: it is done now.
                LEFT_BEHIND.fetch_sub(1, Ordering::SeqCst);
            }
        });
    let worker = match worker {
        Ok(w) => w,
        Err(e) => return Outcome::Busy(format!("cannot start the parser's worker: {e}")),
    };
    let result = match answer.recv_timeout(DEADLINE) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            LEFT_BEHIND.fetch_add(1, Ordering::SeqCst);
            let gave_up = state
                .compare_exchange(WAITING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if gave_up {
                return Outcome::TimedOut;
            }
            // It finished at the deadline: its answer is on its way.
            LEFT_BEHIND.fetch_sub(1, Ordering::SeqCst);
            answer.recv().ok().flatten()
        }
    };
    let _ = worker.join();
    result.map_or(Outcome::Panicked, Outcome::Returned)
}

/// The grammar on `tokens`, a panic caught (`None`).
fn parse_caught(tokens: &[Token]) -> Option<Result<ast::Program, ParseError>> {
    let options = ParserOptions::default();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        brush_parser::parse_tokens(tokens, &options)
    }))
    .ok()
}
