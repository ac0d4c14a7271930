#!/bin/sh
# The package as a user meets it: build it (scripts/build-deb.sh), check its AppArmor
# profile with AppArmor's own parser (parse only: a kernel without AppArmor cannot load
# it), install it with dpkg into a clean directory tree, then run the installed binary
# (`cordon doctor`, one `cordon exec`), read a man page and load the bash completion.
# Needs dpkg and the parser scripts/install-test-deps.sh puts in .test-deps/apparmor.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEB=${1:-$("$ROOT/scripts/build-deb.sh")}
PARSER="$ROOT/.test-deps/apparmor/apparmor_parser"
TREE=$(mktemp -d)
trap 'rm -rf "$TREE"' EXIT
chmod 0755 "$TREE"
# cordon's state (store, audit log, key) goes to the test's own tree, never the user's.
export CORDON_STATE_DIR="$TREE/state"
fail() { echo "test-package: $*" >&2; exit 1; }

echo "== the package: $DEB"
dpkg-deb --info "$DEB" | sed -n 's/^ \(Package\|Version\|Architecture\):/  \1:/p'

echo "== the AppArmor profile parses ($("$PARSER" --version | head -1))"
dpkg-deb --fsys-tarfile "$DEB" | tar -xO ./etc/apparmor.d/cordon >"$TREE/profile"
grep -q '^profile cordon /usr/bin/cordon flags=(unconfined) {$' "$TREE/profile" ||
    fail "the profile does not attach to /usr/bin/cordon"
grep -q '^  userns,$' "$TREE/profile" || fail "the profile does not allow userns"
"$PARSER" --skip-kernel-load --skip-cache "$TREE/profile" 2>&1 | grep -v 'Cache read/write disabled' || true
"$PARSER" --skip-kernel-load --skip-cache "$TREE/profile" >/dev/null 2>&1 ||
    fail "apparmor_parser refuses the profile"
# A profile with a mistake must fail the same check (the parser really reads it).
sed 's/userns,/userns bogus,/' "$TREE/profile" >"$TREE/broken"
if "$PARSER" --skip-kernel-load --skip-cache "$TREE/broken" >/dev/null 2>&1; then
    fail "apparmor_parser accepted a broken profile: the check checks nothing"
fi

echo "== dpkg installs it into a clean tree"
ROOTDIR="$TREE/root"
mkdir -p "$ROOTDIR/var/lib/dpkg/info" "$ROOTDIR/var/lib/dpkg/updates" "$ROOTDIR/var/log"
: >"$ROOTDIR/var/lib/dpkg/status"
dpkg --root="$ROOTDIR" --force-script-chrootless --log=/dev/null -i "$DEB" >/dev/null
dpkg --root="$ROOTDIR" -s cordon | grep -q '^Status: install ok installed$' ||
    fail "dpkg does not list cordon as installed"
BIN="$ROOTDIR/usr/bin/cordon"
for f in usr/bin/cordon etc/apparmor.d/cordon usr/share/man/man1/cordon.1.gz \
    usr/share/man/man1/cordon-exec.1.gz usr/share/bash-completion/completions/cordon \
    usr/share/zsh/vendor-completions/_cordon usr/share/fish/vendor_completions.d/cordon.fish; do
    [ -s "$ROOTDIR/$f" ] || fail "/$f is missing from the installed tree"
done

echo "== the installed binary runs"
"$BIN" --version
"$BIN" doctor >"$TREE/doctor.txt" || fail "cordon doctor failed: $(cat "$TREE/doctor.txt")"
grep -q '^tier: ' "$TREE/doctor.txt" || fail "cordon doctor printed no tier"
WS="$TREE/ws"
mkdir -p "$WS"
OUT=$(cd "$WS" && "$BIN" exec --workspace "$WS" -- sh -c 'echo ran-from-the-package > made.txt; cat made.txt')
[ "$OUT" = ran-from-the-package ] || fail "cordon exec printed: $OUT"
[ "$(cat "$WS/made.txt")" = ran-from-the-package ] || fail "the run's file did not land"

echo "== man page and bash completion"
zcat "$ROOTDIR/usr/share/man/man1/cordon-exec.1.gz" | grep -q 'Run a command inside the sandbox' ||
    fail "cordon-exec(1) does not say what exec does"
COMPLETION="$ROOTDIR/usr/share/bash-completion/completions/cordon"
bash -c ". '$COMPLETION' && complete -p cordon" | grep -q -- '-F _cordon cordon' ||
    fail "the bash completion does not load"
WORDS=$(bash -c ". '$COMPLETION'; COMP_WORDS=(cordon app); COMP_CWORD=1; COMP_LINE='cordon app'; COMP_POINT=10; _cordon cordon app cordon; echo \"\${COMPREPLY[*]}\"")
echo "$WORDS" | grep -qw approvals || fail "completing 'cordon app' gave: $WORDS"
echo "test-package: ok"
