#!/usr/bin/env bash
# The README's main command.
#
#   bash scripts/report.sh              the throwaway demo: sets up what is missing (as root),
#                                       builds and installs compresslab, starts a cluster with a
#                                       pgbench database: advice, lab, scenario studies,
#                                       validations; writes results/report.md, chart.svg and
#                                       columns.svg.
#   bash scripts/report.sh --pg N       the same demo on PostgreSQL N (15, 17, 18 or 19), set up by
#                                       scripts/setup.sh --pg N (built or fetched once, cached)
#   bash scripts/report.sh --dbname CONNINFO [--out DIR]
#                                       your own database (also --dbname=CONNINFO, or PGDATABASE
#                                       and the other PG* variables): needs only psql and the
#                                       extension installed on that server (the package, or
#                                       cargo pgrx install); builds nothing, installs nothing,
#                                       runs as any role (it shows what that role may read).
#                                       Creates the extension in the database if it is not there
#                                       (and says so), else nothing but temporary tables; writes
#                                       report.md, chart.svg and columns.svg into DIR (default a new
#                                       results/report-<UTC time> directory).
# REPORT_BUDGET (default '30 s') bounds the advisor.
set -euo pipefail
cd "$(dirname "$0")/.."
# rustup installs cargo in ~/.cargo/bin, which a bare shell's PATH (env -i PATH=/usr/bin:/bin)
# does not name.
[[ -d "${CARGO_HOME:-$HOME/.cargo}/bin" ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
PGBENCH_SCALE=${PGBENCH_SCALE:-5}
# Exported: report_user.sh (--dbname) reads it too.
export REPORT_BUDGET=${REPORT_BUDGET:-30 s}
usage() { echo "usage: bash scripts/report.sh [--pg 15|17|18|19] [--dbname CONNINFO] [--out DIR]" >&2; exit 2; }
user_db= out= pg_major=
while (($#)); do
  case $1 in
    --dbname) (($# >= 2)) || usage; user_db=$2; shift 2 ;;
    --dbname=*) user_db=${1#--dbname=}; shift ;;
    --out) (($# >= 2)) || usage; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --pg) (($# >= 2)) || usage; pg_major=$2; shift 2 ;;
    --pg=*) pg_major=${1#--pg=}; shift ;;
    *) usage ;;
  esac
done
[[ -z "$user_db" && -n "${PGDATABASE:-}" ]] && user_db=$PGDATABASE

# Your database: psql and the installed extension, nothing else.
if [[ -n "$user_db" ]]; then
  [[ -z "$pg_major" ]] || { echo "report: --pg goes with the demo (--dbname reports on the server it connects to)" >&2; exit 2; }
  exec scripts/report_user.sh "$user_db" "${out:-results/report-$(date -u +%Y%m%dT%H%M%SZ)}"
fi
[[ -z "$out" ]] || { echo "report: --out goes with --dbname (the demo writes results/)" >&2; exit 2; }

if [[ -n "$pg_major" ]]; then
  # The last line setup.sh prints is that server's pg_config; scripts/cluster.sh follows it.
  setup_log=$(mktemp)
  scripts/setup.sh --pg "$pg_major" | tee "$setup_log"
  PG_CONFIG=$(tail -1 "$setup_log")
  rm -f "$setup_log"
  export PG_CONFIG
else
  scripts/setup.sh
fi
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
psql -X -q -v ON_ERROR_STOP=1 -v budget="$REPORT_BUDGET" -v columns_chart=results/columns.svg \
  -f scripts/report_advice.sql >results/advice.md
assemble "results/chart.svg and results/columns.svg"
