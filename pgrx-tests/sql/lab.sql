-- The lab: every method on every payload source, with deterministic columns shown (bytes,
-- slices) and speeds checked for sanity rather than printed.
CREATE EXTENSION compresslab;
CREATE TABLE accounts (aid int PRIMARY KEY, bid int, abalance int, filler text);
INSERT INTO accounts SELECT i, i / 1000, (i * 7919) % 10000 - 5000, md5(i::text) || repeat(' ', 50)
  FROM generate_series(1, 5000) i;
DELETE FROM accounts WHERE aid % 4 = 0;
CREATE TABLE docs (id int, body text);
INSERT INTO docs SELECT i, repeat('Document ' || i || ' talks about compression of full-page writes. ', 40 + i % 30)
  FROM generate_series(1, 300) i;
ANALYZE accounts, docs;
-- every default method on a bytea: one row per method and slice size, round trips verified
SELECT method, level, slice_size, slices, raw_slices, raw_bytes,
       stored_bytes <= raw_bytes AS never_larger,
       compress_mbps > 0 AND decompress_mbps > 0 AND compress_ns_per_byte > 0 AS timed,
       compress_mbps_best >= compress_mbps AND decompress_mbps_best >= decompress_mbps AS best_ge_median,
       compress_cpu_seconds >= 0 AND compress_wall_seconds > 0 AS has_times, iterations
  FROM compresslab.bench(convert_to(repeat('the lab measures every codec on your data; ', 2000), 'UTF8'), iterations => 2)
 ORDER BY method, level, slice_size;
-- our pglz and the server's are the same bytes, hence the same sizes on every source
SELECT source, slice_size, count(DISTINCT stored_bytes) AS distinct_sizes, min(raw_slices) AS raw_slices
  FROM (
    SELECT * FROM compresslab.bench_pages('accounts', ARRAY['pglz', 'server_pglz'], iterations => 1)
    UNION ALL SELECT * FROM compresslab.bench_pages('accounts', ARRAY['pglz', 'server_pglz'], iterations => 1, hole => 'zero-filled')
    UNION ALL SELECT * FROM compresslab.bench_column('docs', 'body', ARRAY['pglz', 'server_pglz'], iterations => 1)
    UNION ALL SELECT * FROM compresslab.bench_synthetic('pgbench', 200000, 7, ARRAY['pglz', 'server_pglz'], iterations => 1)
  ) r
 GROUP BY 1, 2 ORDER BY 1, 2;
-- page sources: all pages, a seeded sample (same seed = same pages), hole removed vs zero-filled
SELECT source, method, slice_size, slices, raw_bytes, raw_bytes < slices * 8192 AS holes_removed
  FROM compresslab.bench_pages('accounts', ARRAY['lz4'], ARRAY[0], 1) ORDER BY 1;
SELECT slices, raw_bytes = slices * 8192 AS full_pages
  FROM compresslab.bench_pages('accounts', ARRAY['lz4'], ARRAY[0], 1, hole => 'zero-filled');
SELECT a.slices AS sampled, a.raw_bytes = b.raw_bytes AS same_seed_same_pages
  FROM compresslab.bench_pages('accounts', ARRAY['memcpy'], ARRAY[0], 1, sample_pages => 5, seed => 42) a,
       compresslab.bench_pages('accounts', ARRAY['memcpy'], ARRAY[0], 1, sample_pages => 5, seed => 42) b;
SELECT slices FROM compresslab.bench_pages('accounts_pkey', ARRAY['memcpy'], ARRAY[0], 1, sample_pages => 3);
-- column values, sampled
SELECT source, method, slices, raw_bytes > 300000 AS detoasted
  FROM compresslab.bench_column('docs', 'body', ARRAY['zstd:3', 'lz4'], ARRAY[0], 1) ORDER BY method;
SELECT slices FROM compresslab.bench_column('docs', 'body', ARRAY['lz4'], ARRAY[0], 1, sample_values => 10, seed => 3);
-- synthetic payloads of every kind, all methods including the C references and memcpy
SELECT source, method, level, slice_size, slices, raw_slices, raw_bytes, stored_bytes
  FROM unnest(ARRAY['zeros', 'random', 'text', 'pgbench']) k,
       compresslab.bench_synthetic(k, 50000, 1,
         ARRAY['memcpy', 'pglz', 'pglz_always', 'pglz_fast', 'server_pglz', 'server_pglz_always', 'lz4', 'lz4_frame', 'server_lz4', 'zstd:1', 'server_zstd:1', 'zstd:-5', 'zstd:19'],
         ARRAY[8192], 1)
 WHERE method IN ('memcpy', 'pglz', 'server_pglz', 'lz4', 'server_lz4', 'zstd', 'server_zstd')
 ORDER BY source, method, level;
-- a server file: the current WAL segment, sliced into 2 KB pieces
SELECT source = 'pg_wal/' || pg_walfile_name(pg_current_wal_lsn()) || '[0+1048576]' AS is_wal, method, slice_size, slices, raw_bytes
  FROM compresslab.bench_file('pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), ARRAY['lz4'], ARRAY[2048], 1, byte_count => 1048576);
-- parts of a file: start_byte and byte_count (no quoting needed), each part named in source
SELECT replace(source, 'pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), 'WAL') AS source, slices, raw_bytes
  FROM unnest(ARRAY[0, 8192, 16760832]) s,
       compresslab.bench_file('pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), ARRAY['lz4'], ARRAY[8192], 1, start_byte => s, byte_count => 16384)
 ORDER BY s;
SELECT source, raw_bytes > 0 AS read FROM compresslab.bench_file('postgresql.conf', ARRAY['lz4'], ARRAY[0], 1);
SELECT raw_bytes > 0 AS read_to_the_end, source LIKE 'postgresql.conf[100+%]' AS named
  FROM compresslab.bench_file('postgresql.conf', ARRAY['lz4'], ARRAY[0], 1, start_byte => 100);
-- too large a byte_count says so; a negative one is refused
SELECT * FROM compresslab.bench_file('postgresql.conf', byte_count => 2000000000);
SELECT * FROM compresslab.bench_file('postgresql.conf', start_byte => -1);
-- a method that stored every slice raw decompressed nothing: no decompression speed (memcpy,
-- which stores every slice as is by design, keeps its copy speed)
SELECT method, slices = raw_slices AS all_raw, decompress_mbps IS NULL AS no_decompress_mbps,
       decompress_mbps_best IS NULL AND decompress_ns_per_byte IS NULL AS no_decompress_figures,
       compress_mbps > 0 AS compress_timed
  FROM compresslab.bench_synthetic('random', 50000, 1, ARRAY['pglz', 'server_pglz', 'lz4', 'server_lz4', 'memcpy'], ARRAY[2048], 1)
 ORDER BY method;
-- busy: wall time of the timed regions over 1.5 times their CPU time, on every row
SELECT count(*) AS rows, bool_and(busy = (compress_wall_seconds + decompress_wall_seconds
                                          > 1.5 * (compress_cpu_seconds + decompress_cpu_seconds))) AS busy_is_wall_over_cpu
  FROM compresslab.bench_synthetic('text', 50000, 1, ARRAY['pglz', 'lz4', 'zstd:1'], ARRAY[2048, 0], 2);
-- every method on every payload source
CREATE TEMP TABLE every_method AS
SELECT ARRAY['memcpy','pglz','pglz_fast','pglz_always','server_pglz','server_pglz_always','lz4','lz4_frame','server_lz4',
             'zstd:-5','zstd:3','zstd:19','server_zstd:3'] AS methods;
SELECT CASE WHEN source LIKE 'pg_wal/%' THEN 'WAL segment' ELSE source END AS source,
       count(DISTINCT (method, level)) AS methods, bool_and(slices > 0) AS all_measured
  FROM (SELECT b.* FROM every_method, compresslab.bench(convert_to(repeat('every method ', 3000), 'UTF8'), methods, ARRAY[0], 1) b
        UNION ALL SELECT b.* FROM every_method, compresslab.bench_pages('accounts', methods, ARRAY[0], 1, sample_pages => 4) b
        UNION ALL SELECT b.* FROM every_method, compresslab.bench_column('docs', 'body', methods, ARRAY[0], 1, sample_values => 20) b
        UNION ALL SELECT b.* FROM every_method, compresslab.bench_file('pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), methods, ARRAY[0], 1, byte_count => 65536) b
        UNION ALL SELECT b.* FROM every_method, compresslab.bench_synthetic('pgbench', 30000, 1, methods, ARRAY[0], 1) b) r
 GROUP BY 1 ORDER BY 1;
-- checksums: every implementation, same values per family (checked inside), by slice size
SELECT implementation, family, slice_size, slices, raw_bytes, mbps > 0 AS timed
  FROM compresslab.bench_crc(slice_sizes => ARRAY[16, 8192], iterations => 2) ORDER BY slice_size, implementation;
-- the standard suite: every default method on six payloads, whole and 2 KB / 8 KB slices
SELECT count(*) AS rows, count(DISTINCT source) AS sources, count(DISTINCT (method, level)) AS methods,
       count(DISTINCT slice_size) AS slice_sizes
  FROM compresslab.bench_suite(1);
SELECT jsonb_array_length(compresslab.bench_suite_json(1)) AS json_rows;
-- markdown, as lzbench prints
SELECT compresslab.markdown(jsonb_agg(b ORDER BY method)) ~ '^\| source \| method \| slice \|' AS has_header,
       array_length(string_to_array(compresslab.markdown(jsonb_agg(b)), E'\n'), 1) AS lines
  FROM compresslab.bench_synthetic('text', 20000, 1, ARRAY['lz4', 'zstd:3'], ARRAY[0], 1) b;
-- progress NOTICEs, which client_min_messages can silence
SET client_min_messages = notice;
SELECT count(*) FROM compresslab.bench('abc'::bytea, ARRAY['lz4'], ARRAY[8192], 1);
RESET client_min_messages;
-- The server's pglz_compress is given at most 4 MiB (512 KiB under 'always') at once, a cancel
-- waiting for it: on a longer slice its row is left out with a NOTICE, the others measured.
-- server_lz4 on a whole 20 MB value runs liblz4 on a worker thread (the backend answers cancel
-- meanwhile); its row counts the worker's CPU time, and the bytes round-trip.
SET client_min_messages = notice;
SELECT method, slice_size, slices, raw_bytes, compress_cpu_seconds > 0 AND decompress_cpu_seconds > 0 AS cpu_counted
  FROM compresslab.bench(compresslab.synthetic('text', 20000000, 1),
         ARRAY['pglz', 'server_pglz', 'server_pglz_always', 'server_lz4'], ARRAY[1048576, 0], 1)
 ORDER BY method, slice_size;
RESET client_min_messages;
-- the session setting for default effort
SET compresslab.bench_iterations = 3;
SELECT DISTINCT iterations FROM compresslab.bench('abc'::bytea, ARRAY['lz4']);
-- the lab's loop against a bare loop over the same slices: both measure, same methods
SELECT method, slice_size, lab_compress_mbps > 0 AND bare_compress_mbps > 0 AND lab_decompress_mbps > 0
       AND bare_decompress_mbps > 0 AS measured,
       compress_overhead_percent > -100 AND decompress_overhead_percent > -100 AS overhead_is_a_percentage
  FROM compresslab.bench_overhead(compresslab.synthetic('text', 200000, 1), ARRAY['lz4', 'server_lz4', 'pglz'], 8192, 3);
SELECT count(*) FROM compresslab.bench_overhead(compresslab.synthetic('text', 20000, 1), iterations => 1);
-- a whole 5 MB value is more than one call of the server's pglz_compress takes: left out with a NOTICE
SET client_min_messages = notice;
SELECT method, slice_size FROM compresslab.bench_overhead(compresslab.synthetic('text', 5000000, 1), ARRAY['server_pglz', 'lz4'], 0, 1);
RESET client_min_messages;
SELECT * FROM compresslab.bench_overhead(NULL);
SELECT * FROM compresslab.bench_overhead('abc'::bytea, slice_size => -1);
-- bad options
SELECT * FROM compresslab.bench('abc'::bytea, ARRAY['snappy']);
SELECT * FROM compresslab.bench('abc'::bytea, ARRAY['lz4:3']);
SELECT * FROM compresslab.bench('abc'::bytea, ARRAY['zstd:30']);
SELECT * FROM compresslab.bench('abc'::bytea, slice_sizes => ARRAY[-1]);
SELECT * FROM compresslab.bench('abc'::bytea, iterations => 0);
SELECT * FROM compresslab.bench_synthetic('noise');
SELECT * FROM compresslab.bench_pages('accounts', hole => 'punched');
CREATE VIEW v AS SELECT 1 AS x;
SELECT * FROM compresslab.bench_pages('v');
SELECT * FROM compresslab.bench_column('docs', 'nope');
SELECT * FROM compresslab.bench_column('docs', 'id');
SELECT * FROM compresslab.bench_file('no/such/file');
-- statement_timeout stops a long run within about a second
CREATE TEMP TABLE t0 AS SELECT clock_timestamp() AS t;
SET statement_timeout = '1s';
SELECT count(*) FROM compresslab.bench_synthetic('text', 20000000, 1, ARRAY['zstd:19'], ARRAY[65536], 100);
RESET statement_timeout;
SELECT clock_timestamp() - t < interval '4 seconds' AS stopped_quickly FROM t0;
