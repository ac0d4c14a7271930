#!/bin/sh
# Per-call cost of `cordon hook claude-code` (the process a harness spawns for every tool
# call) next to spawning `cordon check` for the same call, and `/bin/true` fed the same
# stdin as the spawn floor. N spawns each for an allowed Read, an asked Bash `ls` … and
# a denied `cat ~/.ssh/id_rsa`; prints medians (ms) and ratios.
#
#   sh bench/hook.sh            # N=300 by default
#   N=500 sh bench/hook.sh
#
# Not a timed test: numbers depend on the machine and its load. The audit log is written
# (fsync per record) as in real use; a second hook row runs with --no-audit.
set -eu
N=${N:-300}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${CORDON:-$("$ROOT/scripts/build-release.sh")}
WORK=$(mktemp -d /tmp/cordon-bench-hook-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws/src" "$WORK/home/.ssh" "$WORK/state"
echo 'fn main() {}' >"$WORK/ws/src/main.rs"
cp "$CORDON" "$WORK/cordon"
N="$N" WORK="$WORK" python3 - <<'PY'
import json, os, statistics, subprocess, time
n, work = int(os.environ["N"]), os.environ["WORK"]
ws, home = f"{work}/ws", f"{work}/home"
env = {"HOME": home, "PATH": "/usr/bin:/bin", "CORDON_STATE_DIR": f"{work}/state"}
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
def median_ms(argv, make, tool, inp):
    times = []
    for i in range(n):
        data = make(tool, inp, i)
        t = time.perf_counter()
        subprocess.run(argv, input=data, env=env, cwd=ws, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)
rows = [
    ("/bin/true (spawn floor)", ["/bin/true"], hook_payload),
    ("cordon hook claude-code", [cordon, "hook", "claude-code", "--isolated"], hook_payload),
    ("cordon hook claude-code --no-audit", [cordon, "hook", "claude-code", "--isolated", "--no-audit"], hook_payload),
    ("cordon check", [cordon, "check", "--isolated", "-"], check_payload),
]
print(f"N={n} spawns per cell, median ms (ratio to cordon check)")
head = "| | " + " | ".join(calls) + " |"
print(head); print("|---" * (len(calls) + 1) + "|")
res = {}
for name, argv, make in rows:
    res[name] = [median_ms(argv, make, t, i) for t, i in calls.values()]
for name, _, _ in rows:
    cells = [f"{m:.2f} ({m / c:.2f}x)" for m, c in zip(res[name], res["cordon check"])]
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
