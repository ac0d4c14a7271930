#!/bin/sh
# Build the release binary the way cordon is meant to be shipped: on Linux with glibc, a
# static PIE (`-C target-feature=+crt-static`), which keeps ASLR and full RELRO but loads
# no shared libraries. Every `cordon exec` starts the binary twice (cordon, then its
# sandbox helper); without the dynamic loader each start is about 0.7 ms shorter here.
#
#   ./scripts/build-release.sh        # prints the path of the binary
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
        if ! RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
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
