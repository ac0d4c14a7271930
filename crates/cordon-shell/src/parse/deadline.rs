//! brush-parser's grammar run under a deadline, for every caller at once.
//!
//! The estimate (`nesting.rs`) refuses text the parser would read again and again, but it
//! models one parser version's grammar: a construct whose real cost beats the model gets
//! past it. So the grammar runs on a worker thread of the calling thread's own, and a
//! caller that has waited [`DEADLINE`] refuses the text (a parse error: ask, never allow)
//! and leaves the worker behind. A worker left behind keeps its CPU until the grammar
//! returns (a thread cannot be stopped from outside); at most [`MAX_LEFT_BEHIND`] of
//! them may run at once in a process, and while that many do, every parse is refused at
//! once. A one-shot command (`cordon check`, a hook's judgement) exits and takes them
//! with it; the service keeps answering, fail-closed, with at most that many CPUs busy.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// One parse for a worker: the tokens, and where to send what the grammar did.
struct Job {
    tokens: Vec<Token>,
    reply: mpsc::Sender<Option<Result<ast::Program, ParseError>>>,
}

thread_local! {
    /// This thread's worker, while it has not been left behind.
    static WORKER: RefCell<Option<mpsc::Sender<Job>>> = const { RefCell::new(None) };
}

/// Tokens of at most this many bytes are parsed on the calling thread: no nesting that
/// short can cost much (the costliest per level, a subscript inside `${`, fits five
/// levels: well under a second), and the hand-off to a worker would double the time of
/// a typical short command.
const INLINE_BYTES: usize = 32;

/// Runs the grammar on `tokens` on this thread's worker, waiting at most [`DEADLINE`]
/// (short text on this thread).
pub(crate) fn run_grammar(tokens: Vec<Token>) -> Outcome {
    if tokens.iter().map(|t| t.to_str().len()).sum::<usize>() <= INLINE_BYTES {
        let options = ParserOptions::default();
        return match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            brush_parser::parse_tokens(&tokens, &options)
        })) {
            Ok(result) => Outcome::Returned(result),
            Err(_) => Outcome::Panicked,
        };
    }
    if LEFT_BEHIND.load(Ordering::SeqCst) >= MAX_LEFT_BEHIND {
        return Outcome::Busy(format!(
            "{MAX_LEFT_BEHIND} earlier parses that ran past their deadline are still running"
        ));
    }
    let (reply, answer) = mpsc::channel();
    let job = Job { tokens, reply };
    let sent = WORKER.with(|w| {
        let mut w = w.borrow_mut();
        let job = match w.as_ref() {
            Some(worker) => match worker.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let worker = start_worker()?;
        worker
            .send(job)
            .map_err(|_| "the parser's worker ended".to_owned())?;
        *w = Some(worker);
        Ok::<(), String>(())
    });
    if let Err(why) = sent {
        return Outcome::Busy(why);
    }
    match answer.recv_timeout(DEADLINE) {
        Ok(Some(result)) => Outcome::Returned(result),
        Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Panicked,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Left behind: the next parse of this thread starts a new worker.
            LEFT_BEHIND.fetch_add(1, Ordering::SeqCst);
            WORKER.with(|w| w.borrow_mut().take());
            Outcome::TimedOut
        }
    }
}

/// A worker: parses each job it is sent until its sender is dropped.
fn start_worker() -> Result<mpsc::Sender<Job>, String> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("cordon-parse".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let options = ParserOptions::default();
            for job in inbox {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    brush_parser::parse_tokens(&job.tokens, &options)
                }))
                .ok();
                if job.reply.send(result).is_err() {
                    // Its caller stopped waiting: this worker was left behind, and is
                    // done now.
                    LEFT_BEHIND.fetch_sub(1, Ordering::SeqCst);
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start the parser's worker: {e}"))?;
    Ok(jobs)
}
