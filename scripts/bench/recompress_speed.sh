#!/usr/bin/env bash
# How fast CALL compresslab.recompress rewrites a column, against what DBAs do without it: one
# plain `UPDATE t SET body = body || ''` after `SET COMPRESSION lz4` (one transaction). Three
# identical tables of ROWS rows (default 20,000) of ~4 kB pglz-compressed text (inline, each
# row distinct); a CHECKPOINT before each run so that each pays its full-page images alike.
#   plain UPDATE          the whole column in one statement
#   recompress            CALL compresslab.recompress(t, 'body', 'lz4'), batches of 1,000 rows
#   recompress, throttled the same with max_wal_rate at a quarter of the WAL rate recompress
#                         reached at full speed
# Prints a Markdown table: rows, seconds, rows a second, WAL bytes (pg_current_wal_lsn()
# differences) and WAL bytes a row, and recompress's rows a second as a share of the plain
# UPDATE's. Against the cluster of scripts/cluster.sh (PGHOST, PGPORT, PGUSER), as a
# superuser, in a database of its own (recompress_speed). Usage: scripts/bench/recompress_speed.sh [ROWS]
set -euo pipefail
rows=${1:-20000}
export PGOPTIONS="-c client_min_messages=warning"
export PGDATABASE=recompress_speed
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }

q -d postgres -c 'DROP DATABASE IF EXISTS recompress_speed' -c 'CREATE DATABASE recompress_speed'
q -c 'CREATE EXTENSION compresslab'
for t in plain_update recompress recompress_throttled; do
  q -c "CREATE TABLE $t (id int PRIMARY KEY, hits int, body text COMPRESSION pglz)" \
    -c "INSERT INTO $t SELECT g, 0, repeat('row ' || g || ' of a table whose values move to lz4; ', 80) FROM generate_series(1, $rows) g" \
    -c "VACUUM ANALYZE $t"
done

# run SQL: prints the seconds and the WAL bytes of SQL.
run() {
  q -c 'CHECKPOINT'
  local lsn0 lsn1 t0 t1
  lsn0=$(q -c 'SELECT pg_current_wal_lsn()')
  t0=$(now)
  q -c "$1"
  t1=$(now)
  lsn1=$(q -c 'SELECT pg_current_wal_lsn()')
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(q -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")"
}
# row LABEL "SECONDS WAL": a line of the table.
row() {
  awk -v l="$1" -v n="$rows" '{ printf "| %s | %.2f | %.0f | %d | %.0f |\n", l, $1, n / $1, $2, $2 / n }' <<<"$2"
}

plain=$(run "ALTER TABLE plain_update ALTER COLUMN body SET COMPRESSION lz4; UPDATE plain_update SET body = body || ''")
call=$(run "CALL compresslab.recompress('recompress', 'body', 'lz4')")
limit=$(awk '{ printf "%d", $2 / $1 / 4 / 1024 }' <<<"$call")
throttled=$(run "CALL compresslab.recompress('recompress_throttled', 'body', 'lz4', max_wal_rate => '$limit kB/s')")

echo "| run ($rows rows of ~4 kB text, pglz to lz4) | seconds | rows/s | WAL bytes | WAL bytes/row |"
echo "|---|---:|---:|---:|---:|"
row "plain UPDATE t SET body = body || ''" "$plain"
row "CALL compresslab.recompress(t, 'body', 'lz4')" "$call"
row "the same, max_wal_rate => '$limit kB/s'" "$throttled"
echo
awk -v p="${plain%% *}" '{ printf "recompress at full speed: %.0f%% of the plain UPDATE'"'"'s rows/s\n", 100 * p / $1 }' <<<"$call"
awk -v l="$limit" '{ printf "throttled: %.0f bytes/s of WAL, %.1f%% of max_wal_rate\n", $2 / $1, 100 * $2 / $1 / (l * 1024) }' <<<"$throttled"
