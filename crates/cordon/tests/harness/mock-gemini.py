#!/usr/bin/env python3
"""A mock of the Gemini API (generateContent, streamGenerateContent), just enough for
Gemini CLI in headless mode (crates/cordon/tests/harness_real.rs).

Usage: mock-gemini.py RECORD COMMAND

Listens on 127.0.0.1 on a free port and prints the port on its first line of stdout.
Every request is appended to RECORD as one JSON line: {"path", "body"} (the body as
text, exactly as received). A request offering the `run_shell_command` function with no
functionResponse for it yet is answered with one functionCall running COMMAND; once the
request carries that response, with the final text "MOCK-DONE". Requests without that
function (the CLI's side queries) get a short text, or a value of the JSON schema they ask
for. streamGenerateContent answers as
server-sent events (`alt=sse`), one chunk. Anything else is 404, recorded all the same.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD, COMMAND = sys.argv[1], sys.argv[2]
TOOL = "run_shell_command"
LOCK = threading.Lock()


def record(path, body):
    with LOCK, open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps({"path": path, "body": body}) + "\n")


def parts(req):
    for c in req.get("contents", []):
        for p in c.get("parts", []) or []:
            if isinstance(p, dict):
                yield p


def offered(req):
    for t in req.get("tools", []) or []:
        for f in t.get("functionDeclarations", []) or []:
            if f.get("name") == TOOL:
                return True
    return False


def fill(schema):
    """A value of a JSON schema (the CLI's side queries ask for JSON: routing, checks)."""
    kind = str(schema.get("type", "OBJECT")).upper()
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "OBJECT":
        return {k: fill(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "ARRAY":
        return []
    if kind in ("INTEGER", "NUMBER"):
        return 1
    if kind == "BOOLEAN":
        return False
    return "mock"


def answer(req):
    config = req.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if any(p.get("functionResponse", {}).get("name") == TOOL for p in parts(req)):
        part = {"text": "MOCK-DONE"}
    elif offered(req):
        part = {"functionCall": {"name": TOOL, "args": {"command": COMMAND, "description": "scripted by the mock"}}}
    elif schema:
        part = {"text": json.dumps(fill(schema))}
    else:
        part = {"text": "mock"}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-mock",
    }


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
        self.send(404, "application/json", b'{"error":{"code":404,"message":"mock","status":"NOT_FOUND"}}')

    def do_GET(self):
        record(self.path, "")
        self.not_found()

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n).decode("utf-8", "replace")
        record(self.path, raw)
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            self.send(200, "application/json", b'{"totalTokens": 10}')
        elif path.endswith(":streamGenerateContent"):
            body = "data: " + json.dumps(answer(json.loads(raw))) + "\r\n\r\n"
            self.send(200, "text/event-stream", body.encode())
        elif path.endswith(":generateContent"):
            self.send(200, "application/json", json.dumps(answer(json.loads(raw))).encode())
        else:
            self.not_found()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
