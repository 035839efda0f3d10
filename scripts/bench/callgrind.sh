#!/usr/bin/env bash
# Instruction counts of the core's codecs under valgrind's callgrind. Counts are deterministic: a
# busy machine gives the same figures as an idle one, so two builds or two commits can be
# compared at any time (the clock cannot: BENCHMARKS.md, "Method").
#
#   bash scripts/bench/callgrind.sh [-r REV] [FILTER]      every synthetic row, or those whose name
#                                                    contains FILTER ("pglz", "lz4 decompress")
#   bash scripts/bench/callgrind.sh [-r REV] catalog       pglz and pglz_fast on the catalog text,
#                                                    2 KB and 8 KB slices
#   bash scripts/bench/callgrind.sh [-r REV] file PAYLOAD SLICE [fast]    one pglz row on PAYLOAD
#   bash scripts/bench/callgrind.sh [-r REV] crc SIZE      one crc32c call on SIZE bytes
#   bash scripts/bench/callgrind.sh [-r REV] table         every count BENCHMARKS.md quotes
#   bash scripts/bench/callgrind.sh payload NAME           the path of a payload file (below)
#
# Synthetic rows: one pass of one operation over one synthetic 2 MB payload (pages, wal, text;
# core/examples/synthetic; and for decompression in 8 KB slices the repeated-pattern family,
# period1 .. period64 and runs, the lab's synthetic kinds of those names; LZ4 compression of
# them too) cut into slices: callgrind's total for 3 passes minus its total for 1,
# halved, so the data generation and start-up cancel out. Operations: pglz exact and fast
# compression and pglz decompression (core/examples/pglz_speed.rs `cg`), LZ4 block compression
# and decompression (core/examples/lz4_speed.rs). Output: a TSV row per count (name,
# instructions per pass). A refactoring must leave them unchanged, within noise.
#
# catalog, file: core/examples/pglz_speed.rs compresses every SLICE-byte slice of a payload file
# (DEFAULT strategy; `fast` for pglz_fast) and decompresses the accepted ones, with 1 and with 2
# timed repetitions; the difference is one pass. Printed: its instructions, those of its
# compression (the inclusive cost of the outermost function of the pglz::compress module, the
# encoder's loop with the memset of its tables) and the rest (decompression and the example's
# loop), in millions, and the compressed size (refused slices counted raw). PAYLOAD, made once in
# target/callgrind/payloads (the same bytes wherever the same PostgreSQL package is installed):
#   text    PostgreSQL's catalog descriptions: the pg_description rows of postgres.bki (pg_config
#           --sharedir) in index order, joined by spaces, 8 copies; the report's "catalog text"
#           is the same query over a live database, whose rows these are, less those initdb and
#           extensions add
#   random  1 MiB of pseudo-random bytes (Python's random.Random(1)): incompressible, so pglz
#           gives up after first_success_by
#   zeros   1 MiB of zero bytes: the most repetitive input
#   FILE    any other argument is read as a file
#
# crc: core/examples/crc_speed.rs `calls SIZE N` with N = 20000 and 40000 (every alignment 0..7);
# the difference over N is one call. valgrind does not emulate AVX-512: from 144 bytes this counts
# the path of a CPU without it (one stream, three from 512 bytes), not the 64-byte folds a CPU
# with VPCLMULQDQ runs.
#
# -r REV builds REV (any commit, tag or branch) instead of the work tree: its files, taken with
# git archive into target/callgrind/src/COMMIT, are built in target/callgrind/rev, where the
# dependencies stay built; compresslab-core and the examples are rebuilt at every call, since
# cargo's fingerprints, relative to the workspace, cannot tell two revisions apart. The work
# tree builds in target/callgrind/work. catalog, file and crc run on commits from 0.3.0 on
# (crc_speed came with it; pglz_speed takes these arguments since 0.2.0), the synthetic rows from
# bae0092 on. Run one call at a time: builds of different revisions share target/callgrind/rev.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

rev=
if [[ ${1:-} == -r ]]; then
  rev=${2:?"-r needs a revision"}
  shift 2
fi
mode=${1:-}
command -v valgrind >/dev/null || { echo "callgrind: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

target=$repo/target/callgrind
payloads=$target/payloads
mkdir -p "$payloads"

src=$repo
if [[ -n $rev ]]; then
  commit=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "callgrind: no commit $rev" >&2; exit 2; }
  label=$(git rev-parse --short "$commit")
  src=$target/src/$commit
  if [[ ! -f $src/Cargo.toml ]]; then
    rm -rf "$src" && mkdir -p "$src"
    git archive "$commit" | tar -x -C "$src"
  fi
  find "$src/core" -type f -exec touch {} +
  build_dir=$target/rev
else
  label=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- core Cargo.toml Cargo.lock .cargo || echo "+changes")
  build_dir=$target/work
fi

payload() {
  local name=$1 file=$payloads/$1
  case $name in
    text | random | zeros) ;;
    *) [[ -f $name ]] || { echo "callgrind: no payload or file $name" >&2; exit 2; }; echo "$name"; return ;;
  esac
  if [[ ! -s $file ]]; then
    "$repo/scripts/bench/payload.py" "$name" "$file" "$(pg_config --sharedir)/postgres.bki"
  fi
  echo "$file"
}

# `payload NAME`: the path of a payload file, made if missing, and nothing built
# (scripts/bench/against_c.sh gives the C the same catalog text).
if [[ $mode == payload ]]; then
  payload "${2:?payload name}"
  exit 0
fi

# The examples, with the release profile (fat LTO, as the extension's library is built), run by
# the paths cargo reports (unique to the build), not the shared examples/ folder, which another
# revision's build may overwrite.
examples=()
for example in pglz_speed crc_speed lz4_speed; do
  [[ -f $src/core/examples/$example.rs ]] && examples+=(--example "$example")
done
declare -A exe
while read -r name path; do exe[$name]=$path; done < <(
  cd "$src" && CARGO_TARGET_DIR=$build_dir nice -n 5 cargo build --quiet --release -p compresslab-core \
    "${examples[@]}" --message-format=json | "$repo/scripts/bench/cargo_executables.py")
[[ -n ${exe[pglz_speed]:-} ]] || { echo "callgrind: the build failed" >&2; exit 1; }

# Total instructions of one run, and the largest inclusive cost among functions whose name
# matches $1 (0 when none ran or no pattern is given).
count() {
  local pattern=$1 out
  shift
  out=$(mktemp /tmp/callgrind.out.XXXXXX)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
  local total inclusive=0
  total=$(awk '/^summary:/ { print $2 }' "$out")
  if [[ -n $pattern ]]; then
    inclusive=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null |
      awk -v pat="$pattern" '$0 ~ pat {gsub(",", "", $1); if ($1 + 0 > max) max = $1 + 0} END {print max + 0}')
  fi
  rm -f "$out"
  echo "$total $inclusive"
}

# One synthetic row: a pass of one operation, (3 passes - 1 pass) / 2.
row() {
  local name=$1 filter=$2 one three
  shift 2
  [[ -z "$filter" || "$name" == *"$filter"* ]] || return 0
  read -r one _ < <(count '' "$@" 1)
  read -r three _ < <(count '' "$@" 3)
  printf '%s\t%d\n' "$name" $(((three - one) / 2))
}

synthetic_rows() {
  local filter=$1 payload slice op
  [[ -n ${exe[lz4_speed]:-} ]] || { echo "callgrind: $label predates the synthetic rows (bae0092): use catalog, file or crc" >&2; exit 2; }
  for payload in pages wal text; do
    for slice in 2048 8192 65536; do
      for op in exact fast decompress; do
        row "pglz $op $payload $slice" "$filter" "${exe[pglz_speed]}" cg "$op" "$payload" "$slice"
      done
    done
    for slice in 8192 65536; do
      for op in compress decompress; do
        row "lz4 $op $payload $slice" "$filter" "${exe[lz4_speed]}" cg "$op" "$payload" "$slice"
      done
    done
  done
  # The repeated-pattern family, decompression of 8 KB slices, at revisions whose
  # examples know these payloads.
  if "${exe[lz4_speed]}" cg decompress runs 8192 0 2>/dev/null; then
    for payload in period1 period2 period4 period8 period16 period32 period64 runs; do
      row "pglz decompress $payload 8192" "$filter" "${exe[pglz_speed]}" cg decompress "$payload" 8192
      row "lz4 decompress $payload 8192" "$filter" "${exe[lz4_speed]}" cg decompress "$payload" 8192
      row "lz4 compress $payload 8192" "$filter" "${exe[lz4_speed]}" cg compress "$payload" 8192
      if "${exe[lz4_speed]}" cg decompress_lz4_flex runs 8192 0 2>/dev/null; then
        row "lz4_flex decompress $payload 8192" "$filter" "${exe[lz4_speed]}" cg decompress_lz4_flex "$payload" 8192
      fi
    done
  fi
}

pglz_file() {
  local name=$1 slice=$2 fast=${3:-} file one two size
  file=$(payload "$name")
  read -r -a one < <(count 'pglz::compress::' "${exe[pglz_speed]}" "$file" "$slice" 1 $fast)
  read -r -a two < <(count 'pglz::compress::' "${exe[pglz_speed]}" "$file" "$slice" 2 $fast)
  size=$("${exe[pglz_speed]}" "$file" "$slice" 0 $fast | sed -n 's/.*(\([0-9.]*%\)).*/\1/p')
  awk -v l="$label" -v n="$(basename "$name")" -v s="$slice" -v m="${fast:-exact}" -v sz="$size" \
    -v a="${one[0]}" -v b="${two[0]}" -v ca="${one[1]}" -v cb="${two[1]}" 'BEGIN {
      pass = b - a; c = cb - ca
      printf "%-9s pglz %-5s %-8s %6d  pass %9.2f M  compress %9.2f M  rest %8.2f M  size %s\n",
        l, m, n, s, pass / 1e6, c / 1e6, (pass - c) / 1e6, sz }'
}

crc() {
  local size=$1 n=20000 one two
  [[ -n ${exe[crc_speed]:-} ]] || { echo "callgrind: $label has no crc_speed example (0.3.0 on)" >&2; exit 2; }
  read -r one _ < <(count '' "${exe[crc_speed]}" calls "$size" "$n")
  read -r two _ < <(count '' "${exe[crc_speed]}" calls "$size" $((2 * n)))
  awk -v l="$label" -v s="$size" -v a="$one" -v b="$two" -v n="$n" \
    'BEGIN { printf "%-9s crc32c %5d B  %8.1f instructions a call\n", l, s, (b - a) / n }'
}

case $mode in
  catalog) for fast in "" fast; do for slice in 2048 8192; do pglz_file text $slice $fast; done; done ;;
  file) pglz_file "${2:?payload}" "${3:?slice size}" "${4:-}" ;;
  crc) crc "${2:?size}" ;;
  table)
    for fast in "" fast; do
      for slice in 2048 8192; do pglz_file text $slice $fast; done
      pglz_file random 2048 $fast
      pglz_file zeros 8192 $fast
    done
    for size in 16 32 64 256 1024 8192; do crc $size; done
    ;;
  *) synthetic_rows "$mode" ;;
esac
