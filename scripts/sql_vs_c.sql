-- The SQL functions against the server's own routines, at the SQL level: a plain
-- `SELECT max(length(f(...)))` over 32 values of 512 KB of pgbench-like page data, the cost of
-- fetching the values (the same query without the function) subtracted; best of 7 runs each.
-- Run by scripts/report.sql's Rust-vs-C section and by hand: psql -f scripts/sql_vs_c.sql.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP TABLE IF EXISTS sql_vs_c_values;
CREATE TEMP TABLE sql_vs_c_values AS
SELECT i, d, compresslab.pglz_compress(d, 'always') AS pglz, compresslab.lz4_compress(d) AS lz4, length(d) AS n
  FROM (SELECT i, compresslab.synthetic('pgbench', 524288, i) AS d FROM generate_series(1, 32) i) s;
ALTER TABLE sql_vs_c_values ALTER COLUMN d SET STORAGE EXTERNAL, ALTER COLUMN pglz SET STORAGE EXTERNAL, ALTER COLUMN lz4 SET STORAGE EXTERNAL;
CREATE FUNCTION pg_temp.best_ms(query text, runs int DEFAULT 7) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8 := 'infinity'; ms float8;
BEGIN
  EXECUTE query;  -- warm-up
  FOR r IN 1..runs LOOP
    t0 := clock_timestamp();
    EXECUTE query;
    ms := 1000 * extract(epoch FROM clock_timestamp() - t0);
    best := least(best, ms);
  END LOOP;
  RETURN best;
END $$;
CREATE TEMP TABLE sql_vs_c AS
WITH q(what, ours, theirs, fetch_only) AS (VALUES
  ('pglz compression', 'SELECT max(length(compresslab.pglz_compress(d))) FROM sql_vs_c_values',
                       'SELECT max(length(compresslab.server_pglz_compress(d))) FROM sql_vs_c_values',
                       'SELECT max(get_byte(d, 0)) FROM sql_vs_c_values'),
  ('pglz decompression', 'SELECT max(length(compresslab.pglz_decompress(pglz, n))) FROM sql_vs_c_values',
                         'SELECT max(length(compresslab.server_pglz_decompress(pglz, n))) FROM sql_vs_c_values',
                         'SELECT max(get_byte(pglz, 0)) FROM sql_vs_c_values'))
SELECT what, pg_temp.best_ms(fetch_only) AS fetch_ms, pg_temp.best_ms(ours) AS ours_ms, pg_temp.best_ms(theirs) AS server_ms FROM q;
SELECT what, round(fetch_ms::numeric, 1) AS fetch_ms, round(ours_ms::numeric, 1) AS ours_ms, round(server_ms::numeric, 1) AS server_ms,
       round(((server_ms - fetch_ms) / (ours_ms - fetch_ms))::numeric, 2) AS sql_level_x
  FROM sql_vs_c ORDER BY what;
