#!/bin/sh
# Latency that `cordon mcp-gateway` adds to each MCP tools/call: the same client (Python
# MCP SDK) calls server-everything's `echo` CALLS times directly and through the gateway
# (an allow rule for the tool, every decision and result written to the audit log, each
# call's operation id claimed in the approval store), and prints p50/p99/mean per call in
# one table.
#
#   sh bench/mcp.sh             # CALLS=500 by default
#
# Needs scripts/install-test-deps.sh (node, server-everything, the Python SDK). Not a
# timed test: numbers depend on the machine and its load.
set -eu

CALLS=${CALLS:-500}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=$ROOT/.test-deps/mcp
cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
CORDON=${CARGO_TARGET_DIR:-$ROOT/target}/release/cordon
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
printf '[permissions]\nallow = ["mcp__everything__echo"]\n' >"$WORK/policy.toml"
SERVER="\"node\", \"$DEPS/node_modules/@modelcontextprotocol/server-everything/dist/index.js\", \"stdio\""
"$DEPS/venv/bin/python" "$ROOT/bench/mcp_latency.py" "{
  \"calls\": $CALLS,
  \"env\": {\"HOME\": \"$WORK/home\", \"PATH\": \"/usr/local/bin:/usr/bin:/bin\"},
  \"direct\": [$SERVER],
  \"gateway\": [\"$CORDON\", \"mcp-gateway\", \"--name\", \"everything\", \"--isolated\",
    \"--config\", \"$WORK/policy.toml\", \"--workspace\", \"$WORK\",
    \"--store\", \"$WORK/store.db\", \"--audit-file\", \"$WORK/audit.jsonl\", \"--\", $SERVER]
}" 2>/dev/null
