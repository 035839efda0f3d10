#!/usr/bin/env bash
# CALL compresslab.recompress under what a live server does to it, end to end (the values and
# errors are in pgrx-tests/sql/recompress.sql):
#   concurrent  a writer updates (the column, and another column: that keeps the old value),
#               inserts and deletes rows, each change committed with its own row in a log table,
#               while recompress runs: every row ends as the log says (no change lost or
#               reverted, no row lost or duplicated), every other row as it was; a second CALL
#               after the writer leaves no value in pglz;
#   sigkill     the backend running it killed with SIGKILL mid-run (the server restarts): the
#               progress kept says where it stopped, a second CALL goes on from there and
#               completes, values unchanged;
#   cancel      pg_cancel_backend mid-batch and mid-pause: the CALL ends within a second
#               (LIMIT_SECONDS), with SQLSTATE 57014, and the batch in flight leaves nothing;
#   wal_rate    max_wal_rate => '200 kB/s' held within 10% over a run of at least 20 s (WAL from
#               pg_current_wal_lsn()).
#   waits       a session holds, uncommitted, a new value of row 1, an update of another column
#               of row 2 (which keeps the pglz value) and the deletion of row 3 while a CALL
#               starts: its batch waits, then decides on and copies each row's newest version
#               (row 1: the session's value, already lz4, left alone; row 2: rewritten; row 3:
#               gone), every other row unchanged;
#   wal_estimate  the dry run's WAL against the LSN distance of the CALL that follows, on the
#               copyright files of /usr/share/doc (pglz, to lz4): after a CHECKPOINT (full-page
#               images of the heap and old TOAST pages: the figure within 10%, the distance in
#               the interval; advise()'s CALL too), with none since the last rewrite (no image
#               due: in the interval), and with a CHECKPOINT between the dry run and the CALL
#               (within the high end);
#   quiet       with no other session writing, one pass: no transaction but the batches took a
#               transaction ID during it (tried up to 3 times: autovacuum's ANALYZE takes one);
#               with the writer of `concurrent` running throughout, a second pass.
# Runs against the cluster of scripts/cluster.sh (PGHOST, PGPORT, PGUSER), as a superuser, in a
# database of its own (e2e_recompress); the writer is a psql on the same socket, a bounded loop.
# Prints a line per case and ends with "N passed, N failed"; exits non-zero if any case failed.
# Optional arguments: the cases to run.
set -uo pipefail
pg_config=${PG_CONFIG:-/usr/bin/pg_config}
bindir=$("$pg_config" --bindir)
export PGOPTIONS="-c client_min_messages=warning -c lc_messages=C"
export PGDATABASE=e2e_recompress
LIMIT_SECONDS=${LIMIT_SECONDS:-1.0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

q() { "$bindir/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
now() { date +%s.%N; }
# Waits until the server accepts connections again (after a crash restart), 60 s at most.
wait_ready() {
  for _ in $(seq 600); do
    q -d postgres -c 'SELECT 1' >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}
# Waits until `recompress` has committed a batch on table $1 (its progress shows blocks done).
wait_progress() {
  for _ in $(seq 300); do
    [[ $(q -c "SELECT count(*) FROM compresslab.recompress_state WHERE relid = '$1'::regclass AND next_block > 0") == 1 ]] && return 0
    sleep 0.05
  done
  return 1
}

setup() {
  q -d postgres -c 'DROP DATABASE IF EXISTS e2e_recompress' -c 'CREATE DATABASE e2e_recompress' || return 1
  q <<'SQL'
CREATE EXTENSION compresslab;
-- a row's value: compressible text, ~6 kB, distinct per (id, version)
CREATE FUNCTION doc(id int, version int) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT repeat('document ' || id || ' version ' || version || '; ', 250) $$;
CREATE FUNCTION fill(t text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, hits int NOT NULL DEFAULT 0, body text COMPRESSION pglz)', t);
  EXECUTE format('INSERT INTO %I (id, body) SELECT g, doc(g, 0) FROM generate_series(1, %s) g', t, n);
  EXECUTE format('ANALYZE %I', t);
END $$;
SQL
}

# The writer: n changes, each committed with its row in writes (op, id, the body's md5 after).
writer_sql() {
  cat <<'SQL'
CREATE TABLE writes (seq bigserial, op text, id int, body_md5 text);
CREATE PROCEDURE write_loop(n int) LANGUAGE plpgsql AS $$
DECLARE
  target int;
  v text;
BEGIN
  FOR i IN 1 .. n LOOP
    target := 1 + (i * 7919) % 3000;
    CASE i % 4
      WHEN 0 THEN   -- a new value
        v := doc(target, i);
        UPDATE live SET body = v WHERE id = target;
        IF FOUND THEN INSERT INTO writes (op, id, body_md5) VALUES ('update', target, md5(v)); END IF;
      WHEN 1 THEN   -- another column: the row moves, keeping its stored value
        UPDATE live SET hits = hits + 1 WHERE id = target RETURNING md5(body) INTO v;
        IF FOUND THEN INSERT INTO writes (op, id, body_md5) VALUES ('touch', target, v); END IF;
      WHEN 2 THEN
        DELETE FROM live WHERE id = target;
        IF FOUND THEN INSERT INTO writes (op, id, body_md5) VALUES ('delete', target, NULL); END IF;
      ELSE
        v := doc(100000 + i, i);
        INSERT INTO live (id, body) VALUES (100000 + i, v);
        INSERT INTO writes (op, id, body_md5) VALUES ('insert', 100000 + i, md5(v));
    END CASE;
    COMMIT;
  END LOOP;
END $$;
SQL
}

case_concurrent() {
  q -c "SELECT fill('live', 3000)" >/dev/null && writer_sql | q >/dev/null || return 1
  q -c "CREATE TABLE live_before AS SELECT id, md5(body) AS body_md5 FROM live" || return 1
  q -c "CALL write_loop(4000)" 2>"$work/writer.err" &
  local writer=$!
  q -c "CALL compresslab.recompress('live', 'body', 'lz4', batch_rows => 50)" 2>"$work/recompress.err" || { cat "$work/recompress.err"; return 1; }
  local writer_running=0
  kill -0 "$writer" 2>/dev/null && writer_running=1
  wait "$writer" || { cat "$work/writer.err"; return 1; }
  # The model: the rows before, then each logged change in order.
  local mismatches
  mismatches=$(q <<'SQL'
WITH last AS (SELECT DISTINCT ON (id) id, op, body_md5 FROM writes ORDER BY id, seq DESC),
expected AS (
  SELECT b.id, b.body_md5 FROM live_before b WHERE b.id NOT IN (SELECT id FROM last)
  UNION ALL SELECT id, body_md5 FROM last WHERE op <> 'delete')
SELECT count(*) FROM expected e FULL JOIN (SELECT id, md5(body) AS body_md5 FROM live) l USING (id)
 WHERE e.body_md5 IS DISTINCT FROM l.body_md5 OR e.id IS NULL OR l.id IS NULL
SQL
  )
  local skipped changes passes
  skipped=$(q -c "SELECT rows_skipped FROM compresslab.recompress_state WHERE relid = 'live'::regclass")
  passes=$(q -c "SELECT pass FROM compresslab.recompress_state WHERE relid = 'live'::regclass")
  changes=$(q -c "SELECT count(*) FROM writes")
  q -c "CALL compresslab.recompress('live', 'body', 'lz4')" || return 1
  local left
  left=$(q -c "SELECT count(*) FROM live WHERE pg_column_compression(body) = 'pglz'")
  echo "  $changes changes logged (writer still running when recompress ended: $writer_running), $skipped rows skipped as changed meanwhile, passes: $passes, rows differing from the log: $mismatches, values left in pglz after a second CALL: $left"
  # a writer that outlived the CALL wrote during its first pass: a second pass must follow
  [[ $mismatches == 0 && $left == 0 && $changes -gt 1000 && ($writer_running == 0 || $passes -ge 2) ]]
}

case_waits() {
  q -c "SELECT fill('held', 500)" -c "ALTER TABLE held ALTER COLUMN body SET COMPRESSION lz4" >/dev/null || return 1
  q -c "CREATE TABLE held_before AS SELECT id, md5(body) AS body_md5 FROM held" || return 1
  q >/dev/null <<'SQL' &
BEGIN;
UPDATE held SET body = doc(1, 7) WHERE id = 1;
UPDATE held SET hits = hits + 1 WHERE id = 2;
DELETE FROM held WHERE id = 3;
SELECT pg_sleep(2);
COMMIT;
SQL
  local holder=$! started ended
  sleep 0.5
  started=$(now)
  q -c "CALL compresslab.recompress('held', 'body', 'lz4', batch_rows => 100)" || return 1
  ended=$(now)
  wait "$holder" || return 1
  local result
  result=$(q -F ' ' <<'SQL'
SELECT count(*),
       count(*) FILTER (WHERE pg_column_compression(h.body) IS DISTINCT FROM 'lz4'),
       count(*) FILTER (WHERE md5(h.body) IS DISTINCT FROM CASE WHEN h.id = 1 THEN md5(doc(1, 7)) ELSE b.body_md5 END),
       (SELECT hits FROM held WHERE id = 2)
  FROM held h JOIN held_before b USING (id)
SQL
  )
  echo "  the CALL waited $(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", b - a }') s; rows, values not in lz4, values not as the session left them, row 2's hits: $result"
  [[ $result == "499 0 0 1" ]]
}

# A row moved to another partition while a batch waits for its lock (40001): the batch runs
# again, and a later round over every partition rewrites the row where it went, a partition
# already done.
case_moved() {
  q -c "CREATE TABLE moved (id int, k int, body text COMPRESSION pglz) PARTITION BY RANGE (k)" \
    -c "CREATE TABLE moved_a PARTITION OF moved FOR VALUES FROM (0) TO (1000)" \
    -c "CREATE TABLE moved_b PARTITION OF moved FOR VALUES FROM (1000) TO (2000)" \
    -c "INSERT INTO moved SELECT g, CASE WHEN g <= 200 THEN g ELSE g + 800 END, doc(g, 0) FROM generate_series(1, 400) g" \
    -c "ALTER TABLE moved ALTER COLUMN body SET COMPRESSION lz4" \
    -c "ALTER TABLE moved_a ALTER COLUMN body SET COMPRESSION lz4" \
    -c "ALTER TABLE moved_b ALTER COLUMN body SET COMPRESSION lz4" \
    -c "CREATE TABLE moved_before AS SELECT id, md5(body) AS body_md5 FROM moved" >/dev/null || return 1
  q >/dev/null <<'SQL' &
BEGIN;
UPDATE moved SET k = 300 WHERE id = 300;
SELECT pg_sleep(2);
COMMIT;
SQL
  local holder=$! result
  sleep 0.5
  PGOPTIONS="-c client_min_messages=notice -c lc_messages=C" \
    q -c "CALL compresslab.recompress('moved', 'body', batch_rows => 50)" >"$work/moved.log" 2>&1 || { cat "$work/moved.log"; return 1; }
  wait "$holder" || return 1
  result=$(q -F ' ' <<'SQL'
SELECT count(*),
       count(*) FILTER (WHERE pg_column_compression(m.body) IS DISTINCT FROM 'lz4'),
       count(*) FILTER (WHERE md5(m.body) IS DISTINCT FROM b.body_md5),
       (SELECT tableoid::regclass FROM moved WHERE id = 300)
  FROM moved m JOIN moved_before b USING (id)
SQL
  )
  echo "  rows, values not in lz4, values changed, row 300's partition: $result; retried: $(grep -c 'the batch runs again' "$work/moved.log"), rounds: $(grep -c 'another round over its 2 tables' "$work/moved.log")"
  [[ $result == "400 0 0 moved_a" ]] && grep -q 'the batch runs again' "$work/moved.log"
}

case_quiet() {
  local passes="" pass left
  for _ in 1 2 3; do
    q -c "DROP TABLE IF EXISTS quiet" -c "SELECT fill('quiet', 2000)" >/dev/null || return 1
    q -c "CALL compresslab.recompress('quiet', 'body', 'lz4', batch_rows => 200)" || return 1
    pass=$(q -c "SELECT pass FROM compresslab.recompress_state WHERE relid = 'quiet'::regclass AND state = 'done'")
    passes="$passes $pass"
    [[ $pass == 1 ]] && break
  done
  left=$(q -c "SELECT count(*) FROM quiet WHERE pg_column_compression(body) IS DISTINCT FROM 'lz4'")
  echo "  passes of each run:$passes; values not in lz4: $left"
  [[ $pass == 1 && $left == 0 ]]
}

case_sigkill() {
  q -c "SELECT fill('killed', 4000)" >/dev/null || return 1
  q -c "CREATE TABLE killed_before AS SELECT id, md5(body) AS body_md5 FROM killed" || return 1
  q -c "CALL compresslab.recompress('killed', 'body', 'lz4', batch_rows => 20, max_wal_rate => '300 kB/s')" 2>"$work/killed.err" &
  local caller=$!
  wait_progress killed || { echo "  no batch committed"; return 1; }
  local pid
  pid=$(q -c "SELECT pid FROM compresslab.recompress_state WHERE relid = 'killed'::regclass")
  kill -KILL "$pid" || return 1
  wait "$caller"
  wait_ready || { echo "  the server did not come back"; return 1; }
  local at state
  at=$(q -c "SELECT next_block || ' of ' || total_blocks || ' blocks, ' || rows_rewritten || ' rows rewritten' FROM compresslab.recompress_state WHERE relid = 'killed'::regclass")
  state=$(q -c "SELECT state FROM compresslab.recompress_progress WHERE relation = 'killed'::regclass")
  local done_before
  done_before=$(q -c "SELECT count(*) FROM killed WHERE pg_column_compression(body) = 'lz4'")
  q -c "CALL compresslab.recompress('killed', 'body', 'lz4', batch_rows => 500)" || return 1
  local result
  result=$(q -c "SELECT count(*) FILTER (WHERE pg_column_compression(k.body) = 'lz4') || ' ' || count(*) FILTER (WHERE md5(k.body) = b.body_md5) || ' ' || count(*)
                   FROM killed k FULL JOIN killed_before b USING (id)")
  # the progress kept across the kill: the two calls' rows add up to every row, once
  local resumed
  resumed=$(q -c "SELECT state = 'done' AND rows_rewritten = 4000 FROM compresslab.recompress_state WHERE relid = 'killed'::regclass")
  echo "  killed at $at ($state; $done_before values already lz4); after a second CALL (lz4, unchanged, rows): $result; the second went on, not over: $resumed"
  [[ $result == "4000 4000 4000" && $resumed == t && $done_before -gt 0 && $state == stopped* ]]
}

# cancel_at LABEL SQL DELAY: runs SQL, cancels it DELAY s after it shows in pg_stat_activity.
cancel_at() {
  local label=$1 sql=$2 delay=$3 pid=
  q -c "$sql" 2>"$work/cancel.err" &
  local caller=$!
  for _ in $(seq 200); do
    pid=$(q -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'CALL compresslab.recompress(%' AND pid <> pg_backend_pid()")
    [[ -n $pid ]] && break
    sleep 0.05
  done
  [[ -n $pid ]] || { echo "  $label: the CALL did not start"; return 1; }
  sleep "$delay"
  local t0 t1 seconds
  t0=$(now)
  q -c "SELECT pg_cancel_backend($pid)" >/dev/null
  wait "$caller"
  t1=$(now)
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  echo "  $label: ended $seconds s after the cancel: $(grep -m1 ERROR "$work/cancel.err")"
  grep -q 'canceling statement due to user request' "$work/cancel.err" &&
    awk -v s="$seconds" -v l="$LIMIT_SECONDS" 'BEGIN { exit !(s <= l) }'
}

case_cancel() {
  q -c "SELECT fill('cancelled', 20000)" >/dev/null || return 1
  # batches of 20,000 rows or 64 MB (120 MB of values to read and rewrite), cancelled inside
  # one: the batch in flight rolls back, the batches committed before it stay, and the values
  # rewritten are exactly those the progress kept counts
  cancel_at "mid-batch" "CALL compresslab.recompress('cancelled', 'body', 'lz4', batch_rows => 20000)" 0.05 || return 1
  local kept counted
  kept=$(q -c "SELECT count(*) FROM cancelled WHERE pg_column_compression(body) = 'lz4'")
  counted=$(q -c "SELECT coalesce(sum(rows_rewritten), 0) FROM compresslab.recompress_state WHERE relid = 'cancelled'::regclass")
  echo "  values in lz4 after the cancel: $kept, rewritten by the batches committed: $counted (of 20000)"
  [[ $kept == "$counted" && $kept -lt 20000 ]] || return 1
  # at 1 kB/s, each small batch is followed by a pause of seconds: cancelled in it
  cancel_at "mid-pause" "CALL compresslab.recompress('cancelled', 'body', 'lz4', batch_rows => 50, max_wal_rate => '1 kB/s')" 1.0
}

case_wal_rate() {
  # 4,000 rows, each a 1 kB incompressible column beside a 5 kB text: every rewrite writes the
  # row anew, ~1.2 kB of WAL; about 5 MB at 200 kB/s: about 24 s. A cap is a cap: the CALL's
  # WAL as the LSN counts it, from its start to its end, at most 1% over.
  q <<'SQL' >/dev/null || return 1
CREATE TABLE paced (id int, filler bytea, body text COMPRESSION pglz);
INSERT INTO paced SELECT g, decode(string_agg(md5(g || '-' || k), ''), 'hex'), repeat('paced row ' || g || ' ', 500)
  FROM generate_series(1, 4000) g, generate_series(1, 64) k GROUP BY g;
-- the cluster's LSN then counts the CALL's WAL alone
ALTER TABLE paced SET (autovacuum_enabled = off);
ANALYZE paced;
SQL
  local lsn0 lsn1 t0 t1
  lsn0=$(q -c "SELECT pg_current_wal_lsn()")
  t0=$(now)
  q -c "CALL compresslab.recompress('paced', 'body', 'lz4', max_wal_rate => '200 kB/s')" || return 1
  t1=$(now)
  lsn1=$(q -c "SELECT pg_current_wal_lsn()")
  local bytes
  bytes=$(q -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")
  awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN {
    s = z - a; rate = b / s; target = 200 * 1024
    printf "  %.0f bytes of WAL in %.1f s: %.0f bytes/s, %+.1f%% of 200 kB/s\n", b, s, rate, (rate / target - 1) * 100
    exit !(s >= 20 && rate <= target * 1.01 && rate >= target * 0.9) }'
}

# "LOW HIGH ABOUT" in bytes from words on standard input ("about N MB of WAL (95% interval
# A MB..B MB)").
wal_words() {
  python3 -c '
import re, sys
units = {"bytes": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3}
size = r"([0-9.]+) (bytes|kB|MB|GB)"
m = re.search("about " + size + r" of WAL \(95% interval " + size + r"\.\." + size + r"\)", sys.stdin.read())
b = lambda i: float(m.group(i)) * units[m.group(i + 1)]
print(b(3), b(5), b(1)) if m else sys.exit("no WAL figure")'
}

# The WAL figure of the dry run of recompress(TABLE, 'body', METHOD).
dry_run_wal() {
  q -c "SET client_min_messages = notice" -c "CALL compresslab.recompress('$1', 'body', '$2', dry_run => true)" 2>&1 | wal_words
}

# The CALL's WAL as the LSN counts it.
call_wal() {
  local lsn0 lsn1
  lsn0=$(q -c "SELECT pg_current_wal_insert_lsn()")
  q -c "CALL compresslab.recompress('$1', 'body', '$2')" || return 1
  lsn1=$(q -c "SELECT pg_current_wal_insert_lsn()")
  q -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint"
}

# within LABEL "LOW HIGH ABOUT" BYTES [SHARE]: BYTES in LOW..HIGH (each rounded to its unit:
# half a MB of slack), and, with SHARE, ABOUT within SHARE of BYTES.
within() {
  awk -v r="$2" -v d="$3" -v s="${4:-}" -v l="$1" 'BEGIN { split(r, f, " "); slack = 0.5 * 1048576
    printf "  %s: %d bytes of WAL; said: about %d (%d..%d)\n", l, d, f[3], f[1], f[2]
    exit !(d >= f[1] - slack && d <= f[2] + slack && (s == "" || (f[3] - d) / d <= s && (d - f[3]) / d <= s)) }'
}

case_wal_estimate() {
  # a database of its own: advise() reads this table alone
  local -x PGDATABASE=e2e_wal_estimate
  q -d postgres -c "DROP DATABASE IF EXISTS $PGDATABASE" -c "CREATE DATABASE $PGDATABASE" || return 1
  q <<'SQL' >/dev/null || return 1
CREATE EXTENSION compresslab;
CREATE TABLE docs (id serial PRIMARY KEY, name text, body text COMPRESSION pglz) WITH (autovacuum_enabled = off);
INSERT INTO docs (name, body)
  SELECT d, convert_from(pg_read_binary_file('/usr/share/doc/' || d || '/copyright', 0, 1000000, true), 'SQL_ASCII')
    FROM pg_ls_dir('/usr/share/doc') d ORDER BY d;
DELETE FROM docs WHERE body IS NULL;
VACUUM ANALYZE docs;
SQL
  local rows advice range bytes
  rows=$(q -c "SELECT count(*) || ' rows, ' || pg_size_pretty(sum(pg_column_size(body))) FROM docs")
  echo "  docs: $rows stored"
  q -c CHECKPOINT || return 1
  # advise()'s CALL (lz4: pglz stores under 10% fewer bytes of these texts) and the dry run
  advice=$(q -c "SELECT note FROM compresslab.advise('10 s') WHERE target = 'public.docs.body' AND recommended = 'lz4'" |
    wal_words) || { echo "  advise() gave no lz4 CALL with a WAL figure for docs.body"; return 1; }
  range=$(dry_run_wal docs lz4) && bytes=$(call_wal docs lz4) &&
    within "after a CHECKPOINT (the dry run)" "$range" "$bytes" 0.1 && within "(advise)" "$advice" "$bytes" 0.1 || return 1
  range=$(dry_run_wal docs pglz) && bytes=$(call_wal docs pglz) && within "no checkpoint since" "$range" "$bytes" || return 1
  range=$(dry_run_wal docs lz4) && q -c CHECKPOINT && bytes=$(call_wal docs lz4) &&
    within "a CHECKPOINT between" "$range" "$bytes"
}

cases=(concurrent sigkill cancel wal_rate waits moved wal_estimate quiet)
(($#)) && cases=("$@")
setup >/dev/null || { echo "recompress: set-up failed"; exit 1; }
passed=0 failed=0
for c in "${cases[@]}"; do
  started=$(now)
  if out=$("case_$c" 2>&1); then
    echo "recompress: $c ... ok ($(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s)"
    passed=$((passed + 1))
  else
    echo "recompress: $c ... FAILED"
    failed=$((failed + 1))
  fi
  [[ -n $out ]] && echo "$out"
done
echo "$passed passed, $failed failed"
((failed == 0))
