//! Following the audit log as other processes append to it.
//!
//! The follower polls the log with [`cordon_store::Reader`] and hands each record to
//! every open page. It keeps only the last [`BACKLOG`] records in memory, so the
//! console's size does not grow with the log.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use cordon_store::{Line, Reader};

use tokio::sync::broadcast;

/// How many recent records a newly opened page is sent.
pub const BACKLOG: usize = 1000;
/// How often the file is looked at.
const POLL: Duration = Duration::from_millis(20);

/// Recent records and the channel new ones are announced on.
#[derive(Debug)]
pub struct Feed {
    recent: Mutex<VecDeque<Line>>,
    tx: broadcast::Sender<Line>,
}

impl Feed {
    /// The recent records and a receiver for everything after them, taken together so
    /// that nothing falls between the two.
    pub fn subscribe(&self) -> (Vec<Line>, broadcast::Receiver<Line>) {
        let recent = match self.recent.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        (recent.iter().cloned().collect(), self.tx.subscribe())
    }

    fn push(&self, line: Line) {
        let mut recent = match self.recent.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        if recent.len() == BACKLOG {
            recent.pop_front();
        }
        recent.push_back(line.clone());
        // No page listening is not an error.
        let _ = self.tx.send(line);
    }
}

/// Start following `path` on a thread of its own; the file may not exist yet.
pub fn follow(path: PathBuf) -> Arc<Feed> {
    let (tx, _) = broadcast::channel(4096);
    let feed = Arc::new(Feed {
        recent: Mutex::new(VecDeque::with_capacity(BACKLOG)),
        tx,
    });
    let out = Arc::clone(&feed);
    std::thread::Builder::new()
        .name("cordon-ui-follow".into())
        .spawn(move || run(&path, &out))
        .map(drop)
        .unwrap_or_else(|e| eprintln!("cordon ui: cannot follow the audit log: {e}"));
    feed
}

fn run(path: &Path, feed: &Feed) {
    let mut reader = Reader::default();
    loop {
        reader.poll(path, |line| feed.push(line));
        std::thread::sleep(POLL);
    }
}
