#!/usr/bin/env bash
# The README's API and settings tables, checked against the catalogue so they cannot drift:
# every function of schema compresslab and every compresslab.* setting is named in the README,
# and every compresslab.<name>(...) call or setting the README names exists. Runs against the
# cluster of scripts/cluster.sh (PGHOST/PGPORT/PGUSER). Exits non-zero and lists the drift.
set -euo pipefail
export PGOPTIONS="-c client_min_messages=warning"
here=$(cd "$(dirname "$0")" && pwd)
readme="$here/../README.md"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS readme_check" -c "CREATE DATABASE readme_check" >/dev/null
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS readme_check" >/dev/null' EXIT
functions=$(psql -X -At -d readme_check -c "CREATE EXTENSION compresslab" \
  -c "SELECT DISTINCT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'compresslab' ORDER BY 1" | sed 1d)
settings=$(psql -X -At -d readme_check -c "SELECT compresslab.version()" \
  -c "SELECT name FROM pg_settings WHERE name LIKE 'compresslab.%' ORDER BY 1" | sed 1d)
FUNCTIONS="$functions" SETTINGS="$settings" python3 - "$readme" <<'PY'
import os, re, sys
readme = open(sys.argv[1]).read()
functions = set(os.environ["FUNCTIONS"].split())
settings = set(os.environ["SETTINGS"].split())
problems = []
for f in sorted(functions):
    if not re.search(r"(`|compresslab\.)" + re.escape(f) + r"\(", readme):
        problems.append(f"function {f} is not documented in README.md")
for f in sorted(set(re.findall(r"compresslab\.([a-z_0-9]+)\(", readme)) - functions):
    problems.append(f"README.md calls compresslab.{f}(), which does not exist")
for s in sorted(settings):
    if f"`{s}`" not in readme:
        problems.append(f"setting {s} is not in README.md's settings table")
files = {"compresslab.so", "compresslab.control"}  # the library and control file, not settings
for s in sorted(set(re.findall(r"`(compresslab\.[a-z_]+)`", readme)) - settings - files):
    problems.append(f"README.md names setting {s}, which does not exist")
for p in problems:
    print("readme:", p)
print(f"readme: {len(functions)} functions and {len(settings)} settings checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
