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
# Connect with `postgresql:///postgres?host=DIR&user=postgres`.
#
# With CORDON_PG_TEST_PORT=N when the cluster is created, it also listens on 127.0.0.1:N
# (the socket is then DIR/.s.PGSQL.N), trusting `postgres` there. With CORDON_PG_TEST_TLS=
# TLSDIR as well (TLSDIR/server.crt and TLSDIR/server.key, PEM, made by the test), TCP
# takes TLS only: `ssl = on` with that certificate, `hostssl` lines for 127.0.0.1 (trust
# for `postgres`, scram-sha-256 for any other role, or a client certificate when
# TLSDIR/client-ca.crt exists) and every plaintext TCP login rejected. The settings are written into the cluster's own files, so a later `start`
# keeps them.
#
# PostgreSQL refuses to run
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

# postgresql.conf and pg_hba.conf of a new cluster (see the header).
configure() {
  local data=$dir/data
  if [ -z "${CORDON_PG_TEST_PORT:-}" ]; then
    echo "listen_addresses = ''" >>"$data/postgresql.conf"
    return
  fi
  {
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $CORDON_PG_TEST_PORT"
  } >>"$data/postgresql.conf"
  if [ -z "${CORDON_PG_TEST_TLS:-}" ]; then
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$data/pg_hba.conf"
    return
  fi
  cp "$CORDON_PG_TEST_TLS/server.crt" "$CORDON_PG_TEST_TLS/server.key" "$data/"
  chmod 0600 "$data/server.key"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$data/server.crt" "$data/server.key"
  fi
  {
    echo "ssl = on"
    echo "ssl_cert_file = 'server.crt'"
    echo "ssl_key_file = 'server.key'"
  } >>"$data/postgresql.conf"
  # With TLSDIR/client-ca.crt, other roles log in by client certificate (its CN is the
  # role) instead of a password.
  local others='hostssl all all 127.0.0.1/32 scram-sha-256'
  if [ -f "$CORDON_PG_TEST_TLS/client-ca.crt" ]; then
    cp "$CORDON_PG_TEST_TLS/client-ca.crt" "$data/"
    echo "ssl_ca_file = 'client-ca.crt'" >>"$data/postgresql.conf"
    others='hostssl all all 127.0.0.1/32 cert'
  fi
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$data"/*.crt
  fi
  printf '%s\n' 'local all all trust' \
    'hostssl all postgres 127.0.0.1/32 trust' \
    "$others" \
    'hostnossl all all 0.0.0.0/0 reject' >"$data/pg_hba.conf"
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
    configure
  fi
  # fsync off (CORDON_PG_TEST_FSYNC=on to measure real commits): a test cluster need not
  # survive a power cut, and an immediate stop (the fault tests) still leaves every
  # committed transaction in the kernel's page cache.
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
    -o "-c unix_socket_directories='$dir' -c fsync=${CORDON_PG_TEST_FSYNC:-off} -c max_connections=300 -c shared_buffers=16MB" \
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
