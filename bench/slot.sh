#!/bin/sh
# What `--slot` costs a run, and how two builds of cordon compare: interleaved rounds of
# `cordon exec --isolated -- /bin/true` without a slot and with `--slot bench`, for each
# binary given, reporting the median and p90 wall time and the median CPU time (user +
# system, as `wait4` reports it for cordon and the helper it waits for).
#
#   sh bench/slot.sh BINARY…            # e.g. the binary before a change and after it
#   RUNS=100 sh bench/slot.sh BINARY…   # RUNS=40 by default
#
# Each binary gets its own state directory. Not a timed test: say how loaded the machine
# was (the script prints the load average) when quoting the numbers.
set -eu
[ $# -ge 1 ] || { echo "usage: sh bench/slot.sh BINARY…" >&2; exit 2; }
RUNS=${RUNS:-40}
WORK=$(mktemp -d /var/tmp/cordon-bench-slot-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/home"
printf '[permissions]\nallow = ["Bash(/bin/true)"]\n' > "$WORK/policy.toml"
i=0
for b in "$@"; do
    # Measure copies, as installed (see bench/exec.sh on freshly linked binaries).
    cp "$b" "$WORK/cordon-$i"
    i=$((i + 1))
done

python3 - "$RUNS" "$WORK" "$@" <<'PY'
import os, statistics, subprocess, sys, time

runs, work, names = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
cases = []
for i, name in enumerate(names):
    for slot in (False, True):
        cases.append((f"{name}{' --slot bench' if slot else ''}", f"{work}/cordon-{i}", slot, i))
wall = {c[0]: [] for c in cases}
cpu = {c[0]: [] for c in cases}
for r in range(runs + 2):  # two warm-up rounds
    for label, binary, slot, i in cases:
        argv = [binary, "exec", "--isolated", "--config", f"{work}/policy.toml",
                "--workspace", f"{work}/ws"] + (["--slot", "bench"] if slot else []) + ["--", "/bin/true"]
        env = {"PATH": "/usr/bin:/bin", "HOME": f"{work}/home", "LANG": "C",
               "CORDON_STATE_DIR": f"{work}/state-{i}"}
        start = time.perf_counter()
        p = subprocess.Popen(argv, env=env, cwd=f"{work}/ws", stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        took = time.perf_counter() - start
        if status != 0:
            sys.exit(f"{label} failed: {p.stderr.read().decode(errors='replace')[:400]}")
        if r >= 2:
            wall[label].append(took * 1000)
            cpu[label].append((usage.ru_utime + usage.ru_stime) * 1000)
print(f"{runs} rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
print("| case | wall median | wall p90 | CPU median |")
print("|---|---:|---:|---:|")
for label, *_ in cases:
    w = sorted(wall[label])
    print(f"| `{label}` | {statistics.median(w):.1f} ms | {w[int(len(w) * 0.9)]:.1f} ms "
          f"| {statistics.median(cpu[label]):.1f} ms |")
PY
