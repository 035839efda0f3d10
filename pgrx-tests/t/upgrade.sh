#!/usr/bin/env bash
# Upgrade test, against the running cluster (PGHOST/PGPORT/PGUSER from scripts/cluster.sh) and
# the installed extension (scripts/cluster.sh's install_extension, which also installs the
# frozen install scripts sql/compresslab--X.sql of earlier releases).
#
# For every earlier release X frozen in sql/ (oldest first), in a database of its own:
#   CREATE EXTENSION compresslab VERSION 'X'; ALTER EXTENSION compresslab UPDATE;
# which runs the chain of sql/compresslab--X--Y.sql scripts up to the current version; in
# another database: CREATE EXTENSION compresslab. Then the two catalogues (pgrx-tests/
# catalogue.sql: every member of the extension, functions' signatures, results, volatility,
# strictness, parallel label, C symbol; types' attributes; comments; privileges) must be
# identical. A difference fails the test and is listed object by object, saying which upgrade
# script to change. Then DROP EXTENSION in the updated database must drop the schema
# compresslab too, and with it the grant made on it before the update (a role granted USAGE in
# every database can then be dropped). The listings are kept in pgrx-tests/results/upgrade/.
# Ends with the line "N passed, N failed"; exits non-zero if any upgrade failed.
set -uo pipefail
HARNESS=upgrade
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
out="$PGRX_TESTS/results/upgrade"
rm -rf "$out" && mkdir -p "$out"

current=$(current_version)
installed=$(psql_q -d postgres -c "SELECT default_version FROM pg_available_extensions WHERE name = 'compresslab'")
[[ "$installed" == "$current" ]] ||
  die "the installed compresslab is '${installed:-not installed}', Cargo.toml says $current: install it first (scripts/cluster.sh install_extension)"

mapfile -t frozen < <(frozen_releases)
if ((${#frozen[@]} == 0)); then
  echo "upgrade: no earlier release frozen in sql/ (compresslab--X.sql): nothing to upgrade from"
  finish
  exit
fi

catalogue() { psql_q -d "$1" -f "$PGRX_TESTS/catalogue.sql" >"$out/$1.csv"; }

# A role granted USAGE on the schema in every database (as a DBA grants it to an application):
# once DROP EXTENSION has run in each, it can be dropped. The databases of an earlier run go
# first, with their grants.
for db in $(psql_q -d postgres -c "SELECT datname FROM pg_database WHERE datname LIKE 'upgrade\_%'"); do
  psql_q -d postgres -c "DROP DATABASE $db" || die "DROP DATABASE $db"
done
psql_q -d postgres -c "DROP ROLE IF EXISTS upgrade_grantee" -c "CREATE ROLE upgrade_grantee" || die "CREATE ROLE upgrade_grantee"
grant="GRANT USAGE ON SCHEMA compresslab TO upgrade_grantee"

psql_q -d postgres -c "CREATE DATABASE upgrade_fresh" &&
  psql_q -d upgrade_fresh -c "CREATE EXTENSION compresslab" -c "$grant" && catalogue upgrade_fresh ||
  die "CREATE EXTENSION compresslab (version $current)"

for from in "${frozen[@]}"; do
  db="upgrade_from_${from//[^0-9a-zA-Z]/_}"
  label="$from -> $current"
  if ! psql_q -d postgres -c "SELECT 1 FROM pg_available_extension_versions WHERE name = 'compresslab' AND version = '$from'" | grep -qx 1; then
    fail "$label" "sql/compresslab--$from.sql is not installed (scripts/cluster.sh install_extension installs it)"
    continue
  fi
  path=$(psql_q -d postgres -c "SELECT path FROM pg_extension_update_paths('compresslab') WHERE source = '$from' AND target = '$current'")
  if [[ -z "$path" ]]; then
    fail "$label" "no chain of update scripts leads from $from to $current; add sql/compresslab--<last release>--$current.sql"
    continue
  fi
  scripts=$(awk -F'--' '{for (i = 1; i < NF; i++) printf "%ssql/compresslab--%s--%s.sql", (i > 1 ? ", " : ""), $i, $(i + 1)}' <<<"$path")
  if ! psql_q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >"$out/$db.log" 2>&1 ||
     ! psql_q -d "$db" -c "CREATE EXTENSION compresslab VERSION '$from'" -c "$grant" >>"$out/$db.log" 2>&1; then
    fail "$label" "CREATE EXTENSION compresslab VERSION '$from' with the current library:"
    sed 's/^/  /' "$out/$db.log"
    echo "  (every C symbol of sql/compresslab--$from.sql must still exist in the library)"
    continue
  fi
  # The last release's SQL on this library, before the update: a result type it changed is
  # refused with 55000 and the update to run, not an internal error.
  if [[ $from == "${frozen[-1]}" ]]; then
    old_sql=$(psql_q -d "$db" -c "CREATE TABLE old_sql AS SELECT repeat('old sql ', 900) AS v" \
      -c "DO \$\$ BEGIN PERFORM * FROM compresslab.estimate_toast_compression('old_sql', 'v');
          EXCEPTION WHEN object_not_in_prerequisite_state THEN RAISE WARNING 'refused: %', SQLERRM; END \$\$" \
      -c "DROP TABLE old_sql" 2>&1)
    check_log <(echo "$old_sql") "$from's SQL on the $current library: estimate_toast_compression says to update (55000)" \
      grep -q "refused: compresslab's SQL is version $from, its library $current" <<<"$old_sql"
    # and its recompress, whose helpers this library folded into one step function
    old_call=$(psql_q -d "$db" -c "CREATE TABLE old_call AS SELECT repeat('old call ', 900) AS v" \
      -c "DO \$\$ BEGIN CALL compresslab.recompress('old_call', 'v', 'lz4', dry_run => true);
          EXCEPTION WHEN object_not_in_prerequisite_state THEN RAISE WARNING 'refused: %', SQLERRM; END \$\$" \
      -c "DROP TABLE old_call" 2>&1)
    check_log <(echo "$old_call") "$from's recompress on the $current library says to update (55000)" \
      grep -q "refused: compresslab's SQL is version $from, its library $current: compresslab.recompress_prepare is no longer" <<<"$old_call"
  fi
  if ! psql_q -d "$db" -c "ALTER EXTENSION compresslab UPDATE" >>"$out/$db.log" 2>&1; then
    fail "$label" "ALTER EXTENSION compresslab UPDATE (path $path: $scripts):"
    sed 's/^/  /' "$out/$db.log"
    continue
  fi
  catalogue "$db"
  if "$PGRX_TESTS/t/catalogue_diff.py" "$out/upgrade_fresh.csv" "$out/$db.csv" >"$out/$db.diff"; then
    # The updated extension also works: the library answers for the new version.
    if [[ "$(psql_q -d "$db" -c "SELECT compresslab.version()")" != "$current" ]]; then
      fail "$label" "compresslab.version() after the update is not $current"
    # and DROP EXTENSION leaves nothing: the schema goes too (a member once updated)
    elif ! psql_q -d "$db" -c "DROP EXTENSION compresslab" >>"$out/$db.log" 2>&1 ||
         [[ "$(psql_q -d "$db" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'compresslab'")" != 0 ]]; then
      fail "$label" "DROP EXTENSION compresslab after the update leaves the schema compresslab behind"
    else
      pass "$label" "(path $path: $scripts; DROP EXTENSION then drops the schema)"
    fi
  else
    fail "$label" "the updated extension differs from a fresh CREATE EXTENSION; bring $scripts up to date:"
    cat "$out/$db.diff"
  fi
done
psql_q -d upgrade_fresh -c "DROP EXTENSION compresslab" >/dev/null
check "the role granted USAGE on the schema in each database can be dropped after DROP EXTENSION" \
  psql_q -d postgres -c "DROP ROLE upgrade_grantee"
finish
