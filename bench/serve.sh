#!/bin/sh
# `cordon serve` over its Unix socket with 1 and 8 clients (p50/p99 latency, calls per
# second) for a file tool (Read inside the workspace) and a Bash call, next to spawning
# `cordon check` per call, in one run. Uses the release build (scripts/build-release.sh)
# and the bench client crates/cordon-serve/examples/serve_bench.rs.
#
#   sh bench/serve.sh                 # 20000 calls per serve case, 200 per spawn case
#   CALLS=50000 SPAWNS=500 sh bench/serve.sh
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

"$WORK/cordon" serve --isolated --config "$WORK/policy.toml" --workspace "$WORK/ws" \
    --socket "$WORK/run/cordon.sock" 2>"$WORK/serve.log" &
SERVER=$!
. "$ROOT/bench/serve-wait.sh"
wait_for_socket "$WORK/run/cordon.sock" "$WORK/serve.log"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
# `cordon check` is spawned with the same policy: --isolated plus the user file above is
# skipped, so it gets the policy through the same --config the server has.
CORDON_CHECK_CONFIG="$WORK/policy.toml" "$CLIENT" "$WORK/cordon" "$WORK/run/cordon.sock" "$WORK/ws" "$CALLS" "$SPAWNS"
echo "audit records written: $(($(wc -l < "$WORK/state/audit.jsonl") - 1))"
