//! JSON-RPC 2.0 framing: one JSON object per line, read without ever buffering more than
//! the line cap, and the envelope of answers and errors.
//!
//! This module knows nothing of cordon's methods. It must never hand a method a frame
//! that is not a well-formed request object, and never answer a notification.

use serde_json::{Map, Value, json};
use std::io::BufRead;

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// cordon could not do what was asked (the store or the audit log failed).
pub const SERVER_ERROR: i64 = -32000;
/// JSON-RPC: the server failed to build its answer.
pub const INTERNAL_ERROR: i64 = -32603;
/// No pending approval has that id.
pub const NO_SUCH_PENDING: i64 = -32001;
/// The pending approval was already answered.
pub const ALREADY_ANSWERED: i64 = -32002;
/// The method exists but this build of cordon cannot serve it yet.
pub const UNAVAILABLE: i64 = -32003;
/// The service is at its connection limit.
pub const BUSY: i64 = -32004;
/// An edited approval was refused: the edited call is denied (or not a valid call).
pub const EDIT_REFUSED: i64 = -32005;

/// A JSON-RPC error: a code and one sentence saying what was wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// One sentence for the harness author.
    pub message: String,
}

impl RpcError {
    /// An error with `code`.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }

    /// Invalid params.
    pub fn params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }
}

/// One line read from a client.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line, without its newline.
    Line(Vec<u8>),
    /// The line grew past the cap; the rest was not read and the connection must close.
    TooLong,
    /// The client closed the connection (a last line without a newline is still read).
    End,
}

/// Read one line of at most `cap` bytes (newline excluded). Never holds more than `cap`
/// bytes plus one buffer of the reader.
pub fn read_frame(reader: &mut impl BufRead, cap: usize) -> std::io::Result<Frame> {
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() {
                Frame::End
            } else {
                Frame::Line(line)
            });
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if line.len() + take > cap {
            return Ok(Frame::TooLong);
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Frame::Line(line));
        }
    }
}

/// A request object that passed the envelope's checks.
#[derive(Debug)]
pub struct Call {
    /// The id to answer with; `None` for a notification (no answer at all).
    pub id: Option<Value>,
    /// The method name.
    pub method: String,
    /// The params object (an absent `params` is an empty object).
    pub params: Map<String, Value>,
}

/// Parse one frame into a call, or the error to answer with (and the id to answer it
/// under: `null` when the frame had no usable id).
pub fn parse_call(line: &[u8]) -> Result<Call, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("the line is not valid JSON ({e})")),
        )
    })?;
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err((
                Value::Null,
                RpcError::new(
                    INVALID_REQUEST,
                    "batch requests are not supported; send one request object per line",
                ),
            ));
        }
        _ => {
            return Err((
                Value::Null,
                RpcError::new(
                    INVALID_REQUEST,
                    "a request must be a JSON object with jsonrpc, method and id",
                ),
            ));
        }
    };
    let id = match obj.remove("id") {
        None => None,
        Some(v @ (Value::Null | Value::String(_) | Value::Number(_))) => Some(v),
        Some(_) => {
            return Err((
                Value::Null,
                RpcError::new(INVALID_REQUEST, "`id` must be a string, a number or null"),
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    let invalid = |m: &str| (reply_id.clone(), RpcError::new(INVALID_REQUEST, m));
    match obj.remove("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(invalid("`jsonrpc` must be the string \"2.0\"")),
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(invalid("`method` must be a string")),
        None => return Err(invalid("the request has no `method`")),
    };
    let params = match obj.remove("params") {
        None => Map::new(),
        Some(Value::Object(p)) => p,
        Some(Value::Array(_)) => {
            return Err((
                reply_id,
                RpcError::params("`params` must be an object (named parameters)"),
            ));
        }
        Some(_) => return Err(invalid("`params` must be an object")),
    };
    if let Some(key) = obj.keys().next() {
        return Err(invalid(&format!(
            "unknown member `{key}`: a request has jsonrpc, method, params and id"
        )));
    }
    Ok(Call { id, method, params })
}

/// The answer line for a successful call whose result is the JSON text `result`.
pub fn success(id: &Value, result: &str) -> String {
    let mut out = String::with_capacity(result.len() + 64);
    out.push_str("{\"id\":");
    // An id is null, a string or a number: it always serializes.
    out.push_str(&serde_json::to_string(id).unwrap_or_else(|_| "null".into()));
    out.push_str(",\"jsonrpc\":\"2.0\",\"result\":");
    out.push_str(result);
    out.push('}');
    out
}

/// A method's result as the JSON text [`success`] embeds.
pub fn result_text(result: &impl serde::Serialize) -> Result<String, RpcError> {
    // serde_json fails only on a map key that is not a string, which no result holds;
    // should it, the client still gets an answer to its id.
    serde_json::to_string(result).map_err(|e| {
        RpcError::new(
            INTERNAL_ERROR,
            format!("the result could not be serialized ({e})"),
        )
    })
}

/// The answer line for an error.
pub fn failure(id: &Value, error: &RpcError) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": error.code, "message": error.message},
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn frames(input: &[u8], cap: usize) -> Vec<Frame> {
        let mut r = std::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            let f = read_frame(&mut r, cap).unwrap();
            let stop = matches!(f, Frame::End | Frame::TooLong);
            out.push(f);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn lines_split_across_buffers() {
        assert_eq!(
            frames(b"abcdefg\nhi\nlast", 100),
            vec![
                Frame::Line(b"abcdefg".to_vec()),
                Frame::Line(b"hi".to_vec()),
                Frame::Line(b"last".to_vec()),
                Frame::End
            ]
        );
    }

    #[test]
    fn a_line_past_the_cap_stops_reading() {
        assert_eq!(
            frames(b"ok\n0123456789abc\nnever", 10),
            vec![Frame::Line(b"ok".to_vec()), Frame::TooLong]
        );
        // Exactly the cap is fine.
        assert_eq!(
            frames(b"0123456789\n", 10)[0],
            Frame::Line(b"0123456789".to_vec())
        );
    }

    #[test]
    fn envelope_errors() {
        let code = |l: &str| parse_call(l.as_bytes()).unwrap_err().1.code;
        assert_eq!(code("{"), PARSE_ERROR);
        assert_eq!(code("[1]"), INVALID_REQUEST);
        assert_eq!(code("3"), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","method":"check","id":1}"#),
            INVALID_REQUEST
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), INVALID_REQUEST);
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":7,"id":1}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":"x","id":{}}"#),
            INVALID_REQUEST
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","method":"x","id":1,"params":[1]}"#),
            INVALID_PARAMS
        );
        let (id, _) = parse_call(br#"{"jsonrpc":"2.0","id":"a"}"#).unwrap_err();
        assert_eq!(id, json!("a"));
        let c = parse_call(br#"{"jsonrpc":"2.0","method":"m"}"#).unwrap();
        assert!(c.id.is_none(), "no id: a notification");
    }
}
