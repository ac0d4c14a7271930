//! The service: what every connection shares (the policy, the audit writer, the approvals
//! a client is waiting for) and what each connection owns (its store connection, its way
//! back from the writer), and the dispatch of one frame to one method.
//!
//! It must answer every request frame exactly once and every notification never, and it
//! must not send an answer whose audit record is not written.

use crate::audit::{AuditSync, AuditWriter};
use crate::reload::PolicyHolder;
use crate::rpc::{self, Call, RpcError};
use cordon_gate::GateOptions;
use cordon_policy::LoadOptions;
use cordon_store::{Store, StoreError, StoreErrorKind};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bytes a line may hold beyond the largest request: the envelope around it.
pub const ENVELOPE_HEADROOM: usize = 64 * 1024;

/// The longest line the service reads.
pub const MAX_LINE: usize = cordon_policy::request::MAX_REQUEST_BYTES + ENVELOPE_HEADROOM;

/// How the service is set up.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// What to load the policy from (and watch for changes).
    pub load: LoadOptions,
    /// The approval store; `None` is the default one in the state directory.
    pub store: Option<PathBuf>,
    /// The audit log; `None` is the default one in the state directory.
    pub audit: Option<PathBuf>,
    /// Write no audit records.
    pub no_audit: bool,
    /// When audit records reach the disk.
    pub audit_sync: AuditSync,
    /// Connections served at once on a socket; more are refused.
    pub max_connections: usize,
    /// How often at most the config files (and the remembered rules) are looked at.
    pub reload_interval: Duration,
    /// Follow the approval store's remembered rules while running: the policy is
    /// reloaded when they change (`load.remembered_rules` holds the ones read at start).
    pub follow_rules: bool,
    /// `cordon exec` as hook calls through the service rewrite a shell call to run
    /// contained (with `[hook] contain`); `None` leaves such calls to the policy as is.
    pub hook_exec: Option<cordon_hook::ExecLine>,
    /// Where the stores are ([`cordon_gate::locate`]); `None`: `store` (or the default
    /// local file) holds everything.
    pub location: Option<cordon_gate::StoreLocation>,
    /// Ship the audit log to an OpenTelemetry collector in the background (nothing
    /// with `no_audit`).
    pub export: Option<cordon_export::ExportConfig>,
}

impl ServeOptions {
    /// Options with the defaults: default store and log, batched sync every 10 ms, 64
    /// connections, config files looked at every 250 ms at most.
    pub fn new(load: LoadOptions) -> ServeOptions {
        ServeOptions {
            load,
            store: None,
            audit: None,
            no_audit: false,
            audit_sync: AuditSync::default(),
            max_connections: 64,
            reload_interval: Duration::from_millis(250),
            follow_rules: false,
            hook_exec: None,
            export: None,
            location: None,
        }
    }
}

/// Why the service could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The policy does not load.
    Config(cordon_policy::ConfigError),
    /// The store or the audit log cannot be used.
    Store(StoreError),
    /// The socket cannot be used as asked.
    Socket(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Config(e) => write!(f, "invalid config: {e}"),
            ServeError::Store(e) => write!(f, "{e}"),
            ServeError::Socket(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ServeError {}

/// A call a client is waiting on: the pending approval recorded for its operation id.
#[derive(Debug, Clone)]
pub(crate) struct Waiting {
    pub(crate) id: cordon_store::PendingId,
    pub(crate) fingerprint: String,
}

/// Most operation ids remembered with their pending approval.
pub(crate) const MAX_WAITING: usize = 65_536;

/// The shared part of the service.
pub struct Service {
    pub(crate) policy: PolicyHolder,
    pub(crate) audit: Option<AuditWriter>,
    /// The store holding the shared state (the local file unless `[store]` says).
    pub(crate) shared: Arc<cordon_store::StoreAt>,
    pub(crate) waiting: Mutex<HashMap<String, Waiting>>,
    pub(crate) max_connections: usize,
    pub(crate) active: AtomicUsize,
    pub(crate) hook_gates: crate::hook::HookGates,
    pub(crate) hook_exec: Option<cordon_hook::ExecLine>,
    /// The background export of the audit log, when configured.
    pub(crate) export: Option<cordon_export::Background>,
    /// The background shipping of the audit log to the shared store, when there is one.
    pub(crate) fleet: Option<cordon_export::Background>,
}

impl Service {
    /// Load the policy, open the audit log and start its writer.
    pub fn start(options: ServeOptions) -> Result<Service, ServeError> {
        let store_path = match (&options.location, &options.store) {
            (Some(l), _) => l.local.clone(),
            (None, Some(p)) => p.clone(),
            (None, None) => cordon_store::default_store_path().map_err(ServeError::Store)?,
        };
        let shared = match &options.location {
            Some(l) => Arc::clone(&l.shared),
            None => Arc::new(cordon_store::StoreAt::File(store_path.clone())),
        };
        let audit_path = match &options.audit {
            Some(p) => p.clone(),
            None => cordon_store::default_audit_path().map_err(ServeError::Store)?,
        };
        let gate_options = GateOptions {
            surface: cordon_gate::Surface::Serve,
            store: Some(store_path.clone()),
            audit: Some(audit_path.clone()),
            no_audit: options.no_audit,
            // A `check` hands the judged call back (`updated_input`), so an approval may
            // replace the input.
            edits: true,
        };
        let policy = PolicyHolder::new(
            options.load,
            gate_options,
            options.reload_interval,
            options.location.clone(),
            options.follow_rules,
        )
        .map_err(ServeError::Config)?;
        let audit = if options.no_audit {
            None
        } else {
            Some(
                AuditWriter::start(&audit_path, &store_path, options.audit_sync)
                    .map_err(ServeError::Store)?,
            )
        };
        let export = match (&audit, options.export) {
            (Some(_), Some(config)) => Some(
                cordon_export::Exporter::new(&audit_path, &store_path, config)
                    .spawn(Duration::from_secs(1), "cordon serve")
                    .map_err(|e| {
                        ServeError::Store(StoreError::new(
                            &audit_path,
                            StoreErrorKind::Io(e.to_string()),
                        ))
                    })?,
            ),
            _ => None,
        };
        // A fleet's console shows every machine's decisions: this log's records go to the
        // shared store in the background (the log stays the record, and the queue).
        let fleet = match (&audit, &options.location) {
            (Some(_), Some(l)) if l.is_shared() => Some(
                cordon_export::Shipper::new(&audit_path, &store_path, Arc::clone(&l.shared))
                    .spawn(Duration::from_millis(500), "cordon serve")
                    .map_err(|e| {
                        ServeError::Store(StoreError::new(
                            &audit_path,
                            StoreErrorKind::Io(e.to_string()),
                        ))
                    })?,
            ),
            _ => None,
        };
        Ok(Service {
            export,
            fleet,
            policy,
            audit,
            shared,
            waiting: Mutex::new(HashMap::new()),
            max_connections: options.max_connections.max(1),
            active: AtomicUsize::new(0),
            hook_gates: crate::hook::HookGates::default(),
            hook_exec: options.hook_exec,
        })
    }

    /// The policy holder (its current gate, the files it watches).
    pub fn policy(&self) -> &PolicyHolder {
        &self.policy
    }

    /// A connection's state.
    pub fn connect(&self) -> Connection<'_> {
        Connection {
            service: self,
            store: None,
        }
    }

    /// Take a connection slot; `None` at the limit. The slot is given back when the
    /// guard is dropped.
    pub fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut n = self.active.load(Ordering::Acquire);
        loop {
            if n >= self.max_connections {
                return None;
            }
            match self
                .active
                .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    return Some(Slot {
                        service: Arc::clone(self),
                    });
                }
                Err(now) => n = now,
            }
        }
    }

    /// The connection limit.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// Stop the audit writer after everything handed to it is written and synced.
    pub fn shutdown(&self) {
        if let Some(w) = &self.audit {
            w.shutdown();
        }
        if let Some(e) = &self.export {
            e.stop();
        }
        if let Some(f) = &self.fleet {
            f.stop();
        }
    }
}

/// A connection slot ([`Service::admit`]).
pub struct Slot {
    service: Arc<Service>,
}

impl Slot {
    /// The service this slot belongs to.
    pub fn service(&self) -> &Service {
        &self.service
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.service.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One client's state: a store connection kept open.
pub struct Connection<'s> {
    pub(crate) service: &'s Service,
    store: Option<Store>,
}

impl Connection<'_> {
    /// Handle one frame; the answer line to send, if any (none for a notification).
    pub fn handle(&mut self, line: &[u8]) -> Option<String> {
        let call = match rpc::parse_call(line) {
            Ok(c) => c,
            Err((id, e)) => return Some(rpc::failure(&id, &e)),
        };
        let Call { id, method, params } = call;
        let result = self.dispatch(&method, params);
        let id = id?;
        Some(match result {
            Ok(text) => rpc::success(&id, &text),
            Err(e) => rpc::failure(&id, &e),
        })
    }

    fn dispatch(
        &mut self,
        method: &str,
        params: serde_json::Map<String, Value>,
    ) -> Result<String, RpcError> {
        let text = |v: Result<Value, RpcError>| rpc::result_text(&v?);
        match method {
            "check" => self.check(params),
            "pending.list" => text(self.pending_list(params)),
            "approve" => text(self.approve(params)),
            "deny" => text(self.deny(params)),
            "record" => text(self.record(params)),
            "label" => text(crate::methods::label(params)),
            "hook" => text(self.hook(params)),
            other => Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!(
                    "no method `{}`; the methods are check, pending.list, approve, deny, record, label and hook",
                    cordon_policy::terminal::sanitize_for_terminal(other)
                ),
            )),
        }
    }

    /// The store, opened on first use and kept while its path names the same file.
    pub(crate) fn store(&mut self) -> Result<&Store, RpcError> {
        // A store deleted or replaced on disk is opened afresh.
        self.store = self.store.take().filter(Store::is_current);
        if self.store.is_none() {
            let store = Store::open_at(&self.service.shared).map_err(|e| {
                RpcError::new(
                    rpc::SERVER_ERROR,
                    format!("the approval store cannot be used: {e}"),
                )
            })?;
            self.store = Some(store);
        }
        match &self.store {
            Some(s) => Ok(s),
            None => Err(RpcError::new(
                rpc::SERVER_ERROR,
                "the approval store cannot be used",
            )),
        }
    }

    /// Write one audit record (nothing without an audit log); an error means it is not
    /// in the log.
    pub(crate) fn write_record(
        &self,
        record: cordon_store::LogFields,
    ) -> Result<(), cordon_gate::AuditError> {
        match &self.service.audit {
            Some(w) => w.write(record),
            None => Ok(()),
        }
    }

    /// [`write_record`](Self::write_record) for a record built as a JSON object.
    pub(crate) fn write_value(&self, record: &Value) -> Result<(), cordon_gate::AuditError> {
        match &self.service.audit {
            Some(w) => w.write_value(record),
            None => Ok(()),
        }
    }
}
