-- Tiny inputs that claim a huge output are refused before the output is allocated:
-- LZ4 and pglz data cannot expand more than 255 and 91 times, so a raw size beyond
-- that is XX001 at once; a zstd block holds at most what its header says (raw, RLE) or
-- 128 KiB (compressed), so a frame declaring more than its blocks hold is XX001 too, and frames
-- whose declared sizes add up past the limit are refused before the first is decoded. All
-- calls run in one fresh session, whose peak resident memory (VmHWM, from /proc) must stay
-- under 100 MB where each call used to touch about 1 GB.
CREATE EXTENSION compresslab;
\set try_schema public
\ir include/try.sql
\c
SELECT name, result FROM (VALUES
  ('lz4_decompress, 1 byte for 1 GB',         $q$SELECT compresslab.lz4_decompress('\x00'::bytea, 1073741818)$q$),
  ('lz4_decompress, size prefix of 1 GB',     $q$SELECT compresslab.lz4_decompress('\xfaffff3f00'::bytea)$q$),
  ('pglz_decompress, 1 byte for 1 GB',        $q$SELECT compresslab.pglz_decompress('\x00'::bytea, 1073741818)$q$),
  ('server_lz4_decompress, 1 byte for 1 GB',  $q$SELECT compresslab.server_lz4_decompress('\x00'::bytea, 1073741818)$q$),
  ('server_pglz_decompress, 1 byte for 1 GB', $q$SELECT compresslab.server_pglz_decompress('\x00'::bytea, 1073741818)$q$),
  ('zstd_decompress, 16 bytes declaring 1 GB', $q$SELECT compresslab.zstd_decompress('\x28b52ffda400ca9a3b01000099e9d851'::bytea)$q$),
  ('server_zstd_decompress, 16 bytes for 1 GB', $q$SELECT compresslab.server_zstd_decompress('\x28b52ffda400ca9a3b01000099e9d851'::bytea, 1000000000)$q$),
  -- eleven frames of 763 RLE blocks each, every one declaring (and holding) 100,000,000 bytes
  ('zstd_decompress, 11 frames declaring 1.1 GB', $q$SELECT compresslab.zstd_decompress(pg_catalog.decode(pg_catalog.repeat(
     '28b52ffda000e1f505' || pg_catalog.repeat('02001000', 762) || '03080f00', 11), 'hex'))$q$)
) AS cases(name, q),
LATERAL (SELECT try(q) AS result) r
ORDER BY name;
SELECT (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+) kB'))[1]::int < 100 * 1024
       AS peak_rss_under_100_mb;
-- One of those frames is real: it decodes to its 100,000,000 bytes (after the peak was read).
SELECT pg_catalog.length(compresslab.zstd_decompress(pg_catalog.decode(
         '28b52ffda000e1f505' || pg_catalog.repeat('02001000', 762) || '03080f00', 'hex'))) AS one_frame;
