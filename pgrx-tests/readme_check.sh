#!/usr/bin/env bash
# README.md and the manual in docs/ checked against the catalogue so they cannot drift: every
# function of schema compresslab and every compresslab.* setting is in docs/sql-api.md's
# tables, every compresslab.<name>(...) call or setting a page names exists, each columns table
# lists its result type's attributes, and every relative link resolves (readme_check.py says
# how). Runs against the cluster of scripts/cluster.sh (PGHOST/PGPORT/PGUSER). Exits non-zero
# and lists the drift.
set -euo pipefail
export PGOPTIONS="-c client_min_messages=warning"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS readme_check" -c "CREATE DATABASE readme_check" >/dev/null
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS readme_check" >/dev/null' EXIT
q() { psql -X -At -d readme_check "$@"; }
q -q -c "CREATE EXTENSION compresslab"
FUNCTIONS=$(q -c "SELECT DISTINCT p.proname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'compresslab' ORDER BY 1")
# The settings exist once the library is loaded: call a function first, in the same session.
SETTINGS=$(q -c "SELECT compresslab.version()" \
  -c "SELECT name FROM pg_catalog.pg_settings WHERE name LIKE 'compresslab.%' ORDER BY 1" | sed 1d)
TYPES=$(q -c "SELECT t.typname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = 'compresslab' AND t.typtype = 'c' ORDER BY 1")
ATTRIBUTES=$(q -F ' ' -c "SELECT t.typname, a.attname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid WHERE n.nspname = 'compresslab' AND t.typtype = 'c' AND a.attnum > 0 AND NOT a.attisdropped ORDER BY t.typname, a.attnum")
export FUNCTIONS SETTINGS TYPES ATTRIBUTES
cd "$root"
pgrx-tests/readme_check.py README.md docs/*.md
