-- Tiny inputs that claim a huge output are refused before the output is allocated (issue 31,
-- item 5): LZ4 and pglz data cannot expand more than 255 and 91 times, so a raw size beyond
-- that is XX001 at once. All calls run in one fresh session, whose peak resident memory
-- (VmHWM, from /proc) must stay under 100 MB where each call used to touch about 1 GB.
CREATE EXTENSION compresslab;
\set try_schema public
\ir include/try.sql
\c
SELECT name, result FROM (VALUES
  ('lz4_decompress, 1 byte for 1 GB',         $q$SELECT compresslab.lz4_decompress('\x00'::bytea, 1073741818)$q$),
  ('lz4_decompress, size prefix of 1 GB',     $q$SELECT compresslab.lz4_decompress('\xfaffff3f00'::bytea)$q$),
  ('pglz_decompress, 1 byte for 1 GB',        $q$SELECT compresslab.pglz_decompress('\x00'::bytea, 1073741818)$q$),
  ('server_lz4_decompress, 1 byte for 1 GB',  $q$SELECT compresslab.server_lz4_decompress('\x00'::bytea, 1073741818)$q$),
  ('server_pglz_decompress, 1 byte for 1 GB', $q$SELECT compresslab.server_pglz_decompress('\x00'::bytea, 1073741818)$q$)
) AS cases(name, q),
LATERAL (SELECT try(q) AS result) r
ORDER BY name;
SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]::int < 100 * 1024
       AS peak_rss_under_100_mb;
