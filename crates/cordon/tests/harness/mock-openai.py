#!/usr/bin/env python3
"""A mock of the OpenAI Responses API, just enough for Codex's `codex exec`
(crates/cordon/tests/harness_real.rs).

Usage: mock-openai.py RECORD COMMAND

Listens on 127.0.0.1 on a free port and prints the port on its first line of stdout.
Every request is appended to RECORD as one JSON line: {"path", "body"} (the body as
text, exactly as received). POST /v1/responses offering a shell tool (`shell_command`,
`exec_command` or `shell`, in that order) is answered with one function_call of it
running COMMAND, under a new call id each time, until the request carries a
function_call_output whose text does not say the call is pending approval; then with
the final text "MOCK-DONE". After an output saying the call is pending approval, the
retry waits (up to 90 s) until the file RECORD.go exists: the test approves the call,
then creates it, as a human would approve at a second terminal and tell the agent to
retry. Answers stream as server-sent events (response.created,
response.output_item.done, response.completed). Anything else is 404, recorded all the
same.
"""

import itertools
import json
import os
import sys
import time
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD, COMMAND = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()
IDS = itertools.count(1)


def record(path, body):
    with LOCK, open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({"path": path, "body": body}) + "\n")


def call(req):
    """The function_call item for this request's shell tool, or None."""
    names = [t.get("name") for t in req.get("tools", []) if isinstance(t, dict)]
    n = next(IDS)
    if "shell_command" in names:
        name, args = "shell_command", {"command": COMMAND}
    elif "exec_command" in names:
        name, args = "exec_command", {"cmd": COMMAND}
    elif "shell" in names:
        name, args = "shell", {"command": ["bash", "-lc", COMMAND]}
    else:
        return None
    return {
        "type": "function_call",
        "id": f"fc_cordon_mock_{n}",
        "call_id": f"call_cordon_mock_{n}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


def outputs(req):
    for item in req.get("input", []) or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            out = item.get("output")
            yield out if isinstance(out, str) else json.dumps(out)


def answer(req):
    outs = list(outputs(req))
    # A third pending answer ends the session: the test then fails on what it sees.
    done = any("pending approval" not in o for o in outs) or len(outs) >= 3
    if outs and not done:
        go = RECORD + ".go"
        for _ in range(900):
            if os.path.exists(go):
                break
            time.sleep(0.1)
    item = None if done else call(req)
    if item is None:
        item = {
            "type": "message",
            "id": "msg_cordon_mock",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "MOCK-DONE", "annotations": []}],
        }
    resp = {"id": "resp_cordon_mock", "object": "response", "status": "in_progress", "output": []}
    done_resp = dict(
        resp,
        status="completed",
        output=[item],
        usage={
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    )
    events = [
        ("response.created", {"type": "response.created", "response": resp}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": done_resp}),
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
        self.end_headers()
        self.wfile.write(data)

    def not_found(self):
        self.send(404, "application/json", b'{"error":{"message":"mock","type":"not_found"}}')

    def do_GET(self):
        record(self.path, "")
        self.not_found()

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace")
        record(self.path, raw)
        if self.path.split("?")[0] != "/v1/responses":
            self.not_found()
            return
        self.send(200, "text/event-stream", answer(json.loads(raw)))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
