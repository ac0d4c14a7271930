#!/bin/bash
# What TLS interception costs, side by side on loopback in one run, against an HTTPS
# upstream (`openssl s_server -WWW`, a test CA made here):
#   host side:   direct  |  cordon proxy's CONNECT tunnel  |  HAProxy TCP relay (splice)
#   in `cordon exec` (both through the sandbox's forwarder):
#                plain tunnel (host allowlisted)  |  inspected (host with a request rule)
# Latency: median and p90 of curl's time_total for a small file over a new connection
# (N requests, one curl each). Throughput: one download of a BYTES file (MB/s).
# HAProxy is the relay-limit anchor: the best plain relay on the same cores.
#
# Usage (from the repository root, as root so haproxy can be installed):
#   bench/egress_inspect.sh [N] [BYTES]
set -eu
cd "$(dirname "$0")/.."
N=${1:-200}
BYTES=${2:-268435456}
TARGET=${CARGO_TARGET_DIR:-target}
if ! command -v haproxy >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
fi
# CORDON_BIN: a binary already built (the static one of scripts/build-release.sh).
if [ -z "${CORDON_BIN:-}" ]; then
    cargo build --release -q -p cordon --bin cordon
    CORDON_BIN="$TARGET/release/cordon"
fi
CORDON=$(cd "$(dirname "$CORDON_BIN")" && pwd)/$(basename "$CORDON_BIN")
WORK=$(mktemp -d /var/tmp/cordon-bench.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
UP=61621 PX=61622 HA=61623
cd "$WORK"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
    -days 2 -subj /CN=bench-ca -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -out leaf.csr \
    -subj /CN=127.0.0.1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >ext.cnf
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 \
    -extfile ext.cnf 2>/dev/null
mkdir www && head -c 1024 /dev/zero >www/small && head -c "$BYTES" /dev/zero >www/big
(cd www && exec openssl s_server -quiet -accept $UP -cert ../leaf.pem -key ../leaf.key -WWW) \
    >/dev/null 2>&1 &
PIDS+=($!)
"$CORDON" proxy --listen 127.0.0.1:$PX --allow 127.0.0.1:$UP \
    --allow-private 127.0.0.1/32 2>/dev/null &
PIDS+=($!)
cat >haproxy.cfg <<CFG
global
    maxconn 4096
defaults
    mode tcp
    option splice-auto
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend f
    bind 127.0.0.1:$HA
    default_backend b
backend b
    server up 127.0.0.1:$UP
CFG
haproxy -f haproxy.cfg -db >/dev/null 2>&1 &
PIDS+=($!)
sleep 1

# The measuring loop, run on the host or inside the sandbox: N small requests, then the
# download; prints "median_ms p90_ms MBps".
cat >measure.sh <<'SH'
#!/bin/sh
n=$1; shift
i=0
: >"$TMPDIR/lat"
while [ $i -lt "$n" ]; do
    curl -s -o /dev/null -w '%{time_total}\n' "$@" "$BASE/small" >>"$TMPDIR/lat"
    i=$((i + 1))
done
sort -n "$TMPDIR/lat" | awk -v n="$n" '{a[NR]=$1} END {printf "%.2f %.2f ", a[int(n/2)+1]*1000, a[int(n*0.9)]*1000}'
curl -s -o /dev/null -w '%{speed_download}\n' "$@" "$BASE/big" | awk '{printf "%.0f\n", $1/1000000}'
SH
chmod +x measure.sh
export TMPDIR=$WORK
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4"; }
echo "cordon $("$CORDON" --version | cut -d' ' -f2), $(haproxy -v | head -1 | cut -d' ' -f1-3), $(nproc) CPUs, kernel $(uname -r), N=$N, BYTES=$BYTES"
echo
echo "| path | latency p50 (ms) | p90 (ms) | download (MB/s) |"
echo "|---|---:|---:|---:|"
read -r a b c < <(BASE=https://127.0.0.1:$UP ./measure.sh "$N" --cacert ca.pem)
row "direct" "$a" "$b" "$c"
# Inside, with interception, curl trusts SSL_CERT_FILE: the system's roots and the run's CA.
# Loading a whole bundle is the client's own cost per process; measured here on the host.
cat /etc/ssl/certs/ca-certificates.crt ca.pem >bundle.pem 2>/dev/null || cp ca.pem bundle.pem
read -r a b c < <(BASE=https://127.0.0.1:$UP ./measure.sh "$N" --cacert bundle.pem)
row "direct, curl loading the system roots as well" "$a" "$b" "$c"
read -r a b c < <(BASE=https://127.0.0.1:$UP ./measure.sh "$N" --cacert ca.pem --connect-to 127.0.0.1:$UP:127.0.0.1:$HA)
row "HAProxy TCP relay (splice)" "$a" "$b" "$c"
read -r a b c < <(BASE=https://127.0.0.1:$UP ./measure.sh "$N" --cacert ca.pem -x http://127.0.0.1:$PX)
row "cordon proxy, CONNECT tunnel" "$a" "$b" "$c"

# Inside the sandbox: the same script, through the forwarder and the proxy.
mkdir ws && cp measure.sh ws/
printf '[defaults]\nexec = "allow"\nnetwork = "allow"\n[contained]\nread_outside = "allow"\n' >plain.toml
printf '[defaults]\nexec = "allow"\nnetwork = "allow"\n[contained]\nread_outside = "allow"\n[network]\nallow = [{ host = "127.0.0.1:%s", methods = ["GET"] }]\n' $UP >ruled.toml
cp ca.pem ws/upstream-roots
read -r a b c < <(cd ws && "$CORDON" exec --isolated --config "$WORK/plain.toml" --workspace "$WORK/ws" \
    --allow-private 127.0.0.0/8 --allow-net 127.0.0.1:$UP -- sh -c \
    "TMPDIR=/tmp BASE=https://127.0.0.1:$UP ./measure.sh $N --cacert upstream-roots")
row "cordon exec, plain tunnel" "$a" "$b" "$c"
read -r a b c < <(cd ws && "$CORDON" exec --isolated --config "$WORK/ruled.toml" --workspace "$WORK/ws" \
    --allow-private 127.0.0.0/8 --upstream-ca "$WORK/ca.pem" -- sh -c \
    "TMPDIR=/tmp BASE=https://127.0.0.1:$UP ./measure.sh $N --cacert \$SSL_CERT_FILE")
row "cordon exec, inspected (request rule)" "$a" "$b" "$c"
