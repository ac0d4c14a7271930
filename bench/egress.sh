#!/bin/bash
# Egress proxy benchmark, side by side on loopback in one run:
#   direct  vs  cordon's CONNECT tunnel  vs  tinyproxy's CONNECT tunnel  vs  HAProxy.
# HAProxy in TCP mode with splice relays the same transfers without CONNECT (one front
# port per upstream): the relay-limit anchor, the best plain relay on the same cores.
# Bulk throughput (1 GiB upload, median of 3) with the proxy's CPU time per GiB, time to
# the first echoed byte on a new connection (p50/p99 over 2,000 connections; "added" is
# relative to direct), and each proxy's resident memory with 1,000 concurrent idle
# tunnels. The paths are interleaved round by round so background load hits all alike.
#
# Usage (from the repository root, as root so tinyproxy and haproxy can be installed):
#   bench/egress.sh [BYTES]
# Installs Debian's tinyproxy and haproxy with apt if they are missing. Prints a Markdown
# table. CORDON_BIN names a cordon binary already built (else a release build is made).
set -eu
cd "$(dirname "$0")/.."
BYTES=${1:-1073741824}
TARGET=${CARGO_TARGET_DIR:-target}

# 1,000 tunnels are 2,000+ descriptors per process.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if ! command -v tinyproxy >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy haproxy >/dev/null
fi
# The package may start a system instance; it is not the one measured.

if [ -z "${CORDON_BIN:-}" ]; then
    cargo build --release -q -p cordon --bin cordon
    CORDON_BIN="$TARGET/release/cordon"
fi
cargo build --release -q -p cordon-egress --example egress_bench

# Outside the ephemeral range, so thousands of client connections cannot collide.
ECHO=61611 SINK=61612 CORDON=61613 TINY=61614 HA_ECHO=61615 HA_SINK=61616
WORK=$(mktemp -d)
CPID= TPID= HPID=
cleanup() {
    [ -n "$CPID" ] && kill "$CPID" 2>/dev/null || true
    [ -n "$TPID" ] && kill "$TPID" 2>/dev/null || true
    [ -n "$HPID" ] && kill "$HPID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

"$CORDON_BIN" proxy --listen 127.0.0.1:$CORDON \
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

# HAProxy's TCP mode with splice (its configuration manual: `mode tcp`,
# `option splice-auto`), one process, one front per upstream.
cat >"$WORK/haproxy.cfg" <<CFG
global
    maxconn 4096
    nbthread 1
defaults
    mode tcp
    option splice-auto
    timeout connect 5s
    timeout client 600s
    timeout server 600s
frontend echo
    bind 127.0.0.1:$HA_ECHO
    default_backend echo
frontend sink
    bind 127.0.0.1:$HA_SINK
    default_backend sink
backend echo
    server up 127.0.0.1:$ECHO
backend sink
    server up 127.0.0.1:$SINK
CFG
haproxy -f "$WORK/haproxy.cfg" -db >"$WORK/haproxy.log" 2>&1 &
HPID=$!

# Wait until both listen.
for _ in $(seq 100); do
    if (exec 3<>/dev/tcp/127.0.0.1/$CORDON) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$TINY) 2>/dev/null \
        && (exec 3<>/dev/tcp/127.0.0.1/$HA_SINK) 2>/dev/null; then
        break
    fi
    sleep 0.1
done

echo "cordon $("$CORDON_BIN" --version | cut -d' ' -f2), $(tinyproxy -v 2>&1 | head -1), $(haproxy -v | head -1 | cut -d' ' -f1-3), $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$TARGET/release/examples/egress_bench" --echo-port $ECHO --sink-port $SINK --bytes "$BYTES" \
    --proxy "cordon=127.0.0.1:$CORDON=$CPID" --proxy "tinyproxy=127.0.0.1:$TINY=$TPID" \
    --relay "HAProxy TCP relay (splice)=127.0.0.1:$HA_ECHO=127.0.0.1:$HA_SINK=$HPID"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
