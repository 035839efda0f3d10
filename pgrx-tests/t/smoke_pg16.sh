#!/usr/bin/env bash
# PostgreSQL 16, smoke-tested: builds compresslab for 16 (`--features pg16`), installs it into
# the server scripts/setup.sh --pg 16 sets up (the pgserver wheel's 16.2: no lz4, zstd or
# contrib, so not the full suites), starts a throwaway cluster and runs pgrx-tests/smoke/pg16.sql:
# the extension loads, our codecs round trip, pglz and CRC-32C agree with 16's own C routines,
# the WAL what-if replays 16's WAL exactly (16 renamed the WAL reader's rnode and
# RelidByRelfilenode: src/server/wal/mod.rs), and the functions needing the server's liblz4/libzstd
# say they are missing. Prints each check; exits non-zero if any failed or none ran.
set -euo pipefail
cd "$(dirname "$0")/../.."
setup_log=$(mktemp)
scripts/setup.sh --pg 16 | tee "$setup_log"
PG_CONFIG=$(tail -1 "$setup_log")
rm -f "$setup_log"
export PG_CONFIG
HARNESS="smoke pg16"
# shellcheck source=pgrx-tests/t/lib.sh
source pgrx-tests/t/lib.sh
install_extension --no-lto && cluster_start smoke-16 || exit 1
out=$(psql -X -At -F ' | ' -f "$PGRX_TESTS/smoke/pg16.sql") || { echo "$out"; exit 1; }
echo "$out"
passed=$(grep -c ' | t$' <<<"$out" || true)
failed=$(grep -c ' | f$' <<<"$out" || true)
no_crash_in_log || failed=$((failed + 1))
cluster_stop
((passed > 0)) || fail "the checks of pgrx-tests/smoke/pg16.sql" "none ran"
finish
