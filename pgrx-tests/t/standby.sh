#!/usr/bin/env bash
# wal_whatif on a standby, against the running cluster (PGHOST, PGPORT, PGUSER of
# scripts/cluster.sh) as its primary: a standby made with pg_basebackup -R is started on a port
# of its own; WAL with full-page images written on the primary and replayed on the standby; then
# wal_whatif and wal_whatif_by_relation over the same range on the standby must equal the
# primary's, row for row (every column but the measured CPU seconds). From PostgreSQL 16 the
# standby reads its pg_wal; on 15 that is the 55000 ERROR naming the way out, and wal_dir
# (here the standby's own pg_wal, read as a directory of segments) reads there instead.
# Then recompress's max_replay_lag against the standby: while its replay is paused
# (pg_wal_replay_pause()) and replay_lag above the limit, a CALL waits, with a NOTICE, and
# completes once replay resumes; without pg_read_all_stats the argument is refused (42501).
# advise(), estimate_toast_compression and bench_column run on the standby (no transaction ID).
# The standby is stopped and removed on exit. Ends with "N passed, N failed".
set -uo pipefail
HARNESS=standby
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
primary_host=$PGHOST primary_port=$PGPORT
primary() { psql_q -h "$primary_host" -p "$primary_port" -d standby_test "$@"; }
standby() { psql_q -h "$standby_dir" -p "$standby_port" -d standby_test "$@"; }

psql -X -q -v ON_ERROR_STOP=1 -h "$primary_host" -p "$primary_port" -d postgres \
  -c "DROP DATABASE IF EXISTS standby_test" -c "DROP ROLE IF EXISTS lag_watcher" -c "CREATE DATABASE standby_test" >/dev/null || exit 1
primary -c "CREATE EXTENSION compresslab" -c "CREATE TABLE t (id int PRIMARY KEY, body text)" \
  -c "INSERT INTO t SELECT g, repeat(md5(g::text), 6) FROM generate_series(1, 20000) g" || exit 1

standby_dir=$(postgres_owned_dir "standby-$PG_MAJOR")
standby_port=$(free_port)
stop_standby() {
  sudo -u postgres "$PG_BINDIR/pg_ctl" -D "$standby_dir/data" -m immediate -w stop >/dev/null 2>&1
  rm -rf "$standby_dir"
}
trap stop_standby EXIT
sudo -u postgres "$PG_BINDIR/pg_basebackup" -h "$primary_host" -p "$primary_port" -U postgres -D "$standby_dir/data" \
  -R -X stream -c fast >"$standby_dir/basebackup.log" 2>&1 || { cat "$standby_dir/basebackup.log"; exit 1; }
sudo -u postgres "$PG_BINDIR/pg_ctl" -D "$standby_dir/data" -l "$standby_dir/server.log" -w \
  -o "-p $standby_port -k $standby_dir -c listen_addresses='' -c hot_standby=on -c wal_receiver_status_interval=1" start >/dev/null ||
  { cat "$standby_dir/server.log"; exit 1; }
check "the standby is in recovery" test "$(standby -c 'SELECT pg_is_in_recovery()')" = t

# WAL with full-page images on the primary (an update of every page after a checkpoint).
start=$(primary -c "CHECKPOINT" -c "SELECT pg_current_wal_insert_lsn()")
primary -c "UPDATE t SET body = upper(body) WHERE id % 4 = 0" >/dev/null
end=$(primary -c "SELECT pg_current_wal_insert_lsn()")
for _ in $(seq 1 300); do
  [[ $(standby -c "SELECT pg_last_wal_replay_lsn() >= '$end'") == t ]] && break
  sleep 0.1
done
check "the standby replayed the range" test "$(standby -c "SELECT pg_last_wal_replay_lsn() >= '$end'")" = t

columns="wal_compression, start_lsn, end_lsn, records, fpi_images, sampled_images, compressed_images, stored_images, fpi_bytes, wal_bytes, saving_percent"
whatif="SELECT $columns FROM compresslab.wal_whatif('$start', '$end'"
by_relation="SELECT * FROM compresslab.wal_whatif_by_relation('$start', '$end'"
primary -c "$whatif) ORDER BY 1" >"$standby_dir/primary.txt"
primary -c "$by_relation) ORDER BY 1, 2, 3" >"$standby_dir/primary_relations.txt"
check "the range holds full-page images" \
  awk -F'|' '$5 > 100 { images++ } END { exit !(images == 4) }' "$standby_dir/primary.txt"
if ((PG_MAJOR >= 16)); then
  standby -c "$whatif) ORDER BY 1" >"$standby_dir/standby.txt" 2>&1
  check "wal_whatif on the standby equals the primary's" diff "$standby_dir/primary.txt" "$standby_dir/standby.txt"
  standby -c "$by_relation) ORDER BY 1, 2, 3" >"$standby_dir/standby_relations.txt" 2>&1
  check "wal_whatif_by_relation on the standby equals the primary's" \
    diff "$standby_dir/primary_relations.txt" "$standby_dir/standby_relations.txt"
  check "the default range ends at the replay LSN" \
    test "$(standby -c "SELECT bool_and(end_lsn::pg_lsn <= pg_last_wal_replay_lsn()) FROM compresslab.wal_whatif(sample => 0.1)")" = t
else
  standby -c "$whatif)" >"$standby_dir/standby.txt" 2>&1
  check "PostgreSQL 15: reading pg_wal on the standby is the 55000 ERROR" \
    grep -q "recovery is in progress: PostgreSQL 15 cannot read pg_wal" "$standby_dir/standby.txt"
fi
# Any version: the standby's pg_wal read as a directory of segments (wal_dir).
standby -c "$whatif, wal_dir => 'pg_wal') ORDER BY 1" >"$standby_dir/standby_dir.txt" 2>&1
check "wal_whatif(wal_dir) on the standby equals the primary's" diff "$standby_dir/primary.txt" "$standby_dir/standby_dir.txt"

# What only reads runs on a standby, which refuses to assign a transaction ID: the advice (its
# WAL row on 15 left out with a NOTICE), the TOAST estimate and the column lab.
check "advise(), estimate_toast_compression and bench_column run on the standby" \
  test "$(standby -c "SELECT (SELECT count(*) > 0 FROM compresslab.advise('2 s')) AND
                             (SELECT count(*) = 2 FROM compresslab.estimate_toast_compression('t', 'body', 500)) AND
                             (SELECT count(*) > 0 FROM compresslab.bench_column('t', 'body', ARRAY['lz4'], sample_values => 100))")" = t

# recompress on the standby: a dry run reads there; the CALL itself says it needs the primary
# (25006), not that a DELETE failed in a read-only transaction.
standby -c "CALL compresslab.recompress('t', 'body', 'lz4')" >"$standby_dir/recompress.txt" 2>&1
check_log "$standby_dir/recompress.txt" "recompress on the standby says to run it on the primary" \
  grep -q "recompress rewrites rows, which a standby cannot: run it on the primary" "$standby_dir/recompress.txt"
check "recompress's dry run runs on the standby" standby -c "CALL compresslab.recompress('t', 'body', 'lz4', dry_run => true)"

# recompress's max_replay_lag against this standby: with replay paused on the standby, its
# replay_lag (pg_stat_replication, the standby reporting every second) grows; a CALL with
# max_replay_lag => '1 s' rewrites nothing while it is above that, says so in a NOTICE, and
# goes on to the end once replay resumes. A role without pg_read_all_stats is refused (42501).
primary -c "CREATE TABLE lagged (id int PRIMARY KEY, body text COMPRESSION pglz)" \
  -c "INSERT INTO lagged SELECT g, repeat('lagged row ' || g || ' ', 300) FROM generate_series(1, 2000) g" \
  -c "ANALYZE lagged" -c "CREATE ROLE lag_watcher" -c "GRANT USAGE ON SCHEMA compresslab TO lag_watcher" \
  -c "ALTER TABLE lagged OWNER TO lag_watcher" >/dev/null || exit 1
before=$(primary -c "SELECT md5(string_agg(md5(body), ',' ORDER BY id)) FROM lagged")
primary -c "SET ROLE lag_watcher" \
  -c "CALL compresslab.recompress('lagged', 'body', 'lz4', max_replay_lag => '1 s')" >"$standby_dir/refused.txt" 2>&1
check "max_replay_lag without pg_read_all_stats is refused (42501), before any change" \
  test "$(grep -c "permission denied to watch the standbys' replay_lag" "$standby_dir/refused.txt"):$(primary -c \
    "SELECT count(*) FILTER (WHERE pg_column_compression(body) = 'pglz') || ':' || (SELECT attcompression::text FROM pg_attribute WHERE attrelid = 'lagged'::regclass AND attname = 'body') FROM lagged")" = "1:2000:p"
replayed() { [[ $(standby -c "SELECT pg_last_wal_replay_lsn() >= '$(primary -c "SELECT pg_current_wal_insert_lsn()")'") == t ]]; }
for _ in $(seq 1 300); do replayed && break; sleep 0.1; done
standby -c "SELECT pg_wal_replay_pause()" >/dev/null
primary -c "CREATE TABLE unreplayed AS SELECT 1 AS x" >/dev/null
lag=f
for _ in $(seq 1 100); do
  lag=$(primary -c "SELECT coalesce(bool_or(replay_lag > '1 s'), false) FROM pg_stat_replication")
  [[ $lag == t ]] && break
  sleep 0.1
done
check "with replay paused, the standby's replay_lag grows over 1 s" test "$lag" = t
PGOPTIONS="-c client_min_messages=notice -c lc_messages=C" primary \
  -c "CALL compresslab.recompress('lagged', 'body', 'lz4', batch_rows => 100, max_replay_lag => '1 s')" \
  >"$standby_dir/lagged.txt" 2>&1 &
call=$!
sleep 8
paused_state=$(primary -c "SELECT count(*) FILTER (WHERE pg_column_compression(body) = 'lz4') FROM lagged")
kill -0 "$call" 2>/dev/null && running=yes || running=no
check "the CALL waits while the standby lags: running after 8 s, no value rewritten, a NOTICE says why" \
  test "$running:$paused_state:$(grep -c 'paused while a standby replays more than 00:00:01 behind' "$standby_dir/lagged.txt")" = "yes:0:1"
resumed=$(date +%s.%N)
standby -c "SELECT pg_wal_replay_resume()" >/dev/null
wait "$call"
status=$?
done_in=$(awk -v a="$resumed" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
after=$(primary -c "SELECT md5(string_agg(md5(body), ',' ORDER BY id)) FROM lagged")
check "once replay resumes, the CALL completes (in $done_in s): every value lz4, unchanged" \
  test "$status:$(primary -c "SELECT count(*) FILTER (WHERE pg_column_compression(body) = 'lz4') FROM lagged"):$after" = "0:2000:$before"
[[ $status == 0 ]] || cat "$standby_dir/lagged.txt"

psql -X -q -h "$primary_host" -p "$primary_port" -d postgres -c "DROP DATABASE standby_test" -c "DROP ROLE lag_watcher" >/dev/null
finish
