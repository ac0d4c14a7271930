//! brush-parser's grammar run under a deadline, for every caller at once.
//!
//! The estimate (`nesting.rs`) refuses text the parser would read again and again, but it
//! models one parser version's grammar: a construct whose real cost beats the model gets
//! past it. So the grammar runs on a worker thread of the calling thread's own (kept for
//! its next parse: starting a thread per parse cost 70 µs or more here, handing over to
//! a waiting one 15–20 µs), and a caller that has waited [`DEADLINE`] refuses the text (a
//! parse error: ask, never allow) and leaves the worker behind. (`cordon exec` forks its
//! helper before it judges the call, so the worker does not cost it its fork; a child
//! forked after a parse starts a worker of its own, see [`WORKER`].) A worker left behind
//! keeps its CPU until the grammar returns (a thread cannot be stopped from outside); at
//! most [`MAX_LEFT_BEHIND`] of them may run at once in a process, and while that many do,
//! every parse is refused at once (counted as callers give up: threads parsing at the
//! same moment, the service's connections, may all be left behind before the count stops
//! them). A one-shot command (`cordon check`, a hook's judgement) exits and takes them
//! with it; the service keeps answering, fail-closed, with at most that many CPUs busy.

use std::cell::RefCell;
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

/// Tokens of at most this many bytes, none holding an opener of nesting (`$`, `(`, `[`,
/// `{`, a backquote) and no `(` operator among them, are parsed on the calling thread:
/// without nesting the grammar has nothing to read again (short nesting can: six
/// subscripts left open in `${a[` fit 32 bytes and took it 34 s), and the hand-off would
/// double the time of a typical short command (`ls -la`, `git status`).
const INLINE_BYTES: usize = 32;

/// A job's state, shared by its caller and its worker: who gave up on whom.
const WAITING: u8 = 0;
const DONE: u8 = 1;
const ABANDONED: u8 = 2;

/// One parse for a worker: the tokens, its state, and where to send what the grammar did.
struct Job {
    tokens: Vec<Token>,
    state: Arc<AtomicU8>,
    reply: mpsc::Sender<Option<Result<ast::Program, ParseError>>>,
}

thread_local! {
    /// This thread's worker, with the process it was started in: after a fork the child
    /// has the sender but not the thread, so it starts its own.
    static WORKER: RefCell<Option<(u32, mpsc::Sender<Job>)>> = const { RefCell::new(None) };
}

/// Runs the grammar on `tokens` on this thread's worker, waiting at most [`DEADLINE`]
/// (short text on this thread).
pub(crate) fn run_grammar(tokens: Vec<Token>) -> Outcome {
    let flat = tokens.iter().all(|t| match t {
        Token::Operator(op, _) => !op.contains('('),
        Token::Word(w, _) => !w.contains(['$', '(', '[', '{', '`']),
    });
    if flat && tokens.iter().map(|t| t.to_str().len()).sum::<usize>() <= INLINE_BYTES {
        return parse_caught(&tokens).map_or(Outcome::Panicked, Outcome::Returned);
    }
    if LEFT_BEHIND.load(Ordering::SeqCst) >= MAX_LEFT_BEHIND {
        return Outcome::Busy(format!(
            "{MAX_LEFT_BEHIND} earlier parses that ran past their deadline are still running"
        ));
    }
    let state = Arc::new(AtomicU8::new(WAITING));
    let (reply, answer) = mpsc::channel();
    let job = Job {
        tokens,
        state: state.clone(),
        reply,
    };
    if let Err(why) = hand_over(job) {
        return Outcome::Busy(why);
    }
    let result = match answer.recv_timeout(DEADLINE) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Disconnected) => None,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            LEFT_BEHIND.fetch_add(1, Ordering::SeqCst);
            let gave_up = state
                .compare_exchange(WAITING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            if gave_up {
                // Left behind: this thread's next parse starts a new worker.
                let _ = WORKER.try_with(|w| w.borrow_mut().take());
                return Outcome::TimedOut;
            }
            // It finished at the deadline: its answer is on its way.
            LEFT_BEHIND.fetch_sub(1, Ordering::SeqCst);
            answer.recv().ok().flatten()
        }
    };
    result.map_or(Outcome::Panicked, Outcome::Returned)
}

/// Sends `job` to this thread's worker, starting one when there is none (or none in this
/// process, or it ended).
fn hand_over(job: Job) -> Result<(), String> {
    let sent = WORKER.try_with(|w| {
        let mut w = w.borrow_mut();
        let pid = std::process::id();
        let job = match w.as_ref() {
            Some((started_in, worker)) if *started_in == pid => match worker.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            Some(_) => {
                // Forked: the parent's channel is not this process's to close (its lock
                // may have been copied held).
                std::mem::forget(w.take());
                job
            }
            None => job,
        };
        let worker = start_worker()?;
        worker
            .send(job)
            .map_err(|_| "the parser's worker ended".to_owned())?;
        *w = Some((pid, worker));
        Ok(())
    });
    sent.unwrap_or_else(|_| Err("this thread is ending".to_owned()))
}

/// A worker: parses each job it is sent until its sender is dropped.
fn start_worker() -> Result<mpsc::Sender<Job>, String> {
    let (jobs, inbox) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("cordon-parse".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            for job in inbox {
                let result = parse_caught(&job.tokens);
                let delivered = job
                    .state
                    .compare_exchange(WAITING, DONE, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
                if delivered {
                    let _ = job.reply.send(result);
                } else {
                    // Its caller gave up on it and counted it: done now, and no longer
                    // this thread's worker.
                    LEFT_BEHIND.fetch_sub(1, Ordering::SeqCst);
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start the parser's worker: {e}"))?;
    Ok(jobs)
}

/// The grammar on `tokens`, a panic caught (`None`).
fn parse_caught(tokens: &[Token]) -> Option<Result<ast::Program, ParseError>> {
    let options = ParserOptions::default();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        brush_parser::parse_tokens(tokens, &options)
    }))
    .ok()
}
