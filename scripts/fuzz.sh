#!/usr/bin/env bash
# Fuzz one target of fuzz/targets with libFuzzer, on stable Rust (no cargo-fuzz, no
# nightly): the targets are instrumented with rustc's stable `-C passes=sancov-module`
# and LLVM's SanitizerCoverage options, and libfuzzer-sys links libFuzzer (built from its
# bundled C++ sources with the system's C++ compiler).
#
#   scripts/fuzz.sh TARGET [SECONDS]   fuzz TARGET for SECONDS (default 60) on its
#                                      corpus (fuzz/corpus/TARGET, grown in place)
#   scripts/fuzz.sh build              build every target (nothing else)
#   scripts/fuzz.sh smoke [SECONDS]    every target for SECONDS each (default 30) on a
#                                      copy of its corpus
#   scripts/fuzz.sh replay             every committed input (corpus and regressions)
#                                      once through every target: CI's run
#   scripts/fuzz.sh list               the targets
#
# A crash or a failed property leaves its input in fuzz/artifacts/TARGET/; copy it into
# fuzz/regressions/TARGET/ and `cargo test -p cordon-fuzz-props` replays it. Runs at
# the lowest CPU priority. The instrumented build goes under
# ${CARGO_TARGET_DIR:-target}/fuzz, apart from the ordinary one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
targets=(shell hook serve mcp config origin egress skill)
triple=$(rustc -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/fuzz"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
bin="$CARGO_TARGET_DIR/$triple/release"

build() {
    (cd fuzz/targets && nice -n 19 cargo build --release --locked --target "$triple" --bins)
}

run() { # TARGET SECONDS CORPUS
    local t=$1 secs=$2 corpus=$3
    mkdir -p "$corpus" "fuzz/artifacts/$t"
    # -timeout: one input may take 10 s at most (budgets of the analysis); -rss_limit_mb:
    # memory stays bounded whatever the input.
    nice -n 19 "$bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
        -max_len=16384 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" \
        "$corpus" $([ "$corpus" = "fuzz/corpus/$t" ] || echo "fuzz/corpus/$t")
}

case "${1:-}" in
    list) printf '%s\n' "${targets[@]}" ;;
    build) build ;;
    smoke)
        secs=${2:-30}
        build
        for t in "${targets[@]}"; do
            echo "== fuzz smoke: $t (${secs}s)"
            tmp=$(mktemp -d)
            rc=0
            run "$t" "$secs" "$tmp" >"$tmp.log" 2>&1 || rc=$?
            grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|SUMMARY)' "$tmp.log" || true
            if [ "$rc" -ne 0 ]; then
                tail -n 60 "$tmp.log"
                echo "fuzz target $t failed (its input is in fuzz/artifacts/$t)"
                exit 1
            fi
            rm -rf "$tmp" "$tmp.log"
        done
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
            nice -n 19 "$bin/$t" -runs=0 -timeout=10 -rss_limit_mb=1024 \
                "${dirs[@]}" >"$log" 2>&1 || rc=$?
            grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|SUMMARY)' "$log" || true
            if [ "$rc" -ne 0 ]; then
                tail -n 60 "$log"
                echo "fuzz target $t failed on a committed input"
                exit 1
            fi
            rm -f "$log"
        done
        ;;
    "" | -h | --help) sed -n '2,20p' "$0"; exit 2 ;;
    *)
        t=$1
        printf '%s\n' "${targets[@]}" | grep -qx "$t" || { echo "no target $t (scripts/fuzz.sh list)"; exit 2; }
        build
        run "$t" "${2:-60}" "fuzz/corpus/$t"
        ;;
esac
