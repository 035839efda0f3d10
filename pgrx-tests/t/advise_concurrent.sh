#!/usr/bin/env bash
# advise() while other sessions change the tables it reads, against the running cluster
# (PGHOST, PGPORT, PGUSER of scripts/cluster.sh): one table's ERROR leaves out that table with
# a NOTICE naming it, never the whole call nor the rows already measured.
#  - another session drops and creates 100 small tables in a loop (one transaction each) while
#    advise() runs ten times: every call returns, with the row of a table nobody touches;
#  - another session holds an ACCESS EXCLUSIVE lock on a table, and advise() runs under a
#    lock_timeout: the call returns without that table, and a NOTICE names it.
# Ends with "N passed, N failed".
set -uo pipefail
HARNESS=advise_concurrent
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
db() { psql_q -d advise_concurrent "$@"; }
out=$PGRX_TESTS/results/advise_concurrent
rm -rf "$out" && mkdir -p "$out"

psql -X -q -v ON_ERROR_STOP=1 -d postgres \
  -c "DROP DATABASE IF EXISTS advise_concurrent" -c "CREATE DATABASE advise_concurrent" >/dev/null || exit 1
db -c "CREATE EXTENSION compresslab" \
  -c "CREATE TABLE keeper (id int, body text)" \
  -c "INSERT INTO keeper SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 2000) g" \
  -c "CREATE TABLE locked (id int, body text)" \
  -c "INSERT INTO locked SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 2000) g" \
  -c "DO \$\$ BEGIN FOR i IN 1..100 LOOP
        EXECUTE format('CREATE TABLE churn_%s (id int, body text); INSERT INTO churn_%s VALUES (1, repeat(''x'', 3000))', i, i);
      END LOOP; END \$\$" || exit 1

# Each table dropped and created again, in a transaction of its own, until stopped.
churn() {
  db -c "SET application_name = 'advise_concurrent_churn'" -c "DO \$\$ BEGIN LOOP FOR i IN 1..100 LOOP
           EXECUTE format('DROP TABLE churn_%s; CREATE TABLE churn_%s (id int, body text); INSERT INTO churn_%s VALUES (1, repeat(''x'', 3000))', i, i, i);
           COMMIT;
         END LOOP; END LOOP; END \$\$" >/dev/null 2>&1
}
churn &
churn_pid=$!
# Its backend loops without reading from its client: ended by pg_terminate_backend.
stop_churn() {
  db -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'advise_concurrent_churn'" >/dev/null
  wait "$churn_pid" 2>/dev/null
}
trap stop_churn EXIT

returned=0 with_keeper=0 noticed=0
for i in $(seq 1 10); do
  if PGOPTIONS="-c client_min_messages=notice -c lc_messages=C" db \
    -c "SELECT area, target FROM compresslab.advise('2 s', verbose => true)" >"$out/call_$i.txt" 2>&1; then
    returned=$((returned + 1))
  fi
  grep -qx 'toast|public.keeper.body' "$out/call_$i.txt" && with_keeper=$((with_keeper + 1))
  grep -q '^NOTICE:  compresslab: advise: .* left out: ' "$out/call_$i.txt" && noticed=$((noticed + 1))
done
stop_churn
trap - EXIT
check "advise() returns in 10 of 10 calls while tables are dropped and created ($noticed with a table left out)" \
  test "$returned" -eq 10
check "each call has the row of the table nobody touched" test "$with_keeper" -eq 10
if ((returned < 10)); then grep -h 'ERROR' "$out"/call_*.txt | sort | uniq -c; fi

# A lock advise() may not get within lock_timeout: that table is left out, named.
db -c "SET application_name = 'advise_concurrent_locker'" \
  -c "BEGIN" -c "LOCK TABLE locked IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
locker_pid=$!
for _ in $(seq 1 100); do
  [[ $(db -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
               WHERE a.application_name = 'advise_concurrent_locker' AND l.relation = 'locked'::regclass AND l.granted") == 1 ]] && break
  sleep 0.1
done
PGOPTIONS="-c client_min_messages=notice -c lc_messages=C -c lock_timeout=200ms" db \
  -c "SELECT area, target FROM compresslab.advise('2 s', verbose => true)" >"$out/locked.txt" 2>&1
status=$?
db -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'advise_concurrent_locker'" >/dev/null
wait "$locker_pid" 2>/dev/null
check "advise() returns while a table's lock is held past lock_timeout" test "$status" -eq 0
check "with the row of another table" grep -qx 'toast|public.keeper.body' "$out/locked.txt"
check "without the locked table" bash -c "! grep -q '^toast|public.locked.body' '$out/locked.txt'"
check "a NOTICE names the locked table and why" \
  grep -q '^NOTICE:  compresslab: advise: public.locked left out: canceling statement due to lock timeout' "$out/locked.txt"
psql -X -q -d postgres -c "DROP DATABASE advise_concurrent" >/dev/null
finish
