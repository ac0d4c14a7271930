#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests: initdb in a directory, the server listening on
# a Unix socket in that directory only (no TCP), trust authentication for the `postgres`
# role (nobody else can reach the socket: the directory is 0700).
#
#   pg-test-cluster.sh run DIR     start a cluster in DIR (created if missing), print
#                                  `ready DIR` on stdout, then wait until stdin closes
#                                  (the test process holding the pipe ended, however it
#                                  ended), stop the server and remove DIR
#   pg-test-cluster.sh start DIR   start (initdb first when DIR holds no cluster)
#   pg-test-cluster.sh stop DIR [fast|immediate]
#
# Connect with `postgresql:///postgres?host=DIR&user=postgres`. PostgreSQL refuses to run
# as root: as root the cluster runs as the `postgres` system user, DIR owned by it; as
# anyone else, as that user. The server binaries come from /usr/lib/postgresql/*/bin
# (Debian's `postgresql` package; scripts/install-test-deps.sh installs it).
set -euo pipefail
cmd=${1:?usage: pg-test-cluster.sh run|start|stop DIR}
dir=${2:?usage: pg-test-cluster.sh run|start|stop DIR}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
  echo "PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2
  exit 3
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

start() {
  mkdir -p "$dir"
  chmod 0700 "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 \
      --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 4
    }
  fi
  # fsync off (CORDON_PG_TEST_FSYNC=on to measure real commits): a test cluster need not
  # survive a power cut, and an immediate stop (the fault tests) still leaves every
  # committed transaction in the kernel's page cache.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=${CORDON_PG_TEST_FSYNC:-off} -c max_connections=300 -c shared_buffers=16MB" \
    start >/dev/null || {
    cat "$dir/server.log" >&2
    exit 5
  }
}

stop() {
  as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 30 -m "${1:-fast}" stop >/dev/null 2>&1 || true
}

case "$cmd" in
  run)
    start
    echo "ready $dir"
    # Until the holder's end of the pipe closes.
    cat >/dev/null || true
    stop immediate
    rm -rf "$dir"
    ;;
  start) start ;;
  stop) stop "${3:-fast}" ;;
  *)
    echo "usage: pg-test-cluster.sh run|start|stop DIR" >&2
    exit 2
    ;;
esac
