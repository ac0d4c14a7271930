"""A local OTLP/HTTP logs receiver for cordon's export tests.

Decodes every request with the official protobuf definitions (the `opentelemetry-proto`
package) and appends one JSON line per log record to DIR/received.jsonl. While DIR/down
exists it answers 503 without reading the records; while DIR/lose-answer exists it keeps
the records but answers 503 (a collector whose answer was lost: the client sends again).
It writes its port to DIR/port once listening.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

DIR = sys.argv[1]


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, code, body=b""):
        self.send_response(code)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        data = self.rfile.read(int(self.headers.get("content-length", "0")))
        if os.path.exists(os.path.join(DIR, "down")):
            return self.answer(503)
        if self.path != "/v1/logs" or self.headers.get("content-type") != "application/x-protobuf":
            return self.answer(415)
        req = ExportLogsServiceRequest()
        req.ParseFromString(data)
        with open(os.path.join(DIR, "received.jsonl"), "a") as out:
            for rl in req.resource_logs:
                resource = {a.key: value(a.value) for a in rl.resource.attributes}
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        out.write(json.dumps({
                            "resource": resource,
                            "scope": sl.scope.name,
                            "attributes": {a.key: value(a.value) for a in r.attributes},
                            "body": value(r.body),
                            "severity_number": r.severity_number,
                            "severity_text": r.severity_text,
                            "event_name": r.event_name,
                            "time_unix_nano": r.time_unix_nano,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                        }) + "\n")
        if os.path.exists(os.path.join(DIR, "lose-answer")):
            return self.answer(503)
        self.answer(200, ExportLogsServiceResponse().SerializeToString())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
