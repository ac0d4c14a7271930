//! Structured decision events: one per proxied request or tunnel, allowed or refused.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cordon_policy::net::NetCode;
use serde::Serialize;

/// How the client asked for the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Protocol {
    /// `CONNECT host:port` tunnel.
    Connect,
    /// Absolute-form plain HTTP request.
    Http,
    /// SOCKS5 `CONNECT`.
    Socks5,
    /// One request inside a tunnel the proxy inspects (a host with request rules).
    Intercepted,
    /// Not known yet (refused before the first byte was understood).
    Unknown,
}

/// What the proxy did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Decision {
    /// The connection was made (its own outcome is in `code`).
    Allow,
    /// Refused by policy or by a limit.
    Deny,
    /// The request was malformed, or the upstream could not be reached.
    Error,
}

/// One decision of the proxy, as delivered to the event sink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EgressEvent {
    /// Milliseconds since the Unix epoch when the request arrived.
    pub time_ms: u64,
    /// How the client asked.
    pub protocol: Protocol,
    /// HTTP method for plain HTTP requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The request path and query, for intercepted requests (bounded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The credential added to this request, or whose leak was refused (its name only,
    /// never its value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
    /// The normalized host (or the raw target, bounded, when it did not parse).
    pub host: String,
    /// The target port (0 when unknown).
    pub port: u16,
    /// The address the proxy checked and connected to (or the one that was refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<SocketAddr>,
    /// allow / deny / error.
    pub decision: Decision,
    /// [`NetCode::Allow`] or the block code also sent in `X-Cordon-Block`.
    pub code: NetCode,
    /// One human sentence (empty when allowed).
    pub reason: String,
    /// Upstream HTTP status, for plain HTTP requests that reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Bytes from the client to the upstream (payload only).
    pub bytes_up: u64,
    /// Bytes from the upstream to the client (payload only).
    pub bytes_down: u64,
    /// From arrival to the end of the request or tunnel, in milliseconds.
    pub duration_ms: u64,
}

impl EgressEvent {
    pub(crate) fn new(protocol: Protocol) -> EgressEvent {
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        EgressEvent {
            time_ms,
            protocol,
            method: None,
            path: None,
            credential: None,
            host: String::new(),
            port: 0,
            address: None,
            // Every emitted event sets its own decision and code; until then it reads as
            // an error, never as an allow.
            decision: Decision::Error,
            code: NetCode::Malformed,
            reason: String::new(),
            status: None,
            bytes_up: 0,
            bytes_down: 0,
            duration_ms: 0,
        }
    }

    pub(crate) fn finish(mut self, elapsed: Duration) -> EgressEvent {
        self.duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The event as one JSON line (without the newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }
}

/// A callback that receives every event as it happens (`--verbose`, a report writer, the
/// audit log). It runs on the proxy's threads: keep it short.
pub type EventSink = Arc<dyn Fn(&EgressEvent) + Send + Sync>;

/// How many events the handle keeps for [`crate::EgressHandle::events`]; older ones are
/// dropped first (the sink still sees all of them).
pub const EVENT_HISTORY: usize = 10_000;

pub(crate) struct Events {
    sink: Option<EventSink>,
    history: Mutex<VecDeque<EgressEvent>>,
}

impl Events {
    pub(crate) fn new(sink: Option<EventSink>) -> Events {
        Events {
            sink,
            history: Mutex::new(VecDeque::new()),
        }
    }

    pub(crate) fn emit(&self, event: EgressEvent) {
        if let Some(sink) = &self.sink {
            sink(&event);
        }
        // A poisoned lock only means another thread panicked while pushing; the queue
        // itself is still valid.
        let mut history = self
            .history
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if history.len() >= EVENT_HISTORY {
            history.pop_front();
        }
        history.push_back(event);
    }

    pub(crate) fn snapshot(&self) -> Vec<EgressEvent> {
        self.history
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}
