#!/bin/sh
# What the developer caches cost a run's start, and how builds of cordon compare: for each
# binary given, interleaved rounds of `cordon exec --isolated` in a HOME that has all ten
# developer caches (so every run takes a cache slot and mounts ten overlay layers):
#
#   /bin/true              nothing for the next run's reset to remove after the first run
#   ./plant.sh             leaves code beside data in three caches (a program in
#                          ~/.cargo/bin, a package under ~/.npm/_npx, a Gradle init script)
#                          and a file under ~/.cargo/registry, so that every next run's
#                          reset removes three trees and keeps the data
#   --slot bench ./plant.sh  the same on a slot (its HOME, its own caches, its reset)
#
# Reports the median and p90 wall time and the median CPU time (user + system, as `wait4`
# reports it for cordon and the helper it waits for).
#
#   sh bench/caches.sh BINARY…            # e.g. the binary before a change and after it
#   RUNS=100 sh bench/caches.sh BINARY…   # RUNS=40 by default
#
# Each binary gets its own state directory. Not a timed test: say how loaded the machine
# was (the script prints the load average) when quoting the numbers.
set -eu
[ $# -ge 1 ] || { echo "usage: sh bench/caches.sh BINARY…" >&2; exit 2; }
RUNS=${RUNS:-40}
WORK=$(mktemp -d /var/tmp/cordon-bench-caches-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws"
for c in .cargo .npm .cache/pip .cache/uv .cache/go-build go/pkg/mod .cache/yarn \
    .local/share/pnpm .gradle .m2; do
    mkdir -p "$WORK/home/$c"
done
# Out of the policy's sight, as a build's own scripts would write it; the path to
# ~/.cargo is put together at run time.
cat > "$WORK/ws/plant.sh" <<'EOF'
#!/bin/sh
c=.car; c=${c}go
mkdir -p ~/$c/bin ~/$c/registry/cache/x ~/.npm/_npx/a/node_modules ~/.gradle/init.d
: > ~/$c/bin/tool; : > ~/$c/registry/cache/x/a.crate
: > ~/.npm/_npx/a/node_modules/x.js; : > ~/.gradle/init.d/init.gradle
EOF
chmod +x "$WORK/ws/plant.sh"
printf 'mode = "bypass"\n[permissions]\nallow = ["Bash(/bin/true)", "Bash(./plant.sh)"]\n' \
    > "$WORK/policy.toml"
i=0
for b in "$@"; do
    # Measure copies, as installed (see bench/exec.sh on freshly linked binaries).
    cp "$b" "$WORK/cordon-$i"
    i=$((i + 1))
done

python3 - "$RUNS" "$WORK" "$@" <<'PY'
import os, statistics, subprocess, sys, time

runs, work, names = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
variants = [("/bin/true", [], ["/bin/true"]),
            ("./plant.sh", [], ["./plant.sh"]),
            ("--slot bench ./plant.sh", ["--slot", "bench"], ["./plant.sh"])]
# Binaries alternate within a round, so that every run follows one of another binary:
# executing a binary evicts part of the other's pages, and each case pays that alike.
cases = []
for label, extra, cmd in variants:
    for i, name in enumerate(names):
        cases.append((f"{name} {label}", f"{work}/cordon-{i}", extra, cmd, i))
wall = {c[0]: [] for c in cases}
cpu = {c[0]: [] for c in cases}
for r in range(runs + 2):  # two warm-up rounds
    for label, binary, extra, cmd, i in cases:
        argv = [binary, "exec", "--isolated", "--config", f"{work}/policy.toml",
                "--workspace", f"{work}/ws"] + extra + ["--"] + cmd
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
