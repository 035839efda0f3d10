# Throwaway PostgreSQL clusters, run as the postgres user (initdb refuses root).
# Source this file, then: cluster_start NAME [INITDB_OPTION...]  — initdb (fresh) + start on a
# free port, Unix socket inside the cluster folder; exports PGHOST, PGPORT, PGUSER, PGDATABASE
# for psql. The cluster is stopped and removed on exit of the calling shell, failure included.
# PG_CONFIG (default /usr/bin/pg_config, Debian's PostgreSQL 15) selects the installation, as
# printed by scripts/setup.sh --pg N; PG_MAJOR is its major version.
# shellcheck shell=bash

COMPRESSLAB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
PG_BINDIR=$("$PG_CONFIG" --bindir)
PG_MAJOR=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
# The Rust toolchain of every cargo call made after this (scripts/toolchain.sh); a shell without
# rustup (a DBA's) builds nothing.
source "$COMPRESSLAB_ROOT/scripts/toolchain.sh"
if command -v rustup >/dev/null; then
  select_toolchain || return 1
fi

# A folder under target/ that the postgres user can reach; /tmp when the checkout is not
# traversable by other users or the socket path would be too long for a Unix socket.
postgres_owned_dir() {
  local name=$1 dir
  dir="$COMPRESSLAB_ROOT/target/$name"
  mkdir -p "$COMPRESSLAB_ROOT/target"
  if ! sudo -u postgres test -x "$COMPRESSLAB_ROOT/target" || ((${#dir} > 80)); then
    dir="/tmp/compresslab-$name-$(id -u)"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  chown postgres:postgres "$dir"
  chmod 700 "$dir"
  echo "$dir"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cluster_stop() {
  if [[ -n "${CLUSTER_DATA:-}" && -f "$CLUSTER_DATA/postmaster.pid" ]]; then
    sudo -u postgres "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DATA" -m fast -w stop >/dev/null 2>&1 ||
      sudo -u postgres "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DATA" -m immediate -w stop >/dev/null 2>&1 || true
    echo "cluster: stopped"
  fi
}

# initdb's options for every throwaway cluster (pgrx-tests/t/pg_upgrade.sh makes its two so too).
CLUSTER_INITDB_OPTIONS=(-U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8)

cluster_start() {
  local name=${1:-cluster}
  shift || true
  CLUSTER_DIR=$(postgres_owned_dir "$name")
  CLUSTER_DATA="$CLUSTER_DIR/data"
  trap cluster_stop EXIT
  # Extra initdb options, e.g. --no-data-checksums on 18 (whose initdb turns checksums on).
  sudo -u postgres "$PG_BINDIR/initdb" -D "$CLUSTER_DATA" "${CLUSTER_INITDB_OPTIONS[@]}" "$@" >"$CLUSTER_DIR/initdb.log" 2>&1 ||
    { cat "$CLUSTER_DIR/initdb.log"; return 1; }
  PGPORT=$(free_port)
  # wal_level=logical lets tests decode WAL through a replication slot (the advisor's spill row).
  # CLUSTER_MEMORY_LIMIT_KB, when set, caps every server process's address space (ulimit -v),
  # as a memory-limited host or vm.overcommit_memory=2 would.
  # RUST_BACKTRACE=1, as a server's environment may have it: no backtrace may reach a client.
  sudo -u postgres bash -c "${CLUSTER_MEMORY_LIMIT_KB:+ulimit -v $CLUSTER_MEMORY_LIMIT_KB; }export RUST_BACKTRACE=1; exec \"\$@\"" _ \
    "$PG_BINDIR/pg_ctl" -D "$CLUSTER_DATA" -l "$CLUSTER_DIR/server.log" -w \
    -o "-p $PGPORT -k $CLUSTER_DIR -c listen_addresses='' -c fsync=off -c wal_level=logical" start >/dev/null ||
    { cat "$CLUSTER_DIR/server.log"; return 1; }
  export PGHOST=$CLUSTER_DIR PGPORT PGUSER=postgres PGDATABASE=postgres
  echo "cluster: running in $CLUSTER_DATA on port $PGPORT"
}

# The install scripts of earlier releases, frozen in sql/compresslab--X.sql (X a version, not
# the current one, whose script pgrx generates), copied into an extension directory, so that
# CREATE EXTENSION compresslab VERSION 'X' works there (the upgrade test starts from it).
# cargo pgrx install copies only the update scripts sql/compresslab--X--Y.sql.
install_frozen_sql() {
  local extdir=$1 current f
  current=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$COMPRESSLAB_ROOT/Cargo.toml" | head -1)
  for f in "$COMPRESSLAB_ROOT"/sql/compresslab--*.sql; do
    [[ $(basename "$f") == compresslab--*--* || $(basename "$f") == "compresslab--$current.sql" ]] && continue
    install -m 644 "$f" "$extdir/" || return 1
  done
  # their secondary control files (the schema they install into)
  install -m 644 "$COMPRESSLAB_ROOT"/sql/compresslab--*.control "$extdir/" || return 1
}

# The shared library built with the release profile's fat LTO; prints its path. Cargo runs LTO
# only when every crate type of a target allows it, and pgrx needs the library as a Rust library
# too (crate types cdylib and lib, for its schema generator), so `cargo pgrx install` and `cargo
# pgrx package` build it without LTO. Built as a cdylib alone it gets LTO, which the LZ4 goal
# needs (BENCHMARKS.md, "What made the difference").
# The exported functions are the same; pgrx's generated SQL does not depend on the build.
build_lto_library() {
  (cd "$COMPRESSLAB_ROOT" && cargo rustc --lib --release --features "pg$PG_MAJOR" --no-default-features --crate-type cdylib \
    >>"$COMPRESSLAB_ROOT/target/install.log" 2>&1) || { tail -50 "$COMPRESSLAB_ROOT/target/install.log" >&2; return 1; }
  echo "$COMPRESSLAB_ROOT/target/release/libcompresslab.so"
}

# Build the extension in release mode and install it into PG_CONFIG's directories (the
# library rebuilt with LTO, see build_lto_library, unless --no-lto: the same functions, built
# once instead of twice, for the tests on other versions), with the frozen install scripts of
# earlier releases.
install_extension() {
  local lib
  mkdir -p "$COMPRESSLAB_ROOT/target"
  (cd "$COMPRESSLAB_ROOT" && cargo pgrx install --release --pg-config "$PG_CONFIG" >"$COMPRESSLAB_ROOT/target/install.log" 2>&1) ||
    { tail -50 "$COMPRESSLAB_ROOT/target/install.log"; return 1; }
  if [[ ${1:-} != --no-lto ]]; then
    lib=$(build_lto_library) || return 1
    install -m 755 "$lib" "$("$PG_CONFIG" --pkglibdir)/compresslab.so" || return 1
  fi
  install_frozen_sql "$("$PG_CONFIG" --sharedir)/extension" || return 1
  echo "install: compresslab (release) installed into $("$PG_CONFIG" --pkglibdir)"
}

# No backend may have crashed: a crash restarts every session, which a test's own output
# might not show.
no_crash_in_log() {
  if grep -E "terminated by signal|was terminated|PANIC" "$CLUSTER_DIR/server.log"; then
    echo "e2e: the server log shows a crashed backend"
    return 1
  fi
}
