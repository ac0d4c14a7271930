#!/bin/sh
# Build the release binary the way cordon is meant to be shipped: on Linux with glibc, a
# static, position-dependent executable (`-C target-feature=+crt-static -C
# relocation-model=static`): no shared libraries to load and nothing to relocate at start.
# A harness spawns `cordon hook` for every tool call and every `cordon exec` starts the
# binary twice (cordon, then its sandbox helper); here a static PIE spends about 0.7 ms of
# each start relocating itself (about 130 copy-on-write page faults), which is as long as
# the whole start of this build. The trade: the executable's own image is at a fixed
# address (its stack, heap, thread stacks and other mappings are still randomized). For a
# static PIE (the image randomized too), set CORDON_PIE=1.
#
#   ./scripts/build-release.sh            # prints the path of the binary
#   CORDON_PIE=1 ./scripts/build-release.sh
#
# Name resolution in the static build (the egress proxy) uses glibc's built-in `files`
# and `dns` services; an nsswitch.conf `hosts:` line that names other modules (mdns,
# resolve, myhostname) needs the same glibc's shared modules at run time. Where that
# matters, use the dynamically linked `cargo build --release` instead.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
HOST=$(rustc -vV | sed -n 's/^host: //p')
case "$HOST" in
    *-linux-gnu)
        # `--target` keeps the flag away from build scripts and proc macros, which
        # cannot be static.
        FLAGS="-C target-feature=+crt-static"
        if [ "${CORDON_PIE:-0}" != 1 ]; then
            FLAGS="$FLAGS -C relocation-model=static"
        fi
        if ! RUSTFLAGS="${RUSTFLAGS:-} $FLAGS" \
            cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml" --target "$HOST"; then
            echo "build-release.sh: the static build failed; it needs glibc's static libraries (libc.a: Debian's libc6-dev, Fedora's glibc-static). Install them, or build dynamically with: cargo build --release -p cordon" >&2
            exit 1
        fi
        echo "$TARGET_DIR/$HOST/release/cordon"
        ;;
    *)
        cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
        echo "$TARGET_DIR/release/cordon"
        ;;
esac
