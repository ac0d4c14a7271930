#!/bin/sh
# Per-call cost of `cordon hook claude-code` (the process a harness spawns for every tool
# call) next to spawning `cordon check` for the same call, and `/bin/true` fed the same
# stdin as the spawn floor. N spawns each for an allowed Read, an allowed Bash `ls src` and
# a denied `cat ~/.ssh/id_rsa`, the rows interleaved spawn by spawn; prints medians (ms)
# and ratios. Interleaved, each spawn follows a different program, so the floor is higher
# (about 1.4 ms here) than when /bin/true runs back to back (about 0.8 ms).
#
#   sh bench/hook.sh            # N=300 by default
#   N=500 sh bench/hook.sh
#
# Not a timed test: numbers depend on the machine and its load. The audit log is written
# as in real use (the hook's records are not waited for); a second hook row runs with
# --no-audit, and a third hands each call to a `cordon serve` started here (--server).
set -eu
N=${N:-300}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${CORDON:-$("$ROOT/scripts/build-release.sh")}
WORK=$(mktemp -d /tmp/cordon-bench-hook-XXXXXX)
SERVER=""
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/ws/src" "$WORK/home/.ssh" "$WORK/state" "$WORK/run"
chmod 700 "$WORK/run"
echo 'fn main() {}' >"$WORK/ws/src/main.rs"
cp "$CORDON" "$WORK/cordon"
HOME="$WORK/home" CORDON_STATE_DIR="$WORK/state-server" "$WORK/cordon" serve --isolated \
    --workspace "$WORK/ws" --socket "$WORK/run/cordon.sock" 2>"$WORK/serve.log" &
SERVER=$!
. "$ROOT/bench/serve-wait.sh"
wait_for_socket "$WORK/run/cordon.sock" "$WORK/serve.log"
N="$N" WORK="$WORK" python3 - <<'PY'
import json, os, statistics, subprocess, time
n, work = int(os.environ["N"]), os.environ["WORK"]
ws, home = f"{work}/ws", f"{work}/home"
env = {"HOME": home, "PATH": "/usr/bin:/bin"}
cordon = f"{work}/cordon"
calls = {
    "Read (allow)": ("Read", {"file_path": f"{ws}/src/main.rs"}),
    "Bash ls (allow)": ("Bash", {"command": "ls src"}),
    "Bash cat ~/.ssh/id_rsa (deny)": ("Bash", {"command": "cat ~/.ssh/id_rsa"}),
}
def hook_payload(tool, inp, i):
    return json.dumps({"session_id": "s", "transcript_path": "/dev/null", "cwd": ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
        "tool_input": inp, "tool_use_id": f"toolu_{i}"}).encode()
def check_payload(tool, inp, i):
    return json.dumps({"tool": tool, "input": inp, "cwd": ws, "session": "s",
        "operation_id": f"op_{i}"}).encode()
rows = [
    ("/bin/true (spawn floor)", ["/bin/true"], hook_payload),
    ("cordon hook claude-code", [cordon, "hook", "claude-code", "--isolated"], hook_payload),
    ("cordon hook claude-code --no-audit", [cordon, "hook", "claude-code", "--isolated", "--no-audit"], hook_payload),
    ("cordon hook claude-code --server", [cordon, "hook", "claude-code", "--server", f"{work}/run/cordon.sock"], hook_payload),
    ("cordon check", [cordon, "check", "--isolated", "-"], check_payload),
]
# The rows are interleaved spawn by spawn, each with a state directory of its own: run one
# after the other on one directory, a row inherits the store's WAL as the row before left it.
def one(row, argv, make, tool, inp, i):
    env_row = dict(env, CORDON_STATE_DIR=f"{work}/state-{row}")
    t = time.perf_counter()
    subprocess.run(argv, input=make(tool, inp, i), env=env_row, cwd=ws,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
print(f"N={n} spawns per cell, median ms (ratio to cordon check)")
head = "| | " + " | ".join(calls) + " |"
print(head); print("|---" * (len(calls) + 1) + "|")
res = {name: [] for name, _, _ in rows}
for c, (tool, inp) in enumerate(calls.values()):
    times = {name: [] for name, _, _ in rows}
    for i in range(n):
        for r, (name, argv, make) in enumerate(rows):
            # Each call its own operation id: a repeated one is refused as a replay.
            times[name].append(one(r, argv, make, tool, inp, c * n + i))
    for name in times:
        res[name].append(statistics.median(times[name]))
for name, _, _ in rows:
    cells = [f"{m:.2f} ({m / c:.2f}x)" for m, c in zip(res[name], res["cordon check"])]
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
