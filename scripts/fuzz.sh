#!/usr/bin/env bash
# Fuzz compresslab-core's codecs with cargo-fuzz (libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 60 s, all targets)
#
# Installs cargo-fuzz if missing (needs the nightly toolchain), builds every target once, then
# runs each target for SECONDS_PER_TARGET seconds, one at a time, under `nice -n 19`, with its
# corpus in fuzz/corpus/TARGET (not committed) plus the committed seeds in fuzz/seeds/TARGET.
# Prints one line per target (executions, corpus files, result) and exits non-zero if any
# target found a crash, a failed assertion, a leak or a timeout; the input that did it is in
# fuzz/artifacts/TARGET/ and the full log in fuzz/logs/TARGET.log.
#
# Environment:
#   FUZZ_RUNS=N    also stop each target after N executions (-runs=N): a campaign of a fixed
#                  size, with SECONDS_PER_TARGET as the time cap.
#   FUZZ_ARGS=...  more libFuzzer flags for every target.
#   FUZZ_TARGET_DIR=DIR  cargo's target folder (default fuzz/target).
#
# zstd is C (zstd-sys): when clang is installed, it is compiled with AddressSanitizer and
# libFuzzer's coverage and comparison tracing too, so the fuzzer sees inside the decoder and ASan
# checks its reads and writes (in our output buffers included); without clang only the Rust
# side is instrumented. PostgreSQL's pglz (libpgcommon.a, the reference) is never instrumented.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "usage: $0 [SECONDS_PER_TARGET] [TARGET...]" >&2
  exit 2
fi

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: the nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked || cargo install cargo-fuzz || exit 2
fi

if (($# > 0)); then
  targets=("$@")
else
  mapfile -t targets < <(cd fuzz && cargo +nightly fuzz list)
fi

# Per-target libFuzzer flags: the pglz encoder comparison needs inputs past 4096 bytes for the
# history to wrap; the stream and spill round trips need room for many records.
extra_args() {
  case $1 in
    pglz_exact_matches_postgres_encoder | pglz_roundtrip_*) echo "-max_len=20000" ;;
    lz4_stream_* | spill_*) echo "-max_len=16384" ;;
  esac
}

if command -v clang >/dev/null; then
  export CC=clang
  export CFLAGS_x86_64_unknown_linux_gnu="-fsanitize=address -fsanitize-coverage=inline-8bit-counters,pc-table,trace-cmp"
else
  echo "fuzz: clang not found: zstd's C code is not instrumented (apt-get install clang)"
fi
target_dir=$(realpath -m "${FUZZ_TARGET_DIR:-fuzz/target}")

echo "fuzz: building ${#targets[@]} targets (release, debug assertions, AddressSanitizer)"
build_start=$SECONDS
if ! (cd fuzz && nice -n 19 cargo +nightly fuzz build --target-dir "$target_dir" >../fuzz/build.log 2>&1); then
  tail -40 fuzz/build.log
  echo "fuzz: build failed"
  exit 1
fi
echo "fuzz: built in $((SECONDS - build_start)) s"

mkdir -p fuzz/logs
failed=0
printf '%-52s %14s %8s %7s  %s\n' target executions corpus seconds result
for target in "${targets[@]}"; do
  corpus=fuzz/corpus/$target
  mkdir -p "$corpus" "fuzz/artifacts/$target"
  dirs=("corpus/$target")
  [[ -d fuzz/seeds/$target ]] && dirs+=("seeds/$target")
  args=(-max_total_time="$seconds" -timeout=60 -print_final_stats=1)
  [[ -n ${FUZZ_RUNS:-} ]] && args+=(-runs="$FUZZ_RUNS")
  # shellcheck disable=SC2207
  args+=($(extra_args "$target") ${FUZZ_ARGS:-})
  log=fuzz/logs/$target.log
  start=$SECONDS
  (cd fuzz && nice -n 19 cargo +nightly fuzz run --target-dir "$target_dir" "$target" "${dirs[@]}" -- "${args[@]}") >"$log" 2>&1
  rc=$?
  elapsed=$((SECONDS - start))
  execs=$(grep -ao 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  if [[ -z $execs ]]; then
    execs=$(grep -aoE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  fi
  files=$(find "$corpus" -type f | wc -l)
  if ((rc == 0)); then
    result=ok
  elif grep -q 'libFuzzer: run interrupted' "$log"; then
    # SIGINT/SIGTERM from outside (libFuzzer exits 72): not a finding, but not a full run either.
    failed=$((failed + 1))
    result="INTERRUPTED (killed from outside after ${elapsed} s) — see $log"
  else
    failed=$((failed + 1))
    artifact=$(grep -oE 'artifacts/[^ ]+' "$log" | tail -1)
    result="FINDING (exit $rc) ${artifact:+fuzz/$artifact} — see $log"
  fi
  printf '%-52s %14s %8s %7s  %s\n' "$target" "${execs:-?}" "$files" "$elapsed" "$result"
done
echo "fuzz: ${#targets[@]} targets, $failed with findings or interrupted"
((failed == 0))
