#!/bin/sh
# Start-up cost of containment: bare /bin/true, `cordon exec` with full containment,
# the same in a persistent slot (`--slot`: the slot's guard, its record in the store, its
# HOME bound in), bubblewrap with comparable flags, and Anthropic's sandbox-runtime (`srt`)
# if it installs. Prints medians over RUNS runs and ratios.
#
#   sh bench/exec.sh            # RUNS=200 by default
#   RUNS=500 sh bench/exec.sh
#   BASELINE=/path/to/older/cordon sh bench/exec.sh   # adds a group: this build and the
#                                                     # older one, interleaved
#   # the shipped static PIE against the position-dependent build (start-up cost of PIE):
#   cp "$(CORDON_PIE=0 ./scripts/build-release.sh)" /tmp/cordon-pde && \
#     BASELINE=/tmp/cordon-pde sh bench/exec.sh
#
# Installs Debian's bubblewrap (apt) and srt (npm) when missing; run as root or with
# those already installed. Not a timed test: numbers depend on the machine and its load.
set -eu

RUNS=${RUNS:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

# Both release builds: the shipped static build (scripts/build-release.sh) and the plain
# dynamically linked `cargo build --release`.
CORDON=$("$ROOT/scripts/build-release.sh")
cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
CORDON_DYN="$TARGET/release/cordon"

if ! command -v bwrap >/dev/null 2>&1; then
    apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
fi
SRT=""
if command -v srt >/dev/null 2>&1; then
    SRT=$(command -v srt)
elif command -v npm >/dev/null 2>&1 && npm install -g -q @anthropic-ai/sandbox-runtime >/dev/null 2>&1; then
    SRT=$(command -v srt || true)
fi
if [ -n "$SRT" ] && ! { command -v rg && command -v socat; } >/dev/null 2>&1; then
    # srt needs ripgrep and socat on Linux.
    apt-get install -y -q ripgrep socat >/dev/null 2>&1 || true
fi

WORK=$(mktemp -d /tmp/cordon-bench-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/home"
# Measure copies, as installed. A binary the linker has just written sits in the page
# cache in small pieces (its writes are scattered), and executing it takes many more page
# faults than executing a copy (written in one sequential pass) or the same file read
# back from disk: here about 0.8 ms more per `cordon exec`.
cp "$CORDON" "$WORK/cordon"
cp "$CORDON_DYN" "$WORK/cordon-dyn"
CORDON="$WORK/cordon"
CORDON_DYN="$WORK/cordon-dyn"
if [ -n "${BASELINE:-}" ]; then cp "$BASELINE" "$WORK/cordon-baseline"; fi
cat > "$WORK/policy.toml" <<'EOF'
[permissions]
allow = ["Bash(/bin/true)"]
EOF

python3 - "$RUNS" "$WORK" "$CORDON" "$SRT" "$CORDON_DYN" <<'EOF'
import os, statistics, subprocess, sys, time

runs, work, cordon, srt, cordon_dyn = (int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4],
                                       sys.argv[5])
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work + "/home", "LANG": "C",
       "CORDON_STATE_DIR": work + "/state"}
def exec_with(*extra):
    return ["exec", "--isolated", "--config", work + "/policy.toml", "--workspace",
            work + "/ws", *extra, "--", "/bin/true"]


exec_args = exec_with()
bwrap = ("bwrap --unshare-all", ["bwrap", "--unshare-all", "--ro-bind", "/", "/", "--dev",
                                 "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "/bin/true"])
# Each group is interleaved round by round, so that drift in the machine's load touches
# its cases alike; ratios are to the bwrap of the same group. The two cordon builds are
# measured in separate groups: alternating two 50 MB binaries evicts each one's warm
# caches and slows both, which is not how an agent runs one cordon over and over.
groups = [
    [
        ("bare /bin/true", ["/bin/true"]),
        ("cordon exec (full containment)", [cordon] + exec_args),
        bwrap,
    ],
    [
        ("cordon --version (start-up only)", [cordon, "--version"]),
        ("cordon check (policy load + decide)",
         [cordon, "check", "--isolated", "--config", work + "/policy.toml", "--workspace",
          work + "/ws", '{"tool":"Bash","input":{"command":"/bin/true"}}']),
        bwrap,
    ],
    [
        ("cordon exec, dynamically linked build", [cordon_dyn] + exec_args),
        bwrap,
    ],
    # A slot side by side with the same run without one (the slot's directories are made
    # by the warm-up run, as they are after a slot's first use).
    [
        ("cordon exec, no slot", [cordon] + exec_args),
        ("cordon exec --slot bench", [cordon] + exec_with("--slot", "bench")),
        ("cordon exec --slot bench --slot-tmp",
         [cordon] + exec_with("--slot", "bench", "--slot-tmp")),
        bwrap,
    ],
]
# Before and after: this build and an older one, side by side in one group.
if os.path.exists(work + "/cordon-baseline"):
    groups.append([
        ("cordon --version, this build", [cordon, "--version"]),
        ("cordon --version, baseline build", [work + "/cordon-baseline", "--version"]),
        ("cordon exec, this build", [cordon] + exec_args),
        ("cordon exec, baseline build", [work + "/cordon-baseline"] + exec_args),
        bwrap,
    ])


def run_once(argv):
    t = time.perf_counter()
    subprocess.run(argv, env=env, cwd=work + "/ws", stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000


rows = []  # (name, median or None, error, bwrap median of the group)
for group in groups:
    results, live = [], []
    for name, argv in group:
        # Warm up, and make sure the case works at all.
        r = subprocess.run(argv, env=env, cwd=work + "/ws", capture_output=True)
        if r.returncode != 0:
            results.append([name, None, r.stderr.decode(errors="replace").strip()])
        else:
            results.append([name, [], None])
            live.append((len(results) - 1, argv))
    for _ in range(runs):
        for i, argv in live:
            results[i][1].append(run_once(argv))
    med = {n: (statistics.median(t) if t else None) for n, t, _ in results}
    base = med.get(bwrap[0])
    for n, _, e in results:
        if n == bwrap[0] and any(r[0] == n for r in rows):
            continue  # one bwrap row; later groups keep theirs as the base of their ratios
        rows.append((n, med[n], e, base))
# srt takes a quarter of a second per run (Node.js start-up): measured on its own, with
# fewer runs, next to a bwrap of its own.
if srt:
    argv = [srt, "/bin/true"]
    r = subprocess.run(argv, env=env, cwd=work + "/ws", capture_output=True)
    if r.returncode != 0:
        rows.append(("srt (sandbox-runtime)", None,
                     r.stderr.decode(errors="replace").strip(), None))
    else:
        s_t, b_t = [], []
        for _ in range(min(runs, 30)):
            s_t.append(run_once(argv))
            b_t.append(run_once(bwrap[1]))
        rows.append(("srt (sandbox-runtime)", statistics.median(s_t), None,
                     statistics.median(b_t)))

bare = rows[0][1]
print(f"runs per case: {runs}; kernel {os.uname().release}; {os.cpu_count()} CPUs")
print(f"| {'case':<40} | {'median ms':>9} | {'+ms vs bare':>11} | {'x bwrap':>7} |")
print(f"|{'-'*42}|{'-'*11}|{'-'*13}|{'-'*9}|")
for name, med, err, base in rows:
    if med is None:
        print(f"| {name:<40} | {'failed':>9} | {'':>11} | {'':>7} |  ({err[:80]})")
        continue
    over = f"{med - bare:+.2f}"
    ratio = f"{med / base:.2f}" if base else "-"
    print(f"| {name:<40} | {med:>9.2f} | {over:>11} | {ratio:>7} |")
if not srt:
    print("srt: not installed (npm install -g @anthropic-ai/sandbox-runtime failed or npm missing)")
EOF
