#!/usr/bin/env bash
# How long wal_whatif takes per GB of WAL on this machine (docs/wal-whatif.md's figure). On a throwaway
# cluster: pgbench -i (scale WHATIF_SCALE, default 20), then pgbench (2 clients, WHATIF_SECONDS,
# default 120) with a checkpoint every 30 s so full-page images keep coming, all WAL kept in
# pg_wal; then wal_whatif over all of it, in full and with sample => 0.1, timed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster.sh
install_extension
cluster_start whatif-speed
psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
ALTER SYSTEM SET checkpoint_timeout = '30s';
ALTER SYSTEM SET max_wal_size = '8GB';
ALTER SYSTEM SET wal_keep_size = '8GB';
SELECT pg_reload_conf();
CREATE EXTENSION compresslab;
SQL
"$PG_BINDIR/pgbench" -i -q -s "${WHATIF_SCALE:-20}" >/dev/null 2>&1
"$PG_BINDIR/pgbench" -n -c 2 -j 2 -T "${WHATIF_SECONDS:-120}" >/dev/null 2>&1
psql -X -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
\timing on
SELECT pg_size_pretty(pg_current_wal_flush_lsn() - '0/0'::pg_lsn) AS wal_written;
SELECT wal_compression, records, fpi_images, sampled_images, pg_size_pretty(wal_bytes) AS wal_bytes,
       round(saving_percent::numeric, 1) AS saving_percent, round(compress_cpu_seconds::numeric, 2) AS compress_cpu_s
  FROM compresslab.wal_whatif();
SELECT wal_compression, records, fpi_images, sampled_images, pg_size_pretty(wal_bytes) AS wal_bytes,
       round(saving_percent::numeric, 1) AS saving_percent, round(compress_cpu_seconds::numeric, 2) AS compress_cpu_s
  FROM compresslab.wal_whatif(sample => 0.1);
SQL
