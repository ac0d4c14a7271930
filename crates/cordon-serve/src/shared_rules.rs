//! The remembered rules of a shared store, read off the request path.
//!
//! A database can be slow or unreachable (a server stopped, a tunnel that accepts and
//! hangs); a decision that needs only the policy must not wait for it. So for a shared
//! store a thread of its own reads the rules every interval and leaves the newest result
//! here; the service's look ([`crate::reload`]) only takes what is there. The SQLite file
//! is read on the request path as before (a local file with a busy timeout).

use cordon_store::{Store, StoreAt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The newest read: the rules, or why they could not be read.
type Read = Result<Vec<String>, String>;

/// A background reader of one shared store's remembered rules; stops when dropped.
pub(crate) struct RulesReader {
    latest: Arc<Mutex<Option<Read>>>,
    stop: Arc<AtomicBool>,
}

impl RulesReader {
    /// Read `at`'s rules every `interval` in a thread of its own.
    pub(crate) fn start(at: Arc<StoreAt>, interval: Duration) -> RulesReader {
        let latest = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (slot, flag) = (Arc::clone(&latest), Arc::clone(&stop));
        let spawned = std::thread::Builder::new()
            .name("cordon-rules".into())
            .spawn(move || {
                let mut conn: Option<Store> = None;
                while !flag.load(Ordering::Relaxed) {
                    let kept = conn.take().filter(Store::is_current);
                    let read = kept
                        .map_or_else(|| Store::open_at(&at), Ok)
                        .and_then(|c| {
                            let rules = c.rules()?;
                            conn = Some(c);
                            Ok(rules.into_iter().map(|r| r.rule).collect())
                        })
                        .map_err(|e| e.to_string());
                    if let Ok(mut s) = slot.lock() {
                        *s = Some(read);
                    }
                    let until = Instant::now() + interval;
                    while Instant::now() < until && !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(25).min(interval));
                    }
                }
            });
        if let Err(e) = spawned
            && let Ok(mut s) = latest.lock()
        {
            *s = Some(Err(format!("the rules reader could not start: {e}")));
        }
        RulesReader { latest, stop }
    }

    /// The newest read since the last call, if any.
    pub(crate) fn take(&self) -> Option<Read> {
        self.latest.lock().ok().and_then(|mut s| s.take())
    }
}

impl Drop for RulesReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
