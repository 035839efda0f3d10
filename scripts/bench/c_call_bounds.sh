#!/usr/bin/env bash
# How long the server's C calls that compresslab cannot split run on one value (RELIABILITY.md,
# promise 4): server_lz4_compress, server_lz4_decompress, server_pglz_compress and
# server_pglz_decompress (and bench of server_lz4 / server_pglz on a whole value) call
# LZ4_compress_default, LZ4_decompress_safe, pglz_compress and pglz_decompress once per value.
# The figures on 16 MiB set the size above which the thread-safe three run on a worker thread
# (src/server/codecs/off_thread.rs). Builds scripts/bench/c_call_bounds.c against the system's liblz4
# (the one PostgreSQL links) and PostgreSQL 15's libpgcommon.a, runs each call once on SIZE bytes
# of English-like text (default 1,000,000,000), and prints CPU and wall seconds per call (CPU is
# what a loaded machine stretches, wall what it was this time), and of zeroing a fresh result
# of that size first (ResultBytea::zeroed, palloc0, which checks for cancel between 4 MB pieces).
# With --pglz-shapes, times pglz_compress alone on SIZE bytes (default 16,000,000) of each of
# several shapes of data (text, random bytes, zeros, random over a few byte values, a short
# period) under the default strategy, 'always' and match_size_good=273,match_size_drop=0: its
# worst CPU time per byte sets the largest value server_pglz_compress takes (src/server/codecs/mod.rs).
#
#   scripts/bench/c_call_bounds.sh [SIZE]
#   scripts/bench/c_call_bounds.sh --pglz-shapes [SIZE]
set -euo pipefail
mode=()
if [[ ${1:-} == --pglz-shapes ]]; then
  mode=(--pglz-shapes)
  shift
  size=${1:-16000000}
else
  size=${1:-1000000000}
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -Wall -Wextra -Werror -o "$dir/bounds" "$(dirname "$0")/c_call_bounds.c" /usr/lib/x86_64-linux-gnu/liblz4.so.1 \
  /usr/lib/postgresql/15/lib/libpgcommon.a
echo "c_call_bounds: one call each on $size bytes ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
"$dir/bounds" "${mode[@]}" "$size"
