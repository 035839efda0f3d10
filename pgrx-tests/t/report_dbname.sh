#!/usr/bin/env bash
# The report on a DBA's database as a DBA runs it: `scripts/report.sh --dbname=...` by an
# ordinary role, with no Rust toolchain on the PATH, against the running cluster (PGHOST,
# PGPORT, PGUSER of scripts/cluster.sh: a cluster other than any the report would start). It
# must write report.md and chart.svg into --out, build and install nothing (the server's
# library and SQL files keep their checksums), create nothing in the database when the
# extension is there, and refuse clearly when the extension is missing or --out exists.
# Ends with "N passed, N failed".
set -uo pipefail
HARNESS="report --dbname"
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sql() { psql -X -q -v ON_ERROR_STOP=1 -d postgres "$@"; }
sql -c "DROP DATABASE IF EXISTS report_shop" -c "DROP DATABASE IF EXISTS report_bare" \
    -c "DROP ROLE IF EXISTS report_reader" -c "CREATE ROLE report_reader LOGIN" \
    -c "CREATE DATABASE report_shop" -c "CREATE DATABASE report_bare" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d report_shop >/dev/null <<'SQL'
CREATE EXTENSION compresslab;
GRANT USAGE ON SCHEMA compresslab TO report_reader;
CREATE TABLE orders (id int PRIMARY KEY, note text);
INSERT INTO orders SELECT i, repeat('order ' || i || ' note ', 20 + i % 300) FROM generate_series(1, 3000) i;
ANALYZE orders;
GRANT SELECT ON orders TO report_reader;
-- The largest table, readable but under row-level security: its pages are left out, said so.
CREATE TABLE secrets (id int, owner text, body text);
INSERT INTO secrets SELECT i, 'u' || i % 7, repeat(md5(i::text), 40) FROM generate_series(1, 6000) i;
ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON secrets USING (owner = current_user);
GRANT SELECT ON secrets TO report_reader;
SQL
installed() { sha256sum "$("$PG_CONFIG" --pkglibdir)/compresslab.so" "$("$PG_CONFIG" --sharedir)"/extension/compresslab*; }
objects() { psql -X -At -d report_shop -c "SELECT count(*) FROM pg_class WHERE relpersistence <> 't'"; }
installed >"$tmp/before"
objects_before=$(objects)
conninfo="host=$PGHOST port=$PGPORT dbname=report_shop user=report_reader"
# A DBA's shell: the system's PATH only (no cargo, no rustc), no PG* variables.
as_dba() { env -i HOME="$tmp" PATH=/usr/bin:/bin REPORT_BUDGET='5 s' bash "$COMPRESSLAB_ROOT/scripts/report.sh" "$@"; }
check "no Rust toolchain on the DBA's PATH" bash -c '! env -i PATH=/usr/bin:/bin bash -c "command -v cargo || command -v rustc"'
as_dba --dbname="$conninfo" --out "$tmp/out" >"$tmp/run.log" 2>&1
status=$?
check "exits 0" test "$status" -eq 0 || cat "$tmp/run.log"
check "report.md names the database, the role and what it created" \
  grep -q "As role \`report_reader\`.*Created in the database: nothing but temporary tables" "$tmp/out/report.md"
check "report.md has the advice on the table the role may read" grep -q "public.orders.note" "$tmp/out/report.md"
check "chart.svg is an SVG" grep -q "<svg" "$tmp/out/chart.svg"
check "a table under row-level security is left out of the page lab, and said so" \
  grep -q "Left out: 1 larger table(s) this role may not read whole" "$tmp/out/report.md"
installed >"$tmp/after"
check "the server's library and SQL files are unchanged" cmp -s "$tmp/before" "$tmp/after"
check "nothing created in the database" test "$(objects)" = "$objects_before"
as_dba --dbname "$conninfo" --out "$tmp/out" >"$tmp/again.log" 2>&1
status=$?
check "an existing --out is refused" bash -c "test $status -eq 2 && grep -q 'exists already' '$tmp/again.log'"
as_dba --dbname "host=$PGHOST port=$PGPORT dbname=report_bare user=report_reader" --out "$tmp/bare" >"$tmp/bare.log" 2>&1
status=$?
check "no extension and no right to create it: says so, exits 3" \
  bash -c "test $status -eq 3 && grep -q 'CREATE EXTENSION compresslab failed in report_bare' '$tmp/bare.log'"
sql -c "DROP DATABASE report_shop" -c "DROP DATABASE report_bare" -c "DROP ROLE report_reader" >/dev/null
finish
