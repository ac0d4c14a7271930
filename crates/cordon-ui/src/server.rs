//! The HTTP side: routing, the checks of [`guard`](crate::guard) in front of every
//! route, the embedded page, and the server-sent event stream of decisions.
//!
//! Order of checks, for every request: `Host` (DNS rebinding), then the session cookie
//! (or the launch token on `/`), then, for a POST, `Origin`/`Sec-Fetch-Site` and the CSRF
//! header. A request refused by any of them reaches no handler.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue, LOCATION, SET_COOKIE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::actions::{self, ConsoleAnswer, Places, PolicyLoader};
use crate::changes;
use crate::follow::{Feed, Line};
use crate::guard::{Guard, Refused, Secret, harden, set_cookie};

/// The largest request body accepted (an edited input is at most a request's size).
const MAX_BODY: usize = cordon_policy::request::MAX_REQUEST_BYTES + 4096;

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/app.css");
const ICON: &str = include_str!("../assets/favicon.svg");

/// Everything a request handler needs.
pub struct App {
    /// The token, sessions and origin checks.
    pub guard: Guard,
    /// The store and the audit log.
    pub places: Places,
    /// The live feed of audit records.
    pub feed: Arc<Feed>,
    /// Loads the policy an edited approval is judged by.
    pub loader: Arc<PolicyLoader>,
}

type Reply = Response<BoxBody<Bytes, Infallible>>;

fn full(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()).boxed());
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json_reply(status: u16, value: &Value) -> Reply {
    full(status, "application/json", json_text(value))
}

/// JSON with `<`, `>` and `&` written as `\u` escapes. They can only occur inside
/// strings, so the value is the same; but no byte sequence of untrusted text (a file name
/// or a diff a sandboxed command wrote) reads as markup, even to a client that sniffs.
fn json_text(value: &Value) -> String {
    let raw = value.to_string();
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

fn refused(why: Refused) -> Reply {
    let (status, text) = why.explain();
    full(status, "text/plain; charset=utf-8", text)
}

/// Handle one request; never fails (errors become responses).
pub async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let mut reply = route(&app, req).await;
    harden(reply.headers_mut());
    Ok(reply)
}

async fn route(app: &Arc<App>, req: Request<Incoming>) -> Reply {
    if let Err(why) = app.guard.check_host(req.headers()) {
        return refused(why);
    }
    let path = req.uri().path().to_string();
    if req.method() == Method::GET
        && path == "/"
        && let Some(token) = query_token(req.uri().query())
    {
        return match app.guard.login(token) {
            Ok(cookie) => login_redirect(&cookie),
            Err(why) => refused(why),
        };
    }
    let csrf = match app.guard.session(req.headers()) {
        Ok(csrf) => csrf,
        Err(why) => return refused(why),
    };
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/") => full(200, "text/html; charset=utf-8", INDEX),
        (Method::GET, "/app.js") => full(200, "text/javascript; charset=utf-8", SCRIPT),
        (Method::GET, "/app.css") => full(200, "text/css; charset=utf-8", STYLE),
        (Method::GET, "/favicon.svg" | "/favicon.ico") => full(200, "image/svg+xml", ICON),
        (Method::GET, "/api/state") => {
            let places = app.places.clone();
            let state = blocking(move || actions::state(&places)).await;
            match state {
                Ok(mut v) => {
                    v["csrf"] = json!(csrf.as_str());
                    json_reply(200, &v)
                }
                Err(e) => error_reply(&e),
            }
        }
        (Method::GET, "/api/verify") => {
            let audit = app.places.audit.clone();
            let v = blocking(move || Ok(actions::verify(&audit))).await;
            match v {
                Ok(v) => json_reply(200, &v),
                Err(e) => error_reply(&e),
            }
        }
        (Method::GET, "/api/events") => events(&app.feed),
        (Method::GET, "/api/changes") => {
            let places = app.places.changes.clone();
            reply(blocking(move || changes::list(&places)).await)
        }
        (Method::GET, p) if p.starts_with("/api/changes/") => {
            // Compared with the listed ids only, never used as a path.
            let id = p["/api/changes/".len()..].to_string();
            let places = app.places.changes.clone();
            reply(blocking(move || changes::show(&places, &id)).await)
        }
        (Method::POST, _) => {
            if let Err(why) = app.guard.check_change(req.headers(), &csrf) {
                return refused(why);
            }
            change(app, &path, req).await
        }
        (
            _,
            "/" | "/app.js" | "/app.css" | "/favicon.svg" | "/api/state" | "/api/verify"
            | "/api/events" | "/api/changes",
        ) => full(405, "text/plain; charset=utf-8", "method not allowed"),
        _ => full(404, "text/plain; charset=utf-8", "not found"),
    }
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|kv| kv.strip_prefix("token="))
}

/// Set the session cookie and send the browser to `/` without the token in its URL or
/// history.
fn login_redirect(cookie: &Secret) -> Reply {
    let mut r = full(303, "text/plain; charset=utf-8", "signed in");
    r.headers_mut()
        .insert(LOCATION, HeaderValue::from_static("/"));
    if let Ok(v) = HeaderValue::from_str(&set_cookie(cookie)) {
        r.headers_mut().insert(SET_COOKIE, v);
    }
    r
}

fn error_reply(e: &actions::ActionError) -> Reply {
    json_reply(e.status, &json!({"error": e.message}))
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, actions::ActionError> + Send + 'static,
) -> Result<T, actions::ActionError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(actions::ActionError {
            status: 500,
            message: format!("the console's worker failed: {e}"),
        })
    })
}

async fn change(app: &Arc<App>, path: &str, req: Request<Incoming>) -> Reply {
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return json_reply(
                413,
                &json!({"error": format!("the request body is larger than {MAX_BODY} bytes or was cut off")}),
            );
        }
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return json_reply(
                400,
                &json!({"error": "the request body must be a JSON object"}),
            );
        }
    };
    let places = app.places.clone();
    let loader = Arc::clone(&app.loader);
    let done = match path {
        "/api/answer" => {
            let Some(id) = body.get("id").and_then(Value::as_i64) else {
                return json_reply(
                    400,
                    &json!({"error": "\"id\" must be a pending approval's number"}),
                );
            };
            let answer = match ConsoleAnswer::from_json(&body) {
                Ok(a) => a,
                Err(e) => return error_reply(&e),
            };
            blocking(move || actions::answer(&places, loader.as_ref(), id, answer)).await
        }
        "/api/revoke" => {
            let Some(id) = body.get("id").and_then(Value::as_i64) else {
                return json_reply(400, &json!({"error": "\"id\" must be a lease's number"}));
            };
            blocking(move || actions::revoke(&places, id)).await
        }
        "/api/forget" => {
            let Some(rule) = body.get("rule").and_then(Value::as_str).map(str::to_string) else {
                return json_reply(
                    400,
                    &json!({"error": "\"rule\" must be a saved rule's text"}),
                );
            };
            blocking(move || actions::forget(&places, &rule)).await
        }
        "/api/changes/apply" | "/api/changes/discard" => {
            let Some(id) = body.get("id").and_then(Value::as_str).map(str::to_string) else {
                return json_reply(
                    400,
                    &json!({"error": "\"id\" must be a change set's id from the list"}),
                );
            };
            if path.ends_with("/discard") {
                blocking(move || changes::discard(&places, &id)).await
            } else {
                let overwrite = match body.get("overwrite") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return json_reply(
                            400,
                            &json!({"error": "\"overwrite\" must be true or false"}),
                        );
                    }
                };
                blocking(move || changes::apply(&places, &id, overwrite)).await
            }
        }
        _ => return full(404, "text/plain; charset=utf-8", "not found"),
    };
    reply(done)
}

fn reply(done: Result<Value, actions::ActionError>) -> Reply {
    match done {
        Ok(v) => json_reply(200, &v),
        Err(e) => error_reply(&e),
    }
}

/// The decision stream: the recent records, then each new one as it is appended.
fn events(feed: &Arc<Feed>) -> Reply {
    let (recent, mut rx) = feed.subscribe();
    let (tx, out) = mpsc::channel::<Bytes>(256);
    tokio::spawn(async move {
        let mut last = 0;
        for line in &recent {
            last = line.seq.max(last);
            if tx.send(sse(line)).await.is_err() {
                return;
            }
        }
        loop {
            match rx.recv().await {
                Ok(line) => {
                    if line.seq != 0 && line.seq <= last {
                        continue; // already sent with the recent records
                    }
                    if tx.send(sse(&line)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let note = format!("event: lagged\ndata: {n}\n\n");
                    if tx.send(Bytes::from(note)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let mut r = Response::new(SseBody { rx: out }.boxed());
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    r
}

fn sse(line: &Line) -> Bytes {
    // A stored line is one line of JSON (no newline inside), so it is one data field.
    Bytes::from(format!("id: {}\ndata: {}\n\n", line.seq, line.json))
}

/// A response body fed by a channel.
struct SseBody {
    rx: mpsc::Receiver<Bytes>,
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}
