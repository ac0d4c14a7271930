#!/bin/sh
# The cost of the anchored, signed, exported audit log (issue 36), side by side with off.
#
# 1. Appends per second, plain chain vs anchored in the store with each batch signed
#    (criterion: `cargo bench -p cordon-store --bench store -- audit_append`; rows ending
#    `_anchored` are the new ones).
# 2. Hook latency (`cordon hook claude-code`, one process per call, N spawns interleaved,
#    median ms) with OTLP export off and on (OTEL_EXPORTER_OTLP_ENDPOINT set: the hook must
#    not contact the collector, its record waits in the log), and through `cordon serve`
#    with the service's background export off and on (a local receiver takes the records;
#    Python's opentelemetry-proto from scripts/install-test-deps.sh when present, else a
#    plain HTTP 200).
#
#   sh bench/audit.sh              # N=200
#   N=500 SKIP_CRITERION=1 sh bench/audit.sh
#
# Not a timed test: numbers depend on the machine and its load.
set -eu
N=${N:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${SKIP_CRITERION:-0}" != 1 ]; then
    (cd "$ROOT" && cargo bench -p cordon-store --bench store -- audit_append 2>/dev/null |
        grep -E '^audit_append|time:|thrpt:')
fi
CORDON=${CORDON:-$("$ROOT/scripts/build-release.sh")}
WORK=$(mktemp -d /tmp/cordon-bench-audit-XXXXXX)
PIDS=""
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/ws/src" "$WORK/home" "$WORK/run" "$WORK/rx"
chmod 700 "$WORK/run"
echo 'fn main() {}' >"$WORK/ws/src/main.rs"
cp "$CORDON" "$WORK/cordon"
PY="$ROOT/.test-deps/otlp/venv/bin/python"
if [ -x "$PY" ]; then
    "$PY" "$ROOT/crates/cordon-export/tests/otlp_receiver.py" "$WORK/rx" &
else
    python3 -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200); self.send_header("content-length", "0"); self.end_headers()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + "/port", "w").write(str(s.server_address[1])); s.serve_forever()
' "$WORK/rx" &
fi
PIDS="$PIDS $!"
i=0
while [ ! -s "$WORK/rx/port" ]; do i=$((i + 1)); [ "$i" -lt 200 ] || exit 1; sleep 0.05; done
ENDPOINT="http://127.0.0.1:$(cat "$WORK/rx/port")"
. "$ROOT/bench/serve-wait.sh"
for mode in off on; do
    if [ "$mode" = on ]; then
        OTEL_EXPORTER_OTLP_ENDPOINT=$ENDPOINT HOME="$WORK/home" CORDON_STATE_DIR="$WORK/state-serve-$mode" \
            "$WORK/cordon" serve --isolated --workspace "$WORK/ws" --socket "$WORK/run/$mode.sock" \
            2>"$WORK/serve-$mode.log" &
    else
        HOME="$WORK/home" CORDON_STATE_DIR="$WORK/state-serve-$mode" \
            "$WORK/cordon" serve --isolated --workspace "$WORK/ws" --socket "$WORK/run/$mode.sock" \
            2>"$WORK/serve-$mode.log" &
    fi
    PIDS="$PIDS $!"
    wait_for_socket "$WORK/run/$mode.sock" "$WORK/serve-$mode.log"
done
N="$N" WORK="$WORK" ENDPOINT="$ENDPOINT" python3 - <<'PY'
import json, os, statistics, subprocess, time
n, work, endpoint = int(os.environ["N"]), os.environ["WORK"], os.environ["ENDPOINT"]
ws, cordon = f"{work}/ws", f"{work}/cordon"
base = {"HOME": f"{work}/home", "PATH": "/usr/bin:/bin"}
def payload(i):
    return json.dumps({"session_id": "s", "transcript_path": "/dev/null", "cwd": ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": f"{ws}/src/main.rs"}, "tool_use_id": f"toolu_{i}"}).encode()
hook = [cordon, "hook", "claude-code", "--isolated"]
rows = [
    ("hook, export off", hook, {}),
    ("hook, export on (endpoint set)", hook, {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}),
    ("hook --server, serve export off", [cordon, "hook", "claude-code", "--server", f"{work}/run/off.sock"], {}),
    ("hook --server, serve export on", [cordon, "hook", "claude-code", "--server", f"{work}/run/on.sock"], {}),
]
times = {name: [] for name, _, _ in rows}
for i in range(n):
    for r, (name, argv, extra) in enumerate(rows):
        env = dict(base, CORDON_STATE_DIR=f"{work}/state-{r}", **extra)
        t = time.perf_counter()
        subprocess.run(argv, input=payload(r * n + i), env=env, cwd=ws,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[name].append((time.perf_counter() - t) * 1000)
print(f"\nN={n} spawns per row, interleaved; median and p90 ms")
print("| row | median | p90 |\n|---|---:|---:|")
for name, _, _ in rows:
    t = sorted(times[name])
    print(f"| {name} | {statistics.median(t):.2f} | {t[int(len(t) * 0.9)]:.2f} |")
time.sleep(2)
got = 0
try:
    with open(f"{work}/rx/received.jsonl") as f:
        got = sum(1 for _ in f)
except FileNotFoundError:
    pass
print(f"\nrecords the receiver decoded (from the serve with export on): {got}")
PY
