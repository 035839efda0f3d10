#!/usr/bin/env bash
# The wal_compression pick of advise() holds on a steady workload: pgbench at a fixed rate
# updates rows of compressible text for about 45 s, with a checkpoint and a segment switch
# every 10 s, so that pg_wal holds a checkpoint's burst of full-page images at one call and
# few at the other; advise() is called just after a checkpoint and again 20 s later. Both
# calls must pick the same setting, each with a 95% interval around bytes_recommended. Runs
# against the cluster of scripts/cluster.sh (PGHOST, PGPORT, PGUSER: a superuser, which
# reads pg_wal and resets pg_stat_wal). Ends with "N passed, N failed".
set -uo pipefail
HARNESS="wal pick"
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
workload=
cleanup() {
  [[ -n $workload ]] && kill "$workload" 2>/dev/null && wait "$workload" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
db=wal_pick
psql_q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || die "could not create $db"
psql_q -d "$db" >/dev/null <<'SQL' || die "could not set up $db"
CREATE EXTENSION compresslab;
-- rows of repeated phrases and a number: a page image of them compresses to a fraction under
-- both lz4 and zstd, so the pick is not on the rule's edge between them
CREATE TABLE events (id int PRIMARY KEY, n int NOT NULL DEFAULT 0, body text)
  WITH (fillfactor = 80);
INSERT INTO events
SELECT i, 0, repeat('status=shipped;carrier=post;', 6) || i FROM generate_series(1, 20000) i;
VACUUM ANALYZE events;
SQL
cat >"$tmp/update.sql" <<'SQL'
\set id random(1, 20000)
UPDATE events SET n = n + 1 WHERE id = :id;
SQL
# A checkpoint and a switch: the next updates write a full-page image of each page they touch.
cycle() { psql_q -d "$db" -c "CHECKPOINT" -c "SELECT pg_catalog.pg_switch_wal()" >/dev/null; }
# The wal_compression row: recommended, low and high of bytes_recommended, confidence, note.
pick() {
  psql_q -F ' ' -d "$db" -c "SELECT recommended, bytes_recommended_low IS NOT NULL AND bytes_recommended_high IS NOT NULL
                                    AND bytes_recommended BETWEEN bytes_recommended_low AND bytes_recommended_high,
                                    confidence, saving_percent
                               FROM compresslab.advise('3 s') WHERE area = 'wal_compression'"
}

psql_q -d "$db" -c "SELECT pg_catalog.pg_stat_reset_shared('wal')" >/dev/null
# 200 updates a second whatever the machine's load: a steady workload.
pgbench -n -T 45 -R 200 -c 2 -f "$tmp/update.sql" "$db" >"$tmp/pgbench.log" 2>&1 &
workload=$!
cycle
sleep 10
cycle
sleep 2
first=$(pick) || die "advise() failed"
sleep 8
cycle
sleep 10
cycle
sleep 2
second=$(pick) || die "advise() failed"
echo "$HARNESS: first call:  $first"
echo "$HARNESS: second call: $second"
read -r first_pick first_interval _ <<<"$first"
read -r second_pick second_interval _ <<<"$second"
check "the first call picks a setting" test -n "$first_pick"
check "the same pick 20 s later, after another checkpoint ($first_pick, $second_pick)" test "$first_pick" = "$second_pick"
check "each call's bytes_recommended lies inside its 95% interval" test "$first_interval $second_interval" = "t t"
wait "$workload"
status=$?
workload=
check "the workload ran to its end" test "$status" -eq 0
psql_q -d postgres -c "DROP DATABASE $db" >/dev/null
finish
