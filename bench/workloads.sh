#!/bin/sh
# Real work under containment: the same commands run directly, under bubblewrap and under
# `cordon exec` (its defaults: copy-on-write workspace merged back after the run, write
# observer, Landlock, seccomp), round by round interleaved, each run on a freshly made,
# loop-mounted ext4 file system that holds the workspace and cordon's state. Prints the
# median of RUNS runs per case and the ratio to bubblewrap, both plain and with the
# workspace under the same copy-on-write layer cordon uses (`bwrap-cow`: an overlay with
# cordon's mount options, never merged back), which separates what the layer costs from
# what cordon adds to it (write observer, merge, start-up).
#
#   sh bench/workloads.sh                     # RUNS=5, every workload
#   RUNS=7 ONLY=tar,npmlike sh bench/workloads.sh
#   BASELINE=/path/to/older/cordon sh bench/workloads.sh   # adds that build as a column
#   CORDON=/path/to/cordon sh bench/workloads.sh           # measure this binary
#
# A second table gives CPU time (user + system of every process of the case, the
# sandbox's included: `perf stat -e task-clock` around it), which a machine shared with
# other builds disturbs far less than wall time. Without `perf` only wall time is shown.
#
# Why a fresh file system per run: ext4 slows inode allocation near recently deleted
# inodes, so whichever case runs right after a workspace was deleted looks several times
# slower. Each run gets its own image (made, mounted, used once, removed). Before a cordon
# case is timed, an untimed `cordon exec -- true` makes cordon's state on it, as any
# earlier use would have left it (store, audit key, a spare change set).
#
# Needs root (loop mounts), mkfs.ext4, and bubblewrap (a benchmark-only tool; cordon never
# runs it): `apt-get install bubblewrap`. The everyday workloads (npm install from the npm
# cache, pip install of a wheel, cargo build) are skipped, with the reason printed, when
# their tool or its offline input is missing. Not a timed test: numbers depend on the
# machine and its load (printed with the table).
set -eu

RUNS=${RUNS:-5}
ONLY=${ONLY:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "workloads.sh: needs root (each run mounts a fresh ext4 image)" >&2
    exit 1
fi
if ! command -v bwrap >/dev/null 2>&1; then
    echo "workloads.sh: bubblewrap is missing; install it with: apt-get install bubblewrap" >&2
    exit 1
fi
command -v mkfs.ext4 >/dev/null 2>&1 || { echo "workloads.sh: mkfs.ext4 is missing (e2fsprogs)" >&2; exit 1; }
CORDON=${CORDON:-$("$ROOT/scripts/build-release.sh")}

# Not under /tmp or /var/tmp: cordon gives the command private ones, and the inputs must
# be readable at the same path in every mode.
mkdir -p /srv
WORK=$(mktemp -d /srv/cordon-workloads-XXXXXX)
cleanup() {
    umount "$WORK/mnt/ws" 2>/dev/null || true
    umount "$WORK/mnt" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$WORK/src" "$WORK/mnt" "$WORK/home"
cp "$CORDON" "$WORK/cordon"
if [ -n "${BASELINE:-}" ]; then cp "$BASELINE" "$WORK/cordon-baseline"; fi
cat > "$WORK/policy.toml" <<'TOML'
[permissions]
allow = ["Bash(sh -c:*)"]
TOML

PERF=$(command -v perf || true)
python3 - "$RUNS" "$WORK" "$ONLY" "$PERF" <<'PY'
import glob, os, shutil, statistics, subprocess, sys, tarfile, time

runs, work, only = int(sys.argv[1]), sys.argv[2], [w for w in sys.argv[3].split(",") if w]
perf = sys.argv[4]
src, mnt = work + "/src", work + "/mnt"
img = work + "/fs.img"
PATH = "/usr/local/bin:/usr/bin:/bin"
HOME = os.path.expanduser("~")


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def quiet(cmd, cwd=None):
    return subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True)


# ---- inputs, made once, outside the file systems under test ----
reg = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/*")))


def crate_files(limit):
    picked, n = [], 0
    for d in reg:
        if n >= limit:
            break
        c = sum(len(f) for _, _, f in os.walk(d))
        picked.append(d)
        n += c
    return picked, n


skips = {}
crates, ncrates = crate_files(14000)
if ncrates < 14000:
    skips["tar"] = f"only {ncrates} files of crate sources in ~/.cargo/registry/src"
with tarfile.open(src + "/crates.tar", "w") as t:
    for d in crates:
        t.add(d, arcname="crates/" + os.path.basename(d))
tar_mb = os.path.getsize(src + "/crates.tar") / 1e6
# The tree `cp -r` copies: half of those crates, unpacked.
half, nhalf = crate_files(7000)
os.makedirs(src + "/tree")
for d in half:
    shutil.copytree(d, src + "/tree/" + os.path.basename(d), symlinks=True)
tree_mb = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(src + "/tree")
              for f in fs if not os.path.islink(os.path.join(r, f))) / 1e6
# 1,000 files of Python's standard library, to compile.
pylib = sorted(glob.glob("/usr/lib/python3*/**/*.py", recursive=True))
pylib = [p for p in pylib if "site-packages" not in p and "dist-packages" not in p][:1000]
base = os.path.commonpath(pylib)
for p in pylib:
    dst = src + "/py/" + os.path.relpath(p, base)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(p, dst)
# A git repository of about 4 MB, cloned from a local bare copy.
repo = src + "/repo"
os.makedirs(repo)
size = 0
for d in half:
    if size > 4e6:
        break
    shutil.copytree(d, repo + "/" + os.path.basename(d), symlinks=True)
    size += sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
git_env = {"PATH": PATH, "HOME": work + "/home", "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
sh("git init -q && git add -A && git commit -q -m init && git clone -q --bare . ../repo.git",
   cwd=repo, env=git_env)
shutil.rmtree(repo)
# npm: a package that the npm cache holds with its dependencies (installed offline).
npm_cache = os.path.expanduser("~/.npm/_cacache")
if not shutil.which("npm"):
    skips["npm"] = "npm is not installed"
elif not os.path.isdir(npm_cache):
    skips["npm"] = "no npm cache (~/.npm/_cacache): run `npm install express` once online"
else:
    shutil.copytree(npm_cache, src + "/npm-cache/_cacache", symlinks=True)
    os.makedirs(src + "/npm")
    with open(src + "/npm/package.json", "w") as f:
        f.write('{"name":"bench","version":"1.0.0","dependencies":{"express":"*"}}\n')
    shutil.copytree(src + "/npm-cache", src + "/npm-try/.npm-cache", symlinks=True)
    shutil.copy(src + "/npm/package.json", src + "/npm-try/")
    r = quiet("npm install --offline --no-audit --no-fund --cache .npm-cache >/dev/null 2>&1",
              cwd=src + "/npm-try")
    shutil.rmtree(src + "/npm-try")
    if r.returncode != 0:
        skips["npm"] = "`npm install --offline express` fails: the npm cache does not hold express"
# pip: a wheel Debian ships, installed into the workspace.
wheels = sorted(glob.glob("/usr/share/python-wheels/setuptools-*.whl"))
if not wheels:
    skips["pip"] = "no wheel in /usr/share/python-wheels (Debian's python3-setuptools-whl)"
elif quiet("/usr/bin/python3 -m pip --version").returncode != 0:
    skips["pip"] = "/usr/bin/python3 has no pip (Debian's python3-pip)"
wheel = wheels[0] if wheels else ""
# cargo: a small crate with one dependency taken from the local registry as a path.
# The toolchain's own binaries (not rustup's proxies, which want a writable ~/.rustup);
# cordon binds toolchains back, read-only, into the HOME it shows the command.
cargo = rustc = ""
r = quiet("rustup which cargo")
if r.returncode == 0:
    cargo = r.stdout.decode().strip()
    rustc = os.path.join(os.path.dirname(cargo), "rustc")
itoa = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/itoa-1.*")))
if not cargo:
    skips["cargo"] = "no rustup toolchain (`rustup which cargo` fails)"
elif not itoa:
    skips["cargo"] = "no itoa 1.x in the local cargo registry"
else:
    shutil.copytree(itoa[-1], src + "/itoa", symlinks=True)
    os.makedirs(src + "/crate/src")
    with open(src + "/crate/Cargo.toml", "w") as f:
        f.write('[package]\nname = "bench"\nversion = "0.1.0"\nedition = "2021"\n'
                f'[dependencies]\nitoa = {{ path = "{src}/itoa" }}\n[workspace]\n')
    with open(src + "/crate/src/main.rs", "w") as f:
        f.write('fn main() { println!("{}", itoa::Buffer::new().format(42)); }\n')

# ---- workloads: (key, label, setup run directly in the workspace, timed command) ----
W = [
    ("true", "`true` (start-up only)", None, "true"),
    ("tar", f"`tar xf` of {ncrates:,} files ({tar_mb:.0f} MB of crate sources)", None,
     f"tar xf {src}/crates.tar"),
    ("compileall", f"`python3 -m compileall` of {len(pylib):,} stdlib files",
     f"cp -r {src}/py py", "/usr/bin/python3 -m compileall -q py >/dev/null"),
    ("git", "`git clone` of a 4 MB repository + `git status`", None,
     f"git clone -q {src}/repo.git r && cd r && git status --short >/dev/null"),
    ("loop", "1,000 small files from a shell loop", None,
     'i=0; while [ $i -lt 1000 ]; do echo $i > f$i; i=$((i+1)); done'),
    ("npmlike", "5,000 files in 500 directories (npm-like)", None,
     'd=0; while [ $d -lt 500 ]; do mkdir -p m/d$d; f=0; '
     'while [ $f -lt 10 ]; do echo x > m/d$d/f$f; f=$((f+1)); done; d=$((d+1)); done'),
    ("cp", f"`cp -r` of a {tree_mb:.0f} MB tree ({nhalf:,} files)", None, f"cp -r {src}/tree t"),
    # The cache is copied into the workspace for each run (npm writes to it): the same
    # writable cache in every mode.
    ("npm", "`npm install --offline` (express, from the npm cache)",
     f"cp -r {src}/npm-cache .npm-cache && cp {src}/npm/package.json .",
     "npm install --offline --no-audit --no-fund --cache .npm-cache >/dev/null 2>&1"),
    ("pip", "`pip install` of a wheel (setuptools)", None,
     f"/usr/bin/python3 -m pip install -q --no-index --no-deps --no-compile --target site {wheel}"),
    ("cargo", "`cargo build` of a small crate (one dependency)", f"cp -r {src}/crate c",
     f"cd c && CARGO_HOME=$PWD/.cargo-home RUSTC={rustc} "
     f"{cargo} build --offline -q"),
]
W = [w for w in W if not only or w[0] in only]

cordons = [("cordon", work + "/cordon")]
if os.path.exists(work + "/cordon-baseline"):
    cordons.append(("baseline", work + "/cordon-baseline"))
modes = ["direct", "bwrap", "bwrap-cow"] + [c[0] for c in cordons]


def argv(mode, cmd, ws):
    # Each case in a session of its own: with the kernel's autogroup scheduling, a new
    # session is a new scheduling group, and cordon's sandbox makes one; on a machine
    # shared with other work, a case left in the caller's session would compete with
    # it for a smaller share.
    case = ["setsid", "-w"] + inner(mode, cmd, ws)
    if perf:
        # Counts every process the case starts (perf follows children).
        return [perf, "stat", "-x,", "-e", "task-clock", "-o", work + "/cpu", "--"] + case
    return case


def cpu_seconds():
    # `perf stat -x,` writes "msec,,task-clock,…".
    for line in open(work + "/cpu"):
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            return float(f[0]) / 1000
    return None


def inner(mode, cmd, ws):
    if mode == "direct":
        return ["sh", "-c", cmd]
    if mode == "bwrap":
        return ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs",
                "/tmp", "--bind", ws, ws, "--unshare-all", "--die-with-parent", "--chdir", ws,
                "sh", "-c", cmd]
    if mode == "bwrap-cow":
        # bubblewrap over the same copy-on-write layer cordon gives the workspace (an
        # overlay with the workspace as its lower layer, mounted here with cordon's
        # options, unmounted after): what the layer costs without cordon's observer,
        # merge and start-up. The changes stay in the layer; nothing is merged back.
        up, wk = mnt + "/cow/up", mnt + "/cow/work"
        opts = f"lowerdir={ws},upperdir={up},workdir={wk},userxattr,metacopy=off,index=off,xino=off"
        return ["sh", "-c", f'mkdir -p {up} {wk} && mount -t overlay overlay -o {opts} {ws} && '
                f'{{ "$@"; rc=$?; umount {ws}; exit $rc; }}', "sh"] + inner("bwrap", cmd, ws)
    binary = dict(cordons)[mode]
    return [binary, "exec", "--isolated", "--config", work + "/policy.toml", "--workspace", ws,
            "--", "sh", "-c", cmd]


def fresh_fs():
    if os.path.ismount(mnt + "/ws"):
        sh(f"umount {mnt}/ws")  # a bwrap-cow case cut short
    if os.path.ismount(mnt):
        sh(f"umount {mnt}")
    if os.path.exists(img):
        os.unlink(img)
    sh(f"truncate -s 4G {img} && mkfs.ext4 -q -F {img} && mount -o loop {img} {mnt}")
    for d in ("ws", "state", "home"):
        os.makedirs(f"{mnt}/{d}")


def one(mode, w):
    key, _, setup, cmd = w
    fresh_fs()
    ws = mnt + "/ws"
    env = {"PATH": PATH, "HOME": HOME, "LANG": "C", "CORDON_STATE_DIR": mnt + "/state"}
    if setup:
        sh(setup, cwd=ws, env=env, stdout=subprocess.DEVNULL)
    if mode in dict(cordons):
        # cordon's state on the fresh file system is made by an untimed run first, as any
        # earlier use leaves it: the store and its schema, the audit log's key, a spare
        # change set. Otherwise every row would also time a first run's set-up (about
        # 9 ms here: the store's creation and its syncs), which a user pays once.
        r = subprocess.run(inner(mode, "true", ws), cwd=ws, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            return None, f"warm-up exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"
    sh("sync")
    t = time.perf_counter()
    r = subprocess.run(argv(mode, cmd, ws), cwd=ws, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t)
    err = r.stderr.decode(errors="replace").strip()
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {err[-300:]}"
    return (ms, cpu_seconds() if perf else None), None


rows = []
for w in W:
    key, label = w[0], w[1]
    if key in skips:
        rows.append((label, None, f"skipped: {skips[key]}", None))
        continue
    times = {m: [] for m in modes}
    cpus = {m: [] for m in modes}
    failed = {}
    n = runs * 4 if key == "true" else runs
    for i in range(n):
        # Rotate the order each round, so that no mode always follows another.
        order = modes[i % len(modes):] + modes[:i % len(modes)]
        for m in order:
            if m in failed:
                continue
            s, err = one(m, w)
            if s is None:
                failed[m] = err
            else:
                times[m].append(s[0])
                if s[1] is not None:
                    cpus[m].append(s[1])
    med = {m: statistics.median(times[m]) if times[m] else None for m in modes}
    cpu = {m: statistics.median(cpus[m]) if cpus[m] else None for m in modes}
    rows.append((label, med, failed, cpu))
    print(f"  done: {key} {', '.join(f'{m} {v:.3f}' for m, v in med.items() if v)}",
          file=sys.stderr, flush=True)

if os.path.ismount(mnt):
    sh(f"umount {mnt}")
load = open("/proc/loadavg").read().split()[:3]
print(f"runs per case: {runs} (start-up row: {runs * 4}); kernel {os.uname().release}; "
      f"{os.cpu_count()} CPUs; load average at the end {' '.join(load)}")
bases = ["bwrap", "bwrap-cow"]
head = "| workload | " + " | ".join(modes) + " | " + " | ".join(
    f"{c} ÷ {b}" for c, _ in cordons for b in bases) + " |"
print(head)
print("|---|" + "---:|" * (len(modes) + len(cordons) * len(bases)))
def table(pick):
    for label, med, extra, cpu in rows:
        if med is None:
            print(f"| {label} | {extra} |")
            continue
        med = pick(med, cpu)
        cells = [f"{med[m]:.3f}" if med[m] is not None else "failed" for m in modes]
        ratios = [f"**{med[c] / med[b]:.2f}**" if med[c] and med[b] else "-"
                  for c, _ in cordons for b in bases]
        print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
        for m, e in extra.items():
            print(f"|   ({m} failed: {e[:200]}) |")


table(lambda med, cpu: med)
print("wall seconds, medians; ratios are cordon's median over bubblewrap's (bwrap-cow: "
      "bubblewrap with the workspace under the same copy-on-write layer, never merged back)")
if perf:
    print()
    print(head)
    print("|---|" + "---:|" * (len(modes) + len(cordons) * len(bases)))
    table(lambda med, cpu: cpu)
    print("CPU seconds (every process of the case), medians; ratios as above")
PY
