-- Round trips of every codec through SQL, check values of every checksum.
CREATE EXTENSION compresslab;
CREATE TEMP TABLE samples AS
SELECT 'empty' AS name, ''::bytea AS data
UNION ALL SELECT 'tiny', 'ab'::bytea
UNION ALL SELECT 'text', convert_to(repeat('PostgreSQL compresses TOAST values with pglz or lz4. ', 400), 'UTF8')
UNION ALL SELECT 'digits', convert_to(string_agg(i::text, ',' ORDER BY i), 'UTF8') FROM generate_series(1, 5000) i
UNION ALL SELECT 'md5', convert_to(string_agg(md5(i::text), '' ORDER BY i), 'UTF8') FROM generate_series(1, 300) i;
-- compress()/decompress() with every method and a few zstd levels
SELECT s.name, m.method, l.level,
       compresslab.decompress(c.packed) = s.data AS round_trip,
       (compresslab.compression_info(c.packed)).method AS stored_as
  FROM samples s
 CROSS JOIN (VALUES ('none'), ('pglz'), ('lz4'), ('zstd')) m(method)
 CROSS JOIN LATERAL (SELECT NULL::int UNION ALL SELECT lv FROM unnest('{-7,1,19}'::int[]) lv WHERE m.method = 'zstd') l(level)
 CROSS JOIN LATERAL (SELECT CASE WHEN l.level IS NULL THEN compresslab.compress(s.data, m.method)
                                 ELSE compresslab.compress(s.data, m.method, l.level) END) c(packed)
 ORDER BY 1, 2, 3;
SELECT * FROM compresslab.compression_info(compresslab.compress(convert_to(repeat('x', 10000), 'UTF8'), 'pglz'));
-- raw formats
SELECT name,
       compresslab.pglz_decompress(compresslab.pglz_compress(data, 'always'), length(data)) = data AS pglz_always,
       compresslab.pglz_compress(data) IS NULL AS pglz_default_refuses,
       compresslab.lz4_decompress(compresslab.lz4_compress(data), length(data)) = data AS lz4_block,
       compresslab.lz4_decompress(compresslab.lz4_compress(data, true)) = data AS lz4_block_sized,
       compresslab.lz4_frame_decompress(compresslab.lz4_frame_compress(data)) = data AS lz4_frame,
       compresslab.zstd_decompress(compresslab.zstd_compress(data)) = data AS zstd_frame
  FROM samples WHERE name <> 'empty' ORDER BY name;
-- pglz: 200 spaces are one literal and one tag (offset 1, length 199); TOAST-style prefix decoding
SELECT compresslab.pglz_compress(convert_to(repeat(' ', 200), 'UTF8'), 'always');
SELECT length(compresslab.pglz_decompress(compresslab.pglz_compress(data, 'always'), 100, false)) AS prefix_len
  FROM samples WHERE name = 'text';
-- a user-given strategy (all six fields)
SELECT compresslab.pglz_compress(convert_to(repeat('abc', 20), 'UTF8'),
       'min_input_size=0, max_input_size=100, min_comp_rate=0, first_success_by=1000, match_size_good=32, match_size_drop=50') IS NOT NULL AS custom_accepts,
       compresslab.pglz_compress(convert_to(repeat('abc', 40), 'UTF8'), 'max_input_size=100') IS NULL AS over_max_refused;
-- our pglz output is PostgreSQL's, byte for byte, and each side decodes the other
SELECT name,
       compresslab.pglz_compress(data, 'always') IS NOT DISTINCT FROM compresslab.server_pglz_compress(data, 'always') AS same_bytes,
       compresslab.server_pglz_decompress(compresslab.pglz_compress(data, 'always'), length(data)) = data AS server_reads_ours,
       compresslab.pglz_decompress(compresslab.server_pglz_compress(data, 'always'), length(data)) = data AS we_read_servers
  FROM samples WHERE name NOT IN ('empty', 'tiny', 'md5') ORDER BY name;
-- the same over 61,440 bytes (the history's links in a ring, made a block of 4096 ahead of the items)
SELECT length(d) AS bytes,
       compresslab.pglz_compress(d, 'always') = compresslab.server_pglz_compress(d, 'always') AS same_bytes,
       compresslab.server_pglz_decompress(compresslab.pglz_compress(d, 'always'), length(d)) = d AS server_reads_ours
  FROM (SELECT convert_to(string_agg(md5(i::text) || ' row ' || i || repeat('.', i % 7), ' ' ORDER BY i), 'UTF8') AS d
          FROM generate_series(1, 5000) i) big;
-- LZ4 blocks and zstd frames: ours are the server's liblz4's byte for byte; the server's
-- liblz4 and libzstd read ours, and we read theirs
SELECT name,
       compresslab.lz4_compress(data) = compresslab.server_lz4_compress(data) AS lz4_same_bytes,
       compresslab.server_lz4_decompress(compresslab.lz4_compress(data), length(data)) = data AS server_lz4_reads_ours,
       compresslab.lz4_decompress(compresslab.server_lz4_compress(data), length(data)) = data AS we_read_servers_lz4,
       compresslab.server_zstd_decompress(compresslab.zstd_compress(data, 3), length(data)) = data AS server_zstd_reads_ours,
       compresslab.zstd_decompress(compresslab.server_zstd_compress(data, 19)) = data AS we_read_servers_zstd
  FROM samples ORDER BY name;
-- Over 16 MiB the server's liblz4 and pglz_decompress run on a worker thread over copies of
-- their own: the same bytes as on the backend's thread.
WITH v AS MATERIALIZED (SELECT compresslab.synthetic('text', 20000000, 3) AS d)
SELECT compresslab.server_lz4_compress(d) = compresslab.lz4_compress(d) AS lz4_same_bytes,
       compresslab.server_lz4_decompress(compresslab.lz4_compress(d), length(d)) = d AS server_lz4_reads_ours,
       compresslab.server_pglz_decompress(compresslab.pglz_compress(d), length(d)) = d AS server_pglz_reads_ours,
       compresslab.server_pglz_decompress(compresslab.pglz_compress(d), 17000000, false)
         = substr(d, 1, 17000000) AS server_pglz_prefix,
       (SELECT pg_catalog.count(*) FROM pg_catalog.generate_series(1, 3)
         WHERE compresslab.server_lz4_decompress(compresslab.server_lz4_compress(d), length(d)) = d) AS three_round_trips
  FROM v;
SELECT compresslab.server_lz4_decompress(substr(compresslab.lz4_compress(compresslab.synthetic('text', 20000000, 3)), 1, 9000000), 20000000);
-- checksums: check values over '123456789', PostgreSQL 18's crc32c('abc'), continuation
SELECT to_hex(compresslab.crc32c('123456789'::bytea)) AS crc32c,
       to_hex(compresslab.crc32('123456789'::bytea)) AS crc32,
       to_hex(compresslab.crc32_legacy('123456789'::bytea)) AS crc32_legacy,
       compresslab.crc32c('abc'::bytea) AS crc32c_abc,
       compresslab.crc32c(''::bytea) AS crc32c_empty;
SELECT compresslab.crc32c('lo world'::bytea, compresslab.crc32c('hel'::bytea)) = compresslab.crc32c('hello world'::bytea) AS crc32c_continues,
       compresslab.crc32('lo world'::bytea, compresslab.crc32('hel'::bytea)) = compresslab.crc32('hello world'::bytea) AS crc32_continues,
       compresslab.crc32_legacy('lo world'::bytea, compresslab.crc32_legacy('hel'::bytea)) = compresslab.crc32_legacy('hello world'::bytea) AS legacy_continues,
       compresslab.crc32c(data) = compresslab.server_crc32c(data) AS equals_server
  FROM samples WHERE name = 'md5';
SELECT compresslab.crc32c(NULL) IS NULL AS null_in_null_out, compresslab.compress(NULL) IS NULL AS compress_null;
-- At the bytea limit (1,073,741,818 bytes) the room a compressor needs for its worst case is
-- more than a bytea holds, yet the result fits: it is built aside and returned (pglz still
-- declines what it cannot shrink), and each decodes back to the input.
WITH c AS MATERIALIZED (
  SELECT compresslab.pglz_compress(compresslab.synthetic('zeros', 1073741818)) AS pglz,
         compresslab.lz4_compress(compresslab.synthetic('zeros', 1073741818), true) AS lz4_block,
         compresslab.compress(compresslab.synthetic('zeros', 1073741818), 'lz4') AS envelope,
         compresslab.lz4_frame_compress(compresslab.synthetic('zeros', 1073741818)) AS lz4_frame,
         compresslab.zstd_compress(compresslab.synthetic('zeros', 1073741818)) AS zstd_frame,
         compresslab.pglz_compress(compresslab.synthetic('random', 1073741818, 1)) AS pglz_random)
SELECT length(pglz) AS pglz_bytes, length(lz4_block) AS lz4_block_bytes, length(envelope) AS envelope_bytes,
       length(lz4_frame) AS lz4_frame_bytes, length(zstd_frame) AS zstd_frame_bytes, pglz_random IS NULL AS pglz_declines_random,
       compresslab.pglz_decompress(pglz, 1073741818) = compresslab.synthetic('zeros', 1073741818) AS pglz_round_trip,
       compresslab.lz4_decompress(lz4_block) = compresslab.synthetic('zeros', 1073741818) AS lz4_block_round_trip,
       compresslab.decompress(envelope) = compresslab.synthetic('zeros', 1073741818) AS envelope_round_trip,
       length(compresslab.lz4_frame_decompress(lz4_frame)) = 1073741818 AS lz4_frame_round_trip,
       length(compresslab.zstd_decompress(zstd_frame)) = 1073741818 AS zstd_frame_round_trip
  FROM c;
