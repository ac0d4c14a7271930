#!/bin/bash
# Egress proxy benchmark, side by side on loopback in one run:
#   direct  vs  cordon's CONNECT tunnel  vs  tinyproxy's CONNECT tunnel.
# Bulk throughput (1 GiB upload, median of 3) with the proxy's CPU time per GiB, time to
# the first echoed byte on a new connection (p50/p99 over 2,000 connections; "added" is
# relative to direct), and each proxy's resident memory with 1,000 concurrent idle
# tunnels. The paths are interleaved round by round so background load hits all alike.
#
# Usage (from the repository root, as root so tinyproxy can be installed):
#   bench/egress.sh [BYTES]
# Installs Debian's tinyproxy with apt if it is missing. Prints a Markdown table.
set -eu
cd "$(dirname "$0")/.."
BYTES=${1:-1073741824}
TARGET=${CARGO_TARGET_DIR:-target}

# 1,000 tunnels are 2,000+ descriptors per process.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if ! command -v tinyproxy >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy >/dev/null
fi
# The package may start a system instance; it is not the one measured.

cargo build --release -q -p cordon --bin cordon
cargo build --release -q -p cordon-egress --example egress_bench

# Outside the ephemeral range, so thousands of client connections cannot collide.
ECHO=61611 SINK=61612 CORDON=61613 TINY=61614
WORK=$(mktemp -d)
CPID= TPID=
cleanup() {
    [ -n "$CPID" ] && kill "$CPID" 2>/dev/null || true
    [ -n "$TPID" ] && kill "$TPID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

"$TARGET/release/cordon" proxy --listen 127.0.0.1:$CORDON \
    --allow 127.0.0.1:$ECHO --allow 127.0.0.1:$SINK --allow-private 127.0.0.1/32 \
    --max-connections 4096 2>"$WORK/cordon.log" &
CPID=$!

cat >"$WORK/tinyproxy.conf" <<CONF
Port $TINY
Listen 127.0.0.1
Timeout 600
MaxClients 4096
Allow 127.0.0.1
ConnectPort $ECHO
ConnectPort $SINK
DisableViaHeader Yes
LogLevel Critical
LogFile "$WORK/tinyproxy.log"
CONF
tinyproxy -d -c "$WORK/tinyproxy.conf" 2>"$WORK/tinyproxy.err" &
TPID=$!

# Wait until both listen.
for _ in $(seq 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/$CORDON) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$TINY) 2>/dev/null; then
        break
    fi
    sleep 0.1
done

echo "cordon $("$TARGET/release/cordon" --version | cut -d' ' -f2), $(tinyproxy -v 2>&1 | head -1), $(nproc) CPUs, kernel $(uname -r)"
"$TARGET/release/examples/egress_bench" --echo-port $ECHO --sink-port $SINK --bytes "$BYTES" \
    --proxy "cordon=127.0.0.1:$CORDON=$CPID" --proxy "tinyproxy=127.0.0.1:$TINY=$TPID"
