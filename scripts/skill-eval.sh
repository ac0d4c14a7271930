#!/bin/sh
# Measure cordon's skill review on the labelled corpus (crates/cordon-skill/tests/corpus):
# prints every package's verdict, then the precision and recall of each verdict, and
# fails if a pinned verdict changed, a benign skill is refused or a malicious one passes.
#   CORDON_SKILL_EVAL_EXTRA=DIR     also measure the skill folders in DIR (benign, unpinned)
#   CORDON_SKILL_EVAL_VERBOSE=1     print every finding that is not a pass
set -eu
cd "$(dirname "$0")/.."
exec cargo test -q -p cordon-skill --test skill_eval -- --nocapture "$@"
