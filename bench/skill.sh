#!/usr/bin/env bash
# Inspect time and peak memory of `cordon skill inspect` on a large package and on bombs.
#
#   ./bench/skill.sh [path/to/cordon]     # default: target/release/cordon
#
# Packages are generated into a temporary directory (about 1.2 GB of disk while it runs):
#   large     10,000 files of 50 KiB (500 MiB), random content, as a plain tar
#   bomb      a zip holding 4 GiB of zeros in one entry (about 4 MiB compressed)
#   liar      the same bomb with its headers claiming 100 bytes
#   tgz-bomb  a tar.gz of 40 files of 100 MiB of zeros
# Peak RSS is /usr/bin/time -v's "Maximum resident set size". Not a timed test.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/target/release/cordon}
[ -x "$BIN" ] || { echo "build it first: cargo build --release -p cordon" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK" <<'PY'
import io, os, sys, tarfile, zipfile
work = sys.argv[1]
skill = b"---\nname: bench\ndescription: benchmark package\n---\n# Bench\n"

def add(tf, name, data):
    info = tarfile.TarInfo(name); info.size = len(data); info.mode = 0o644
    tf.addfile(info, io.BytesIO(data))

with tarfile.open(os.path.join(work, "large.tar"), "w", format=tarfile.GNU_FORMAT) as tf:
    add(tf, "SKILL.md", skill)
    for i in range(9999):
        add(tf, f"data/{i // 100:03}/f{i:05}.bin", os.urandom(50 * 1024))

chunk = bytes(1 << 20)
with zipfile.ZipFile(os.path.join(work, "bomb.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("SKILL.md", skill)
    with z.open("bomb.bin", "w", force_zip64=True) as f:
        for _ in range(4096):
            f.write(chunk)

# The liar: every uncompressed-size field of the bomb entry patched to 100.
data = bytearray(open(os.path.join(work, "bomb.zip"), "rb").read())
i = 0
while True:
    i = data.find(b"PK\x03\x04", i)
    if i < 0: break
    data[i + 22:i + 26] = (100).to_bytes(4, "little"); i += 4
i = 0
while True:
    i = data.find(b"PK\x01\x02", i)
    if i < 0: break
    data[i + 24:i + 28] = (100).to_bytes(4, "little"); i += 4
open(os.path.join(work, "liar.zip"), "wb").write(data)

class Zeros(io.RawIOBase):
    def __init__(self, n): self.left = n
    def readable(self): return True
    def readinto(self, b):
        n = min(len(b), self.left); b[:n] = bytes(n); self.left -= n; return n

with tarfile.open(os.path.join(work, "bomb.tgz"), "w:gz", compresslevel=1) as tf:
    add(tf, "SKILL.md", skill)
    for i in range(40):
        info = tarfile.TarInfo(f"z{i:02}.bin"); info.size = 100 << 20
        tf.addfile(info, io.BufferedReader(Zeros(100 << 20)))
PY

printf '%-9s %10s %9s %12s %8s  %s\n' package size seconds peak_rss_kib exit verdict
for p in large.tar bomb.zip liar.zip bomb.tgz; do
    f="$WORK/$p"
    size=$(du -h "$f" | cut -f1)
    set +e
    /usr/bin/time -v -o "$WORK/time.txt" "$BIN" skill inspect --json "$f" > "$WORK/out.json" 2>/dev/null
    code=$?
    set -e
    secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
    verdict=$(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print(v["verdict"], v["entries"], "entries", v["unpacked_bytes"], "bytes")' "$WORK/out.json" 2>/dev/null || echo "(not a package)")
    printf '%-9s %10s %9s %12s %8s  %s\n' "$p" "$size" "$secs" "$rss" "$code" "$verdict"
done
