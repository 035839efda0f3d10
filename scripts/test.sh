#!/usr/bin/env bash
# The README's test command: set up what is missing, then run the gates and all three test
# layers.
#   0. gates: rustfmt (cargo fmt --check) and clippy with -D warnings (every unsafe block
#      documented: clippy::undocumented_unsafe_blocks is denied in Cargo.toml)
#   1. core: unit and property tests of the pure-Rust crate (cargo test)
#   2. in-server: #[pg_test] tests inside PostgreSQL 15 (cargo pgrx test)
#   3. end-to-end: pgrx-tests/sql/*.sql run by PostgreSQL's pg_regress against a throwaway
#      cluster; then pgrx-tests/upgrade.sh: every frozen release updated to this one must equal
#      a fresh install, object by object
# Every layer runs even if an earlier one fails; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/cluster.sh

declare -A status
run_layer() {
  local name=$1; shift
  echo "== $name"
  if "$@"; then status[$name]=passed; else status[$name]=FAILED; fi
}

gates() {
  cargo fmt --all --check && cargo clippy --workspace --all-targets --features pg15 -- -D warnings
}
run_layer "gates (fmt, clippy)" gates
run_layer "core (cargo test)" cargo test --release -p compresslab-core
pgdata=$(postgres_owned_dir pgrx-test-data)
run_layer "in-server (cargo pgrx test)" cargo pgrx test pg15 --runas postgres --pgdata "$pgdata"

# No backend may have crashed: a crash restarts every session, which a test's own output
# might not show.
no_crash_in_log() {
  if grep -E "terminated by signal|was terminated|PANIC" "$CLUSTER_DIR/server.log"; then
    echo "e2e: the server log shows a crashed backend"
    return 1
  fi
}
# The end-to-end tests and the upgrade test, then memory_limited on a cluster limited to 1.5 GB
# per process.
e2e() {
  local failed=0
  install_extension && cluster_start e2e || return 1
  pgrx-tests/run.sh || failed=1
  pgrx-tests/upgrade.sh || failed=1
  no_crash_in_log && ((failed == 0)) || return 1
  cluster_stop
  CLUSTER_MEMORY_LIMIT_KB=1500000 cluster_start limited && pgrx-tests/run.sh memory_limited && no_crash_in_log
}
run_layer "end-to-end (pgrx-tests)" e2e
cluster_stop
trap - EXIT

echo "== summary"
passed=0 failed=0
for layer in "gates (fmt, clippy)" "core (cargo test)" "in-server (cargo pgrx test)" "end-to-end (pgrx-tests)"; do
  echo "$layer: ${status[$layer]}"
  if [[ ${status[$layer]} == passed ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "layers: $passed passed, $failed failed"
((failed == 0))
