#!/bin/sh
# Build the release binary the way cordon is meant to be shipped: on Linux with glibc, a
# static position-independent executable (`-C target-feature=+crt-static`, a static PIE)
# whose relative relocations are packed (`-z pack-relative-relocs`, DT_RELR): no shared
# libraries to load, the image at a random address like every other mapping, and a
# relocation table of a few KiB instead of megabytes for its start-up code to read.
# A harness spawns `cordon hook` for every tool call and every `cordon exec` starts the
# binary once (its sandbox helper is a fork): docs/guide/install.md has the start-up
# measured against the position-dependent build, which CORDON_PIE=0 still makes.
#
#   ./scripts/build-release.sh            # prints the path of the binary
#   CORDON_PIE=0 ./scripts/build-release.sh   # position-dependent (fixed image address)
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
        if [ "${CORDON_PIE:-1}" = 0 ]; then
            FLAGS="$FLAGS -C relocation-model=static"
        else
            # DT_RELR needs binutils 2.38 or lld 15 to write it and glibc 2.36 to apply
            # it at start; the binary is run once below to check.
            FLAGS="$FLAGS -C relocation-model=pie -C link-arg=-Wl,-z,pack-relative-relocs"
        fi
        if ! RUSTFLAGS="${RUSTFLAGS:-} $FLAGS" \
            cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml" --target "$HOST"; then
            echo "build-release.sh: the static build failed; it needs glibc's static libraries (libc.a: Debian's libc6-dev, Fedora's glibc-static). Install them, or build dynamically with: cargo build --release -p cordon" >&2
            exit 1
        fi
        BIN="$TARGET_DIR/$HOST/release/cordon"
        if ! "$BIN" --version >/dev/null 2>&1; then
            echo "build-release.sh: the static build does not start here; packed relocations (DT_RELR) need glibc 2.36 or later. Build the position-dependent binary with CORDON_PIE=0" >&2
            exit 1
        fi
        echo "$BIN"
        ;;
    *)
        cargo build --release --locked -q -p cordon --manifest-path "$ROOT/Cargo.toml"
        echo "$TARGET_DIR/release/cordon"
        ;;
esac
