#!/usr/bin/env bash
# The wal_compression pick of advise() after a bulk load, on the steady workload that follows
# (the issue "the WAL pick as found is wrong"): pgbench -i loads its tables (the load's WAL
# kept in pg_wal), pg_stat_wal is reset, a checkpoint, then pgbench at a fixed rate for about
# 100 s; advise() is called four times 25 s apart, each reading back from the flush LSN to the
# LSN before the load (wal_since). Every call must read the newest WAL (up to the flush LSN
# of its start at least), pick the same setting, set the load apart when its read reaches back
# to it, and its saving must be that of the steady WAL it says it read (wal_whatif over the
# same ranges) within its 95% interval. Runs against the cluster of scripts/cluster.sh (PGHOST,
# PGPORT, PGUSER: a superuser). Ends with "N passed, N failed". About 2.5 minutes.
set -uo pipefail
HARNESS="wal pick after a load"
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
workload=
db=wal_pick_load
cleanup() {
  [[ -n $workload ]] && kill "$workload" 2>/dev/null && wait "$workload" 2>/dev/null
  psql_q -d postgres -c "ALTER SYSTEM RESET wal_keep_size" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null 2>&1
  psql_q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
psql_q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || die "could not create $db"
psql_q -d "$db" -c "CREATE EXTENSION compresslab" >/dev/null || die "could not create the extension"
# The load's WAL stays in pg_wal across the checkpoint below, as when no checkpoint has
# removed it yet.
psql_q -d postgres -c "ALTER SYSTEM SET wal_keep_size = '1GB'" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null ||
  die "could not set wal_keep_size"
since=$(psql_q -d "$db" -c "SELECT pg_catalog.pg_current_wal_insert_lsn()")
# The bulk load: about 200 MB of WAL (rows, then the indexes built).
pgbench -i -q -s 10 "$db" >"$tmp/init.log" 2>&1 || { cat "$tmp/init.log"; die "pgbench -i failed"; }
loaded=$(psql_q -d "$db" -c "SELECT pg_catalog.pg_current_wal_insert_lsn()")
echo "$HARNESS: the load wrote $(psql_q -d "$db" -c "SELECT pg_catalog.pg_size_pretty('$loaded'::pg_lsn - '$since'::pg_lsn)") of WAL ($since..$loaded)"
# pg_stat_wal reset after the load (pg_stat_database's counters still count it); a checkpoint:
# the steady run's first touch of each page writes its full-page image.
psql_q -d "$db" -c "SELECT pg_catalog.pg_stat_reset_shared('wal')" -c "CHECKPOINT" >/dev/null

# The wal_compression row of a call: whether the WAL read starts before the end of the load
# and ends at the flush LSN of the call's start or later, recommended, saving_percent, its 95%
# interval in percent (from bytes_recommended_low and _high), whether the basis sets a load
# apart, and the steady ranges the basis names (A..B, C..D), tab-separated.
call() {
  local flush
  flush=$(psql_q -d "$db" -c "SELECT pg_catalog.pg_current_wal_flush_lsn()") || return 1
  psql_q -F $'\t' -d "$db" -c "
    SELECT substring(basis FROM '^the cluster''s WAL \\(every database''s\\) ([0-9A-F/]+)\\.\\.')::pg_lsn < '$loaded',
           substring(basis FROM '^the cluster''s WAL \\(every database''s\\) [0-9A-F/]+\\.\\.([0-9A-F/]+),')::pg_lsn
             >= '$flush',
           recommended, round(saving_percent::numeric, 2),
           round((100 * (1 - bytes_recommended_high::float8 / bytes_now))::numeric, 2),
           round((100 * (1 - bytes_recommended_low::float8 / bytes_now))::numeric, 2),
           basis LIKE '%set apart as a one-off load%',
           substring(basis FROM 'the period is the steady WAL read''s own, ([0-9A-F/., ]+):')
      FROM compresslab.advise('6 s', '$since') WHERE area = 'wal_compression'"
}
# What the steady WAL of RANGES (A..B, C..D) saves under SETTING, as wal_whatif counts it
# over the same ranges, in percent of its bytes under off.
truth() {
  local ranges=$1 setting=$2 values="" range
  IFS=',' read -ra parts <<<"$ranges"
  for range in "${parts[@]}"; do
    range=${range// /}
    values+="${values:+, }('${range%%..*}'::pg_lsn, '${range##*..}'::pg_lsn)"
  done
  psql_q -d "$db" -c "
    SELECT round((100 * (1 - sum(w.wal_bytes) FILTER (WHERE w.wal_compression::text = '$setting')::float8
                         / sum(w.wal_bytes) FILTER (WHERE w.wal_compression::text = 'off')))::numeric, 2)
      FROM (VALUES $values) r(a, b), compresslab.wal_whatif(r.a, r.b) w"
}

# 200 transactions a second whatever the machine's load: a steady workload.
pgbench -n -T 105 -R 200 -c 2 "$db" >"$tmp/pgbench.log" 2>&1 &
workload=$!
picks=()
for n in 1 2 3 4; do
  sleep 20
  row=$(call) || die "advise() failed"
  IFS=$'\t' read -r reaches newest pick saving low high apart ranges <<<"$row"
  picks+=("$pick")
  if [[ -z $ranges ]]; then
    fail "call $n names the steady WAL it read" "$row"
    continue
  fi
  actual=$(truth "$ranges" "$pick") || die "wal_whatif failed"
  echo "$HARNESS: call $n: $pick saving $saving% (95% interval $low..$high%), load set apart: $apart, steady WAL $ranges saves $actual% under $pick"
  check "call $n reads the newest WAL, to the flush LSN of its start" test "$newest" = t
  if [[ $reaches == t ]]; then
    check "call $n, whose read reaches back to the load, sets it apart" test "$apart" = t
  else
    echo "$HARNESS: call $n's read stops after the load (its share of the budget ran out)"
  fi
  check "call $n's interval is not one point" awk -v l="$low" -v h="$high" 'BEGIN { exit !(h > l) }'
  check "call $n's saving is the steady WAL's ($saving% against $actual%) within its interval" \
    awk -v s="$saving" -v t="$actual" -v l="$low" -v h="$high" 'BEGIN { exit !(l <= t && t <= h && (s - t) ^ 2 < 1) }'
done
check "the four calls pick the same setting (${picks[*]})" test "$(printf '%s\n' "${picks[@]}" | sort -u | wc -l)" -eq 1
check "the pick compresses (${picks[0]})" test "${picks[0]}" != off
wait "$workload"
status=$?
workload=
check "the workload ran to its end" test "$status" -eq 0
finish
