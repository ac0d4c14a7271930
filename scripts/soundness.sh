#!/usr/bin/env bash
# The soundness harness of the shell analysis, on its whole corpus: every command runs
# for real in a throwaway root under strace, and what it did is checked against what
# cordon predicted. Prints the report (commands run, opaque ones, violations per class,
# each new violation) and fails when a violation is not among the known limits
# (crates/cordon-policy/tests/soundness/known-limits.txt).
#
# Needs strace and unprivileged user namespaces (scripts/install-test-deps.sh installs
# strace). Extra arguments go to cargo test. Environment:
#   CORDON_SOUNDNESS_FILTER=TEXT   only the commands that contain TEXT
#   CORDON_SOUNDNESS_CORPUS=FILE   the commands of FILE (as commands.txt) instead
#   CORDON_SOUNDNESS_VERBOSE=1     print every predicted and observed operation
#   CORDON_SOUNDNESS_DUMP=FILE     write every violation as a JSON line to FILE
#   CORDON_SOUNDNESS_JOBS=N        commands run at once (default: the number of CPUs)
# The CI subset (about a hundred commands) runs in the normal test suite as
# `cargo test -p cordon-policy --test soundness`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test -p cordon-policy --locked --test soundness "$@" -- --ignored --nocapture --exact full
