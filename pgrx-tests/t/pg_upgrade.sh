#!/usr/bin/env bash
# The upgrade to PostgreSQL 19 that makes lz4 the default TOAST compression, end to end
# (docs/install.md, "Upgrading to PostgreSQL 19"):
#   1. a cluster of the old major (PG_CONFIG_OLD, 18 in scripts/test_version.sh) with compresslab
#      installed and a table, owned by an ordinary role, whose values are stored in pglz, inline
#      and in the TOAST table;
#   2. pg_upgrade to the new major (PG_CONFIG, 19, with the extension already installed there:
#      pg_upgrade checks that the old cluster's libraries load), then ALTER EXTENSION compresslab
#      UPDATE;
#   3. advise(): the column's row says the default is lz4 and the values sampled are pglz, and
#      carries the CALL; each apply_sql line is run as docs/advisor.md says, one psql -c each;
#   4. after: every value lz4, every row byte for byte as before (md5 of the whole table).
# Needs compresslab installed into both installations (installed into the old one here when it
# is missing or not the current version). Ends with "N passed, N failed".
set -uo pipefail
HARNESS=pg_upgrade
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
: "${PG_CONFIG_OLD:?PG_CONFIG_OLD: the pg_config of the major to upgrade from (scripts/setup.sh --pg 18)}"
OLD_BINDIR=$("$PG_CONFIG_OLD" --bindir)
NEW_BINDIR=$PG_BINDIR
old_major=$("$PG_CONFIG_OLD" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
current=$(current_version)

control_version() { sed -n "s/^default_version = '\(.*\)'$/\1/p" "$("$1" --sharedir)/extension/compresslab.control" 2>/dev/null; }
[[ $(control_version "$PG_CONFIG") == "$current" ]] ||
  die "compresslab $current is not installed into $PG_CONFIG (scripts/cluster.sh install_extension)"
if [[ $(control_version "$PG_CONFIG_OLD") != "$current" ]]; then
  echo "pg_upgrade: installing compresslab $current into PostgreSQL $old_major"
  (PG_CONFIG=$PG_CONFIG_OLD && source "$COMPRESSLAB_ROOT/scripts/cluster.sh" && install_extension --no-lto) ||
    die "compresslab could not be installed into $PG_CONFIG_OLD"
fi

dir=$(postgres_owned_dir pg-upgrade)
as_postgres() { sudo -u postgres env -C "$dir" "$@"; }
old_data=$dir/old new_data=$dir/new
# Whatever happens, neither server outlives the harness.
trap 'as_postgres "$NEW_BINDIR/pg_ctl" -D "$new_data" -m immediate stop >/dev/null 2>&1
      as_postgres "$OLD_BINDIR/pg_ctl" -D "$old_data" -m immediate stop >/dev/null 2>&1' EXIT
start() { as_postgres "$1/pg_ctl" -D "$2" -l "$2.log" -w -o "-p $PGPORT -k $dir -c listen_addresses=''" start >/dev/null; }
stop() { as_postgres "$1/pg_ctl" -D "$2" -m fast -w stop >/dev/null; }
export PGHOST=$dir PGPORT PGUSER=postgres PGDATABASE=postgres
PGPORT=$(free_port)

as_postgres "$OLD_BINDIR/initdb" -D "$old_data" "${CLUSTER_INITDB_OPTIONS[@]}" >"$dir/initdb-old.log" 2>&1 &&
  start "$OLD_BINDIR" "$old_data" || die "PostgreSQL $old_major did not start: $(cat "$dir/initdb-old.log" "$old_data.log" 2>/dev/null)"

# 1500 rows of about 3 KB, compressed inline, and every 50th a value of about 200 KB that TOAST
# moves out of line: pglz, the default before 19.
psql_q <<'SQL' || die "the table on PostgreSQL $old_major"
CREATE ROLE shop_owner LOGIN;
CREATE EXTENSION compresslab;
CREATE TABLE orders (id int PRIMARY KEY, body text);
ALTER TABLE orders OWNER TO shop_owner;
INSERT INTO orders
SELECT i, CASE WHEN i % 50 = 0
               THEN (SELECT string_agg(md5((i * 1000 + j % 50)::text) || ' shipped ' || (j % 7), ' ') FROM generate_series(1, 4000) j)
               ELSE (SELECT string_agg(md5((i * 1000 + j % 9)::text) || ' item ' || j, ' ') FROM generate_series(1, 60 + i % 40) j)
          END
FROM generate_series(1, 1500) i;
SQL
methods() {
  psql_q -c "SELECT string_agg(m || ' ' || n, ', ' ORDER BY m)
               FROM (SELECT coalesce(pg_column_compression(body), 'raw') AS m, count(*) AS n FROM orders GROUP BY 1) s"
}
rows_md5() { psql_q -c "SELECT md5(string_agg(id || ':' || body, E'\n' ORDER BY id)) FROM orders"; }
external() { psql_q -c "SELECT count(*) FROM orders WHERE pg_column_size(body) > 2000"; }
stored() { psql_q -c "SELECT sum(pg_column_size(body)) FROM orders"; }
before_methods=$(methods) before_md5=$(rows_md5) before_external=$(external)
check "PostgreSQL $old_major: 1500 values stored in pglz ($before_methods, $before_external out of line, $(stored) bytes)" \
  test "$before_methods" = "pglz 1500"
stop "$OLD_BINDIR" "$old_data" || die "PostgreSQL $old_major did not stop"

# The new cluster as the old one was made (18's and 19's initdb both turn data checksums on).
as_postgres "$NEW_BINDIR/initdb" -D "$new_data" "${CLUSTER_INITDB_OPTIONS[@]}" >"$dir/initdb-new.log" 2>&1 ||
  die "initdb of $NEW_BINDIR: $(cat "$dir/initdb-new.log")"
check_log "$dir/pg_upgrade.log" "pg_upgrade $old_major -> $PG_MAJOR" \
  as_postgres "$NEW_BINDIR/pg_upgrade" -b "$OLD_BINDIR" -B "$NEW_BINDIR" -d "$old_data" -D "$new_data" \
  -p "$(free_port)" -P "$(free_port)" -U postgres --socketdir "$dir" --no-sync >"$dir/pg_upgrade.log" 2>&1
start "$NEW_BINDIR" "$new_data" || die "PostgreSQL $PG_MAJOR did not start after pg_upgrade: $(cat "$new_data.log")"

psql_q -c "ALTER EXTENSION compresslab UPDATE" >/dev/null
check "ALTER EXTENSION compresslab UPDATE: version $current" \
  test "$(psql_q -c "SELECT extversion FROM pg_extension WHERE extname = 'compresslab'")" = "$current"
check "after pg_upgrade: default_toast_compression lz4, the values still pglz" \
  test "$(psql_q -c 'SHOW default_toast_compression')/$(methods)/$(rows_md5)" = "lz4/pglz 1500/$before_md5"

psql_q -c "SELECT current || ' | ' || recommended || ' | ' || note FROM compresslab.advise('10 s') WHERE target LIKE '%orders.body%'" \
  >"$dir/advice.txt" 2>&1
psql_q -c "SELECT apply_sql FROM compresslab.advise('10 s') WHERE apply_sql IS NOT NULL" >"$dir/apply.sql" 2>&1
echo "pg_upgrade: advice: $(cat "$dir/advice.txt")"
check "advise(): orders.body is lz4 with its sampled values pglz, the rewrite recommended" \
  grep -q "^lz4 (default_toast_compression); stored values sampled: pglz [0-9]* | lz4 | " "$dir/advice.txt"
check "advise(): the CALL that rewrites orders.body" \
  grep -qxF "CALL compresslab.recompress('public.orders', 'body', 'lz4');" "$dir/apply.sql"
ran=0
while IFS= read -r line; do
  psql -X -q -v ON_ERROR_STOP=1 -c "$line" >>"$dir/apply.log" 2>&1 || { fail "apply_sql: $line" "$(tail -3 "$dir/apply.log")"; continue; }
  ran=$((ran + 1))
done <"$dir/apply.sql"
echo "pg_upgrade: ran $ran apply_sql lines:"
sed 's/^/  /' "$dir/apply.sql"

after_methods=$(methods) after_md5=$(rows_md5)
check "after the CALL: every value lz4 ($after_methods, $(stored) bytes)" test "$after_methods" = "lz4 1500"
check "after the CALL: every row byte for byte as before (md5 $after_md5)" test "$after_md5" = "$before_md5"
check "after the CALL: $before_external values still out of line" test "$(external)" = "$before_external"
stop "$NEW_BINDIR" "$new_data"
finish
