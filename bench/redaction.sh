#!/bin/sh
# Redaction recall and false positives, regenerated from the corpus in
# crates/cordon-store/tests/corpus/redaction/:
#   positives.tsv  secrets in the shapes public secret scanners test for (gitleaks,
#                  detect-secrets, trufflehog, leaky-repo), one case a line, by class;
#   negatives/     ordinary agent output (cargo build and test logs, `git log -p` of this
#                  repository, npm logs and registry JSON, `cargo metadata`).
# Prints recall per class and findings per MiB of the negatives. The same test fails in CI
# when recall drops below its floor or false positives rise above its ceiling.
#
# Usage (from anywhere): sh bench/redaction.sh       SHOW=1 also prints misses and findings.
set -eu
cd "$(dirname "$0")/.."
if [ -n "${SHOW:-}" ]; then
    export CORDON_REDACTION_SHOW=1
fi
cargo test -q --release -p cordon-store --test redaction_corpus -- --nocapture 2>&1 |
    grep -E '^(recall|false-positives|miss|  fp)'
