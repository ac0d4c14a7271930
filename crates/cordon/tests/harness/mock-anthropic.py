#!/usr/bin/env python3
"""A mock of the Anthropic Messages API, just enough for Claude Code in print mode
(crates/cordon/tests/harness_real.rs).

Usage: mock-anthropic.py RECORD COMMAND

Listens on 127.0.0.1 on a free port and prints the port on its first line of stdout.
Every request is appended to RECORD as one JSON line: {"path", "body"} (the body as
text, exactly as received). POST /v1/messages with the Bash tool offered and no
result for the scripted call yet is answered with one tool_use of Bash running
COMMAND; once the request carries that call's tool_result, with the final text
"MOCK-DONE". Requests without the Bash tool (Claude Code's side queries) get a short
text. Answers stream as server-sent events when the request asks for `stream`, as the
Messages API does (message_start, content_block_start/delta/stop, message_delta,
message_stop). Anything else is 404, recorded all the same, so that a protocol change
shows in the test's failure.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD, COMMAND = sys.argv[1], sys.argv[2]
TOOL_ID = "toolu_cordon_mock_1"
LOCK = threading.Lock()


def record(path, body):
    with LOCK, open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({"path": path, "body": body}) + "\n")


def has_result(req):
    for m in req.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") == TOOL_ID:
                    return True
    return False


def answer(req):
    """The content block and stop reason for this request."""
    tools = [t.get("name") for t in req.get("tools", []) if isinstance(t, dict)]
    if has_result(req):
        return {"type": "text", "text": "MOCK-DONE"}, "end_turn"
    if "Bash" in tools:
        return {
            "type": "tool_use",
            "id": TOOL_ID,
            "name": "Bash",
            "input": {"command": COMMAND, "description": "scripted by the mock"},
        }, "tool_use"
    return {"type": "text", "text": "mock"}, "end_turn"


def sse(block, stop, model):
    msg = {
        "id": "msg_cordon_mock",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [("message_start", {"type": "message_start", "message": msg})]
    if block["type"] == "text":
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        start = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, ctype, data):
        self.send_response(code)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_cordon_mock")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        record(self.path, "")
        self.send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')

    def do_HEAD(self):
        self.send(200, "text/plain", b"")

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace")
        record(self.path, raw)
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            self.send(200, "application/json", b'{"input_tokens": 10}')
            return
        if path != "/v1/messages":
            self.send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')
            return
        req = json.loads(raw)
        block, stop = answer(req)
        model = req.get("model", "claude-mock")
        if req.get("stream"):
            self.send(200, "text/event-stream", sse(block, stop, model))
        else:
            body = {
                "id": "msg_cordon_mock",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
            self.send(200, "application/json", json.dumps(body).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
