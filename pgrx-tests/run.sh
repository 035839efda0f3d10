#!/usr/bin/env bash
# End-to-end tests run by PostgreSQL's own pg_regress (shipped with PGXS) against the running
# cluster (PGHOST/PGPORT/PGUSER from scripts/cluster.sh): each sql/NAME.sql runs through psql
# in a fresh database of its own (pg_regress creates it), its output is compared with
# expected/NAME.out, and a difference fails the test and is printed as a unified diff
# (pg_regress's regression.diffs). Optional arguments: test names to run; by default every test
# but memory_limited, which scripts/test.sh runs on a cluster with a memory limit.
# Ends with the line "N passed, N failed"; exits non-zero if any test failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# PG_CONFIG (default /usr/bin/pg_config) names the installation whose pg_regress and psql run
# (--bindir: a relocated installation's pg_regress would look where it was built).
pg_config=${PG_CONFIG:-/usr/bin/pg_config}
pg_regress="$("$pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress"
pg_bindir=$("$pg_config" --bindir)
export PGOPTIONS="-c client_min_messages=warning -c lc_messages=C"

if (($#)); then
  names=("$@")
else
  names=()
  for f in "$here"/sql/*.sql; do
    [[ $(basename "$f") == memory_limited.sql ]] || names+=("$(basename "$f" .sql)")
  done
fi

passed=0 failed=0
for name in "${names[@]}"; do
  out="$here/results/$name"
  rm -rf "$out" && mkdir -p "$out"
  # pg_regress feeds each script to psql on standard input, so `\ir` resolves from the
  # working directory: run it from sql/.
  if (cd "$here/sql" && "$pg_regress" --inputdir="$here" --outputdir="$out" --bindir="$pg_bindir" --dbname="e2e_$name" \
        --host="$PGHOST" --port="$PGPORT" --user="$PGUSER" "$name") >"$out/pg_regress.log" 2>&1; then
    echo "e2e: $name ... ok"
    passed=$((passed + 1))
  else
    echo "e2e: $name ... FAILED (expected/$name.out vs $out/results/$name.out):"
    if [[ -s "$out/regression.diffs" ]]; then cat "$out/regression.diffs"; else cat "$out/pg_regress.log"; fi
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
