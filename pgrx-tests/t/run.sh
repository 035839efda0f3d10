#!/usr/bin/env bash
# End-to-end tests run by PostgreSQL's own pg_regress (shipped with PGXS) against the running
# cluster (PGHOST/PGPORT/PGUSER from scripts/cluster.sh): each pgrx-tests/sql/NAME.sql runs
# through psql in a fresh database of its own (pg_regress creates it), its output is compared
# with pgrx-tests/expected/NAME.out, and a difference fails the test and is printed as a unified
# diff (pg_regress's regression.diffs). Optional arguments: test names to run; by default every
# test but memory_limited, which scripts/test.sh runs on a cluster with a memory limit.
# Ends with the line "N passed, N failed"; exits non-zero if any test failed.
set -uo pipefail
HARNESS=e2e
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
# PG_CONFIG's pg_regress, told where its psql is (--bindir: a relocated installation's
# pg_regress would look where it was built).
pg_regress="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"

if (($#)); then
  names=("$@")
else
  names=()
  for f in "$PGRX_TESTS"/sql/*.sql; do
    [[ $(basename "$f") == memory_limited.sql ]] || names+=("$(basename "$f" .sql)")
  done
fi

for name in "${names[@]}"; do
  out="$PGRX_TESTS/results/$name"
  rm -rf "$out" && mkdir -p "$out"
  # pg_regress feeds each script to psql on standard input, so `\ir` resolves from the
  # working directory: run it from sql/.
  if (cd "$PGRX_TESTS/sql" && "$pg_regress" --inputdir="$PGRX_TESTS" --outputdir="$out" --bindir="$PG_BINDIR" \
        --dbname="e2e_$name" --host="$PGHOST" --port="$PGPORT" --user="$PGUSER" "$name") >"$out/pg_regress.log" 2>&1; then
    pass "$name"
  else
    fail "$name" "expected/$name.out vs $out/results/$name.out:"
    if [[ -s "$out/regression.diffs" ]]; then cat "$out/regression.diffs"; else cat "$out/pg_regress.log"; fi
  fi
done
finish
