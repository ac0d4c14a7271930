#!/usr/bin/env bash
# Fuzz one target of fuzz/targets with libFuzzer, on stable Rust (no cargo-fuzz, no
# nightly): the targets are instrumented with rustc's stable `-C passes=sancov-module`
# and LLVM's SanitizerCoverage options, and libfuzzer-sys links libFuzzer (built from its
# bundled C++ sources with the system's C++ compiler).
#
#   scripts/fuzz.sh TARGET [SECONDS]   fuzz TARGET for SECONDS (default 60) on its
#                                      corpus (fuzz/corpus/TARGET, grown in place)
#   scripts/fuzz.sh build              build every target (nothing else)
#   scripts/fuzz.sh smoke              every target for a fixed number of executions
#                                      with a fixed seed (-seed=1 -runs=N, N of each
#                                      below: 30-60 s here) on a copy of its corpus:
#                                      CI's run, with replay
#   scripts/fuzz.sh replay             every committed input (corpus and regressions)
#                                      once through every target: CI's run
#   scripts/fuzz.sh list               the targets
#
# A crash or a failed property leaves its input in fuzz/artifacts/TARGET/; copy it into
# fuzz/regressions/TARGET/ and `cargo test -p cordon-fuzz-props` replays it. Runs at
# the lowest CPU priority. The instrumented build goes under
# ${CARGO_TARGET_DIR:-target}/fuzz, apart from the ordinary one. Each run's scratch files
# (CORDON_FUZZ_SCRATCH, TMPDIR) go to a fresh directory (in /dev/shm, or under the build
# directory for the merge), removed after the run whatever its end; a target that
# leaves anything there, or anything new in /dev/shm, fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
targets=(shell hook serve mcp config origin egress skill merge)
# Executions of each target in `smoke`, the corpus's own inputs included: about 20-60 s
# of CPU each (2026-12-05, measured by CPU time on a 2-core machine under other builds;
# 60-130 s of wall time each at that load, at nice 19). `hook` and `serve` slowed as their
# corpora grew (2026-12-06: 30,000 hook runs took 63 CPU-s, 3,000 serve runs 19 CPU-s;
# 300,000 and 20,000 had grown to about 14 and 7 minutes).
declare -A smoke_runs=([shell]=90000 [hook]=30000 [serve]=6000 [mcp]=200000
    [config]=200000 [origin]=180000 [egress]=20000 [skill]=50000 [merge]=4000)
triple=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/fuzz"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
bin="$CARGO_TARGET_DIR/$triple/release"

build() {
    (cd fuzz/targets && nice -n 19 cargo build --release --locked --target "$triple" --bins)
}

shm_before=$(ls -A /dev/shm 2>/dev/null || true)
# The scratch directory of the run under way, removed however the script ends.
scratch_now=
trap '[ -z "$scratch_now" ] || rm -rf "$scratch_now"' EXIT

# Run target $1 with libFuzzer's arguments $2..., its scratch files in a fresh directory
# that is checked empty after a clean exit and removed whatever the exit.
fuzz_one() {
    local t=$1 rc=0 scratch
    shift
    # Memory-backed when there is one (a skill install syncs every file it writes), but
    # never for the merge, which needs a disk's extended attributes and renames.
    local base=/dev/shm
    if [ "$t" = merge ] || ! [ -d /dev/shm ] || ! [ -w /dev/shm ]; then
        base="$CARGO_TARGET_DIR/scratch"
        mkdir -p "$base"
    fi
    scratch=$(mktemp -d "$base/cordon-fuzz-$t.XXXXXX")
    scratch_now=$scratch
    # -timeout: one input may take 10 s at most (budgets of the analysis); -rss_limit_mb:
    # memory stays bounded whatever the input.
    CORDON_FUZZ_SCRATCH="$scratch" TMPDIR="$scratch" nice -n 19 "$bin/$t" -timeout=10 \
        -rss_limit_mb=1024 "$@" || rc=$?
    if [ "$rc" -eq 0 ] && [ -n "$(ls -A "$scratch")" ]; then
        echo "fuzz target $t left files behind: $(ls -A "$scratch" | head -n 5 | tr '\n' ' ')"
        rc=1
    fi
    rm -rf "$scratch"
    scratch_now=
    return "$rc"
}

# Fail when /dev/shm holds entries of ours (cordon's, or a temporary file's) it did not
# hold when this script started; others (another program's on a shared machine) are
# only named.
shm_unchanged() {
    local new ours
    new=$(comm -13 <(printf '%s\n' "$shm_before" | sort) <(ls -A /dev/shm 2>/dev/null | sort))
    ours=$(printf '%s\n' "$new" | grep -E '^(cordon|\.tmp|tmp)' || true)
    if [ -n "$ours" ]; then
        echo "fuzz targets left entries in /dev/shm: $ours"
        exit 1
    fi
    [ -z "$new" ] || echo "(new in /dev/shm, not the targets': $(echo $new))"
}

run() { # TARGET SECONDS CORPUS
    local t=$1 secs=$2 corpus=$3
    mkdir -p "$corpus" "fuzz/artifacts/$t"
    fuzz_one "$t" -max_total_time="$secs" -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="fuzz/artifacts/$t/" \
        "$corpus" $([ "$corpus" = "fuzz/corpus/$t" ] || echo "fuzz/corpus/$t")
}

case "${1:-}" in
    list) printf '%s\n' "${targets[@]}" ;;
    build) build ;;
    smoke)
        # Deterministic in what it runs: the same seed, count and corpus, no clock; a
        # failure is a finding its artifact reproduces (`$bin/TARGET ARTIFACT`). Coverage
        # feedback still varies a little between runs (hash-map seeds, thread timing).
        build
        for t in "${targets[@]}"; do
            n=${smoke_runs[$t]}
            echo "== fuzz smoke: $t (-seed=1 -runs=$n)"
            tmp=$(mktemp -d)
            cp -r "fuzz/corpus/$t/." "$tmp/"
            mkdir -p "fuzz/artifacts/$t"
            rc=0
            start=$SECONDS
            fuzz_one "$t" -seed=1 -runs="$n" -reload=0 -max_len=16384 -print_final_stats=1 \
                -artifact_prefix="fuzz/artifacts/$t/" "$tmp" >"$tmp.log" 2>&1 || rc=$?
            grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::(number_of_executed_units|average_exec_per_sec)|SUMMARY|fuzz target)' "$tmp.log" || true
            echo "   $((SECONDS - start)) s"
            if [ "$rc" -ne 0 ]; then
                tail -n 60 "$tmp.log"
                echo "fuzz target $t failed (its input is in fuzz/artifacts/$t)"
                exit 1
            fi
            rm -rf "$tmp" "$tmp.log"
        done
        shm_unchanged
        ;;
    replay)
        # Every committed input once, through the instrumented binaries: deterministic,
        # so CI fails only on a regression, never on what a random run happens to find.
        build
        for t in "${targets[@]}"; do
            echo "== fuzz replay: $t"
            dirs=("fuzz/corpus/$t")
            [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
            log=$(mktemp)
            rc=0
            fuzz_one "$t" -runs=0 "${dirs[@]}" >"$log" 2>&1 || rc=$?
            grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|SUMMARY|fuzz target)' "$log" || true
            if [ "$rc" -ne 0 ]; then
                tail -n 60 "$log"
                echo "fuzz target $t failed on a committed input"
                exit 1
            fi
            rm -f "$log"
        done
        shm_unchanged
        ;;
    "" | -h | --help) sed -n '2,25p' "$0"; exit 2 ;;
    *)
        t=$1
        printf '%s\n' "${targets[@]}" | grep -qx "$t" || { echo "no target $t (scripts/fuzz.sh list)"; exit 2; }
        build
        run "$t" "${2:-60}" "fuzz/corpus/$t"
        ;;
esac
