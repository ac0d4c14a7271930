#!/bin/sh
# A build twice in one workspace under `cordon exec`, to see that the developer caches do
# their job: a small crate whose dependencies (semver, ryu, textwrap, humansize and what
# they pull in) are fetched from crates.io is built
#
#   1. with the network allowed to crates.io: the index and the crates are fetched into
#      the workspace's cache slot;
#   2. again in the same workspace, `--offline` and with no network: everything comes from
#      that cache;
#   3. `--offline` in another workspace: it has no cache of its own, so cargo must fail
#      (unless the host's own ~/.cargo already holds every crate, see below).
#
# CARGO_TARGET_DIR is the sandbox's private /tmp, so every run compiles from scratch and
# leaves nothing in the workspace. Each round takes two fresh workspaces (a new path is a
# new cache). HOME is the caller's, so cargo and its toolchain are the host's; the host's
# ~/.cargo is the overlay's read-only lower layer and is never written. Reports each case's
# median wall time over ROUNDS rounds.
#
#   sh bench/cache_build.sh [CORDON]      # default: the static release build
#   ROUNDS=5 sh bench/cache_build.sh      # ROUNDS=3 by default
#   ALLOW_PRIVATE=CIDR sh bench/cache_build.sh   # where crates.io resolves to a private or
#                                                # reserved address (a mirror): passed to
#                                                # --allow-private
#
# Needs cargo on PATH and crates.io reachable from the host. Not a timed test.
set -eu
ROUNDS=${ROUNDS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$("$ROOT/scripts/build-release.sh")}
command -v cargo >/dev/null || { echo "cargo is not on PATH" >&2; exit 2; }
WORK=$(mktemp -d /var/tmp/cordon-bench-build-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$CORDON" "$WORK/cordon"
cat > "$WORK/policy.toml" <<'EOF'
mode = "bypass"
[permissions]
allow = ["Bash(cargo build:*)"]
EOF

python3 - "$ROUNDS" "$WORK" "${ALLOW_PRIVATE:-}" <<'PY'
import os, statistics, subprocess, sys, time

rounds, work, private = int(sys.argv[1]), sys.argv[2], sys.argv[3]
manifest = """[package]
name = "cache-bench"
version = "0.1.0"
edition = "2021"

[dependencies]
semver = "1"
ryu = "1"
textwrap = "0.16"
humansize = "2"
"""
main = 'fn main() { println!("{}", textwrap::fill(&humansize::format_size(1u64 << 20, humansize::DECIMAL), 10)); let _ = (semver::Version::parse("1.0.0"), ryu::Buffer::new().format(1.5)); }\n'
net = ["--allow-net", "index.crates.io", "--allow-net", "static.crates.io"]
if private:
    net += ["--allow-private", private]
cases = [("1. first build, crates.io allowed", net, []),
         ("2. same workspace, --offline, no network", [], ["--offline"]),
         ("3. another workspace, --offline, no network", [], ["--offline"])]
times = {c[0]: [] for c in cases}
status = {c[0]: [] for c in cases}
env = dict(os.environ, CORDON_STATE_DIR=f"{work}/state", LANG="C",
           CARGO_TARGET_DIR="/tmp/target")


def workspace(name):
    ws = f"{work}/{name}"
    os.makedirs(f"{ws}/src")
    open(f"{ws}/Cargo.toml", "w").write(manifest)
    open(f"{ws}/src/main.rs", "w").write(main)
    return ws


for r in range(rounds):
    ws, other = workspace(f"ws-{r}"), workspace(f"other-{r}")
    for (label, extra, flags), where in zip(cases, [ws, ws, other]):
        argv = [f"{work}/cordon", "exec", "--isolated", "--config", f"{work}/policy.toml",
                "--workspace", where, "--env", "CARGO_TARGET_DIR"] + extra + \
               ["--", "cargo", "build", "-q"] + flags
        t = time.perf_counter()
        p = subprocess.run(argv, env=env, cwd=where, capture_output=True)
        times[label].append(time.perf_counter() - t)
        status[label].append(p.returncode)
        if p.returncode != 0 and not label.startswith("3."):
            sys.exit(f"{label} failed: {p.stderr.decode(errors='replace')[-600:]}")
print(f"{rounds} rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
print("| case | wall median | exit statuses |")
print("|---|---:|---|")
for label, *_ in cases:
    print(f"| {label} | {statistics.median(times[label]):.2f} s | {status[label]} |")
PY
