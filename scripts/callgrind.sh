#!/usr/bin/env bash
# Instruction counts of the core's codecs under valgrind's callgrind, for comparing two builds
# of the same code paths (a refactoring must leave them unchanged, within noise).
#
#   bash scripts/callgrind.sh            # build the examples (release), print every count
#   bash scripts/callgrind.sh pglz       # only the rows whose name contains "pglz"
#
# Each row is one pass of one operation over one synthetic 2 MB payload (core/examples/
# synthetic) cut into slices: callgrind's total for 3 passes minus its total for 1, halved, so
# the data generation and start-up cancel out. Operations: pglz exact and fast compression and
# pglz decompression (core/examples/pglz_speed.rs), LZ4 block compression and decompression
# (core/examples/lz4_speed.rs). Output: a TSV row per count (name, instructions per pass).
set -euo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"

nice -n 5 cargo build --quiet --release -p compresslab-core --example pglz_speed --example lz4_speed
bin=target/release/examples

# Instructions callgrind counts for one run of the given command.
count() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
    awk '/^summary:/ { print $2 }' "$out"
    rm -f "$out"
}

row() {
    local name=$1
    shift
    [[ -z "$filter" || "$name" == *"$filter"* ]] || return 0
    local one three
    one=$(count "$@" 1)
    three=$(count "$@" 3)
    printf '%s\t%d\n' "$name" $(((three - one) / 2))
}

for payload in pages wal text; do
    for slice in 2048 8192 65536; do
        for op in exact fast decompress; do
            row "pglz $op $payload $slice" "$bin/pglz_speed" cg "$op" "$payload" "$slice"
        done
    done
    for slice in 8192 65536; do
        for op in compress decompress; do
            row "lz4 $op $payload $slice" "$bin/lz4_speed" cg "$op" "$payload" "$slice"
        done
    done
done
