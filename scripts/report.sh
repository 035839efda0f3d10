#!/usr/bin/env bash
# The README's main command: set up what is missing, build and install compresslab, then
#
#   bash scripts/report.sh                      a throwaway cluster with a pgbench database:
#                                               advice, lab, scenario studies, validations;
#   bash scripts/report.sh --dbname 'CONNINFO'  your own database (or set PGDATABASE and the
#                                               other PG* variables instead of --dbname):
#                                               advice, WAL what-if, lab on its largest tables.
#
# On your database it creates the extension compresslab (CREATE EXTENSION IF NOT EXISTS, in
# schema compresslab) and nothing else but temporary tables; it only reads your data and WAL.
# The server must be this machine's PostgreSQL 15, where the extension is installed. Writes
# results/report.md, prints it. REPORT_BUDGET (default '30 s') bounds the advisor.
set -euo pipefail
cd "$(dirname "$0")/.."
PGBENCH_SCALE=${PGBENCH_SCALE:-5}
REPORT_BUDGET=${REPORT_BUDGET:-30 s}
user_db=
if [[ "${1:-}" == --dbname ]]; then
  user_db=${2:?--dbname needs a connection string}
elif [[ -n "${1:-}" ]]; then
  echo "usage: bash scripts/report.sh [--dbname CONNINFO]" >&2
  exit 2
elif [[ -n "${PGDATABASE:-}" ]]; then
  user_db=$PGDATABASE
fi
scripts/setup.sh
source scripts/cluster.sh
install_extension
mkdir -p results

# The report: a title, the advice, then the body the mode wrote.
assemble() {
  { echo "# compresslab report"; echo; cat results/advice.md results/report_body.md; } >results/report.md
  rm -f results/advice.md results/report_body.md
  cat results/report.md
  echo "report: written to results/report.md${1:+ and $1}"
}

if [[ -n "$user_db" ]]; then
  # -d, not PGDATABASE: only a -d value may be a whole connection string.
  on_user_db() { psql -X -q -v ON_ERROR_STOP=1 -d "$user_db" "$@"; }
  echo "report: on your database ($(on_user_db -At -c "SELECT pg_catalog.concat(pg_catalog.current_database(), ' as ', current_user, ', PostgreSQL ', pg_catalog.current_setting('server_version'))"))"
  on_user_db -c "CREATE EXTENSION IF NOT EXISTS compresslab" >/dev/null ||
    { echo "report: CREATE EXTENSION compresslab failed: the server must be this machine's PostgreSQL 15, and you a role that may create it"; exit 1; }
  on_user_db -v budget="$REPORT_BUDGET" -f scripts/report_advice.sql >results/advice.md
  on_user_db -f scripts/report_user.sql >results/report_body.md
  assemble
  exit 0
fi

cluster_start report
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION compresslab" >/dev/null
echo "report: generating a pgbench database (scale $PGBENCH_SCALE, uuid text filler as in the FPW thread)"
"$PG_BINDIR/pgbench" -i -q -s "$PGBENCH_SCALE" >/dev/null 2>&1
psql -X -q -v ON_ERROR_STOP=1 -c "ALTER TABLE pgbench_accounts ALTER COLUMN filler TYPE text USING gen_random_uuid()::text" \
  -c "VACUUM ANALYZE pgbench_accounts" >/dev/null
# A WAL segment holding pgbench -i's work, copied aside: later checkpoints recycle pg_wal.
wal_name=$(psql -X -At -c "SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' ORDER BY name LIMIT 1")
wal_segment="$CLUSTER_DIR/$wal_name"
cp "$CLUSTER_DATA/pg_wal/$wal_name" "$wal_segment" && chown postgres: "$wal_segment"
echo "report: running the studies (progress below)"
psql -X -q -v ON_ERROR_STOP=1 -v wal_segment="$wal_segment" -f scripts/report.sql 2>&1 |
  sed -u -e 's/^psql:[^ ]* NOTICE:  compresslab: /  progress: /' -e '/NOTICE:  /d'
# WAL what-if: the same pgbench run under each wal_compression setting, in a database of its
# own, from the same starting state; no autovacuum or timed checkpoint in the runs, and their
# WAL kept in pg_wal until read.
echo "report: WAL what-if: one pgbench run under each wal_compression setting"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE whatif" -c "ALTER SYSTEM SET autovacuum = off" \
  -c "ALTER SYSTEM SET checkpoint_timeout = '1h'" -c "ALTER SYSTEM SET max_wal_size = '4GB'" \
  -c "ALTER SYSTEM SET wal_keep_size = '4GB'" -c "SELECT pg_reload_conf()" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d whatif -c "CREATE EXTENSION compresslab" -c "CREATE EXTENSION pg_walinspect" \
  -c "CREATE TABLE whatif_runs (setting text, start_lsn pg_lsn, end_lsn pg_lsn)" >/dev/null
for setting in off pglz lz4 zstd; do
  "$PG_BINDIR/pgbench" -i -q -s 2 whatif >/dev/null 2>&1
  psql -X -q -v ON_ERROR_STOP=1 -d whatif \
    -c "ALTER TABLE pgbench_accounts ALTER COLUMN filler TYPE text USING md5(aid::text)::uuid::text" \
    -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null
  start=$(psql -X -At -d whatif -c "SELECT pg_current_wal_insert_lsn()")
  PGOPTIONS="-c wal_compression=$setting" "$PG_BINDIR/pgbench" -n -c 1 -t 3000 --random-seed 7 whatif >/dev/null 2>&1
  end=$(psql -X -At -d whatif -c "SELECT pg_current_wal_insert_lsn()")
  psql -X -q -d whatif -c "INSERT INTO whatif_runs VALUES ('$setting', '$start', '$end')"
done
psql -X -q -v ON_ERROR_STOP=1 -d whatif -f scripts/report_wal_whatif.sql >>results/report_body.md
psql -X -q -c "ALTER SYSTEM RESET ALL" -c "SELECT pg_reload_conf()" >/dev/null
echo "report: the advisor on the pgbench database"
psql -X -q -v ON_ERROR_STOP=1 -v budget="$REPORT_BUDGET" -f scripts/report_advice.sql >results/advice.md
assemble results/chart.svg
