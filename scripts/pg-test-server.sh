#!/usr/bin/env bash
# A throwaway PostgreSQL server for the journal tests (the PostgreSQL store, issue 14).
#   scripts/pg-test-server.sh start   # installs Debian's postgresql if missing, starts a private
#                                     # cluster on 127.0.0.1 (or reuses the running one),
#                                     # prints SLUICE_PG_URL=...
#   scripts/pg-test-server.sh stop    # stops it and deletes its data
#   scripts/pg-test-server.sh crash   # an outage: `pg_ctl stop -m immediate` (no shutdown
#                                     # checkpoint; connections are cut), the data is kept
#   scripts/pg-test-server.sh up      # starts the kept cluster again (crash recovery runs)
#   scripts/pg-test-server.sh status  # exit 0 when it is running
# The cluster lives in $SLUICE_PG_DIR (default: a folder under the system temp dir), owned by the
# postgres user (initdb refuses root), listening on 127.0.0.1:$SLUICE_PG_PORT (default 54329).
# The fault suite (test/faults) runs its own cluster (another SLUICE_PG_DIR and SLUICE_PG_PORT),
# so crashing it never disturbs the server the other suites use.
set -euo pipefail
DIR="${SLUICE_PG_DIR:-${TMPDIR:-/tmp}/sluice-pg}"
PORT="${SLUICE_PG_PORT:-54329}"

bindir() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
  [ -n "$d" ] && echo "$d"
}

as_pg() {
  if [ "$(id -u)" = "0" ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

case "${1:-}" in
  start)
    if [ -z "$(bindir)" ]; then
      echo "installing postgresql (Debian)…" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
    fi
    BIN=$(bindir)
    # Already running (another test run started it): reuse it rather than wiping its data.
    if "$0" status >/dev/null 2>&1; then
      echo "SLUICE_PG_URL=postgres://sluice@127.0.0.1:$PORT/postgres"
      exit 0
    fi
    "$0" stop >/dev/null 2>&1 || true
    mkdir -p "$DIR" && chmod 700 "$DIR"
    [ "$(id -u)" = "0" ] && chown postgres "$DIR"
    as_pg "$BIN/initdb -D '$DIR/data' -U sluice --auth=trust -E UTF8 >/dev/null"
    as_pg "$BIN/pg_ctl -D '$DIR/data' -l '$DIR/log' -w -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$DIR'\" start >/dev/null"
    echo "SLUICE_PG_URL=postgres://sluice@127.0.0.1:$PORT/postgres"
    ;;
  crash)
    BIN=$(bindir)
    as_pg "$BIN/pg_ctl -D '$DIR/data' -m immediate -w stop >/dev/null"
    ;;
  up)
    BIN=$(bindir)
    as_pg "$BIN/pg_ctl -D '$DIR/data' -l '$DIR/log' -w -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$DIR'\" start >/dev/null"
    ;;
  status)
    BIN=$(bindir)
    [ -n "$BIN" ] && [ -d "$DIR/data" ] && as_pg "$BIN/pg_ctl -D '$DIR/data' status >/dev/null"
    ;;
  stop)
    BIN=$(bindir)
    if [ -n "$BIN" ] && [ -d "$DIR/data" ]; then as_pg "$BIN/pg_ctl -D '$DIR/data' -m fast -w stop >/dev/null" || true; fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|stop|crash|up|status" >&2
    exit 2
    ;;
esac
