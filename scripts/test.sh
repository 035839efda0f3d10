#!/usr/bin/env bash
# The README's test command: set up what is missing, then run the gates and every test layer.
#   0. gates: rustfmt (cargo fmt --check) and clippy with -D warnings (every unsafe block
#      documented: clippy::undocumented_unsafe_blocks is denied in Cargo.toml); pyflakes over
#      every Python program
#   1. core: unit and property tests of the pure-Rust crate (cargo test)
#   2. in-server: #[pg_test] tests inside PostgreSQL 15 (cargo pgrx test)
#   3. end-to-end: pgrx-tests/sql/*.sql run by PostgreSQL's pg_regress against a throwaway
#      cluster; pgrx-tests/t/cancel.sh: every function that takes a value cancelled on 1 GB
#      within a second; pgrx-tests/t/standby.sh: wal_whatif on a standby;
#      pgrx-tests/t/advise_concurrent.sh: advise() while other sessions drop, create and lock
#      tables; then
#      pgrx-tests/t/upgrade.sh: every frozen release updated to this one
#      must equal a fresh install, object by object; pgrx-tests/t/recompress.sh: recompress
#      under concurrent writes, SIGKILL, cancel and max_wal_rate
#   4. package: scripts/package.sh builds the Debian package and the tarball; pgrx-tests/t/package.sh
#      checks their files and lintian's verdict, installs the package with apt-get on a fresh
#      cluster and removes it, and installs scripts/pgxn_bundle.sh's zip with the PGXN client
#   5. fuzz: scripts/fuzz.sh 5, every cargo-fuzz target for 5 seconds under AddressSanitizer
#   6. other versions: for each major in COMPRESSLAB_TEST_PG (default "16 17 18 19"; empty for
#      none), the server set up (scripts/setup.sh --pg N, cached), then the end-to-end layer and
#      the package layer on it, and on the last of them (19) the in-server layer too
#      (scripts/test_version.sh; on 18 and 19 the WAL tests also without data checksums; on 19
#      the upgrade from 18); on 16, whose server here has no lz4, zstd or
#      contrib, pgrx-tests/t/smoke_pg16.sh instead. Gates, core and fuzz do not depend on the server:
#      15 only.
# The gates also check META.json (PGXN): valid by PGXN's validator pgxn_meta, and against Cargo.toml.
# Every layer runs even if an earlier one fails; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
# rustup installs cargo in ~/.cargo/bin, which a bare shell's PATH (env -i PATH=/usr/bin:/bin)
# does not name.
[[ -d "${CARGO_HOME:-$HOME/.cargo}/bin" ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
scripts/setup.sh --tests
source scripts/cluster.sh

declare -A status
run_layer() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then status[$name]=passed; else status[$name]=FAILED; fi
}

# PGXN's META.json: valid by PGXN's validator pgxn_meta (Meta Spec 1.0.0), Cargo.toml's version,
# the PostgreSQL range of the majors Cargo.toml builds for (scripts/meta_json.py).
meta_json() { scripts/meta_json.py META.json Cargo.toml; }
# Every Python program of the repository (the scripts' helpers, which no compiler reads)
# through pyflakes: undefined names, unused imports and variables, syntax errors.
python_lint() {
  local files
  mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.py')
  ((${#files[@]} == 0)) || pyflakes3 "${files[@]}"
}
gates() {
  cargo fmt --all --check && cargo clippy --workspace --all-targets --features pg15 -- -D warnings && meta_json &&
    python_lint
}
run_layer "gates (fmt, clippy, META.json, pyflakes)" gates
run_layer "core (cargo test)" cargo test --release -p compresslab-core
pgdata=$(postgres_owned_dir pgrx-test-data)
run_layer "in-server (cargo pgrx test)" cargo pgrx test pg15 --runas postgres --pgdata "$pgdata"

# No backend may have crashed (no_crash_in_log, scripts/cluster.sh).
# The end-to-end tests, cancel on 1 GB values (pgrx-tests/t/cancel.sh, promise 4), the upgrade
# test and README.md and docs/ against the catalogue, then memory_limited on a cluster
# limited to 1.5 GB per process.
e2e() {
  local failed=0
  install_extension && cluster_start e2e || return 1
  pgrx-tests/t/run.sh || failed=1
  pgrx-tests/t/cancel.sh || failed=1
  pgrx-tests/t/standby.sh || failed=1
  pgrx-tests/t/advise_concurrent.sh || failed=1
  pgrx-tests/t/upgrade.sh || failed=1
  pgrx-tests/t/report_dbname.sh || failed=1
  pgrx-tests/t/wal_pick.sh || failed=1
  pgrx-tests/t/wal_pick_load.sh || failed=1
  pgrx-tests/readme_check.sh || failed=1
  no_crash_in_log && ((failed == 0)) || return 1
  # recompress under concurrent writes, SIGKILL, cancel and max_wal_rate: after the crash
  # check, since its sigkill case kills a backend on purpose
  pgrx-tests/t/recompress.sh || return 1
  cluster_stop
  CLUSTER_MEMORY_LIMIT_KB=1500000 cluster_start limited && pgrx-tests/t/run.sh memory_limited && no_crash_in_log
}
run_layer "end-to-end (pgrx-tests)" e2e
cluster_stop
trap - EXIT
# The packages, from the release build install_extension made (the package test starts and stops
# clusters of its own, and puts the machine's install back after).
run_layer "package (deb, tarball, PGXN)" bash -c 'scripts/package.sh && pgrx-tests/t/package.sh'
# A smoke run of every fuzz target (5 s each, AddressSanitizer); scripts/fuzz.sh for campaigns.
run_layer "fuzz (smoke)" scripts/fuzz.sh 5
layers=("gates (fmt, clippy, META.json, pyflakes)" "core (cargo test)" "in-server (cargo pgrx test)" "end-to-end (pgrx-tests)" "package (deb, tarball, PGXN)" "fuzz (smoke)")
test_majors=${COMPRESSLAB_TEST_PG-16 17 18 19}
for major in $test_majors; do
  if ((major == 16)); then
    # 16's only server here lacks lz4, zstd and contrib: a smoke test, not the suites.
    run_layer "smoke pg16" pgrx-tests/t/smoke_pg16.sh
    layers+=("smoke pg16")
    continue
  fi
  # The #[pg_test] tests (our codecs and checksums against the server's own C, the settings)
  # run on the oldest major (15, above) and the newest: 17 and 18 change none of what they
  # check, and each major's debug build costs CI about 4 minutes.
  if [[ $major == "${test_majors##* }" ]]; then
    run_layer "in-server pg$major" scripts/test_version.sh "$major" in-server
    layers+=("in-server pg$major")
  fi
  run_layer "end-to-end pg$major" scripts/test_version.sh "$major" e2e
  run_layer "package pg$major" scripts/test_version.sh "$major" package
  layers+=("end-to-end pg$major" "package pg$major")
done

echo "== summary"
passed=0 failed=0
for layer in "${layers[@]}"; do
  echo "$layer: ${status[$layer]}"
  if [[ ${status[$layer]} == passed ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "layers: $passed passed, $failed failed"
((failed == 0))
