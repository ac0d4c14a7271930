#!/usr/bin/env bash
# The test command of the README. Needs only the Rust toolchain and the tools a Debian
# machine ships (sh, curl, gcc, util-linux); sandbox tests need user namespaces (they skip
# with a reason where the host has none, unless CORDON_REQUIRE_SANDBOX_TESTS=1).
set -euo pipefail
cd "$(dirname "$0")/.."
# Every test binary runs and every failure is reported, not only the first binary's.
cargo test --workspace --locked --no-fail-fast "$@"
