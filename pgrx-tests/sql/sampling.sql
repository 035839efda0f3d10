-- advise()'s block sample against the truth, on columns built from this machine's own files:
-- text (the copyright files of /usr/share/doc), executables (/usr/bin), .gz files (manual
-- pages), JSON (this server's catalogue as row_to_json), a mixed column, and an
-- insertion-ordered table whose newest third differs (text, then executables: a sample of the
-- first rows in physical order would miss it). Every table is stored at fillfactor 10 (about
-- 1,500 blocks; at this size a few seconds read it whole, so this checks the TOAST model on
-- real kinds of data; the sampling is checked on `spread` below, on numbers in
-- toast_advice.sql, and by the simulation in core/src/sampling.rs). For each column the real rewrite
-- under pglz and under lz4 (fresh values, sum(pg_column_size)) and the bytes stored now fall
-- inside the advice's 95% intervals, and its point estimates are within 2%. The files differ
-- from machine to machine, so only booleans are printed.
CREATE EXTENSION compresslab;
SET client_min_messages = warning;
CREATE TEMP TABLE corpus (kind text PRIMARY KEY, body bytea);
INSERT INTO corpus
SELECT 'text', string_agg(pg_read_binary_file('/usr/share/doc/' || d || '/copyright', 0, 100000, true), ''::bytea ORDER BY d)
  FROM pg_ls_dir('/usr/share/doc') d;
INSERT INTO corpus
SELECT 'exe', string_agg(pg_read_binary_file('/usr/bin/' || f, 0, 300000, true), ''::bytea ORDER BY f)
  FROM (SELECT f FROM pg_ls_dir('/usr/bin') f
         WHERE (pg_stat_file('/usr/bin/' || f, true)).size > 100000 AND NOT (pg_stat_file('/usr/bin/' || f, true)).isdir
         ORDER BY f LIMIT 40) x;
INSERT INTO corpus
SELECT 'gz', string_agg(pg_read_binary_file('/usr/share/man/man1/' || f, 0, 100000, true), ''::bytea ORDER BY f)
  FROM (SELECT f FROM pg_ls_dir('/usr/share/man/man1') f WHERE f LIKE '%.gz' ORDER BY f LIMIT 3000) x;
INSERT INTO corpus
SELECT 'json', convert_to(string_agg(j, E'\n'), 'UTF8')
  FROM (SELECT row_to_json(p)::text AS j FROM pg_proc p UNION ALL SELECT row_to_json(a)::text FROM pg_attribute a) x;
SELECT kind, length(body) > 1000000 AS over_a_megabyte FROM corpus ORDER BY kind;
-- piece i of a corpus: 1,000 to 3,000 bytes from a spot spread over it
CREATE FUNCTION piece(k text, i int) RETURNS bytea LANGUAGE sql AS $$
  SELECT substring(body FROM 1 + ((i::bigint * 7919 * 131) % (length(body) - 6000))::int FOR 1000 + (i * 37) % 2000)
    FROM corpus WHERE kind = k
$$;
CREATE TABLE s_text (id int, body bytea) WITH (fillfactor = 10);
INSERT INTO s_text SELECT i, piece('text', i) FROM generate_series(1, 1500) i;
CREATE TABLE s_exe (id int, body bytea) WITH (fillfactor = 10);
INSERT INTO s_exe SELECT i, piece('exe', i) FROM generate_series(1, 1500) i;
CREATE TABLE s_gz (id int, body bytea) WITH (fillfactor = 10);
INSERT INTO s_gz SELECT i, piece('gz', i) FROM generate_series(1, 1500) i;
CREATE TABLE s_json (id int, body text) WITH (fillfactor = 10);
INSERT INTO s_json SELECT i, encode(piece('json', i), 'escape') FROM generate_series(1, 1500) i;
CREATE TABLE s_mixed (id int, body bytea) WITH (fillfactor = 10);
INSERT INTO s_mixed SELECT i, piece((ARRAY['text', 'exe', 'gz', 'json'])[1 + i % 4], i) FROM generate_series(1, 1500) i;
CREATE TABLE s_events (id int, body bytea) WITH (fillfactor = 10);
INSERT INTO s_events SELECT i, piece(CASE WHEN i <= 1000 THEN 'text' ELSE 'exe' END, i) FROM generate_series(1, 1500) i;
ANALYZE s_text, s_exe, s_gz, s_json, s_mixed, s_events;

\ir include/rewritten.sql

-- A budget no column can run out of, even on a loaded machine: each stops once its figures
-- are within their target margin, long before its share; what a budget buys is tested below,
-- where it runs out on purpose.
CREATE TEMP TABLE advice AS SELECT * FROM compresslab.advise('120 s', verbose => true) WHERE area = 'toast';
-- each method's figure and interval from the basis: {estimate, low, high} (a table read
-- whole: its exact figure three times, or the range of the model's known error)
CREATE FUNCTION interval_of(basis text, method text) RETURNS bigint[] LANGUAGE sql AS $$
  SELECT COALESCE(regexp_match(basis, method || ' ([0-9]+) bytes \((?:95% interval|every value read; the model''s error) ([0-9]+)\.\.([0-9]+)\)')::bigint[],
                  array_fill((regexp_match(basis, method || ' ([0-9]+) bytes \(exact\)'))[1]::bigint, ARRAY[3]))
$$;
CREATE TEMP TABLE figures AS
SELECT split_part(target, '.', 2)::regclass AS tbl, split_part(target, '.', 3) AS col, recommended,
       bytes_now, bytes_now_low, bytes_now_high, bytes_recommended, bytes_recommended_low, bytes_recommended_high,
       basis LIKE '% of the table''s % blocks, chosen at random (%' AS sampled,
       interval_of(basis, 'pglz would store') AS pglz, interval_of(basis, 'lz4') AS lz4
  FROM advice WHERE target LIKE 'public.s\_%';
CREATE TABLE truth AS
SELECT f.*, rewritten(tbl, col, 'pglz') AS real_pglz, rewritten(tbl, col, 'lz4') AS real_lz4, stored_now(tbl, col) AS real_now
  FROM figures f;
CREATE FUNCTION within_2_percent(predicted bigint, measured bigint) RETURNS boolean LANGUAGE sql AS $$
  SELECT abs(predicted - measured)::float8 / measured < 0.02
$$;
SELECT tbl,
       real_now BETWEEN bytes_now_low AND bytes_now_high AS now_in,
       real_pglz BETWEEN pglz[2] AND pglz[3] AS pglz_in,
       real_lz4 BETWEEN lz4[2] AND lz4[3] AS lz4_in,
       (CASE recommended WHEN 'pglz' THEN pglz[1] = bytes_recommended ELSE lz4[1] = bytes_recommended END) AS recommended_is_its_method,
       within_2_percent(bytes_now, real_now) AS now_2pct,
       within_2_percent(pglz[1], real_pglz) AS pglz_2pct,
       within_2_percent(lz4[1], real_lz4) AS lz4_2pct
  FROM truth ORDER BY tbl::text;
DROP TABLE s_text, s_exe, s_gz, s_json, s_mixed, s_events;

-- The budget buys a larger sample: on a table too big to read within it (one row a block,
-- values of 32 to 2,900 bytes, a third of them random: blocks differ widely), advise('6 s') reads more blocks than
-- advise('1 s') and its interval is narrower.
CREATE TABLE spread (id int, body text) WITH (fillfactor = 10);
INSERT INTO spread SELECT i, CASE WHEN i % 3 = 0 THEN encode(compresslab.synthetic('random', 100 + (i * 7919) % 1500, i), 'base64')
                           ELSE repeat(md5(i::text), 1 + (i * 7919) % 90) END FROM generate_series(1, 20000) i;
ANALYZE spread;
CREATE TABLE by_budget AS
SELECT budget, substring(basis FROM 'every row of ([0-9]+) of the table''s')::int AS blocks,
       (bytes_now_high - bytes_now_low)::float8 / bytes_now AS width,
       (SELECT sum(pg_column_size(body)) FROM spread) BETWEEN bytes_now_low AND bytes_now_high AS now_in
  FROM (VALUES ('1 s'), ('6 s')) b(budget), LATERAL compresslab.advise(b.budget::interval, verbose => true) a
 WHERE a.target = 'public.spread.body';
SELECT s.blocks < l.blocks AS more_blocks, l.width < s.width AS narrower, s.now_in AND l.now_in AS both_hold_the_truth
  FROM by_budget s, by_budget l WHERE s.budget = '1 s' AND l.budget = '6 s';
