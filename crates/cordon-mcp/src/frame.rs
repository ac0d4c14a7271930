//! MCP's stdio framing: one JSON-RPC message per line, UTF-8, no embedded newlines
//! (the "stdio" transport of the MCP specification, revisions 2025-03-26 onwards), and
//! the three kinds of message a line can hold.

use serde_json::{Map, Value};
use std::io::{self, BufRead, Write};

/// The largest line accepted (tool results may carry base64 images).
pub const MAX_FRAME: usize = 64 * 1024 * 1024;

/// What one read gave.
#[derive(Debug)]
pub enum Frame {
    /// A line without its newline.
    Line(Vec<u8>),
    /// A line longer than [`MAX_FRAME`], skipped up to its end.
    TooLong,
}

/// Read the next line; `None` at the end of the stream.
pub fn read_frame(r: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Some(Frame::TooLong),
                (false, true) => None,
                (false, false) => Some(Frame::Line(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        let found = done != buf.len() || buf.last() == Some(&b'\n');
        if !too_long {
            if line.len() + chunk.len() > MAX_FRAME {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        r.consume(done);
        if found {
            if too_long {
                return Ok(Some(Frame::TooLong));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(Frame::Line(line)));
        }
    }
}

/// Write one message as one line and flush it.
pub fn write_frame(w: &mut dyn Write, v: &Value) -> io::Result<()> {
    // serde_json escapes control characters in strings, so the text has no newline.
    let mut text = v.to_string();
    text.push('\n');
    w.write_all(text.as_bytes())?;
    w.flush()
}

/// One JSON-RPC message, by kind.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request: it has a method and an id.
    Request {
        /// The id, as sent.
        id: Value,
        /// The method.
        method: String,
        /// The whole message.
        obj: Map<String, Value>,
    },
    /// A notification: a method and no id.
    Notification {
        /// The method.
        method: String,
        /// The whole message.
        obj: Map<String, Value>,
    },
    /// A response: an id and a result or an error.
    Response {
        /// The id of the request it answers.
        id: Value,
        /// The whole message.
        obj: Map<String, Value>,
    },
}

/// Why a line is not a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// Not JSON (JSON-RPC -32700).
    Parse,
    /// JSON, but not one JSON-RPC message (JSON-RPC -32600): an array (batches are not
    /// part of MCP since 2025-06-18), or an object of no known shape.
    Invalid(&'static str),
}

impl Malformed {
    /// The JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            Malformed::Parse => -32700,
            Malformed::Invalid(_) => -32600,
        }
    }

    /// The error message.
    pub fn message(self) -> String {
        match self {
            Malformed::Parse => "parse error: the line is not JSON (cordon mcp-gateway)".into(),
            Malformed::Invalid(why) => format!("invalid request: {why} (cordon mcp-gateway)"),
        }
    }
}

/// Classify one line.
pub fn parse(line: &[u8]) -> Result<Message, Malformed> {
    let v: Value = serde_json::from_slice(line).map_err(|_| Malformed::Parse)?;
    let obj = match v {
        Value::Object(o) => o,
        Value::Array(_) => return Err(Malformed::Invalid("batches are not supported")),
        _ => return Err(Malformed::Invalid("a message must be a JSON object")),
    };
    let id = obj.get("id").cloned();
    if let Some(m) = obj.get("method") {
        let Some(method) = m.as_str().map(str::to_string) else {
            return Err(Malformed::Invalid("`method` must be a string"));
        };
        return Ok(match id {
            Some(id) if valid_id(&id) => Message::Request { id, method, obj },
            Some(_) => return Err(Malformed::Invalid("`id` must be a string or a number")),
            None => Message::Notification { method, obj },
        });
    }
    match id {
        Some(id) if obj.contains_key("result") || obj.contains_key("error") => {
            Ok(Message::Response { id, obj })
        }
        _ => Err(Malformed::Invalid(
            "a message needs a `method`, or an `id` with a `result` or an `error`",
        )),
    }
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_number()
}

/// A JSON-RPC error response.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Option<Vec<u8>>> {
        let mut r = io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r).unwrap() {
            out.push(match f {
                Frame::Line(l) => Some(l),
                Frame::TooLong => None,
            });
        }
        out
    }

    #[test]
    fn lines_across_buffer_boundaries() {
        assert_eq!(
            frames(b"{\"a\":1}\r\n{}\nlast"),
            vec![
                Some(b"{\"a\":1}".to_vec()),
                Some(b"{}".to_vec()),
                Some(b"last".to_vec())
            ]
        );
    }

    #[test]
    fn kinds_and_malformed_lines() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#),
            Ok(Message::Request { method, .. }) if method == "tools/call"
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Message::Notification { .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":"x","result":{}}"#),
            Ok(Message::Response { .. })
        ));
        assert_eq!(parse(b"{nope").unwrap_err(), Malformed::Parse);
        assert!(matches!(parse(b"[{}]"), Err(Malformed::Invalid(_))));
        assert!(matches!(
            parse(br#"{"id":{},"method":"tools/call"}"#),
            Err(Malformed::Invalid(_))
        ));
        assert!(matches!(parse(br#"{"id":1}"#), Err(Malformed::Invalid(_))));
    }
}
