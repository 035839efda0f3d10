#!/usr/bin/env bash
# Promise 4 of RELIABILITY.md, end to end: every SQL function of compresslab that takes a value
# stops within a second of a cancel, on a value of 1,000,000,000 bytes.
#
# For each case a psql runs one DO block that loads its input (the bytes of a file written once
# at the start: 1 GB of synthetic text, and that text compressed by each format for the
# decoders), sets application_name to 'cancel-ready-N' (pg_stat_activity shows it at once),
# then calls the function. This script polls pg_stat_activity for that name, sleeps 0.2 s,
# takes the time, calls pg_cancel_backend(pid), waits for the psql to exit and takes the time
# again. A case passes when psql's stderr has SQLSTATE 57014 ("canceling statement due to user
# request": the function was still running when the cancel came; one that had finished first
# fails, its input is too quick) and psql exited at most 1.0 s after the time taken before the
# cancel (LIMIT_SECONDS). A case still running 15 s after its cancel is terminated and fails.
# The checksums run 20 times in a row (CRC-32C does 1 GB in about 0.1 s). A cancel 0.2 s in
# mostly lands in the zeroing of the result, so the LZ4, pglz and zstd encoders and the lab
# are also cancelled 1.5 s in (inside their loops), and the slowest zstd levels 0.7, 1 and 2 s
# in (into the library's set-up of its tables, some 700 MB at level 22 on 1 GB, which our
# allocator touches a piece at a time, giving way to a pending cancel; and into its block loop).
# Also wal_whatif and wal_whatif_by_relation reading one 400 MB logical message
# (pg_logical_emit_message), cancelled 0.2 s into the read.
#
# The server's C code: liblz4's calls and pglz_decompress run on a worker thread over more than
# 16 MiB (src/server/codecs/off_thread.rs), so server_lz4_compress, server_lz4_decompress,
# server_pglz_decompress (the decoders 5 times in a row: one call is under a second) and
# bench() of server_lz4 on a whole value are cancelled 0.2 s in (the copy for the worker) and
# 1.5 s in (inside the C call, the worker then abandoned). One case runs a second statement in
# the same session right after the cancel: server_lz4_compress on 20 MB, which needs a worker
# while the abandoned one still runs, must wait for it and return lz4_compress's bytes.
# server_pglz_compress takes at most 4 MiB (512 KiB under another strategy; errors.sql): the
# lab leaves server_pglz out of longer slices with a NOTICE (lab.sql), and is cancelled here on
# 1 GB in slices of the longest it takes.
# Not cases, since they take no value: advise, bench_column, bench_pages, bench_file,
# bench_synthetic (its 1 GB generation is in attack.sql), bench_suite, bench_suite_json,
# estimate_wal_compression, estimate_toast_compression, capabilities, methods, version,
# versions; markdown and svg_chart take the lab's result rows (jsonb), compression_info reads
# a value's header only (constant time).
#
# Runs against the cluster of scripts/cluster.sh (PGHOST, PGPORT, PGUSER), as a superuser (the
# inputs are written and read as server files), in a database of its own (e2e_cancel). Prints
# one line per case (the function, the seconds from cancel to exit) and ends with
# "N passed, N failed"; exits non-zero if any case failed. Optional arguments: case numbers or
# labels (substrings) to run alone.
set -uo pipefail
HARNESS=cancel
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
export PGDATABASE=e2e_cancel
LIMIT_SECONDS=${LIMIT_SECONDS:-1.0}
SIZE=1000000000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The database, the extension and the inputs, written once as files in the data directory
# (binary COPY, its 25-byte header and 2-byte trailer cut off) and read back by cancel_input().
setup() {
  psql_q -d postgres -c 'DROP DATABASE IF EXISTS e2e_cancel' -c 'CREATE DATABASE e2e_cancel' || return 1
  psql_q <<SQL || return 1
CREATE EXTENSION compresslab;
CREATE FUNCTION public.cancel_input(name text) RETURNS bytea LANGUAGE sql
  AS \$\$ SELECT pg_catalog.pg_read_binary_file(pg_catalog.concat('cancel_', name, '.bin')) \$\$;
-- compress(raw, 'lz4') without compressing again: an envelope's 10-byte header (magic, format,
-- method of a small lz4 envelope; the raw size, 4 bytes little-endian) and the LZ4 block.
CREATE FUNCTION public.cancel_envelope() RETURNS bytea LANGUAGE sql AS \$\$
  SELECT pg_catalog.byteacat(pg_catalog.byteacat(pg_catalog.substr(
    compresslab.compress(compresslab.synthetic('text', 4096), 'lz4'), 1, 6), '\\x00ca9a3b'),
    public.cancel_input('lz4')) \$\$;
CREATE FUNCTION public.cancel_dictionary() RETURNS bytea LANGUAGE sql
  AS \$\$ SELECT compresslab.synthetic('text', 65536, 7) \$\$;
CREATE FUNCTION public.cancel_write(name text, query text) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
  EXECUTE pg_catalog.format('COPY (%s) TO PROGRAM %L (FORMAT binary)', query,
    pg_catalog.format('tail -c +26 | head -c -2 > cancel_%s.bin', name));
END \$\$;
SELECT public.cancel_write('raw', \$\$SELECT compresslab.synthetic('text', $SIZE)\$\$);
SELECT public.cancel_write('lz4', \$\$SELECT compresslab.lz4_compress(public.cancel_input('raw'))\$\$);
SELECT public.cancel_write('lz4_frame', \$\$SELECT compresslab.lz4_frame_compress(public.cancel_input('raw'))\$\$);
SELECT public.cancel_write('pglz', \$\$SELECT compresslab.pglz_compress(public.cancel_input('raw'))\$\$);
SELECT public.cancel_write('zstd', \$\$SELECT compresslab.zstd_compress(public.cancel_input('raw'), -5)\$\$);
SELECT public.cancel_write('zstd_dict',
  \$\$SELECT compresslab.zstd_compress(public.cancel_input('raw'), -5, public.cancel_dictionary())\$\$);
SQL
} >/dev/null

cleanup() {
  psql_q -c "COPY (SELECT 1) TO PROGRAM 'cat >/dev/null; rm -f cancel_*.bin'" \
    -c "SELECT pg_catalog.pg_drop_replication_slot('e2e_cancel') FROM pg_catalog.pg_replication_slots WHERE slot_name OPERATOR(pg_catalog.=) 'e2e_cancel'" >/dev/null
  psql_q -d postgres -c 'DROP DATABASE IF EXISTS e2e_cancel'
}

# label | the input's declaration (DECLARE section) | what PERFORM calls | seconds from ready to
# the cancel (default 0.2; later for the slowest zstd levels, whose first second is the
# result's zeroing and the library's table set-up) | optionally, a query run next in the same
# session, which must return true (the case's time then ends at the cancel's ERROR). No field
# holds a |.
cases=(
  "crc32c(v) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32c(v)) FROM pg_catalog.generate_series(1, 20)"
  "crc32c(v, previous) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32c(v, 7)) FROM pg_catalog.generate_series(1, 20)"
  "crc32(v) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32(v)) FROM pg_catalog.generate_series(1, 20)"
  "crc32(v, previous) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32(v, 7)) FROM pg_catalog.generate_series(1, 20)"
  "crc32_legacy(v) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32_legacy(v)) FROM pg_catalog.generate_series(1, 20)"
  "crc32_legacy(v, previous) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.crc32_legacy(v, 7)) FROM pg_catalog.generate_series(1, 20)"
  "server_crc32c(v) x20|v bytea := public.cancel_input('raw');|pg_catalog.count(compresslab.server_crc32c(v)) FROM pg_catalog.generate_series(1, 20)"
  "lz4_compress(v)|v bytea := public.cancel_input('raw');|compresslab.lz4_compress(v)"
  "lz4_compress(v) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|compresslab.lz4_compress(v)|1.5"
  "lz4_compress(v, true)|v bytea := public.cancel_input('raw');|compresslab.lz4_compress(v, true)"
  "lz4_decompress(prefixed block)|v bytea := pg_catalog.byteacat('\\x00ca9a3b', public.cancel_input('lz4'));|compresslab.lz4_decompress(v)"
  "lz4_decompress(block, raw_size)|v bytea := public.cancel_input('lz4');|compresslab.lz4_decompress(v, $SIZE)"
  "lz4_frame_compress(v)|v bytea := public.cancel_input('raw');|compresslab.lz4_frame_compress(v)"
  "lz4_frame_compress(v) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|compresslab.lz4_frame_compress(v)|1.5"
  "lz4_frame_decompress(frame)|v bytea := public.cancel_input('lz4_frame');|compresslab.lz4_frame_decompress(v)"
  "pglz_compress(v)|v bytea := public.cancel_input('raw');|compresslab.pglz_compress(v)"
  "pglz_compress(v) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|compresslab.pglz_compress(v)|1.5"
  "pglz_compress(v, 'always')|v bytea := public.cancel_input('raw');|compresslab.pglz_compress(v, 'always')"
  "pglz_decompress(pglz, raw_size)|v bytea := public.cancel_input('pglz');|compresslab.pglz_decompress(v, $SIZE)"
  "zstd_compress(v) (level 3)|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v)"
  "zstd_compress(v, 19)|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 19)"
  "zstd_compress(v, 22)|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 22)"
  "zstd_compress(v, 19) cancelled at 2 s|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 19)|2"
  "zstd_compress(v, 22) cancelled at 0.7 s|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 22)|0.7"
  "zstd_compress(v, 22) cancelled at 1.0 s|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 22)|1.0"
  "zstd_compress(v, 22) cancelled at 2 s|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 22)|2"
  "zstd_compress(v, 3, dictionary)|v bytea := public.cancel_input('raw');|compresslab.zstd_compress(v, 3, public.cancel_dictionary())"
  "zstd_decompress(frame)|v bytea := public.cancel_input('zstd');|compresslab.zstd_decompress(v)"
  "zstd_decompress(frame, dictionary)|v bytea := public.cancel_input('zstd_dict');|compresslab.zstd_decompress(v, public.cancel_dictionary())"
  "server_lz4_compress(v)|v bytea := public.cancel_input('raw');|compresslab.server_lz4_compress(v)"
  "server_lz4_compress(v) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|compresslab.server_lz4_compress(v)|1.5"
  "server_lz4_compress(v) cancelled at 1.5 s, then 20 MB in the same session|v bytea := public.cancel_input('raw');|compresslab.server_lz4_compress(v)|1.5|SELECT compresslab.server_lz4_compress(d) OPERATOR(pg_catalog.=) compresslab.lz4_compress(d) FROM pg_catalog.pg_read_binary_file('cancel_raw.bin', 0, 20000000) AS d"
  "server_lz4_decompress(block, raw_size) x5|v bytea := public.cancel_input('lz4');|pg_catalog.count(compresslab.server_lz4_decompress(v, $SIZE)) FROM pg_catalog.generate_series(1, 5)"
  "server_lz4_decompress(block, raw_size) x5 cancelled at 1.5 s|v bytea := public.cancel_input('lz4');|pg_catalog.count(compresslab.server_lz4_decompress(v, $SIZE)) FROM pg_catalog.generate_series(1, 5)|1.5"
  "server_pglz_decompress(pglz, raw_size) x5|v bytea := public.cancel_input('pglz');|pg_catalog.count(compresslab.server_pglz_decompress(v, $SIZE)) FROM pg_catalog.generate_series(1, 5)"
  "server_pglz_decompress(pglz, raw_size) x5 cancelled at 1.5 s|v bytea := public.cancel_input('pglz');|pg_catalog.count(compresslab.server_pglz_decompress(v, $SIZE)) FROM pg_catalog.generate_series(1, 5)|1.5"
  "server_zstd_compress(v) (level 3)|v bytea := public.cancel_input('raw');|compresslab.server_zstd_compress(v)"
  "server_zstd_compress(v, 19)|v bytea := public.cancel_input('raw');|compresslab.server_zstd_compress(v, 19)"
  "server_zstd_decompress(frame, raw_size)|v bytea := public.cancel_input('zstd');|compresslab.server_zstd_decompress(v, $SIZE)"
  "compress(v) (compresslab.method)|v bytea := public.cancel_input('raw');|compresslab.compress(v)"
  "compress(v, 'pglz')|v bytea := public.cancel_input('raw');|compresslab.compress(v, 'pglz')"
  "compress(v, 'lz4')|v bytea := public.cancel_input('raw');|compresslab.compress(v, 'lz4')"
  "compress(v, 'zstd', 22)|v bytea := public.cancel_input('raw');|compresslab.compress(v, 'zstd', 22)"
  "decompress(envelope)|v bytea := public.cancel_envelope();|compresslab.decompress(v)"
  "bench(v, '{memcpy}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{memcpy}', '{0}', 1)"
  "bench(v, '{pglz}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{pglz}', '{0}', 1)"
  "bench(v, '{pglz_fast}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{pglz_fast}', '{0}', 1)"
  "bench(v, '{pglz_always}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{pglz_always}', '{0}', 1)"
  "bench(v, '{lz4}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{lz4}', '{0}', 1)"
  "bench(v, '{lz4}', '{0}', 1) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{lz4}', '{0}', 1)|1.5"
  "bench(v, '{lz4_frame}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{lz4_frame}', '{0}', 1)"
  "bench(v, '{zstd:3}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{zstd:3}', '{0}', 1)"
  "bench(v, '{zstd:22}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{zstd:22}', '{0}', 1)"
  "bench(v, '{zstd:22}', '{0}', 1) cancelled at 2 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{zstd:22}', '{0}', 1)|2"
  "bench(v, '{server_lz4}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_lz4}', '{0}', 1)"
  "bench(v, '{server_pglz,server_lz4}', '{0}', 1) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_pglz,server_lz4}', '{0}', 1)|1.5"
  "bench(v, '{server_lz4}', '{0}', 1) cancelled at 4 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_lz4}', '{0}', 1)|4"
  "bench(v, '{server_pglz}', '{4194304}', 1) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_pglz}', '{4194304}', 1)|1.5"
  "bench(v, '{server_pglz_always}', '{524288}', 1) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_pglz_always}', '{524288}', 1)|1.5"
  "bench(v, '{server_zstd:19}', '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v, '{server_zstd:19}', '{0}', 1)"
  "bench(v) (default methods and slices)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench(v)"
  "bench_overhead(v) (default methods, 8 KB)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench_overhead(v)"
  "bench_overhead(v) cancelled at 1.5 s|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench_overhead(v)|1.5"
  "bench_overhead(v, '{lz4}', 0, 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench_overhead(v, '{lz4}', 0, 1)"
  "bench_crc(v)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench_crc(v)"
  "bench_crc(v, '{0}', 1)|v bytea := public.cancel_input('raw');|pg_catalog.count(*) FROM compresslab.bench_crc(v, '{0}', 1)"
  "simulate_spill(62 records of 16 MB)|q text := 'SELECT pg_catalog.pg_read_binary_file(''cancel_raw.bin'', i * 16000000, 16000000) FROM pg_catalog.generate_series(0, 61) AS i';|pg_catalog.count(*) FROM compresslab.simulate_spill(q)"
  "synthetic('text', $SIZE)|v bytea;|compresslab.synthetic('text', $SIZE)"
  "wal_whatif(one 400 MB message)|r record := public.cancel_wal();|pg_catalog.count(*) FROM compresslab.wal_whatif(r.start_lsn, r.end_lsn)"
  "wal_whatif_by_relation(one 400 MB message)|r record := public.cancel_wal();|pg_catalog.count(*) FROM compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn)"
)

# The WAL cases' range: one logical message of 400 MB, its WAL kept by a replication slot.
setup_wal() {
  psql_q <<'SQL'
SELECT 1 FROM pg_catalog.pg_create_physical_replication_slot('e2e_cancel', true);
CREATE TABLE public.cancel_wal_range AS SELECT pg_catalog.pg_current_wal_insert_lsn() AS start_lsn;
SELECT 1 FROM pg_catalog.pg_logical_emit_message(false, 'e2e_cancel',
  pg_catalog.pg_read_binary_file('cancel_raw.bin', 0, 400000000));
CREATE TABLE public.cancel_wal_end AS SELECT pg_catalog.pg_current_wal_insert_lsn() AS end_lsn;
CREATE FUNCTION public.cancel_wal(OUT start_lsn pg_catalog.pg_lsn, OUT end_lsn pg_catalog.pg_lsn) LANGUAGE sql
  AS $$ SELECT s.start_lsn, e.end_lsn FROM public.cancel_wal_range s, public.cancel_wal_end e $$;
SQL
} >/dev/null

now() { date +%s.%N; }

# Run case $1 (1-based): passes or fails it.
run_case() {
  local n=$1 label declaration call delay after sql pid t0 t1 seconds waited=0 psql_pid
  local next=()
  IFS='|' read -r label declaration call delay after <<<"${cases[n - 1]}"
  [[ -z $after ]] || next=(-c "$after")
  sql="DO \$cancel\$ DECLARE $declaration BEGIN
  PERFORM pg_catalog.set_config('application_name', 'cancel-ready-$n', false);
  PERFORM $call;
END \$cancel\$"
  # A generic plan passes the input to the function as a parameter; a custom plan would first
  # copy it into a constant (1 GB of memmove in the planner, which a cancel waits for) and,
  # for an immutable function, call it while planning.
  PGOPTIONS="$PGOPTIONS -c plan_cache_mode=force_generic_plan" \
    psql -X -q -At -v VERBOSITY=verbose -c "$sql" "${next[@]}" >"$work/$n.out" 2>"$work/$n.err" &
  psql_pid=$!
  pid=
  while [[ -z $pid ]] && kill -0 "$psql_pid" 2>/dev/null; do
    pid=$(psql_q -c "SELECT pid FROM pg_catalog.pg_stat_activity WHERE application_name OPERATOR(pg_catalog.=) 'cancel-ready-$n'")
    [[ -n $pid ]] || sleep 0.05
  done
  if [[ -z $pid ]]; then
    wait "$psql_pid"
    fail "$label" "never ready: $(tr '\n' ' ' <"$work/$n.err")"
    return
  fi
  sleep "${delay:-0.2}"
  t0=$(now)
  psql_q -c "SELECT pg_catalog.pg_cancel_backend($pid)" >/dev/null
  # The cancel's ERROR is on psql's stderr (unbuffered) as soon as the server sends it; with a
  # query to run next, psql goes on.
  while kill -0 "$psql_pid" 2>/dev/null && ((waited < 1500)) && ! { [[ -n $after ]] && grep -q 57014 "$work/$n.err"; }; do
    sleep 0.01
    waited=$((waited + 1))
  done
  t1=$(now)
  if [[ -n $after ]] && grep -q 57014 "$work/$n.err"; then
    # the next query's time is not the cancel's: up to 60 s more
    while kill -0 "$psql_pid" 2>/dev/null && ((waited < 7500)); do
      sleep 0.01
      waited=$((waited + 1))
    done
  fi
  if kill -0 "$psql_pid" 2>/dev/null; then
    psql_q -c "SELECT pg_catalog.pg_terminate_backend($pid)" >/dev/null
    wait "$psql_pid"
    fail "$label" "still running 15 s after the cancel (terminated)"
    return
  fi
  wait "$psql_pid"
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  if ! grep -q '57014' "$work/$n.err"; then
    fail "$label" "$seconds s, no 57014 (did it finish first?): $(tr '\n' ' ' <"$work/$n.err")"
    return
  fi
  if [[ -n $after ]] && [[ $(cat "$work/$n.out") != t ]]; then
    fail "$label" "the query after the cancel did not return true: $(tr '\n' ' ' <"$work/$n.out") $(tr '\n' ' ' <"$work/$n.err")"
    return
  fi
  if awk -v s="$seconds" -v l="$LIMIT_SECONDS" 'BEGIN { exit !(s > l) }'; then
    fail "$label" "$seconds s from cancel to exit (more than $LIMIT_SECONDS)"
    return
  fi
  pass "$label" "($seconds s)"
}

selected() {
  local n=$1 label=${cases[$1 - 1]%%|*} arg
  ((${#args[@]} == 0)) && return 0
  for arg in "${args[@]}"; do
    [[ $arg == "$n" || $label == *"$arg"* ]] && return 0
  done
  return 1
}

args=("$@")
started=$(now)
setup || die "setting up the inputs"
need_wal=0
for ((n = 1; n <= ${#cases[@]}; n++)); do
  selected "$n" && [[ ${cases[n - 1]} == wal_whatif* ]] && need_wal=1
done
if ((need_wal)) && ! setup_wal; then
  cleanup
  die "writing the WAL message"
fi
echo "cancel: inputs ready after $(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s"
for ((n = 1; n <= ${#cases[@]}; n++)); do
  selected "$n" && run_case "$n"
done
cleanup
echo "cancel: $(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s in all"
finish
