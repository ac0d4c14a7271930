#!/usr/bin/env python3
"""The `tar` row of bench/workloads.sh for two cordon builds and bubblewrap, with the
merge step alone (from `--report`).

    python3 bench/tar_merge.py OLD NEW [RUNS]      # as root; RUNS defaults to 5

Each run untars about 14,000 files of crate sources (from ~/.cargo/registry/src, packed
once) on a freshly made, loop-mounted ext4 image (bench/workloads.sh says why), the
three cases interleaved run by run. Prints each run (wall seconds, CPU seconds of every
process as `perf stat -e task-clock` counts them, the merge step) and the medians. Needs
root, perf, bubblewrap and mkfs.ext4. Not a timed test: numbers depend on the machine
and its load (printed at the end).
"""
import glob, json, os, shutil, statistics, subprocess, sys, tarfile, tempfile, time

if len(sys.argv) < 3:
    sys.exit("usage: tar_merge.py OLD NEW [RUNS]")
builds = {"old": sys.argv[1], "new": sys.argv[2]}
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
os.makedirs("/srv", exist_ok=True)
work = tempfile.mkdtemp(prefix="cordon-tar-merge-", dir="/srv")
mnt, img, tar = work + "/mnt", work + "/fs.img", work + "/crates.tar"
os.makedirs(mnt)
with open(work + "/policy.toml", "w") as f:
    f.write('[permissions]\nallow = ["Bash(sh -c:*)"]\n')
n = 0
with tarfile.open(tar, "w") as t:
    for d in sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/*"))):
        if n >= 14000:
            break
        n += sum(len(fs) for _, _, fs in os.walk(d))
        t.add(d, arcname="crates/" + os.path.basename(d))


def sh(c):
    subprocess.run(c, shell=True, check=True)


def one(mode):
    subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
    if os.path.exists(img):
        os.unlink(img)
    sh(f"truncate -s 4G {img} && mkfs.ext4 -q -F {img} && mount -o loop {img} {mnt}"
       f" && mkdir {mnt}/ws {mnt}/state && sync")
    ws, report = mnt + "/ws", work + "/report.json"
    env = dict(os.environ, CORDON_STATE_DIR=mnt + "/state", LANG="C")
    cmd = f"tar xf {tar}"
    if mode == "bwrap":
        inner = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                 "--tmpfs", "/tmp", "--bind", ws, ws, "--unshare-all", "--die-with-parent",
                 "--chdir", ws, "sh", "-c", cmd]
    else:
        inner = [builds[mode], "exec", "--isolated", "--config", work + "/policy.toml",
                 "--workspace", ws, "--report", report, "--", "sh", "-c", cmd]
    t = time.perf_counter()
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "-o", work + "/cpu", "--",
                        "setsid", "-w"] + inner, cwd=ws, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{mode} exited {r.returncode}")
    cpu = next(float(l.split(",")[0]) / 1000 for l in open(work + "/cpu") if ",task-clock," in l)
    merge = json.load(open(report))["merged"]["micros"] / 1e6 if mode != "bwrap" else 0.0
    return wall, cpu, merge


try:
    res = {m: [] for m in ("old", "new", "bwrap")}
    for i in range(runs):
        for m in (["old", "new", "bwrap"] if i % 2 == 0 else ["new", "old", "bwrap"]):
            res[m].append(one(m))
            print(m, "wall %.3f cpu %.3f merge %.3f" % res[m][-1], flush=True)
    print(f"{n:,} files; medians of {runs}:")
    for m, v in res.items():
        print(m, "wall %.3f cpu %.3f merge %.3f"
              % tuple(statistics.median(x[k] for x in v) for k in range(3)))
    print("load average", " ".join(open("/proc/loadavg").read().split()[:3]))
finally:
    subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL)
    shutil.rmtree(work, ignore_errors=True)
