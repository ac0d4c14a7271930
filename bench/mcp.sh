#!/bin/sh
# Latency that `cordon mcp-gateway` adds to each MCP tools/call: the same client (Python
# MCP SDK) calls server-everything's `echo` directly and through the gateway (an allow rule
# for the tool, every decision and result written to the audit log, each call's operation id
# claimed in the approval store), with the server trusted and marked untrusted (every
# message walked, labelled and redacted), and prints p50/p99/mean per call in one table.
#
#   sh bench/mcp.sh                              # CALLS=500 by default
#   BASELINE=/path/to/old/cordon sh bench/mcp.sh # the same rows for another build, side by side
#
# The paths are measured in ROUNDS rounds (5 by default), each round every path once, so
# that a change in the machine's load falls on all of them alike. Needs
# scripts/install-test-deps.sh (node, server-everything, the Python SDK). Not a timed test:
# numbers depend on the machine and its load.
set -eu

CALLS=${CALLS:-500}
ROUNDS=${ROUNDS:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS=$ROOT/.test-deps/mcp
cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
CORDON=${CARGO_TARGET_DIR:-$ROOT/target}/release/cordon
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/home"
printf '[permissions]\nallow = ["mcp__everything__echo"]\n' >"$WORK/trusted.toml"
printf '[permissions]\nallow = ["mcp__everything__echo"]\n[mcp.servers.everything]\ntrust = "untrusted"\n' >"$WORK/untrusted.toml"
SERVER="\"node\", \"$DEPS/node_modules/@modelcontextprotocol/server-everything/dist/index.js\", \"stdio\""
gateway() { # BINARY POLICY TAG
  printf '["%s", "mcp-gateway", "--name", "everything", "--isolated", "--config", "%s/%s.toml", "--workspace", "%s", "--store", "%s/%s.db", "--audit-file", "%s/%s.jsonl", "--", %s]' \
    "$1" "$WORK" "$2" "$WORK" "$WORK" "$3" "$WORK" "$3" "$SERVER"
}
PATHS="[\"direct\", [$SERVER]],
  [\"cordon mcp-gateway\", $(gateway "$CORDON" trusted new-t)],
  [\"cordon mcp-gateway, untrusted\", $(gateway "$CORDON" untrusted new-u)]"
if [ -n "${BASELINE:-}" ]; then
  PATHS="$PATHS,
  [\"baseline mcp-gateway\", $(gateway "$BASELINE" trusted old-t)],
  [\"baseline mcp-gateway, untrusted\", $(gateway "$BASELINE" untrusted old-u)]"
fi
"$DEPS/venv/bin/python" "$ROOT/bench/mcp_latency.py" "{
  \"calls\": $CALLS, \"rounds\": $ROUNDS,
  \"env\": {\"HOME\": \"$WORK/home\", \"PATH\": \"/usr/local/bin:/usr/bin:/bin\"},
  \"paths\": [$PATHS]
}" 2>/dev/null
