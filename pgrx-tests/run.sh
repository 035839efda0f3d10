#!/usr/bin/env bash
# End-to-end tests through a real client: each sql/NAME.sql runs in a fresh database of the
# running cluster (PGHOST/PGPORT/PGUSER from scripts/cluster.sh) under psql, its output
# (statements echoed, errors included) is compared with expected/NAME.out, and a difference
# fails the test and is printed as a unified diff. Optional arguments: test names to run.
# Ends with the line "N passed, N failed"; exits non-zero if any test failed.
set -uo pipefail
cd "$(dirname "$0")"
mkdir -p results
export PGOPTIONS="-c client_min_messages=warning -c lc_messages=C"

if (($#)); then names=("$@"); else names=(); for f in sql/*.sql; do names+=("$(basename "$f" .sql)"); done; fi

passed=0 failed=0
for name in "${names[@]}"; do
  db="e2e_$name"
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  E2E_DIR=$PWD psql -X -a -q -d "$db" -v VERBOSITY=default -v E2E_DIR="$PWD" -f "sql/$name.sql" >"results/$name.out" 2>&1
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null
  if diff -u "expected/$name.out" "results/$name.out" >"results/$name.diff"; then
    echo "e2e: $name ... ok"
    passed=$((passed + 1))
  else
    echo "e2e: $name ... FAILED (expected/$name.out vs results/$name.out):"
    cat "results/$name.diff"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
