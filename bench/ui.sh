#!/bin/sh
# The web console under load: time from a decision to its row in an open page (p50/p99)
# while decisions are appended at RATE per second, and the console's resident memory after
# TOTAL decisions. The page is Debian's chromium, headless, driven by Playwright; the
# records are ~1 KB decisions appended through cordon-store's AuditLog, each written at
# once without an fsync (crates/cordon-ui/examples/audit_load.rs).
#
#   sh bench/ui.sh          # RATE=1000 SECONDS=10 TOTAL=100000
#
# Needs scripts/install-test-deps.sh (chromium, Playwright in .test-deps/ui). Not a timed
# test: numbers depend on the machine and its load.
set -eu

RATE=${RATE:-1000}
SECONDS_=${SECONDS:-10}
TOTAL=${TOTAL:-100000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
cargo build --release --locked -q -p cordon-ui --example audit_load --manifest-path "$ROOT/Cargo.toml"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$ROOT/.test-deps/ui/venv/bin/python" "$ROOT/bench/ui_latency.py" "{
  \"work\": \"$WORK\", \"cordon\": \"$TARGET/release/cordon\",
  \"load\": \"$TARGET/release/examples/audit_load\",
  \"rate\": $RATE, \"seconds\": $SECONDS_, \"total\": $TOTAL
}"
