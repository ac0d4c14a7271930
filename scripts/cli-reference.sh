#!/usr/bin/env bash
# Writes docs/reference/cli.md: the `--help` of cordon and of every subcommand, as the
# binary prints it. `crates/cordon/tests/docs.rs` fails when the file misses a subcommand
# or an option; run this script after changing the command line.
#   ./scripts/cli-reference.sh [CORDON_BINARY]   (default: a debug build of this checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
    BIN=$1
else
    cargo build -q -p cordon --locked
    BIN="${CARGO_TARGET_DIR:-target}/debug/cordon"
fi
OUT=docs/reference/cli.md

# The subcommands a help text lists under "Commands:", without `help`.
subcommands() {
    "$BIN" "$@" --help | awk '/^Commands:/ { on = 1; next } /^[^ ]/ { on = 0 } on && NF { print $1 }' |
        grep -vx help || true
}

section() {
    local depth=$1
    shift
    local hashes
    hashes=$(printf '#%.0s' $(seq 1 "$depth"))
    printf '%s `cordon %s`\n\n```text\n' "$hashes" "$*"
    "$BIN" "$@" --help
    printf '```\n\n'
    local sub
    for sub in $(subcommands "$@"); do
        section $((depth + 1)) "$@" "$sub"
    done
}

{
    printf '# Command-line reference\n\n'
    printf 'Every subcommand'"'"'s `--help`, as the binary prints it (written by\n'
    printf '`./scripts/cli-reference.sh`; `crates/cordon/tests/docs.rs` checks that it lists every\n'
    printf 'subcommand and option). What each command is for, with examples: the guides listed in the\n'
    printf '[README](../../README.md#documentation).\n\n'
    printf '```text\n'
    "$BIN" --help
    printf '```\n\n'
    for sub in $(subcommands); do
        section 2 "$sub"
    done
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT" >&2
