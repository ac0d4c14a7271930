#!/bin/sh
# The cost of the copy-on-write workspace: the same work done directly on the host and
# under `cordon exec`, whose writes land in an overlayfs upper layer that cordon merges
# back after the run (renames, on the workspace's file system). Prints medians of the
# whole run and of the merge step alone (from `--report`).
#
#   sh bench/merge.sh            # RUNS=5 by default (the 1-file case runs 20 times as many)
#   BASELINE=/path/to/older/cordon sh bench/merge.sh
#                                # the same cases under an older build too, run by run
#                                # interleaved with this one, and the ratio new / old
#
# Not a timed test: numbers depend on the machine, its disk and its load.
set -eu

RUNS=${RUNS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORDON=$("$ROOT/scripts/build-release.sh")
WORK=$(mktemp -d /var/tmp/cordon-merge-bench-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/home"
cp "$CORDON" "$WORK/cordon"
if [ -n "${BASELINE:-}" ]; then cp "$BASELINE" "$WORK/cordon-baseline"; fi
cat > "$WORK/policy.toml" <<'TOML'
[permissions]
allow = ["Bash(sh ./gen.sh:*)"]
TOML
# N files of SIZE bytes into out/ (one process, so that the generator costs the same in
# both cases).
cat > "$WORK/ws/gen.sh" <<'SH'
n=$1; size=$2; mkdir -p out; i=0
if [ "$size" -eq 0 ]; then
  while [ $i -lt "$n" ]; do : > out/f$i; i=$((i+1)); done
else
  while [ $i -lt "$n" ]; do head -c "$size" /dev/zero > out/f$i; i=$((i+1)); done
fi
SH

python3 - "$RUNS" "$WORK" <<'PY'
import json, os, shutil, statistics, subprocess, sys, time

runs, work = int(sys.argv[1]), sys.argv[2]
ws = work + "/ws"
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work + "/home", "LANG": "C"}
cases = [("1 file", 1, 0, runs * 20), ("1,000 files", 1000, 0, runs * 4),
         ("100,000 files", 100000, 0, runs), ("1 GB (1,024 x 1 MiB)", 1024, 1 << 20, runs)]
report = work + "/report.json"


def clean():
    shutil.rmtree(ws + "/out", ignore_errors=True)
    subprocess.run(["sync"])


def timed(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, env=env, cwd=ws, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        sys.exit(f"{argv[0]} failed: {r.stderr.decode(errors='replace')}")
    return ms


print(f"runs: see table; kernel {os.uname().release}; {os.cpu_count()} CPUs; "
      f"file system of the workspace: {subprocess.run(['stat', '-f', '-c', '%T', ws], capture_output=True, text=True).stdout.strip()}")
baseline = os.path.exists(work + "/cordon-baseline")
head = f"| {'written':<22} | {'runs':>4} | {'direct ms':>9} | {'cordon exec ms':>14} | {'merge ms':>8} | {'x direct':>8} |"
rule = f"|{'-'*24}|{'-'*6}|{'-'*11}|{'-'*16}|{'-'*10}|{'-'*10}|"
if baseline:
    head += f" {'baseline exec ms':>16} | {'baseline merge ms':>17} | {'new / old':>9} |"
    rule += f"{'-'*18}|{'-'*19}|{'-'*11}|"
print(head)
print(rule)


def contained_run(binary, gen, n):
    ms = timed([binary, "exec", "--isolated", "--config", work + "/policy.toml",
                "--report", report, "--"] + gen)
    assert len(os.listdir(ws + "/out")) == n, "the merge lost files"
    return ms, json.load(open(report))["merged"]["micros"] / 1000


for name, n, size, k in cases:
    gen = ["sh", "./gen.sh", str(n), str(size)]
    direct, contained, merge, old, old_merge = [], [], [], [], []
    for _ in range(k):
        clean()
        direct.append(timed(gen))
        clean()
        ms, mm = contained_run(work + "/cordon", gen, n)
        contained.append(ms)
        merge.append(mm)
        if baseline:
            clean()
            ms, mm = contained_run(work + "/cordon-baseline", gen, n)
            old.append(ms)
            old_merge.append(mm)
    d, c, m = (statistics.median(x) for x in (direct, contained, merge))
    line = f"| {name:<22} | {k:>4} | {d:>9.1f} | {c:>14.1f} | {m:>8.1f} | {c / d:>8.2f} |"
    if baseline:
        o, om = statistics.median(old), statistics.median(old_merge)
        line += f" {o:>16.1f} | {om:>17.1f} | {c / o:>9.2f} |"
    print(line)
clean()
PY
