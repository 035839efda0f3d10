-- A table of 1,600 columns (PostgreSQL's limit), every one text: advise()'s sample selects each
-- variable-length column of the row once (their methods read from the stored datums), within
-- the 1,664 entries of a target list (it did fail with 54011 from 833 columns on, for the
-- whole database). advise() advises on it; the estimate of its last column, whose rows share
-- TOAST's decisions with the first, is within 2% of the table rewritten under each method.
CREATE EXTENSION compresslab;
DO $$ BEGIN
  EXECUTE (SELECT format('CREATE TABLE wide (%s)', string_agg(format('c%s text', i), ', ' ORDER BY i))
             FROM generate_series(1, 1600) i);
END $$;
INSERT INTO wide (c1, c2, c1600)
SELECT repeat('first ' || i || ' ', 400), 'short ' || i, repeat(md5(i::text), 60 + i % 30) FROM generate_series(1, 200) i;
ANALYZE wide;
SET client_min_messages = warning;
SELECT target, recommended IS NOT NULL AS advised
  FROM compresslab.advise('5 s', verbose => true) WHERE target = 'public.wide.c1';
\ir include/rewritten.sql
SELECT method, values, abs(stored_bytes - rewritten('wide', 'c1600', method))::float8 / rewritten('wide', 'c1600', method) < 0.02 AS within_2_percent
  FROM compresslab.estimate_toast_compression('wide', 'c1600') ORDER BY 1;
