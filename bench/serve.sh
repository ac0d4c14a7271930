#!/bin/sh
# `cordon serve` over its Unix socket with 1 and 8 clients (p50/p99 latency, calls per
# second) for a file tool (Read inside the workspace) and a Bash call, next to spawning
# `cordon check` per call, in one run. Uses the release build (scripts/build-release.sh)
# and the bench client crates/cordon-serve/examples/serve_bench.rs.
#
#   sh bench/serve.sh                 # 20000 calls per serve case, 200 per spawn case
#   CALLS=50000 SPAWNS=500 sh bench/serve.sh
#   PINNED=0 sh bench/serve.sh        # leave out the second table (below)
#
# A second table runs the service and the client on one CPU (`taskset -c 0`): no call then
# waits for the hypervisor to wake an idle virtual CPU, which on a small VM costs more
# than the service's own work (compare the kernel's echo row of both tables).
#
# Not a timed test: numbers depend on the machine and its load; say which when quoting.
set -eu

CALLS=${CALLS:-20000}
SPAWNS=${SPAWNS:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

CORDON=$("$ROOT/scripts/build-release.sh")
cargo build --release --locked -q -p cordon-serve --example serve_bench --manifest-path "$ROOT/Cargo.toml"
CLIENT="$TARGET/release/examples/serve_bench"

WORK=$(mktemp -d /tmp/cordon-bench-serve-XXXXXX)
SERVER=""
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/ws/src" "$WORK/home" "$WORK/run"
chmod 700 "$WORK/run"
echo 'fn main() {}' > "$WORK/ws/src/main.rs"
cat > "$WORK/policy.toml" <<'TOML'
[permissions]
allow = ["Bash(cargo test:*)"]
TOML
# Measure a copy, as installed (see bench/exec.sh).
cp "$CORDON" "$WORK/cordon"
export HOME="$WORK/home" CORDON_STATE_DIR="$WORK/state" XDG_CONFIG_HOME="$WORK/home/.config"
mkdir -p "$XDG_CONFIG_HOME/cordon"
cp "$WORK/policy.toml" "$XDG_CONFIG_HOME/cordon/policy.toml"

. "$ROOT/bench/serve-wait.sh"

# One table: start the service (under the command prefix "$@", if any), run the client
# under the same prefix with SPAWNS_NOW spawn calls, stop the service.
table() {
    "$@" "$WORK/cordon" serve --isolated --config "$WORK/policy.toml" --workspace "$WORK/ws" \
        --socket "$WORK/run/cordon.sock" 2>"$WORK/serve.log" &
    SERVER=$!
    wait_for_socket "$WORK/run/cordon.sock" "$WORK/serve.log"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
    # `cordon check` is spawned with the same policy: --isolated plus the user file above
    # is skipped, so it gets the policy through the same --config the server has.
    CORDON_CHECK_CONFIG="$WORK/policy.toml" "$@" "$CLIENT" "$WORK/cordon" \
        "$WORK/run/cordon.sock" "$WORK/ws" "$CALLS" "$SPAWNS_NOW"
    kill "$SERVER"
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
    rm -f "$WORK/run/cordon.sock"
}

SPAWNS_NOW=$SPAWNS table
if [ "${PINNED:-1}" != 0 ] && command -v taskset >/dev/null; then
    echo
    echo "The service and its clients on one CPU (taskset -c 0):"
    SPAWNS_NOW=0 table taskset -c 0
fi
echo "audit records written: $(($(wc -l < "$WORK/state/audit.jsonl") - 1))"
