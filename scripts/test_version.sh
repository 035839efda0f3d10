#!/usr/bin/env bash
# The test layers on another PostgreSQL major (17, 18 or 19), run by scripts/test.sh after the full
# suite on 15:
#   scripts/test_version.sh N in-server   #[pg_test] tests inside PostgreSQL N (cargo pgrx test pgN)
#   scripts/test_version.sh N package     scripts/package.sh's Debian package and tarball for N,
#                                         checked by pgrx-tests/t/package.sh (files, control
#                                         fields, lintian; the package's contents against the
#                                         tarball's), the tarball installed over / on a fresh
#                                         cluster of N: N's server here is not a Debian package,
#                                         so the package's Depends cannot be satisfied
#   scripts/test_version.sh N e2e         pgrx-tests/t/run.sh (every pg_regress test, memory_limited
#                                         on a memory-limited cluster), on 19 pgrx-tests/t/cancel.sh,
#                                         pgrx-tests/t/upgrade.sh, pgrx-tests/t/standby.sh,
#                                         pgrx-tests/t/advise_concurrent.sh and
#                                         pgrx-tests/t/recompress.sh
#                                         against the extension installed into N (built once,
#                                         without the LTO rebuild of 15's layer); on 18 and 19,
#                                         whose initdb turns data checksums on, the WAL tests
#                                         (wal_fpi, wal_whatif) once more on a cluster without them;
#                                         on 19, pgrx-tests/t/pg_upgrade.sh: a cluster of 18 with
#                                         pglz values upgraded to 19, advised and rewritten.
# scripts/setup.sh --pg N first makes the server available (cached: seconds after the first run).
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: scripts/test_version.sh 17|18|19 in-server|e2e|package}
layer=${2:?usage: scripts/test_version.sh 17|18|19 in-server|e2e|package}
setup_log=$(mktemp)
scripts/setup.sh --pg "$major" | tee "$setup_log"
PG_CONFIG=$(tail -1 "$setup_log")
rm -f "$setup_log"
export PG_CONFIG
source scripts/cluster.sh
# psql of the same installation (the harnesses of pgrx-tests/t/ put it first on the PATH too).
export PATH="$PG_BINDIR:$PATH"

case $layer in
  in-server)
    pgdata=$(postgres_owned_dir "pgrx-test-data-$major")
    cargo pgrx test "pg$major" --runas postgres --pgdata "$pgdata"
    ;;
  e2e)
    failed=0
    install_extension --no-lto && cluster_start "e2e-$major" || exit 1
    echo "e2e: PostgreSQL $major, data_checksums $(psql -X -At -c 'SHOW data_checksums')"
    pgrx-tests/t/run.sh || failed=1
    # Cancel on 1 GB values (about 2 minutes): on the newest major only, as on 15 in scripts/test.sh.
    if ((major >= 19)); then pgrx-tests/t/cancel.sh || failed=1; fi
    pgrx-tests/t/upgrade.sh || failed=1
    pgrx-tests/t/standby.sh || failed=1
    pgrx-tests/t/advise_concurrent.sh || failed=1
    no_crash_in_log || failed=1
    # after the crash check: its sigkill case kills a backend on purpose
    pgrx-tests/t/recompress.sh || failed=1
    cluster_stop
    if ((major >= 18)); then
      cluster_start "e2e-$major-nochecksums" --no-data-checksums || exit 1
      echo "e2e: PostgreSQL $major, data_checksums $(psql -X -At -c 'SHOW data_checksums')"
      pgrx-tests/t/run.sh wal_fpi wal_whatif || failed=1
      no_crash_in_log || failed=1
      cluster_stop
    fi
    CLUSTER_MEMORY_LIMIT_KB=1500000 cluster_start "limited-$major" || exit 1
    pgrx-tests/t/run.sh memory_limited || failed=1
    no_crash_in_log || failed=1
    cluster_stop
    # 18 to 19 with pg_upgrade (18's server from scripts/setup.sh --pg 18, cached).
    if ((major == 19)); then
      PG_CONFIG_OLD=$(scripts/setup.sh --pg 18 | tail -1) pgrx-tests/t/pg_upgrade.sh || failed=1
    fi
    ((failed == 0))
    ;;
  package)
    scripts/package.sh && pgrx-tests/t/package.sh
    ;;
  *) echo "test_version: unknown layer $layer (in-server, e2e or package)" >&2; exit 2 ;;
esac
