-- Every codec's SQL functions at the SQL level, as a user calls them: a plain
-- `SELECT max(length(f(...)))` over 32 values of 512 KB (16 MiB; see below for others),
-- the cost of fetching the values (the same query without the function) subtracted; best of
-- 11 runs each, the three queries of a function in turns. Beside each, the kernel: the lab timing the same codec on the same 32 values
-- (whole, in this backend, best of 7), so `sql_share_percent` is how much of the kernel's speed
-- the SQL function keeps. Where the server has the routine (pglz, CRC-32C, and the liblz4 and
-- libzstd it loads), its SQL-level wrapper is timed the same way and the ratio ours / server is
-- given at both levels.
-- The values are `synthetic()`'s kind :sql_vs_c_kind (default pgbench), :sql_vs_c_value_bytes
-- each (default 524288); the report also runs period32 and runs, the repeated patterns whose
-- matches overlap themselves, in values of 4 MB, as they decode too fast for less.
-- Run by scripts/report.sql's Rust-vs-C section and by hand: psql -f scripts/bench/sql_vs_c.sql
-- (-v sql_vs_c_kind=period32 -v sql_vs_c_value_bytes=4194304 for another kind).
-- -v sql_vs_c_values=N times N values instead of 32 (2048 of 8 KB are 16 MiB too: small
-- values need more of them to time); -v sql_vs_c_only=REGEX times only the functions whose
-- name matches (e.g. 'decompress'); -v sql_vs_c_no_kernel=1 leaves the kernel's columns
-- empty and saves its timing; -v sql_vs_c_quiet=1 prints nothing, leaving the timings in the
-- temporary table sql_vs_c (both for the report's per-call table). The last columns give the cost
-- per call in ns, ours and the server's, whole and beyond the kernel's time for one value.
\set ON_ERROR_STOP 1
\if :{?sql_vs_c_kind}
\else
\set sql_vs_c_kind pgbench
\endif
\if :{?sql_vs_c_value_bytes}
\else
\set sql_vs_c_value_bytes 524288
\endif
\if :{?sql_vs_c_values}
\else
\set sql_vs_c_values 32
\endif
\if :{?sql_vs_c_only}
\else
\set sql_vs_c_only ''
\endif
SET client_min_messages = warning;
DROP TABLE IF EXISTS sql_vs_c_values, sql_vs_c_kernel, sql_vs_c;
CREATE TEMP TABLE sql_vs_c_values AS
SELECT i, d, compresslab.pglz_compress(d, 'always') AS pglz, compresslab.lz4_compress(d) AS lz4,
       compresslab.lz4_frame_compress(d) AS lz4_frame, compresslab.zstd_compress(d, 3) AS zstd,
       compresslab.compress(d, 'lz4') AS envelope, length(d) AS n
  FROM (SELECT i, compresslab.synthetic(:'sql_vs_c_kind', :sql_vs_c_value_bytes, i) AS d FROM generate_series(1, :sql_vs_c_values) i) s;
ALTER TABLE sql_vs_c_values ALTER COLUMN d SET STORAGE EXTERNAL, ALTER COLUMN pglz SET STORAGE EXTERNAL,
  ALTER COLUMN lz4 SET STORAGE EXTERNAL, ALTER COLUMN lz4_frame SET STORAGE EXTERNAL,
  ALTER COLUMN zstd SET STORAGE EXTERNAL, ALTER COLUMN envelope SET STORAGE EXTERNAL;
-- The best time of each query, run in turns (one run of each, then again): the fetch and
-- both functions meet the same moments of a busy machine, so that a slow spell does not fall
-- on one of them alone and skew the difference taken below.
CREATE OR REPLACE FUNCTION pg_temp.best_ms(queries text[], runs int DEFAULT 11) RETURNS float8[] LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8[] := array_fill('infinity'::float8, ARRAY[cardinality(queries)]); ms float8;
BEGIN
  FOR q IN 1..cardinality(queries) LOOP
    EXECUTE queries[q];  -- warm-up
  END LOOP;
  FOR r IN 1..runs LOOP
    FOR q IN 1..cardinality(queries) LOOP
      t0 := clock_timestamp();
      EXECUTE queries[q];
      ms := 1000 * extract(epoch FROM clock_timestamp() - t0);
      best[q] := least(best[q], ms);
    END LOOP;
  END LOOP;
  RETURN best;
END $$;
-- The kernel: the lab on the same values, each one slice.
\if :{?sql_vs_c_no_kernel}
CREATE TEMP TABLE sql_vs_c_kernel (method text, compress_mbps_best float8, decompress_mbps_best float8);
\else
CREATE TEMP TABLE sql_vs_c_kernel AS
SELECT * FROM compresslab.bench((SELECT string_agg(d, ''::bytea ORDER BY i) FROM sql_vs_c_values),
                                ARRAY['pglz', 'server_pglz', 'lz4', 'server_lz4', 'lz4_frame', 'zstd:3', 'server_zstd:3'], ARRAY[:sql_vs_c_value_bytes], 7);
\endif
CREATE TEMP TABLE sql_vs_c AS
WITH q(ord, what, fetched, ours, server, kernel, direction) AS (VALUES
  (1, 'pglz_compress', 'd', 'compresslab.pglz_compress(d)', 'compresslab.server_pglz_compress(d)', 'pglz', 'c'),
  (2, 'pglz_decompress', 'pglz', 'compresslab.pglz_decompress(pglz, n)', 'compresslab.server_pglz_decompress(pglz, n)', 'pglz', 'd'),
  (3, 'lz4_compress', 'd', 'compresslab.lz4_compress(d)', 'compresslab.server_lz4_compress(d)', 'lz4', 'c'),
  (4, 'lz4_decompress', 'lz4', 'compresslab.lz4_decompress(lz4, n)', 'compresslab.server_lz4_decompress(lz4, n)', 'lz4', 'd'),
  (5, 'lz4_frame_compress', 'd', 'compresslab.lz4_frame_compress(d)', NULL, 'lz4_frame', 'c'),
  (6, 'lz4_frame_decompress', 'lz4_frame', 'compresslab.lz4_frame_decompress(lz4_frame)', NULL, 'lz4_frame', 'd'),
  (7, 'zstd_compress (level 3)', 'd', 'compresslab.zstd_compress(d, 3)', 'compresslab.server_zstd_compress(d, 3)', 'zstd', 'c'),
  (8, 'zstd_decompress', 'zstd', 'compresslab.zstd_decompress(zstd)', 'compresslab.server_zstd_decompress(zstd, n)', 'zstd', 'd'),
  (9, 'compress (lz4)', 'd', 'compresslab.compress(d, ''lz4'')', NULL, 'lz4', 'c'),
  (10, 'decompress (lz4)', 'envelope', 'compresslab.decompress(envelope)', NULL, 'lz4', 'd'),
  (11, 'crc32c', 'd', 'compresslab.crc32c(d)::text', 'compresslab.server_crc32c(d)::text', NULL, NULL))
SELECT ord, what, kernel, direction, t[1] AS fetch_ms, t[2] AS ours_ms, t[3] AS server_ms
  FROM (SELECT * FROM q WHERE what ~ :'sql_vs_c_only') q, LATERAL pg_temp.best_ms(ARRAY[format('SELECT max(get_byte(%s, 0)) FROM sql_vs_c_values', fetched),
                                        format('SELECT max(length(%s)) FROM sql_vs_c_values', ours)]
                                  || CASE WHEN server IS NOT NULL
                                          THEN ARRAY[format('SELECT max(length(%s)) FROM sql_vs_c_values', server)] END) t;
\if :{?sql_vs_c_quiet}
-- the caller reads the table sql_vs_c itself (the report's per-call table)
\else
-- A function whose own time is under a millisecond once the fetch is subtracted (crc32c: 16 MiB
-- at tens of GB/s) is within the timer's and the fetch's noise: its derived figures are left
-- empty rather than printed from a difference of two nearly equal times.
SELECT s.what, round(s.fetch_ms::numeric, 1) AS fetch_ms, round(s.ours_ms::numeric, 1) AS ours_ms,
       round((:sql_vs_c_values.0 * :sql_vs_c_value_bytes / 1e6 / (s.own_ms / 1000))::numeric) AS sql_mbps,
       round((CASE s.direction WHEN 'c' THEN k.compress_mbps_best ELSE k.decompress_mbps_best END)::numeric) AS kernel_mbps,
       round((100 * :sql_vs_c_values.0 * :sql_vs_c_value_bytes / 1e6 / (s.own_ms / 1000)
              / CASE s.direction WHEN 'c' THEN k.compress_mbps_best ELSE k.decompress_mbps_best END)::numeric) AS sql_share_percent,
       round(s.server_ms::numeric, 1) AS server_ms,
       round(((s.server_ms - s.fetch_ms) / s.own_ms)::numeric, 2) AS sql_level_x,
       round((CASE s.direction WHEN 'c' THEN k.compress_mbps_best / c.compress_mbps_best
                               ELSE k.decompress_mbps_best / c.decompress_mbps_best END)::numeric, 2) AS kernel_x,
       -- Per call: the function's own time per value, and what is left of it once the kernel's
       -- time for one value (at its best speed above) is taken off: the executor's call, the
       -- argument's detoasting, the result's allocation, the settings and checks.
       round((s.own_ms * 1e6 / :sql_vs_c_values)::numeric) AS ours_ns_per_call,
       round((s.own_ms * 1e6 / :sql_vs_c_values
              - :sql_vs_c_value_bytes * 1e3 / CASE s.direction WHEN 'c' THEN k.compress_mbps_best ELSE k.decompress_mbps_best END)::numeric) AS ours_ns_beyond_kernel,
       round(((s.server_ms - s.fetch_ms) * 1e6 / :sql_vs_c_values)::numeric) AS server_ns_per_call,
       round(((s.server_ms - s.fetch_ms) * 1e6 / :sql_vs_c_values
              - :sql_vs_c_value_bytes * 1e3 / CASE s.direction WHEN 'c' THEN c.compress_mbps_best ELSE c.decompress_mbps_best END)::numeric) AS server_ns_beyond_kernel
  FROM (SELECT *, CASE WHEN ours_ms - fetch_ms >= 1.0 THEN ours_ms - fetch_ms END AS own_ms FROM sql_vs_c) s
  LEFT JOIN sql_vs_c_kernel k ON k.method = s.kernel
  LEFT JOIN sql_vs_c_kernel c ON c.method = 'server_' || s.kernel
 ORDER BY s.ord;
\endif
