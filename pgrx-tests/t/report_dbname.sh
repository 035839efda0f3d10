#!/usr/bin/env bash
# The report on a DBA's database as a DBA runs it: `scripts/report.sh --dbname=...` by an
# ordinary role, from a copy of the scripts owned by an OS user who is not root (postgres: the
# one that may reach the test cluster's socket), with no Rust toolchain on the PATH and no PG*
# or REPORT_* variable, against the running cluster (PGHOST, PGPORT, PGUSER of
# scripts/cluster.sh: a cluster other than any the report would start). It must write
# report.md, chart.svg and columns.svg into --out (by default a new results/report-<time>), build and
# install nothing (the server's library and SQL files keep their checksums), create nothing
# in the database when the extension is there, refuse clearly when the extension is missing
# or --out exists, and leave no directory behind when it fails.
# Ends with "N passed, N failed".
set -uo pipefail
HARNESS="report --dbname"
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The DBA's copy of the scripts (what report.sh --dbname reads), owned by the DBA.
mkdir "$tmp/clone" "$tmp/home"
cp -r "$COMPRESSLAB_ROOT/scripts" "$COMPRESSLAB_ROOT/Cargo.toml" "$tmp/clone/"
chown -R postgres: "$tmp"
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
# A DBA's shell: an OS user who is not root, the system's PATH only (no cargo, no rustc), no
# PG* variables, in the copy of the scripts. budget: REPORT_BUDGET, none for the README's
# exact command.
as_dba_with_budget() {
  local budget=$1; shift
  (cd "$tmp/clone" && "$runuser" -u postgres -- env -i HOME="$tmp/home" PATH=/usr/bin:/bin ${budget:+REPORT_BUDGET="$budget"} \
    bash scripts/report.sh "$@")
}
as_dba() { as_dba_with_budget '5 s' "$@"; }
runuser=$(system_program runuser) || die "runuser (util-linux) is not installed"
check "no Rust toolchain on the DBA's PATH" bash -c '! env -i PATH=/usr/bin:/bin bash -c "command -v cargo || command -v rustc"'
as_dba --dbname="$conninfo" --out "$tmp/out" >"$tmp/run.log" 2>&1
status=$?
check_log "$tmp/run.log" "exits 0" test "$status" -eq 0
check "report.md names the database, the role and what it created" \
  grep -q "As role \`report_reader\`.*Created in the database: nothing but temporary tables" "$tmp/out/report.md"
check "report.md has the advice on the table the role may read" grep -q "public.orders.note" "$tmp/out/report.md"
check "chart.svg is an SVG" grep -q "<svg" "$tmp/out/chart.svg"
check "report.md gives public.orders.note's bytes under pglz and lz4, each with its interval" \
  bash -c "test \$(grep -cE '^ public\.orders\.note +\| (pglz|lz4) +\| [0-9]+ [kM]B +\| [0-9]+ [kM]B\.\.[0-9]+ [kM]B' '$tmp/out/report.md') -eq 2"
check "columns.svg draws them: a bar each, with the column's name" \
  bash -c "test \$(grep -c 'class=\"bar\"' '$tmp/out/columns.svg') -eq 2 && grep -q '>public.orders.note<' '$tmp/out/columns.svg'"
check "a table under row-level security is left out of the page lab, and said so" \
  grep -q "Left out: 1 larger table(s) this role may not read whole" "$tmp/out/report.md"
installed >"$tmp/after"
check "the server's library and SQL files are unchanged" cmp -s "$tmp/before" "$tmp/after"
check "nothing created in the database" test "$(objects)" = "$objects_before"
as_dba --dbname "$conninfo" --out "$tmp/out" >"$tmp/again.log" 2>&1
status=$?
check "an existing --out is refused" bash -c "test $status -eq 2 && grep -q 'exists already' '$tmp/again.log'"
# The README's exact command: no REPORT_BUDGET, no --out.
as_dba_with_budget '' --dbname "$conninfo" >"$tmp/readme.log" 2>&1
status=$?
check_log "$tmp/readme.log" "the README's command (no REPORT_BUDGET, no --out) exits 0" test "$status" -eq 0
check "... and writes results/report-<time>/report.md, nothing else" \
  bash -c "ls '$tmp/clone/results' | grep -qx 'report-[0-9]\{8\}T[0-9]\{6\}Z' && test \"\$(ls '$tmp/clone/results' | wc -l)\" -eq 1 &&
           grep -q 'public.orders.note' '$tmp/clone/results'/report-*/report.md"
# A run that fails half-way (the advisor refuses the budget) leaves no directory behind, and
# the same --out then works.
as_dba_with_budget '0 s' --dbname "$conninfo" --out "$tmp/retry" >"$tmp/failed.log" 2>&1
status=$?
check_log "$tmp/failed.log" "a failed run exits non-zero and leaves no directory" \
  bash -c "test $status -ne 0 && ! ls -d '$tmp/retry'* >/dev/null 2>&1"
as_dba --dbname "$conninfo" --out "$tmp/retry" >"$tmp/retry.log" 2>&1
status=$?
check_log "$tmp/retry.log" "... and the same --out then works" bash -c "test $status -eq 0 && test -s '$tmp/retry/report.md'"
as_dba --dbname "host=$PGHOST port=$PGPORT dbname=report_bare user=report_reader" --out "$tmp/bare" >"$tmp/bare.log" 2>&1
status=$?
check "no extension and no right to create it: says so, exits 3" \
  bash -c "test $status -eq 3 && grep -q 'CREATE EXTENSION compresslab failed in report_bare' '$tmp/bare.log'"
sql -c "DROP DATABASE report_shop" -c "DROP DATABASE report_bare" -c "DROP ROLE report_reader" >/dev/null
finish
