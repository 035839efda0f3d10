-- REPACK (PostgreSQL 19) keeps every value compressed as it is stored, as VACUUM FULL and CLUSTER
-- do (advise.sql): after SET COMPRESSION lz4, REPACK, REPACK USING INDEX and REPACK
-- (CONCURRENTLY) leave the pglz values pglz, byte for byte, in a new file. The advice's notes say
-- so (core/src/advisor/toast/mod.rs, KEEP_OLD_METHOD). Before 19 there is no REPACK: this test
-- then only says so (expected/repack_1.out).
SET client_min_messages = warning;
SET default_toast_compression = pglz;
SELECT current_setting('server_version_num')::int >= 190000 AS has_repack \gset
CREATE TABLE probe (id int PRIMARY KEY, body text);
INSERT INTO probe SELECT i, repeat(md5(i::text), 100) FROM generate_series(1, 200) i;
ALTER TABLE probe ALTER COLUMN body SET COMPRESSION lz4;
CREATE FUNCTION methods() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(m || ' ' || n, ', ' ORDER BY m)
    FROM (SELECT coalesce(pg_column_compression(body), 'none') AS m, count(*) AS n FROM probe GROUP BY 1) s $$;
SELECT md5(string_agg(body, '' ORDER BY id)) AS md5_before, pg_relation_filenode('probe') AS file_before FROM probe \gset
\if :has_repack
REPACK probe;
SELECT 'REPACK' AS step, methods(), pg_relation_filenode('probe') <> :file_before AS new_file;
REPACK probe USING INDEX probe_pkey;
SELECT 'REPACK USING INDEX' AS step, methods();
REPACK (CONCURRENTLY) probe;
SELECT 'REPACK (CONCURRENTLY)' AS step, methods();
SELECT md5(string_agg(body, '' ORDER BY id)) = :'md5_before' AS same_values FROM probe;
\else
SELECT 'no REPACK before PostgreSQL 19' AS step, methods();
\endif
