-- advise()'s TOAST figures against real rewrites, on four kinds of column: text pglz
-- compresses; binary data pglz refuses but lz4 compresses (pieces that open with a kilobyte of
-- random bytes, as a database file's header does: pglz gives up when it finds no match in its
-- first kilobyte, lz4 keeps any saving), and pieces of a real heap file; random bytes; and wide
-- rows with several toastable columns, where TOAST's decision is the row's. For every column
-- the advice says what pglz and lz4 would store (its basis); each is compared with the column
-- rewritten under that method (fresh values, so TOAST decides anew), within 2%. 300 rows a
-- table: the advisor's sample is the whole table, so this checks the model, not the sampling.
CREATE EXTENSION compresslab;
-- pglz, the default before PostgreSQL 19 (19's is lz4), for this database's sessions too: the
-- figures below are pglz's (pgrx-tests/t/pg_upgrade.sh tests 19's default).
SELECT format('ALTER DATABASE %I SET default_toast_compression = pglz', current_database()) \gexec
SET default_toast_compression = pglz;
CREATE TABLE k_text (id int, body text);
INSERT INTO k_text SELECT i, repeat('order ' || i || ' shipped to customer ' || (i * 7919 % 1000) || '; ', 40 + i % 300)
  FROM generate_series(1, 300) i;
CREATE TABLE k_binary (id int, body bytea);
INSERT INTO k_binary SELECT i, compresslab.synthetic('random', 1100, i) || compresslab.synthetic('pgbench', 2000 + i * 13, i)
  FROM generate_series(1, 300) i;
-- pieces of a real heap file: a table of numbers, read back 4 to 8 kB at a time
CREATE TABLE numbers AS SELECT i, i * 0.37 AS x, (i * 7919) % 100003 AS y FROM generate_series(1, 100000) i;
CHECKPOINT;
CREATE TABLE k_heap (id int, body bytea);
INSERT INTO k_heap SELECT i, pg_read_binary_file(pg_relation_filepath('numbers'), i * 8192 + i % 97, 4000 + i * 13)
  FROM generate_series(1, 300) i;
CREATE TABLE k_random (id int, body bytea);
INSERT INTO k_random SELECT i, compresslab.synthetic('random', 2500 + i * 7, i) FROM generate_series(1, 300) i;
CREATE TABLE k_wide (id int, note text, blob bytea, tag text);
INSERT INTO k_wide SELECT i, repeat('note ' || i || ' ', 150 + i % 200), compresslab.synthetic('random', 900 + i % 700, i),
                          repeat(md5(i::text), 10 + i % 40)
  FROM generate_series(1, 300) i;
ANALYZE k_text, k_binary, k_heap, k_random, k_wide;  -- not numbers: a table without statistics

\ir include/rewritten.sql

-- (verbose: every column its own row; by default, columns under 1 MB are one row, see the end)
CREATE TEMP TABLE advice AS SELECT * FROM compresslab.advise('120 s', verbose => true) WHERE area = 'toast';
CREATE TEMP TABLE predicted AS
SELECT target, split_part(target, '.', 2)::regclass AS tbl, split_part(target, '.', 3) AS col, recommended,
       substring(basis FROM 'pglz would store ([0-9]+) bytes')::bigint AS pglz,
       substring(basis FROM 'lz4 ([0-9]+) bytes')::bigint AS lz4, bytes_now, saving_percent
  FROM advice;
-- numbers (100,000 rows, never analyzed) gets totals all the same: the sample is of the
-- table's blocks, whose number is known without statistics; its interval holds the real bytes
SELECT target, bytes_now_low <= real AND real <= bytes_now_high AS now_within_interval,
       basis LIKE '% of the table''s % blocks, chosen at random (%' AS sampled
  FROM advice, (SELECT sum(pg_column_size(x)) AS real FROM numbers) n WHERE target = 'public.numbers.x';
DELETE FROM predicted WHERE target = 'public.numbers.x';
-- what each column is advised (the binary kinds that pglz refuses go to lz4)
SELECT target, recommended, apply_sql IS NOT NULL AS changes, round(saving_percent::numeric) AS saving_percent
  FROM predicted JOIN advice USING (target, recommended, saving_percent) ORDER BY target;
-- every prediction within 2% of the rewrite, and the bytes now within 2% of the table (the
-- real and the predicted bytes are shown where not)
CREATE FUNCTION within_2_percent(predicted bigint, measured bigint) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN abs(predicted - measured)::float8 / measured < 0.02 THEN 'ok' ELSE format($f$%s predicted, %s measured$f$, predicted, measured) END
$$;
SELECT p.target, within_2_percent(p.pglz, rewritten(p.tbl, p.col, 'pglz')) AS pglz,
       within_2_percent(p.lz4, rewritten(p.tbl, p.col, 'lz4')) AS lz4,
       within_2_percent(p.bytes_now, stored_now(p.tbl, p.col)) AS now
  FROM predicted p ORDER BY p.target;
-- Without verbose, the columns storing under 1 MB each are one row: its target counts them,
-- its bytes are their sum, it has no statement, and its note points at verbose => true; the
-- other columns keep their own rows, and a NOTICE says how many were folded.
CREATE TEMP TABLE folded AS SELECT * FROM compresslab.advise('120 s') WHERE area = 'toast';
SELECT count(*) AS small_columns, sum(bytes_now) AS small_now, sum(bytes_recommended) AS small_then
  FROM advice WHERE bytes_now < 1048576 \gset
SELECT :small_columns >= 2 AS several_small_columns,
       (SELECT count(*) FROM advice WHERE bytes_now IS NULL OR bytes_now >= 1048576) >= 2 AS several_others;
SELECT target = format('%s columns under 1 MB each', :small_columns) AS counts_them, bytes_now = :small_now AS bytes_summed,
       bytes_recommended = :small_then AS recommended_summed, apply_sql IS NULL AS no_statement,
       note LIKE '%compresslab.advise(..., verbose => true) gives each its own row%' AS points_at_verbose
  FROM folded WHERE target LIKE '% under 1 MB each';
SELECT count(*) AS rows_differing FROM (
  (SELECT target, bytes_now FROM folded WHERE target NOT LIKE '% under 1 MB each'
   EXCEPT ALL SELECT target, bytes_now FROM advice WHERE bytes_now IS NULL OR bytes_now >= 1048576)
  UNION ALL
  (SELECT target, bytes_now FROM advice WHERE bytes_now IS NULL OR bytes_now >= 1048576
   EXCEPT ALL SELECT target, bytes_now FROM folded WHERE target NOT LIKE '% under 1 MB each')) d;
CREATE TEMP TABLE notices (line text);
SELECT format('psql -X -q -A -t -h %s -p %s -d %s -c "SET client_min_messages = notice" '
              '-c "SELECT pg_catalog.count(*) FROM compresslab.advise(''120 s'')" 2>&1',
              current_setting('unix_socket_directories'), current_setting('port'), current_database()) AS advise_command \gset
COPY notices FROM PROGRAM :'advise_command';
SELECT count(*) AS notice_says_how_many_were_folded FROM notices
 WHERE line ~ ('^NOTICE:  compresslab: advise: .*; ' || :small_columns || ' column\(s\) storing under 1 MB each folded into one row \(verbose => true lists each\)');
