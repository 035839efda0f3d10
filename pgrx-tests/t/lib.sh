# What the shell harnesses of pgrx-tests/t/ share (sourced, with HARNESS set to the name each
# of their lines starts with): scripts/cluster.sh, the psql of PG_CONFIG's installation
# (default Debian's PostgreSQL 15) first on the PATH, psql_q, the releases frozen in sql/, and
# the tally every harness ends with ("N passed, N failed").
# The harnesses run against the cluster of scripts/cluster.sh (PGHOST, PGPORT, PGUSER).
# shellcheck shell=bash

# pgrx-tests/: sql/, expected/, catalogue.sql, and results/ for what the harnesses keep.
PGRX_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/cluster.sh
source "$PGRX_TESTS/../scripts/cluster.sh"
export PATH="$PG_BINDIR:$PATH"
# Messages in English, whatever the cluster's locale: the harnesses match them.
export PGOPTIONS="-c client_min_messages=warning -c lc_messages=C"

# psql for a script's queries: no psqlrc, quiet, unaligned tuples only, stop at the first error.
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# The version Cargo.toml declares (the one pgrx generates the install script of).
current_version() { sed -n 's/^version = "\(.*\)"$/\1/p' "$COMPRESSLAB_ROOT/Cargo.toml" | head -1; }

# The earlier releases frozen in sql/compresslab--X.sql, oldest first, one a line.
frozen_releases() {
  find "$COMPRESSLAB_ROOT/sql" -maxdepth 1 -name 'compresslab--*.sql' ! -name 'compresslab--*--*' -printf '%f\n' |
    sed 's/^compresslab--\(.*\)\.sql$/\1/' | grep -vxF "$(current_version)" | sort -V
}

# The tally: pass WHAT [DETAIL] prints "HARNESS: WHAT ... ok [DETAIL]", fail WHAT [REASON]
# "HARNESS: WHAT ... FAILED[: REASON]", each counted; check WHAT COMMAND... runs COMMAND and
# passes or fails WHAT by its status; finish prints "N passed, N failed" and returns non-zero
# if any failed.
passed=0 failed=0
pass() {
  local what=$1
  shift
  echo "$HARNESS: $what ... ok${*:+ $*}"
  passed=$((passed + 1))
}
fail() {
  local what=$1
  shift
  echo "$HARNESS: $what ... FAILED${*:+: $*}"
  failed=$((failed + 1))
}
check() {
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
# check, and on failure the log that says why: check_log LOG WHAT COMMAND...
check_log() {
  local log=$1
  shift
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what" "its log, $log:"; cat "$log"; fi
}
# A system program wherever Debian puts it (a root shell's bare PATH may lack /usr/sbin).
system_program() {
  command -v "$1" || { [[ -x /usr/sbin/$1 ]] && echo "/usr/sbin/$1"; } || { [[ -x /sbin/$1 ]] && echo "/sbin/$1"; }
}
finish() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}

# A harness that cannot go on: "HARNESS: FAILED: REASON", exit 1.
die() {
  echo "$HARNESS: FAILED: $*"
  exit 1
}
