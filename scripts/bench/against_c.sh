#!/usr/bin/env bash
# What bounds our codecs against PostgreSQL's own C, outside the server: for each operation and
# payload, the time and the instructions of one pass, ours and the C's, per input byte, on the
# same bytes. The report's goal table says how far apart the two are in the server; this says
# where the time goes on both sides.
#
#   bash scripts/bench/against_c.sh [FILTER]      every row, or those whose name contains FILTER
#   bash scripts/bench/against_c.sh --branches [FILTER]
#                                           instead of the clock, conditional branches and
#                                           their mispredictions per input byte, both sides,
#                                           from valgrind's branch simulator (cachegrind
#                                           --branch-sim=yes: a table of 2-bit counters, no
#                                           history, so a model of a CPU's predictor, not it)
#
# The C side is scripts/bench/against_c.c, built here (-Wall -Wextra -Werror) against the files
# the PostgreSQL 15 packages install: `pglz_compress` / `pglz_decompress` from libpgcommon.a,
# `pg_comp_crc32c` from libpgport.a (a pointer to `pg_comp_crc32c_sse42` on this CPU, called
# through it as the server does; ours is called through a function pointer too), and the
# system's liblz4 (`LZ4_compress_default`, `LZ4_decompress_safe`, the one the server links).
# Ours are the core's speed examples (`core/examples/{pglz,lz4,crc}_speed.rs`, `cg` mode,
# release profile). Both run the same loop: one pass is every slice of the payload
# compressed (or decompressed, or checksummed) once; the C compresses pglz's blocks itself, with
# the same result, since ours writes its bytes.
#
# Columns (per input byte; a decompression row's bytes are the accepted slices' raw bytes):
#   ns        CPU time of a pass (the thread's clock), best of 31 passes after a warm-up, in
#             three alternating runs of each side, the best run; ours, the C's
#   instr     instructions of a pass, under valgrind (cachegrind): 3 passes less 1, halved
#   x         C / ours, of the time and of the instructions
#   pace      instructions per ns, ours against the C's (frequency cancels out): the time ratio
#             is the instruction ratio times this
# "pglz walk" rows time our decoder's walk over the items against the C's whole decompression
# (pglz_speed `cg walk`, `cg walk_stores`): alone, what is left of decoding if copying cost
# nothing, so its `x time` bounds what our decoder's way of reading the format can reach
# against the C; with stores, the decoder's stores made but no match's source loaded from the
# output, so the decoder's own row less this one is what loading bytes just written costs.
# Payloads: `pg-wal` and `pg-pages` PostgreSQL's own WAL and heap pages (pg_payloads below);
# `text` is PostgreSQL's catalog descriptions (scripts/bench/callgrind.sh payload text, the
# report's catalog text from postgres.bki); `pages` and `wal` the speed examples' synthetic
# stand-ins; `random` incompressible bytes; `period1`, `period8`, `period32` and `runs` the lab's
# repeated-pattern kinds of those names (2 MB, seed 1), whose matches overlap themselves.
set -euo pipefail
cd "$(dirname "$0")/../.."
branches=
if [[ ${1:-} == --branches ]]; then
  branches=1
  shift
fi
filter=${1:-}
command -v valgrind >/dev/null || { echo "against_c: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
libdir=$(pg_config --pkglibdir 2>/dev/null || true)
[[ -f /usr/lib/postgresql/15/lib/libpgcommon.a ]] && libdir=/usr/lib/postgresql/15/lib
for f in libpgcommon.a libpgport.a; do
  [[ -f $libdir/$f ]] || { echo "against_c: $libdir/$f not found (postgresql-server-dev-15)" >&2; exit 2; }
done
lz4=$(ldconfig -p | awk '/liblz4\.so\.1 / && !found { print $NF; found = 1 }')
[[ -n $lz4 ]] || { echo "against_c: liblz4.so.1 not found" >&2; exit 2; }

work=target/against_c
mkdir -p "$work"
cc -O2 -Wall -Wextra -Werror -o "$work/pgc" scripts/bench/against_c.c "$libdir/libpgcommon.a" "$libdir/libpgport.a" "$lz4"

declare -A exe
while read -r name path; do exe[$name]=$path; done < <(
  CARGO_TARGET_DIR=target/against_c/cargo cargo build --quiet --release -p compresslab-core \
    --example pglz_speed --example lz4_speed --example crc_speed --message-format=json |
    scripts/bench/cargo_executables.py)

# Payload files both sides read.
declare -A file
file[text]=$(bash scripts/bench/callgrind.sh payload text)
for name in pages wal random period1 period8 period32 runs; do
  file[$name]=$work/$name
  [[ -s ${file[$name]} ]] || "${exe[pglz_speed]}" cg dump "$name" 0 0 >"${file[$name]}"
done

# PostgreSQL's own bytes (`pg-wal`, `pg-pages`): the first 4 MB of the WAL segment and the first
# 8 MB (1,024 pages, as stored) of pgbench_accounts after `pgbench -i -s 10` with the uuid text
# filler, as the report's database; made once, in a scratch cluster (scripts/cluster.sh).
pg_payloads() {
  file[pg-wal]=$work/pg-wal
  file[pg-pages]=$work/pg-pages
  [[ -s ${file[pg-wal]} && -s ${file[pg-pages]} ]] && return 0
  (
    # shellcheck source=scripts/cluster.sh
    source scripts/cluster.sh
    cluster_start against_c_cluster >/dev/null
    "$PG_BINDIR/pgbench" -i -q -s 10 >/dev/null 2>&1
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
      -c "ALTER TABLE pgbench_accounts ALTER COLUMN filler TYPE text USING gen_random_uuid()::text" \
      -c "CHECKPOINT" >/dev/null
    wal=$("$PG_BINDIR/psql" -X -At -c "SELECT name FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' ORDER BY name LIMIT 1")
    rel=$("$PG_BINDIR/psql" -X -At -c "SELECT pg_relation_filepath('pgbench_accounts')")
    head -c 4194304 "$CLUSTER_DATA/pg_wal/$wal" >"${file[pg-wal]}"
    head -c 8388608 "$CLUSTER_DATA/$rel" >"${file[pg-pages]}"
    cluster_stop >/dev/null
  )
}

# Cachegrind's totals of the EVENTS named (Ir; Bc and Bcm with the branch simulator) for one
# pass: 3 passes less 1, halved. pass_events "EVENTS" COMMAND ARGS...
pass_events() {
  local events=$1 one three i per_pass=()
  shift
  read -r -a one < <(cachegrind_events "$events" "$@" 1)
  read -r -a three < <(cachegrind_events "$events" "$@" 3)
  for i in "${!one[@]}"; do per_pass+=($(((three[i] - one[i]) / 2))); done
  echo "${per_pass[*]}"
}
cachegrind_events() {
  local events=$1 out sim=()
  shift
  [[ $events == *B* ]] && sim=(--branch-sim=yes)
  out=$(mktemp /tmp/cachegrind.out.XXXXXX)
  valgrind --tool=cachegrind --cache-sim=no "${sim[@]}" --cachegrind-out-file="$out" "$@" >/dev/null 2>&1
  awk -v events="$events" '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
    /^summary:/ { n = split(events, e, " "); for (k = 1; k <= n; k++) printf "%s%s", (k > 1 ? " " : ""), $col[e[k]]; print "" }' "$out"
  rm -f "$out"
}
# Best ns per byte of three alternating timed runs of each side: "ours c".
clocks() {
  local ours=$1 c=$2 o=1e9 k=1e9 r
  for _ in 1 2 3; do
    r=$(PASS_CLOCK=1 $ours 31 | awk '{ print $1 }'); o=$(awk -v a="$o" -v b="$r" 'BEGIN { print (b < a) ? b : a }')
    r=$(PASS_CLOCK=1 $c 31 | awk '{ print $1 }'); k=$(awk -v a="$k" -v b="$r" 'BEGIN { print (b < a) ? b : a }')
  done
  echo "$o $k"
}

if [[ -n $branches ]]; then
  printf '| row | branches ours | branches C | mispredicted ours | mispredicted C | x mispredicted |\n'
  printf '|---|---:|---:|---:|---:|---:|\n'
else
  printf '| row | ns ours | ns C | x time | instr ours | instr C | x instr | pace |\n'
  printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
fi
row() {
  local name=$1 ours=$2 c=$3 payload=$4 slice=$5 bytes t_ours t_c i_ours i_c
  [[ -z $filter || $name == *"$filter"* ]] || return 0
  [[ $payload == pg-* ]] && pg_payloads
  bytes=$(PASS_BYTES=1 $c "${file[$payload]}" "$slice" 0)
  if [[ -n $branches ]]; then
    local b_ours b_c
    read -r -a b_ours < <(pass_events "Bc Bcm" $ours "${file[$payload]}" "$slice")
    read -r -a b_c < <(pass_events "Bc Bcm" $c "${file[$payload]}" "$slice")
    awk -v n="$name" -v bo="${b_ours[0]}" -v mo="${b_ours[1]}" -v bc="${b_c[0]}" -v mc="${b_c[1]}" -v b="$bytes" 'BEGIN {
        x = mo > 0 ? sprintf("%.2f", mc / mo) : "-"
        printf "| %s | %.3f | %.3f | %.4f | %.4f | %s |\n", n, bo / b, bc / b, mo / b, mc / b, x }'
    return 0
  fi
  read -r t_ours t_c < <(clocks "$ours ${file[$payload]} $slice" "$c ${file[$payload]} $slice")
  i_ours=$(pass_events Ir $ours "${file[$payload]}" "$slice")
  i_c=$(pass_events Ir $c "${file[$payload]}" "$slice")
  awk -v n="$name" -v to="$t_ours" -v tc="$t_c" -v io="$i_ours" -v ic="$i_c" -v b="$bytes" 'BEGIN {
      printf "| %s | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
        n, to, tc, tc / to, io / b, ic / b, ic / io, (io / to) / (ic / tc) }'
}

pglz=${exe[pglz_speed]}
for p in "text 2048" "text 8192" "pages 8192" "wal 2048" "pg-pages 8192" "pg-wal 2048"; do
  read -r payload slice <<<"$p"
  row "pglz exact, $payload $slice" "$pglz cg exact" "$work/pgc exact" "$payload" "$slice"
  row "pglz_fast against the C's exact, $payload $slice" "$pglz cg fast" "$work/pgc exact" "$payload" "$slice"
  row "pglz decompress, $payload $slice" "$pglz cg decompress" "$work/pgc decompress" "$payload" "$slice"
  row "pglz walk alone against the C's decompress, $payload $slice" "$pglz cg walk" "$work/pgc decompress" "$payload" "$slice"
  row "pglz walk and stores against the C's decompress, $payload $slice" "$pglz cg walk_stores" "$work/pgc decompress" "$payload" "$slice"
done
for payload in pages wal text pg-pages pg-wal; do
  row "lz4 compress, $payload 8192" "${exe[lz4_speed]} cg compress" "$work/pgc lz4_compress" "$payload" 8192
  row "lz4 decompress, $payload 8192" "${exe[lz4_speed]} cg decompress" "$work/pgc lz4_decompress" "$payload" 8192
done
# Repeated patterns and runs, whose matches overlap themselves (2 MB, seed 1, 8 KB slices as the
# report's).
for payload in period1 period8 period32 runs; do
  row "pglz exact, $payload 8192" "$pglz cg exact" "$work/pgc exact" "$payload" 8192
  row "pglz_fast against the C's exact, $payload 8192" "$pglz cg fast" "$work/pgc exact" "$payload" 8192
  row "pglz decompress, $payload 8192" "$pglz cg decompress" "$work/pgc decompress" "$payload" 8192
  row "lz4 compress, $payload 8192" "${exe[lz4_speed]} cg compress" "$work/pgc lz4_compress" "$payload" 8192
  row "lz4 decompress, $payload 8192" "${exe[lz4_speed]} cg decompress" "$work/pgc lz4_decompress" "$payload" 8192
done
for size in 16 32 64 128 256 512 1024 8192; do
  row "crc32c, random $size" "${exe[crc_speed]} cg" "$work/pgc crc" random "$size"
done
