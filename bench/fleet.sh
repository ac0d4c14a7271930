#!/bin/sh
# A fleet of `cordon serve` services sharing one store (issue 38): decisions per second
# and p50/p99 latency with 1 and 8 services against one PostgreSQL database, next to the
# same services sharing one SQLite file, for
#
#   allow  a Read inside the workspace: the policy alone, no store write beyond the
#          audit record (each service's own log);
#   lease  an ask answered by a lease: a Bash call the policy asks about, in a session a
#          human approved it for (`approve` with `for_session`), so every call looks the
#          lease up in the shared store.
#
# Each service has its own state directory (its audit log, its local store) and socket,
# one client connection each, all clients at once. The cases are interleaved round by
# round and each row is the median over ROUNDS rounds. PostgreSQL is a throwaway cluster
# (Debian's postgresql, Unix socket, fsync off like the tests: the numbers are cordon's
# cost, not the disk's); SQLite keeps its usual durability.
#
#   sh bench/fleet.sh                       # CALLS=2000 per service per case, ROUNDS=3
#   CALLS=5000 ROUNDS=5 sh bench/fleet.sh
#   CORDON=target/release/cordon sh bench/fleet.sh   # a binary already built
#
# Needs python3 and PostgreSQL's server binaries (/usr/lib/postgresql/N/bin); run as
# root, the server runs as the postgres user. Not a timed test: numbers depend on the
# machine and its load; say which when quoting.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${CORDON:-$("$ROOT/scripts/build-release.sh")}
WORK=$(mktemp -d /tmp/cordon-bench-fleet-XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
cp "$CORDON" "$WORK/cordon"
python3 - "$WORK" "${CALLS:-2000}" "${ROUNDS:-3}" <<'PY'
import glob, json, os, pwd, socket, statistics, subprocess, sys, threading, time

work, calls, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cordon = os.path.join(work, "cordon")
home = os.path.join(work, "home")
ws = os.path.join(home, "ws")
os.makedirs(os.path.join(ws, "src"))
os.makedirs(os.path.join(home, ".config/cordon"))
run_dir = os.path.join(work, "run")
os.makedirs(run_dir, mode=0o700)
open(os.path.join(ws, "src/main.rs"), "w").write("fn main() {}\n")

# The cluster, as the postgres user when run as root.
bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
if not bins:
    sys.exit("PostgreSQL's server is not installed (apt-get install postgresql)")
pgbin = os.path.dirname(bins[-1])
pgdir = os.path.join(work, "pg")
os.makedirs(pgdir)
demote = None
if os.getuid() == 0:
    pw = pwd.getpwnam("postgres")
    os.chown(pgdir, pw.pw_uid, pw.pw_gid)
    def demote():
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
def pg(*args):
    subprocess.run([os.path.join(pgbin, args[0]), *args[1:]], check=True, cwd=pgdir,
                   preexec_fn=demote, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
pg("initdb", "-A", "trust", "-U", "cordon", "--no-sync", "-D", pgdir + "/data")
pg("pg_ctl", "-w", "-D", pgdir + "/data", "-l", pgdir + "/log", "-o",
   f"-k {pgdir} -c listen_addresses='' -c fsync=off -c max_connections=200", "start")
try:
    pg("createdb", "-h", pgdir, "-U", "cordon", "cordon")
    url = f"postgresql:///cordon?host={pgdir}&user=cordon"

    policy = '[permissions]\nask = ["Bash(make deploy:*)"]\n'
    def config(backend):
        text = policy
        if backend == "pg":
            text += f'\n[store]\nurl = "{url}"\n'
        open(os.path.join(home, ".config/cordon/policy.toml"), "w").write(text)

    def rpc(sock, method, params):
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("the service closed the connection")
            buf += chunk
        return json.loads(buf)

    def start(backend, n, tag):
        config(backend)
        procs, socks = [], []
        for i in range(n):
            state = os.path.join(work, f"state-{tag}-{i}")
            path = os.path.join(run_dir, f"{tag}-{i}.sock")
            env = {"HOME": home, "PATH": "/usr/bin:/bin", "CORDON_STATE_DIR": state,
                   "CORDON_MACHINE": f"m{i}"}
            args = [cordon, "serve", "--workspace", ws, "--socket", path]
            if backend == "sqlite":
                # One SQLite file shared by the services (one machine's fleet).
                args += ["--store", os.path.join(work, f"shared-{tag}.sqlite3")]
            procs.append(subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                          stderr=open(os.path.join(work, f"serve-{tag}-{i}.log"), "w")))
            socks.append(path)
        conns = []
        for path in socks:
            deadline = time.time() + 20
            while True:
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(path)
                    break
                except OSError:
                    if time.time() > deadline:
                        sys.exit("the service did not start: " + open(os.path.join(work, f"serve-{tag}-{len(conns)}.log")).read())
                    time.sleep(0.05)
            conns.append(s)
        return procs, conns

    def stop(procs, conns):
        for c in conns:
            c.close()
        for p in procs:
            p.terminate()
            p.wait()

    read = {"tool": "Read", "input": {"file_path": os.path.join(ws, "src/main.rs")}, "on_ask": "deny"}
    def leased(session):
        return {"tool": "Bash", "input": {"command": "make deploy"}, "session": session, "on_ask": "deny"}

    def prepare_lease(conn, session):
        asked = rpc(conn, "check", dict(leased(session), on_ask="pending", operation_id="lease-" + session))
        pid = asked["result"]["pending"]
        rpc(conn, "approve", {"id": pid, "for_session": True})
        got = rpc(conn, "check", leased(session))["result"]["decision"]
        assert got == "allow", got

    def run(conns, req_of):
        lat = [[] for _ in conns]
        go = threading.Barrier(len(conns) + 1)
        def client(i):
            req = req_of(i)
            go.wait()
            for _ in range(calls):
                t = time.perf_counter()
                r = rpc(conns[i], "check", req)
                lat[i].append(time.perf_counter() - t)
                assert r["result"]["decision"] == "allow", r
        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(conns))]
        for t in threads:
            t.start()
        go.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        every = sorted(x for l in lat for x in l)
        return (len(every) / wall, every[len(every) // 2] * 1e3, every[int(len(every) * 0.99)] * 1e3)

    results = {}
    for r in range(rounds):
        for n in (1, 8):
            for backend in ("sqlite", "pg"):
                tag = f"{backend}-{n}-{r}"
                procs, conns = start(backend, n, tag)
                try:
                    for i, c in enumerate(conns):
                        prepare_lease(c, f"s-{tag}-{i}")
                    for case, req_of in (("allow", lambda i: read),
                                         ("lease", lambda i, tag=tag: leased(f"s-{tag}-{i}"))):
                        results.setdefault((backend, n, case), []).append(run(conns, req_of))
                finally:
                    stop(procs, conns)
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} CPUs; "
          f"{calls} calls per service per case, median of {rounds} interleaved rounds")
    print(f"{'store':8} {'services':>8} {'case':6} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
    for n in (1, 8):
        for case in ("allow", "lease"):
            for backend in ("sqlite", "pg"):
                rows = results[(backend, n, case)]
                rate = statistics.median(x[0] for x in rows)
                p50 = statistics.median(x[1] for x in rows)
                p99 = statistics.median(x[2] for x in rows)
                name = "SQLite" if backend == "sqlite" else "Postgres"
                print(f"{name:8} {n:>8} {case:6} {rate:>9.0f} {p50:>8.3f} {p99:>8.3f}")
finally:
    pg("pg_ctl", "-w", "-m", "immediate", "-D", pgdir + "/data", "stop")
PY
