//! cordon-ui: a local web console for a person watching agents.
//!
//! It shows every decision as the audit log records it, lets a human answer pending
//! approvals (once, for the session, always, with an edited input, or deny), revoke
//! leases and forget remembered rules, shows the change sets contained runs left for
//! review (every change with its diff) to apply or discard, and shows whether the audit
//! chain verifies. It
//! works on the same store and log as `cordon approvals` and `cordon audit`; it never
//! decides policy itself (an edited approval is judged by the gate).
//!
//! # Threat notes
//!
//! The console can grant what the policy asked a human about, so any web page the user
//! visits is an attacker here:
//! * it listens on loopback unless told otherwise with a flag whose name says the danger;
//! * every request needs a session made from a 256-bit launch token printed at start
//!   (compared in constant time); the session lives in an `HttpOnly; SameSite=Strict`
//!   cookie, so script cannot read it and other sites' requests do not carry it;
//! * `Host` must be the console's own address, which defeats DNS rebinding;
//! * state changes are POSTs that need a same-origin `Origin` (and no cross-site
//!   `Sec-Fetch-Site`) and a per-session CSRF token in a header;
//! * the page runs only its own embedded script under a strict Content-Security-Policy
//!   and writes every untrusted text (commands, paths, MCP results) with `textContent`;
//! * a change set is named by the id `list_left` gives it, never by a path from the
//!   request, and what a sandboxed command wrote (file names, reasons, diffs) comes back as
//!   JSON text with controls made visible and `<`, `>`, `&` escaped.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod actions;
mod changes;
mod follow;
mod guard;
mod server;

use std::net::SocketAddr;
use std::sync::Arc;

pub use actions::{ActionError, ConsoleAnswer, Places, PolicyLoader, SOURCE};
pub use changes::{ChangePlaces, MAX_DIFFED, MAX_SHOWN};
pub use follow::{BACKLOG, Feed, Line, Reader, follow};
pub use guard::{CSP, CSRF_HEADER, Guard, Refused, Secret, constant_time_eq};

/// Why the console could not start or stopped.
#[derive(Debug)]
pub struct UiError(String);

impl std::fmt::Display for UiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UiError {}

/// How to run the console.
pub struct UiOptions {
    /// Address to listen on (port 0 picks a free one).
    pub listen: SocketAddr,
    /// Accept a non-loopback `listen`: the console is then reachable from the network,
    /// over plain HTTP, by anyone who learns the token.
    pub dangerously_listen_non_loopback: bool,
    /// The store and the audit log.
    pub places: Places,
    /// Loads the policy an edited approval is judged by.
    pub loader: Arc<PolicyLoader>,
}

/// A console bound to its address, not yet serving.
pub struct Console {
    listener: std::net::TcpListener,
    app: Arc<server::App>,
    addr: SocketAddr,
}

impl Console {
    /// Check the options, bind the address and make the launch token.
    pub fn bind(options: UiOptions) -> Result<Console, UiError> {
        if !options.listen.ip().is_loopback() && !options.dangerously_listen_non_loopback {
            return Err(UiError(format!(
                "refusing to listen on {}, which is not a loopback address: the console can grant what policy asked a human about; use 127.0.0.1, or pass --dangerously-listen-non-loopback if you really mean it",
                options.listen
            )));
        }
        let listener = std::net::TcpListener::bind(options.listen)
            .map_err(|e| UiError(format!("cannot listen on {}: {e}", options.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| UiError(format!("cannot read the listening address: {e}")))?;
        let guard =
            Guard::new(addr).map_err(|e| UiError(format!("cannot make a random token: {e}")))?;
        let feed = follow(options.places.audit.clone());
        Ok(Console {
            listener,
            addr,
            app: Arc::new(server::App {
                guard,
                places: options.places,
                feed,
                loader: options.loader,
            }),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The launch token.
    pub fn token(&self) -> &str {
        self.app.guard.token().as_str()
    }

    /// The URL that signs a browser in (it carries the token).
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token())
    }

    /// Serve until the process ends (or the listener fails).
    pub fn serve(self) -> Result<(), UiError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| UiError(format!("cannot start the console's runtime: {e}")))?;
        runtime.block_on(serve(self.listener, self.app))
    }
}

async fn serve(listener: std::net::TcpListener, app: Arc<server::App>) -> Result<(), UiError> {
    listener
        .set_nonblocking(true)
        .map_err(|e| UiError(format!("cannot set up the listener: {e}")))?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| UiError(format!("cannot set up the listener: {e}")))?;
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of descriptors and the like: wait, then go on accepting.
                eprintln!("cordon ui: accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let app = Arc::clone(&app);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |req| server::handle(Arc::clone(&app), req));
            let io = hyper_util::rt::TokioIo::new(stream);
            // A client that goes away mid-request is not the console's failure.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}
