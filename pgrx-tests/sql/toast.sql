-- Validation of estimate_toast_compression: the same values stored with COMPRESSION pglz and
-- COMPRESSION lz4, sum(pg_column_size) compared with the estimate.
CREATE EXTENSION compresslab;
CREATE TABLE src (id int, body text);
INSERT INTO src
SELECT i, CASE i % 4
            WHEN 0 THEN repeat('compressible text, row ' || i || '. ', 200 + i % 50)          -- wide, compressible
            WHEN 1 THEN (SELECT string_agg(md5(i::text || g::text), '') FROM generate_series(1, 80 + i % 40) g) -- wide, hex
            WHEN 2 THEN 'short value ' || i                                                    -- never tried
            ELSE repeat(md5(i::text), 70)                                                      -- wide, repeated
          END
  FROM generate_series(1, 400) i;
ANALYZE src;
CREATE TABLE as_pglz (id int, body text COMPRESSION pglz);
CREATE TABLE as_lz4 (id int, body text COMPRESSION lz4);
-- body || '' makes fresh, uncompressed values: INSERT ... SELECT would keep src's compressed
-- datums as they are, whatever the target column's method
INSERT INTO as_pglz SELECT id, body || '' FROM src;
INSERT INTO as_lz4 SELECT id, body || '' FROM src;
SELECT pg_column_compression(body) AS method, count(*) FROM as_lz4 GROUP BY 1 ORDER BY 1;
CREATE TEMP TABLE measured AS
SELECT 'pglz' AS method, sum(pg_column_size(body)) AS bytes, count(*) FILTER (WHERE pg_column_compression(body) IS NOT NULL) AS compressed FROM as_pglz
UNION ALL
SELECT 'lz4', sum(pg_column_size(body)), count(*) FILTER (WHERE pg_column_compression(body) IS NOT NULL) FROM as_lz4;
SELECT e.method, e.values, e.compressed_values = m.compressed AS same_values_compressed,
       abs(e.stored_bytes - m.bytes)::float8 / m.bytes < 0.01 AS within_1_percent,
       e.raw_bytes > e.stored_bytes AS saves, e.compress_mbps > 0 AND e.decompress_mbps > 0 AS timed,
       e.stored_bytes_low = e.stored_bytes AND e.stored_bytes_high = e.stored_bytes AS every_row_read_so_exact
  FROM compresslab.estimate_toast_compression('src', 'body', sample_values => 1000) e
  JOIN measured m USING (method)
 ORDER BY e.method;
-- lz4 is faster to compress than pglz on the same values
SELECT (SELECT compress_mbps FROM compresslab.estimate_toast_compression('src', 'body') WHERE method = 'lz4') >
       (SELECT compress_mbps FROM compresslab.estimate_toast_compression('src', 'body') WHERE method = 'pglz') AS lz4_faster;
-- Our lz4 blocks are the server's: every value TOAST compressed with lz4 (kept in line by
-- STORAGE MAIN, so that pg_column_size is the 8-byte compressed header plus the block) is
-- exactly as long as our block of it.
CREATE TABLE as_lz4_main (id int, body text COMPRESSION lz4);
ALTER TABLE as_lz4_main ALTER COLUMN body SET STORAGE MAIN;
INSERT INTO as_lz4_main SELECT id, body || '' FROM src;
SELECT count(*) AS lz4_values,
       count(*) FILTER (WHERE pg_column_size(body) = 8 + length(compresslab.lz4_compress(convert_to(body, 'UTF8')))) AS exactly_our_block
  FROM as_lz4_main WHERE pg_column_compression(body) = 'lz4';
-- A sample stands for the whole table: an insertion-ordered table whose newest third differs
-- (events whose payload changed: text, then text with hex digits, which compresses worse and
-- is longer), one row a block (fillfactor 10). The sample is every row of blocks drawn at
-- random from the whole table (default sample_values, 1,000 of 3,000 values); the first rows
-- in physical order, scaled up, would miss the newest third (shown: their error is over 5%).
-- Each method's estimate is within 2% of the column rewritten under it, and the 95% interval
-- the result gives holds the rewritten column's bytes.
CREATE TABLE events (id int, body text) WITH (fillfactor = 10);
INSERT INTO events
SELECT i, CASE WHEN i <= 2000 THEN encode(compresslab.synthetic('text', 2200, i), 'escape')
               ELSE encode(compresslab.synthetic('text', 1900, i), 'escape') || encode(compresslab.synthetic('random', 250, i), 'hex') END
  FROM generate_series(1, 3000) i;
CREATE TABLE events_pglz (id int, body text COMPRESSION pglz) WITH (fillfactor = 10);
CREATE TABLE events_lz4 (id int, body text COMPRESSION lz4) WITH (fillfactor = 10);
INSERT INTO events_pglz SELECT id, body || '' FROM events;
INSERT INTO events_lz4 SELECT id, body || '' FROM events;
SET client_min_messages = warning;  -- the NOTICEs give the sample's blocks and intervals
CREATE TEMP TABLE events_measured AS
SELECT 'pglz' AS method, sum(pg_column_size(body)) AS bytes, 3 * sum(pg_column_size(body)) FILTER (WHERE id <= 1000) AS first_third_scaled FROM events_pglz
UNION ALL
SELECT 'lz4', sum(pg_column_size(body)), 3 * sum(pg_column_size(body)) FILTER (WHERE id <= 1000) FROM events_lz4;
SELECT e.method, abs(e.stored_bytes - m.bytes)::float8 / m.bytes < 0.02 AS within_2_percent,
       abs(m.first_third_scaled - m.bytes)::float8 / m.bytes > 0.05 AS first_rows_off_by_over_5_percent,
       e.stored_bytes_low < e.stored_bytes AND e.stored_bytes < e.stored_bytes_high AS sampled,
       m.bytes BETWEEN e.stored_bytes_low AND e.stored_bytes_high AS interval_holds_the_rewrite
  FROM compresslab.estimate_toast_compression('events', 'body') e JOIN events_measured m USING (method)
 ORDER BY e.method;
-- bench_column's sample too: 300 values, their mean length within 2% of the table's (the
-- first rows alone are all 2,200 bytes long, the newest 2,400)
SELECT avg(length(body))::float8 AS mean_length FROM events \gset
SELECT slices, abs(raw_bytes::float8 / slices - :mean_length) / :mean_length < 0.02 AS mean_length_within_2_percent
  FROM compresslab.bench_column('events', 'body', ARRAY['memcpy'], ARRAY[0], 1, sample_values => 300);
RESET client_min_messages;
-- Every value read (sample_values => NULL): the estimate equals the rewrite to the byte, also
-- where the row holds other wide columns as they are stored (compressed in line, or out of line:
-- an UPDATE keeps them so, and a value of another column stored compressed is not compressed
-- again).
SET default_toast_compression = pglz;
SET client_min_messages = warning;
CREATE TABLE wide_rows (id int PRIMARY KEY, title text, doc jsonb, note text, n int);
INSERT INTO wide_rows SELECT g, CASE WHEN g % 3 = 0 THEN NULL ELSE repeat(md5(g::text), 1 + g % 60) END,
  CASE WHEN g % 11 = 0 THEN NULL ELSE (SELECT jsonb_agg(jsonb_build_object('id', g * 100 + k, 'name', 'customer ' || (g * 37 % 1000 + k),
   'email', md5((g * 100 + k)::text) || '@example.com', 'score', (g * k) % 97)) FROM generate_series(1, 1 + (g * 7919) % 40) k) END,
  CASE WHEN g % 4 = 0 THEN NULL ELSE (SELECT string_agg(md5((g * k)::text), ' ') FROM generate_series(1, (g * 31) % 90) k) END, g
FROM generate_series(1, 1500) g;
SELECT stored_bytes AS lz4_estimate, stored_bytes_low AS lz4_low, stored_bytes_high AS lz4_high
  FROM compresslab.estimate_toast_compression('wide_rows', 'doc', sample_values => NULL) WHERE method = 'lz4' \gset
CALL compresslab.recompress('wide_rows', 'doc', 'lz4');
SELECT sum(pg_column_size(doc)) - :lz4_estimate AS bytes_off,
       sum(pg_column_size(doc)) BETWEEN :lz4_low AND :lz4_high AS within_the_interval,
       count(*) FILTER (WHERE pg_column_compression(doc) = 'lz4') > 1000 AS rewritten
  FROM wide_rows;
-- Every value read, the interval carries only the model's known error: rows within their
-- alignment padding of TOAST's threshold, and other columns stored raw that were refused or
-- never reached. Rewritten once, two rows of this table are such: back to pglz, the estimate
-- is 8 bytes off, and the rewrite stores within the interval.
SELECT stored_bytes AS pglz_estimate, stored_bytes_low AS pglz_low, stored_bytes_high AS pglz_high
  FROM compresslab.estimate_toast_compression('wide_rows', 'doc', sample_values => NULL) WHERE method = 'pglz' \gset
CALL compresslab.recompress('wide_rows', 'doc', 'pglz');
SELECT sum(pg_column_size(doc)) - :pglz_estimate AS bytes_off,
       sum(pg_column_size(doc)) BETWEEN :pglz_low AND :pglz_high AS within_the_interval,
       count(*) FILTER (WHERE pg_column_compression(doc) = 'pglz') > 1000 AS rewritten
  FROM wide_rows;
RESET client_min_messages;
