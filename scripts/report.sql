-- The main job's report, run by scripts/report.sh against a throwaway cluster holding a
-- pgbench database. Writes results/report_body.md (report.sh puts the advice before it) and
-- results/chart.svg; progress goes to stderr.
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = notice;
SET compresslab.bench_iterations = 5;
\o results/report_body.md
SELECT format('compresslab %s on PostgreSQL %s; pgbench scale %s (%s pages in pgbench_accounts); %s iterations per row after a warm-up.',
              compresslab.version(), current_setting('server_version'), (SELECT count(*) FROM pgbench_branches),
              pg_relation_size('pgbench_accounts') / 8192, current_setting('compresslab.bench_iterations')) AS summary,
       current_setting('server_version') AS server_version \gset
\qecho :summary
\qecho
\qecho '## Build'
\qecho
\qecho '```'
SELECT kind, name, ok, detail FROM compresslab.capabilities() ORDER BY kind DESC, name;
\qecho '```'

\qecho
\qecho '## Versions'
\qecho
\qecho 'compresslab, the libraries it runs and those of the server (`compresslab.versions()`); `compresslab.methods()` says which each method runs.'
\qecho
\qecho '```'
SELECT component, version, detail FROM compresslab.versions();
\qecho '```'

\qecho
\qecho '## The lab: page images of pgbench_accounts (hole removed), every method'
\qecho
\qecho 'A seeded sample of 512 pages, each page image compressed on its own as a full-page write would be; speeds are MB/s of uncompressed bytes, median (best) of the iterations. The chart `chart.svg` plots ratio against compression speed for these rows, one colour per method (a legend entry each).'
\qecho
\qecho 'The `server_*` rows are the server''s own C routines (`pglz_compress`, and liblz4 and libzstd as PostgreSQL links them): what the server itself would spend; the others are compresslab''s code on the same pages.'
\qecho
CREATE TEMP TABLE page_rows AS
SELECT * FROM compresslab.bench_pages('pgbench_accounts',
         ARRAY['memcpy','pglz','pglz_fast','server_pglz','lz4','server_lz4','zstd:-5','zstd:1','zstd:3','server_zstd:3','zstd:9','zstd:19'],
         ARRAY[0], sample_pages => 512, seed => 1);
\pset format unaligned
\pset tuples_only on
SELECT compresslab.markdown(jsonb_agg(r ORDER BY compress_mbps DESC)) FROM page_rows r;
\qecho
\qecho '## The lab: a WAL segment of pgbench -i, in 2 KB and 8 KB slices (test_pglz style)'
\qecho
SELECT compresslab.markdown(jsonb_agg(r ORDER BY slice_size, compress_mbps DESC))
  FROM compresslab.bench_file(:'wal_segment', ARRAY['pglz','server_pglz','lz4','server_lz4','zstd:1','server_zstd:1','memcpy'], ARRAY[2048, 8192]) r;
\qecho
\qecho '## The lab: synthetic payloads (1 MB each), 8 KB slices'
\qecho
SELECT compresslab.markdown(jsonb_agg(r ORDER BY source, compress_mbps DESC))
  FROM unnest(ARRAY['text','pgbench','random','zeros']) k,
       compresslab.bench_synthetic(k, 1048576, 1, ARRAY['pglz','server_pglz','lz4','zstd:1','zstd:9'], ARRAY[8192]) r;
\pset tuples_only off
\pset format aligned

\qecho
\qecho '## wal_compression: estimate for pgbench_accounts, and validation against the server'
\qecho
\qecho 'Estimated full-page-image bytes if every page of pgbench_accounts were written once after a checkpoint:'
\qecho
\qecho '```'
SELECT wal_compression, images, compressed_images, pg_size_pretty(stored_bytes) AS stored_bytes, round(ratio::numeric, 3) AS ratio,
       round((1e9 * compress_cpu_seconds / greatest(images, 1))::numeric) AS cpu_ns_per_image
  FROM compresslab.estimate_wal_compression('pgbench_accounts', sample_pages => NULL);
\qecho '```'
\qecho
\qecho 'Validation: a copy of 100,000 accounts rows is rebuilt under each setting, a checkpoint taken, and one row per page updated (each page modified once). Measured = sum of pg_walinspect fpi_length for the table; predicted = estimate_wal_compression on the same pages.'
\qecho
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
CREATE TEMP TABLE fpi_validation (wal_compression text, images bigint, measured_bytes bigint, predicted_images bigint, predicted_bytes bigint);
\set setting off
\ir report_fpi_round.sql
\set setting pglz
\ir report_fpi_round.sql
\set setting lz4
\ir report_fpi_round.sql
\set setting zstd
\ir report_fpi_round.sql
\qecho '```'
SELECT wal_compression, images AS measured_images, predicted_images, measured_bytes, predicted_bytes,
       round(100.0 * (predicted_bytes - measured_bytes) / measured_bytes, 3) AS error_percent
  FROM fpi_validation;
\qecho '```'

\qecho
\qecho '## TOAST: pglz vs lz4 on JSON documents built from pgbench_accounts, validated with pg_column_size'
\qecho
CREATE TABLE docs AS
SELECT aid / 40 AS id, jsonb_agg(jsonb_build_object('aid', aid, 'bid', bid, 'abalance', abalance, 'filler', filler))::text AS body
  FROM pgbench_accounts WHERE aid <= 40000 GROUP BY aid / 40;
ANALYZE docs;
CREATE TABLE docs_pglz (id int, body text COMPRESSION pglz);
CREATE TABLE docs_lz4 (id int, body text COMPRESSION lz4);
INSERT INTO docs_pglz SELECT id, body || '' FROM docs;
INSERT INTO docs_lz4 SELECT id, body || '' FROM docs;
\qecho '```'
SELECT e.method, e.values, e.compressed_values, e.raw_bytes, e.stored_bytes AS predicted_bytes, m.bytes AS measured_bytes,
       round(100.0 * (e.stored_bytes - m.bytes) / m.bytes, 3) AS error_percent, round(e.ratio::numeric, 3) AS ratio,
       round(e.compress_mbps::numeric, 1) AS compress_mbps, round(e.decompress_mbps::numeric, 1) AS decompress_mbps
  FROM compresslab.estimate_toast_compression('docs', 'body') e
  JOIN (SELECT 'pglz' AS method, sum(pg_column_size(body)) AS bytes FROM docs_pglz
        UNION ALL SELECT 'lz4', sum(pg_column_size(body)) FROM docs_lz4) m USING (method);
\qecho '```'

\qecho
\qecho '## Logical-decoding spill files (the ReorderBuffer LZ4 thread''s data shapes, reduced scale)'
\qecho
\qecho 'Each row of the query is one change record, written in order: raw; pglz or LZ4 per record (a 5-byte header each, raw when it does not shrink); LZ4 streaming with the previous 64 KB as dictionary; zstd streaming flushed per record. Every strategy reads its file back and verifies every record.'
\qecho
\qecho '```'
SELECT 'hello (change-like rows)' AS data, strategy, records, raw_bytes, stored_bytes, round(ratio::numeric, 3) AS ratio,
       round((100 * (1 - stored_bytes::numeric / raw_bytes)), 1) AS saved_percent, round(wall_seconds::numeric, 3) AS wall_seconds
  FROM compresslab.simulate_spill($$SELECT 'INSERT' AS action, 1663 AS spcnode, 5 AS dbnode, 16384 AS relnode, 731 AS xid, i,
                                        'Hello number n°' || i AS t FROM generate_series(1, 200000) i$$)
UNION ALL
SELECT 'pgbench_accounts rows', strategy, records, raw_bytes, stored_bytes, round(ratio::numeric, 3),
       round((100 * (1 - stored_bytes::numeric / raw_bytes)), 1), round(wall_seconds::numeric, 3)
  FROM compresslab.simulate_spill('SELECT * FROM pgbench_accounts WHERE aid <= 100000')
UNION ALL
SELECT 'random values, repeated rows', strategy, records, raw_bytes, stored_bytes, round(ratio::numeric, 3),
       round((100 * (1 - stored_bytes::numeric / raw_bytes)), 1), round(wall_seconds::numeric, 3)
  FROM compresslab.simulate_spill($$SELECT r.v FROM generate_series(1, 200) rep,
         (SELECT g, string_agg(md5(g::text || ':' || k), '') AS v FROM generate_series(1, 40) g, generate_series(1, 20) k GROUP BY g) r
       ORDER BY rep, r.g$$)
UNION ALL
SELECT 'all random', strategy, records, raw_bytes, stored_bytes, round(ratio::numeric, 3),
       round((100 * (1 - stored_bytes::numeric / raw_bytes)), 1), round(wall_seconds::numeric, 3)
  FROM compresslab.simulate_spill($$SELECT decode(string_agg(lpad(to_hex((random() * 2147483647)::int), 8, '0'), ''), 'hex')
       FROM generate_series(1, 8000) i, generate_series(1, 100) k GROUP BY i$$);
\qecho '```'

\qecho
\qecho '## Rust against the C code of PostgreSQL' :server_version ', same process, same slices'
\qecho
\qecho 'Throughput ratios of ours to the server''s C routine, median and best of 31 iterations over at least 1 MB per payload: pglz compression and decompression on page images, 2 KB slices of WAL and text; CRC-32C on 8 KB. Each goal, held or short, is in the table after these.'
\qecho
CREATE TEMP TABLE catalog_text AS
SELECT convert_to(repeat(string_agg(description, ' ' ORDER BY objoid, classoid, objsubid), 8), 'UTF8') AS data FROM pg_description;
CREATE TEMP TABLE vs_c AS
SELECT 'page images (hole removed)' AS payload, * FROM compresslab.bench_pages('pgbench_accounts', ARRAY['pglz','pglz_fast','server_pglz'], ARRAY[0], 31, sample_pages => 1024, seed => 2)
UNION ALL
SELECT 'WAL, 2 KB slices', * FROM compresslab.bench_file(:'wal_segment', ARRAY['pglz','pglz_fast','server_pglz'], ARRAY[2048], 31, byte_count => 4194304)
UNION ALL
SELECT 'catalog text, ' || s || '-byte slices', b.* FROM catalog_text, unnest(ARRAY[2048, 8192]) s,
       compresslab.bench(data, ARRAY['pglz','pglz_fast','server_pglz'], ARRAY[s], 31) b;
\qecho '```'
SELECT o.payload, o.method AS ours,
       round((o.compress_mbps / c.compress_mbps)::numeric, 2) AS compress_x,
       round((o.compress_mbps_best / c.compress_mbps_best)::numeric, 2) AS compress_x_best,
       round((o.decompress_mbps / c.decompress_mbps)::numeric, 2) AS decompress_x,
       round((o.decompress_mbps_best / c.decompress_mbps_best)::numeric, 2) AS decompress_x_best,
       round(100.0 * (o.stored_bytes - c.stored_bytes) / c.stored_bytes, 3) AS size_diff_percent,
       round(c.compress_mbps::numeric, 1) AS c_compress_mbps, round(o.compress_mbps::numeric, 1) AS compress_mbps,
       round(c.decompress_mbps::numeric, 1) AS c_decompress_mbps, round(o.decompress_mbps::numeric, 1) AS decompress_mbps
  FROM vs_c o JOIN vs_c c ON c.payload = o.payload AND c.method = 'server_pglz'
 WHERE o.method <> 'server_pglz'
 ORDER BY o.payload, o.method;
CREATE TEMP TABLE crc_8k AS SELECT * FROM compresslab.bench_crc(slice_sizes => ARRAY[8192], iterations => 31);
SELECT o.slice_size, round((o.mbps / c.mbps)::numeric, 2) AS crc32c_vs_server_x, round((o.mbps_best / c.mbps_best)::numeric, 2) AS best_x,
       round(o.mbps::numeric, 1) AS crc32c_mbps, round(c.mbps::numeric, 1) AS server_crc32c_mbps
  FROM crc_8k o JOIN crc_8k c ON c.implementation = 'server_crc32c'
 WHERE o.implementation = 'crc32c';
\qecho '```'
\qecho
\qecho 'The same comparison at the SQL level, as a user calls the functions: `SELECT max(length(f(...)))` over 32 values of 512 KB of pgbench-like page data, the time to fetch the values subtracted, best of 11 (`scripts/bench/sql_vs_c.sql`; a function left with under 1 ms of its own, as crc32c is, shows only its raw times):'
\qecho
\qecho '```'
\ir bench/sql_vs_c.sql
\qecho '```'
CREATE TEMP TABLE sql_per_call AS SELECT 524288 AS value_bytes, 32 AS n_values, * FROM sql_vs_c;
\qecho
\qecho 'The same on repeated patterns, whose matches overlap themselves: 32 values of 4 MB of `synthetic()`''s `period32`, then of `runs`:'
\qecho
\qecho '```'
\set sql_vs_c_kind period32
\set sql_vs_c_value_bytes 4194304
\qecho period32
\ir bench/sql_vs_c.sql
\set sql_vs_c_kind runs
\qecho runs
\ir bench/sql_vs_c.sql
\qecho '```'
\unset sql_vs_c_kind
\qecho
\qecho 'Per call, at every size people use: the functions with a server counterpart on 16 MiB of pgbench-like values of 8 KB (2048 values), 32 KB (512), 512 KB (32, the run above) and 4 MB (4), each size as above (its wide table not shown, its kernel not timed). ns per call, the fetch subtracted (`ours_ns_per_call`, `server_ns_per_call`), and ours / the server''s (`sql_level_x`):'
\qecho
\qecho '```'
\set sql_vs_c_only '^(pglz|lz4|zstd)_(de)?compress'
\set sql_vs_c_no_kernel 1
\set sql_vs_c_quiet 1
\set sql_vs_c_value_bytes 8192
\set sql_vs_c_values 2048
\ir bench/sql_vs_c.sql
INSERT INTO sql_per_call SELECT :sql_vs_c_value_bytes, :sql_vs_c_values, * FROM sql_vs_c;
\set sql_vs_c_value_bytes 32768
\set sql_vs_c_values 512
\ir bench/sql_vs_c.sql
INSERT INTO sql_per_call SELECT :sql_vs_c_value_bytes, :sql_vs_c_values, * FROM sql_vs_c;
\set sql_vs_c_value_bytes 4194304
\set sql_vs_c_values 4
\ir bench/sql_vs_c.sql
INSERT INTO sql_per_call SELECT :sql_vs_c_value_bytes, :sql_vs_c_values, * FROM sql_vs_c;
\unset sql_vs_c_quiet
SELECT what, value_bytes / 1024 AS value_kb,
       round(((ours_ms - fetch_ms) * 1e6 / n_values)::numeric) AS ours_ns_per_call,
       round(((server_ms - fetch_ms) * 1e6 / n_values)::numeric) AS server_ns_per_call,
       round(((server_ms - fetch_ms) / (ours_ms - fetch_ms))::numeric, 2) AS sql_level_x
  FROM sql_per_call
 WHERE server_ms IS NOT NULL AND what ~ '^(pglz|lz4|zstd)_(de)?compress'
 ORDER BY ord, value_bytes;
\qecho '```'
\unset sql_vs_c_only
\unset sql_vs_c_no_kernel
\unset sql_vs_c_value_bytes
\unset sql_vs_c_values

\qecho
\qecho '### The lab''s loop against a bare timing loop'
\qecho
\qecho 'The first 1 MB and 16 MB of the pgbench_accounts heap file in 8 KB slices, each method timed by the lab''s loop (verified round trip every iteration) and by a bare loop as lzbench times (all compression passes back to back, then all decompression passes, one verification at the end), in this backend, medians of 31. overhead_percent: how much slower the lab measured than the bare loop (BENCHMARKS.md compares both with lzbench itself).'
\qecho
\qecho '```'
SELECT pg_size_pretty(n::bigint) AS payload, o.method, round(o.lab_compress_mbps::numeric) AS lab_c_mbps, round(o.bare_compress_mbps::numeric) AS bare_c_mbps,
       round(o.compress_overhead_percent::numeric, 1) AS c_overhead_percent, round(o.lab_decompress_mbps::numeric) AS lab_d_mbps,
       round(o.bare_decompress_mbps::numeric) AS bare_d_mbps, round(o.decompress_overhead_percent::numeric, 1) AS d_overhead_percent
  FROM unnest(ARRAY[1048576, 16777216]) n,
       compresslab.bench_overhead(pg_read_binary_file(pg_relation_filepath('pgbench_accounts'), 0, n),
                                  ARRAY['memcpy', 'server_lz4', 'server_zstd:1', 'lz4', 'pglz'], 8192, 31) o;
\qecho '```'

\qecho
\qecho '### The speed goals on PostgreSQL' :server_version ', each beside its figure'
\qecho
\qecho 'Median ratio ours / server C over the payloads of each goal (the lowest payload decides), 31 iterations each; TOAST-sized values are the catalog text in 64 KB, 256 KB and 1 MB pieces; repeated patterns and runs are `bench_synthetic`''s kinds period1 to period64 and runs (1 MB, seed 1, 8 KB slices); LZ4 is ours (our encoder, which writes liblz4''s blocks byte for byte, and our decoder) against the liblz4 the server links, on the same blocks. `raised_x`: the raised goal, for the kernels that have one (what bounds them: `bash scripts/bench/against_c.sh`, BENCHMARKS.md).'
\qecho
CREATE TEMP TABLE toast_sized AS
SELECT 'catalog text, ' || s / 1024 || ' KB values' AS payload, b.*
  FROM catalog_text, unnest(ARRAY[65536, 262144, 1048576]) s, compresslab.bench(data, ARRAY['pglz','server_pglz'], ARRAY[s], 31) b;
CREATE TEMP TABLE lz4_vs AS
SELECT 'page images (hole removed)' AS payload, * FROM compresslab.bench_pages('pgbench_accounts', ARRAY['lz4','server_lz4'], ARRAY[0], 31, sample_pages => 1024, seed => 2)
UNION ALL
SELECT 'WAL, 8 KB slices', * FROM compresslab.bench_file(:'wal_segment', ARRAY['lz4','server_lz4'], ARRAY[8192], 31, byte_count => 4194304);
CREATE TEMP TABLE repeated AS
SELECT k AS payload, b.*
  FROM unnest(ARRAY['period1', 'period2', 'period4', 'period8', 'period16', 'period32', 'period64', 'runs']) k,
       compresslab.bench_synthetic(k, 1048576, 1, ARRAY['pglz', 'server_pglz', 'lz4', 'server_lz4'], ARRAY[8192], 31) b;
CREATE TEMP TABLE crc_goal AS
SELECT * FROM compresslab.bench_crc(slice_sizes => ARRAY[16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], iterations => 31);
\qecho '```'
WITH pairs AS (
  SELECT o.payload, o.method, o.compress_mbps / c.compress_mbps AS cx, o.decompress_mbps / c.decompress_mbps AS dx,
         abs(o.stored_bytes - c.stored_bytes)::float8 / c.stored_bytes AS size_diff
    FROM (SELECT * FROM vs_c UNION ALL SELECT * FROM toast_sized) o
    JOIN (SELECT * FROM vs_c UNION ALL SELECT * FROM toast_sized) c ON c.payload = o.payload AND c.method = 'server_pglz'
   WHERE o.method <> 'server_pglz'
), lz4 AS (
  SELECT o.payload, o.compress_mbps / c.compress_mbps AS cx, o.decompress_mbps / c.decompress_mbps AS dx
    FROM lz4_vs o JOIN lz4_vs c ON c.payload = o.payload AND c.method = 'server_lz4' WHERE o.method = 'lz4'
), rep AS (
  SELECT o.payload, o.method, o.decompress_mbps / c.decompress_mbps AS dx
    FROM repeated o JOIN repeated c ON c.payload = o.payload AND c.method = 'server_' || o.method
   WHERE o.method IN ('pglz', 'lz4')
), crc AS (
  SELECT o.slice_size, o.mbps / c.mbps AS x
    FROM crc_goal o JOIN crc_goal c ON c.slice_size = o.slice_size AND c.implementation = 'server_crc32c'
   WHERE o.implementation = 'crc32c'
), goals(goal, target, raised, figure, payloads) AS (
  SELECT 'byte-identical pglz compression', 2.0, 2.5, min(cx), string_agg(format('%s %s', payload, round(cx::numeric, 2)), '; ')
    FROM pairs WHERE method = 'pglz' AND payload NOT LIKE '% KB values'
  UNION ALL
  SELECT 'pglz_fast compression (size within 1%)', 3.0, 4.0, CASE WHEN max(size_diff) <= 0.01 THEN min(cx) ELSE 0 END,
         string_agg(format('%s %s (size %s%%)', payload, round(cx::numeric, 2), round(100 * size_diff::numeric, 2)), '; ')
    FROM pairs WHERE method = 'pglz_fast'
  UNION ALL
  SELECT 'pglz decompression', 1.8, 3.0, min(dx), string_agg(format('%s %s', payload, round(dx::numeric, 2)), '; ')
    FROM pairs WHERE method = 'pglz' AND payload NOT LIKE '% KB values'
  UNION ALL
  SELECT 'pglz on TOAST-sized values (compression, decompression)', 2.0, NULL, least(min(cx), min(dx)),
         string_agg(format('%s %s / %s', payload, round(cx::numeric, 2), round(dx::numeric, 2)), '; ')
    FROM pairs WHERE method = 'pglz' AND payload LIKE '% KB values'
  UNION ALL
  SELECT 'CRC-32C at every size 16 B - 8 KB', 1.0, 1.2, min(x), string_agg(format('%s B %s', slice_size, round(x::numeric, 2)), '; ' ORDER BY slice_size)
    FROM crc
  UNION ALL
  SELECT 'CRC-32C >= 1 KB', 2.5, NULL, min(x), string_agg(format('%s B %s', slice_size, round(x::numeric, 2)), '; ' ORDER BY slice_size)
    FROM crc WHERE slice_size >= 1024
  UNION ALL
  SELECT 'LZ4 (our encoder and decoder) vs liblz4, compression and decompression', 0.95, 1.0, least(min(cx), min(dx)),
         string_agg(format('%s %s / %s', payload, round(cx::numeric, 2), round(dx::numeric, 2)), '; ')
    FROM lz4
  UNION ALL
  SELECT 'pglz decompression on repeated patterns (periods 1-64, 1 MB in 8 KB slices) and runs', 1.0, NULL, min(dx),
         string_agg(format('%s %s', payload, round(dx::numeric, 2)), '; ')
    FROM rep WHERE method = 'pglz'
  UNION ALL
  SELECT 'LZ4 decompression vs liblz4 on repeated patterns (periods 1-64, 1 MB in 8 KB slices) and runs', 1.0, NULL, min(dx),
         string_agg(format('%s %s', payload, round(dx::numeric, 2)), '; ')
    FROM rep WHERE method = 'lz4'
)
SELECT goal, '>= ' || target AS goal_x, round(figure::numeric, 2) AS figure_x,
       CASE WHEN figure >= target THEN 'held' ELSE 'short' END AS status,
       '>= ' || raised AS raised_x, CASE WHEN figure >= raised THEN 'held' WHEN raised IS NOT NULL THEN 'short' END AS raised_status,
       payloads
  FROM goals;
\qecho '```'

\qecho
\qecho '## Checksums by WAL record size (16 B to 8 KB)'
\qecho
CREATE TEMP TABLE crc_rows AS SELECT * FROM compresslab.bench_crc(slice_sizes => ARRAY[16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]);
\qecho '```'
SELECT slice_size, implementation, round(mbps::numeric, 1) AS mbps, round(ns_per_byte::numeric, 4) AS ns_per_byte
  FROM crc_rows ORDER BY slice_size, mbps DESC;
\qecho '```'
\qecho
\qecho 'The CRC''s share of producing WAL: a fixed workload (20,000 single-row pgbench-style UPDATEs in one transaction, after a checkpoint, so full-page images included) is timed; each of its WAL records is charged the time the server''s CRC-32C (and, for comparison, a slicing-by-8 software CRC and the pre-9.5 legacy CRC) takes at the measured speed for the nearest record size.'
\qecho
CHECKPOINT;
SELECT pg_current_wal_lsn() AS crc_start_lsn, clock_timestamp() AS crc_t0 \gset
DO $$ BEGIN FOR i IN 1..20000 LOOP UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = i; END LOOP; END $$;
SELECT pg_current_wal_lsn() AS crc_end_lsn, extract(epoch FROM clock_timestamp() - :'crc_t0'::timestamptz) AS crc_seconds \gset
\qecho '```'
WITH recs AS (
  SELECT record_length FROM pg_get_wal_records_info(:'crc_start_lsn', :'crc_end_lsn')
), charged AS (
  SELECT c.implementation, sum(r.record_length * c.ns_per_byte) / 1e9 AS crc_seconds
    FROM recs r
    JOIN LATERAL (SELECT max(slice_size) AS size FROM crc_rows WHERE slice_size <= greatest(r.record_length, 16)) b ON true
    JOIN crc_rows c ON c.slice_size = b.size
   GROUP BY c.implementation
)
SELECT implementation, (SELECT count(*) FROM recs) AS records, (SELECT round(avg(record_length)) FROM recs) AS avg_record_bytes,
       round(:crc_seconds::numeric, 3) AS workload_seconds, round(crc_seconds::numeric, 5) AS crc_seconds,
       round((100 * crc_seconds / :crc_seconds)::numeric, 3) AS share_percent
  FROM charged ORDER BY crc_seconds;
\qecho '```'
\o
\o results/chart.svg
\pset format unaligned
\pset tuples_only on
SELECT compresslab.svg_chart(jsonb_agg(r), 'pgbench_accounts page images: compression ratio vs speed') FROM page_rows r;
\o
