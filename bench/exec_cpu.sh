#!/bin/sh
# CPU time of `cordon exec -- /bin/true`: every process of the run counted (cordon, its
# helper, the sandbox's PID 1, the command), which a machine shared with other builds
# disturbs far less than wall time. Builds are compared side by side, interleaved: ROUNDS
# blocks of `perf stat -r N` per build, in turn, with bubblewrap as the anchor.
#
#   sh bench/exec_cpu.sh OLD_CORDON NEW_CORDON bwrap      # any number of builds, and bwrap
#   ROUNDS=10 N=30 sh bench/exec_cpu.sh …
#
# Prints one line per block (task-clock per run in ms, the load average) and the medians
# of the blocks. Copy the binaries first (a binary the linker just wrote starts slower).
# Needs `perf` (Debian: linux-perf) and, for the anchor, bubblewrap.
set -eu
ROUNDS=${ROUNDS:-6}
N=${N:-20}
[ $# -gt 0 ] || { echo "usage: sh bench/exec_cpu.sh CORDON… [bwrap]" >&2; exit 2; }
W=$(mktemp -d /tmp/cordon-cpu-XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/ws" "$W/home"
printf '[permissions]\nallow = ["Bash(/bin/true)"]\n' > "$W/policy.toml"
export HOME="$W/home" CORDON_STATE_DIR="$W/state" LANG=C
cd "$W/ws"
for b in "$@"; do
    [ "$b" = bwrap ] || "$b" exec --isolated --config ../policy.toml --workspace . -- /bin/true
done
for r in $(seq "$ROUNDS"); do
    i=0
    for b in "$@"; do
        i=$((i + 1))
        if [ "$b" = bwrap ]; then
            ms=$(perf stat -x, -r "$N" -e task-clock bwrap --unshare-all --ro-bind / / --dev /dev \
                --proc /proc --tmpfs /tmp /bin/true 2>&1 >/dev/null | awk -F, '/task-clock/{print $1}')
        else
            ms=$(perf stat -x, -r "$N" -e task-clock "$b" exec --isolated --config ../policy.toml \
                --workspace . -- /bin/true 2>&1 >/dev/null | awk -F, '/task-clock/{print $1}')
        fi
        echo "$r $i:$b $ms $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$W/blocks"
    done
done
echo "medians of $ROUNDS blocks of $N runs (CPU ms per run, all processes):"
i=0
for b in "$@"; do
    i=$((i + 1))
    awk -v k="$i:$b" '$2 == k {print $3}' "$W/blocks" | sort -n |
        awk -v b="$b" '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "  %-40s %.2f ms\n", b, m}'
done
