//! The strict JSON-RPC matcher: every request goes on under the gateway's own id, and a
//! response is taken only as the single answer to a request still outstanding.
//!
//! Each request either end sends is forwarded under an id the gateway mints,
//! `cordon-NONCE-D-N-TAG`: `D` is `s` (to the server) or `c` (to the client), `N` a
//! counter, and `TAG` 64 bits of a keyed blake3 hash of `D-N` under a random key of this
//! run, so a peer that has seen every earlier id still cannot write the next one. The
//! original id is kept in the entry and put back on the answer. A response is matched by
//! its id as a JSON string, byte for byte: `5`, `"5"` and `5.0` are three ids and none of
//! them is ever an id the gateway minted. An entry is removed when it is answered, so a
//! second answer, an answer sent before the request (the id was not minted yet), an
//! answer with an id of another type, and an answer to a cancelled request all find
//! nothing and are dropped by the caller as protocol violations.
//!
//! Each direction holds at most [`MAX_OUTSTANDING`] entries; when a table is full the
//! caller refuses the new request with a JSON-RPC error instead of forwarding it (the
//! fuzz target `mcp` checks the bound on tables of a smaller one, [`Table::bounded`]).
//! `notifications/cancelled` is translated to the minted id ([`Table::cancel`]), which
//! also removes the entry; the few most recent cancelled ids are remembered so that a
//! late answer to one is dropped quietly (the specification allows it) rather than
//! reported.

use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The most requests outstanding in one direction.
pub const MAX_OUTSTANDING: usize = 4096;

/// How many cancelled ids are remembered per direction.
pub const CANCELLED_KEPT: usize = 256;

/// A count of requests under way outside the tables (judged on a thread of their own,
/// perhaps waiting for a human), bounded like a table: a request past the bound is
/// refused, not started.
#[derive(Debug)]
pub struct Slots {
    used: AtomicUsize,
    cap: usize,
}

impl Slots {
    /// At most `cap` under way at once.
    pub fn bounded(cap: usize) -> Slots {
        Slots {
            used: AtomicUsize::new(0),
            cap,
        }
    }

    /// Take a slot; `false` when all are taken (nothing taken then).
    pub fn take(&self) -> bool {
        let taken = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.cap).then_some(n + 1)
            });
        taken.is_ok()
    }

    /// Give back a slot taken.
    pub fn give_back(&self) {
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// How many are taken.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }
}

/// Which way a request goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// From the client (or the gateway) to the server.
    ToServer,
    /// From the server (or the gateway) to the client.
    ToClient,
}

/// The id minter of one gateway run.
pub struct Minter {
    nonce: String,
    key: [u8; 32],
    seq: AtomicU64,
}

impl Minter {
    /// A minter with this run's nonce and a random key.
    pub fn new(nonce: String) -> Result<Minter, crate::GatewayError> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| crate::GatewayError::Random(e.to_string()))?;
        Ok(Minter {
            nonce,
            key,
            seq: AtomicU64::new(0),
        })
    }

    /// A fresh id for a request going `dir`.
    pub fn mint(&self, dir: Dir) -> String {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let d = match dir {
            Dir::ToServer => 's',
            Dir::ToClient => 'c',
        };
        let tag = blake3::keyed_hash(&self.key, format!("{d}-{n}").as_bytes());
        format!(
            "cordon-{}-{d}-{n}-{}",
            self.nonce,
            &tag.to_hex().as_str()[..16]
        )
    }
}

/// One outstanding request.
#[derive(Debug)]
pub struct Entry<T> {
    /// The id its sender gave it (`None`: a request of the gateway's own).
    pub peer_id: Option<Value>,
    /// What the answer is for.
    pub what: T,
}

/// What a response's id found.
#[derive(Debug)]
pub enum Matched<T> {
    /// The outstanding request it answers (now removed).
    Answer(Entry<T>),
    /// A request that was cancelled: drop the answer quietly.
    Cancelled,
    /// Nothing: a protocol violation, with the reason.
    Unknown(&'static str),
}

/// The outstanding requests of one direction.
#[derive(Debug)]
pub struct Table<T> {
    entries: HashMap<String, Entry<T>>,
    cancelled: VecDeque<String>,
    cap: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table::bounded(MAX_OUTSTANDING)
    }
}

/// The table is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

impl<T> Table<T> {
    /// A table holding at most `cap` outstanding requests (the gateway's hold
    /// [`MAX_OUTSTANDING`]).
    pub fn bounded(cap: usize) -> Self {
        Table {
            entries: HashMap::new(),
            cancelled: VecDeque::new(),
            cap,
        }
    }

    /// Record a request forwarded under `id`; refused when the table is full.
    pub fn insert(&mut self, id: String, entry: Entry<T>) -> Result<(), Full> {
        if self.entries.len() >= self.cap {
            return Err(Full);
        }
        self.entries.insert(id, entry);
        Ok(())
    }

    /// The request a response with `id` answers, removed; string-exact.
    pub fn answer(&mut self, id: &Value) -> Matched<T> {
        let Value::String(id) = id else {
            return Matched::Unknown(
                "its id is not one the gateway sent (not a string, so never a forwarded request's)",
            );
        };
        if let Some(e) = self.entries.remove(id) {
            return Matched::Answer(e);
        }
        if self.cancelled.iter().any(|c| c == id) {
            return Matched::Cancelled;
        }
        Matched::Unknown("it answers no outstanding request (unknown, repeated or early id)")
    }

    /// Forget the request the peer called `peer_id` (it cancelled it); the id it went
    /// on under, to translate the cancellation. `None` when nothing matches exactly.
    pub fn cancel(&mut self, peer_id: &Value) -> Option<String> {
        let id = self
            .entries
            .iter()
            .find(|(_, e)| e.peer_id.as_ref() == Some(peer_id))
            .map(|(k, _)| k.clone())?;
        self.entries.remove(&id);
        if self.cancelled.len() >= CANCELLED_KEPT {
            self.cancelled.pop_front();
        }
        self.cancelled.push_back(id.clone());
        Some(id)
    }

    /// Remove the entry of a request of the gateway's own that timed out.
    pub fn remove(&mut self, id: &str) {
        self.entries.remove(id);
    }

    /// How many requests are outstanding.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no request is outstanding.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many cancelled ids are remembered (at most [`CANCELLED_KEPT`]).
    pub fn cancelled_len(&self) -> usize {
        self.cancelled.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(peer: Value) -> Entry<u8> {
        Entry {
            peer_id: Some(peer),
            what: 0,
        }
    }

    #[test]
    fn minted_ids_differ_and_carry_a_tag_nobody_can_guess() {
        let m = Minter::new("n".into()).unwrap();
        let a = m.mint(Dir::ToServer);
        let b = m.mint(Dir::ToServer);
        let c = m.mint(Dir::ToClient);
        assert!(a.starts_with("cordon-n-s-0-"), "{a}");
        assert!(b.starts_with("cordon-n-s-1-"), "{b}");
        assert!(c.starts_with("cordon-n-c-2-"), "{c}");
        assert_eq!(a.len(), "cordon-n-s-0-".len() + 16);
        // Another run (another key) mints another tag for the same counter.
        let other = Minter::new("n".into()).unwrap().mint(Dir::ToServer);
        assert_ne!(a, other);
    }

    #[test]
    fn only_the_exact_string_answers_once() {
        let mut t = Table::default();
        t.insert("cordon-x-s-5-t".into(), entry(json!(5))).unwrap();
        for wrong in [
            json!(5),
            json!("5"),
            json!(5.0),
            json!(null),
            json!(["cordon-x-s-5-t"]),
        ] {
            assert!(matches!(t.answer(&wrong), Matched::Unknown(_)), "{wrong}");
        }
        assert!(matches!(
            t.answer(&json!("cordon-x-s-5-T")),
            Matched::Unknown(_)
        ));
        match t.answer(&json!("cordon-x-s-5-t")) {
            Matched::Answer(e) => assert_eq!(e.peer_id, Some(json!(5))),
            other => panic!("{other:?}"),
        }
        // A second answer finds nothing.
        assert!(matches!(
            t.answer(&json!("cordon-x-s-5-t")),
            Matched::Unknown(_)
        ));
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn the_table_is_bounded() {
        let mut t = Table::default();
        for i in 0..MAX_OUTSTANDING {
            t.insert(format!("id{i}"), entry(json!(i))).unwrap();
        }
        assert_eq!(t.insert("one-more".into(), entry(json!(-1))), Err(Full));
        assert!(matches!(t.answer(&json!("id0")), Matched::Answer(_)));
        assert!(t.insert("one-more".into(), entry(json!(-1))).is_ok());
    }

    #[test]
    fn slots_are_bounded_and_given_back() {
        let s = Slots::bounded(2);
        assert!(s.take() && s.take());
        assert!(!s.take(), "a third is refused");
        assert_eq!(s.used(), 2);
        s.give_back();
        assert!(s.take());
        s.give_back();
        s.give_back();
        s.give_back();
        assert_eq!(s.used(), 0, "never below zero");
    }

    #[test]
    fn a_cancellation_is_translated_and_a_late_answer_dropped_quietly() {
        let mut t = Table::default();
        t.insert("g1".into(), entry(json!(7))).unwrap();
        assert_eq!(t.cancel(&json!("7")), None, "string-exact");
        assert_eq!(t.cancel(&json!(7)).as_deref(), Some("g1"));
        assert!(matches!(t.answer(&json!("g1")), Matched::Cancelled));
        assert_eq!(t.cancel(&json!(7)), None);
    }
}
