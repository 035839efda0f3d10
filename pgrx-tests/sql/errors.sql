-- Every bad input gets an ERROR with the right SQLSTATE and a message a DBA understands:
-- XX001 data_corrupted, 22023 invalid_parameter_value, 54000 program_limit_exceeded.
CREATE EXTENSION compresslab;
\set try_schema pg_temp
\ir include/try.sql
CREATE TEMP TABLE good AS
SELECT compresslab.pglz_compress(convert_to(repeat('abcdefgh', 100), 'UTF8')) AS pglz,
       compresslab.lz4_compress(convert_to(repeat('abcdefgh', 100), 'UTF8')) AS lz4,
       compresslab.lz4_frame_compress(convert_to(repeat('abcdefgh', 100), 'UTF8')) AS lz4f,
       compresslab.zstd_compress(convert_to(repeat('abcdefgh', 100), 'UTF8')) AS zstd,
       compresslab.compress(convert_to(repeat('abcdefgh', 100), 'UTF8'), 'lz4') AS env;
CREATE TEMP VIEW a_view AS SELECT repeat('x', 3000) AS body;
SELECT codec, name, pg_temp.try(q) AS result FROM (VALUES
  -- pglz, raw format
  ('pglz', 'offset 0',            $q$SELECT compresslab.pglz_decompress('\x02610000'::bytea, 10)$q$),
  ('pglz', 'offset beyond output', $q$SELECT compresslab.pglz_decompress('\x02610f0a05'::bytea, 30)$q$),
  ('pglz', 'truncated tag',       $q$SELECT compresslab.pglz_decompress('\x026100'::bytea, 10)$q$),
  ('pglz', 'truncated length byte', $q$SELECT compresslab.pglz_decompress('\x02610f01'::bytea, 30)$q$),
  ('pglz', 'raw size too small',  $q$SELECT compresslab.pglz_decompress(pglz, 500) FROM good$q$),
  ('pglz', 'raw size too small (server)', $q$SELECT compresslab.server_pglz_decompress(pglz, 500) FROM good$q$),
  -- a raw size that ends inside the last tag: PostgreSQL's decoder accepts it, and so do we
  ('pglz', 'raw size ends in last tag', $q$SELECT compresslab.pglz_decompress(pglz, 700) FROM good$q$),
  ('pglz', 'raw size ends in last tag (server)', $q$SELECT compresslab.server_pglz_decompress(pglz, 700) FROM good$q$),
  ('pglz', 'prefix without check_complete', $q$SELECT compresslab.pglz_decompress(pglz, 700, false) FROM good$q$),
  -- one call of the server's pglz_compress, which a cancel waits for, takes at most 4 MiB
  -- (512 KiB under another strategy): 54000 above, with a hint naming our encoder
  ('pglz', '4 MiB (server)',      $q$SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 4194304))$q$),
  ('pglz', 'over 4 MiB (server)', $q$SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 4194305))$q$),
  ('pglz', '512 KiB, always (server)', $q$SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 524288), 'always')$q$),
  ('pglz', 'over 512 KiB, always (server)', $q$SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 524289), 'always')$q$),
  ('pglz', 'raw size too large',  $q$SELECT compresslab.pglz_decompress(pglz, 801) FROM good$q$),
  ('pglz', 'truncated input',     $q$SELECT compresslab.pglz_decompress(substr(pglz, 1, length(pglz) - 1), 800) FROM good$q$),
  ('pglz', 'negative raw size',   $q$SELECT compresslab.pglz_decompress(pglz, -1) FROM good$q$),
  ('pglz', 'raw size over limit', $q$SELECT compresslab.pglz_decompress(pglz, 1073741824) FROM good$q$),
  ('pglz', 'unknown strategy',    $q$SELECT compresslab.pglz_compress('abc'::bytea, 'fastest')$q$),
  ('pglz', 'bad strategy field',  $q$SELECT compresslab.pglz_compress('abc'::bytea, 'min_comp_rate=lots')$q$),
  -- lz4
  ('lz4', 'garbage block',        $q$SELECT compresslab.lz4_decompress('\xf0ffffff'::bytea, 100)$q$),
  ('lz4', 'wrong raw size',       $q$SELECT compresslab.lz4_decompress(lz4, 700) FROM good$q$),
  ('lz4', 'short size prefix',    $q$SELECT compresslab.lz4_decompress('\x0100'::bytea)$q$),
  ('lz4', 'prefix over limit',    $q$SELECT compresslab.lz4_decompress('\xffffff7f00'::bytea)$q$),
  ('lz4', 'not a frame',          $q$SELECT compresslab.lz4_frame_decompress('\x00112233445566'::bytea)$q$),
  ('lz4', 'truncated frame',      $q$SELECT compresslab.lz4_frame_decompress(substr(lz4f, 1, length(lz4f) - 3)) FROM good$q$),
  ('lz4', 'garbage block (server)', $q$SELECT compresslab.server_lz4_decompress('\xf0ffffff'::bytea, 100)$q$),
  ('lz4', 'wrong raw size (server)', $q$SELECT compresslab.server_lz4_decompress(lz4, 700) FROM good$q$),
  ('lz4', 'negative raw size (server)', $q$SELECT compresslab.server_lz4_decompress(lz4, -1) FROM good$q$),
  -- zstd
  ('zstd', 'not a frame',         $q$SELECT compresslab.zstd_decompress('\x00112233445566'::bytea)$q$),
  ('zstd', 'truncated frame',     $q$SELECT compresslab.zstd_decompress(substr(zstd, 1, length(zstd) - 3)) FROM good$q$),
  ('zstd', 'holds less than declared', $q$SELECT compresslab.zstd_decompress('\x28b52ffd300001000028b52ffd3060010000'::bytea)$q$),
  ('zstd', 'holds less than declared, 2 MB', $q$SELECT compresslab.zstd_decompress('\x28b52ffda080841e00010000'::bytea)$q$),
  ('zstd', 'level too high',      $q$SELECT compresslab.zstd_compress('abc'::bytea, 23)$q$),
  ('zstd', 'level too low',       $q$SELECT compresslab.zstd_compress('abc'::bytea, -200000)$q$),
  ('zstd', 'not a frame (server)', $q$SELECT compresslab.server_zstd_decompress('\x00112233445566'::bytea, 7)$q$),
  ('zstd', 'wrong raw size (server)', $q$SELECT compresslab.server_zstd_decompress(zstd, 799) FROM good$q$),
  ('zstd', 'level too high (server)', $q$SELECT compresslab.server_zstd_compress('abc'::bytea, 23)$q$),
  ('zstd', 'missing dictionary',  $q$SELECT compresslab.zstd_decompress(compresslab.zstd_compress(convert_to(repeat('dictionary ', 9), 'UTF8'), 3, convert_to(repeat('dictionary ', 10), 'UTF8')))$q$),
  ('zstd', 'malformed dictionary', $q$SELECT compresslab.zstd_compress('abcabcabc'::bytea, 3, '\x37a430ec0100000000'::bytea)$q$),
  -- compress()/decompress()
  ('envelope', 'unknown method',  $q$SELECT compresslab.compress('abc'::bytea, 'snappy')$q$),
  ('envelope', 'level for lz4',   $q$SELECT compresslab.compress('abc'::bytea, 'lz4', 5)$q$),
  ('envelope', 'not compresslab data', $q$SELECT compresslab.decompress('\x0102030405060708090a0b'::bytea)$q$),
  ('envelope', 'future version',  $q$SELECT compresslab.decompress(overlay(env placing '\x07'::bytea from 5)) FROM good$q$),
  ('envelope', 'unknown method id', $q$SELECT compresslab.decompress(overlay(env placing '\x09'::bytea from 6)) FROM good$q$),
  ('envelope', 'lying raw size',  $q$SELECT compresslab.decompress(overlay(env placing '\x00040000'::bytea from 7)) FROM good$q$),
  ('envelope', 'truncated payload', $q$SELECT compresslab.decompress(substr(env, 1, length(env) - 2)) FROM good$q$),
  ('envelope', 'raw size over limit', $q$SELECT compresslab.decompress(overlay(env placing '\xffffff7f'::bytea from 7)) FROM good$q$),
  ('envelope', 'info of garbage', $q$SELECT compresslab.compression_info('\x01'::bytea)$q$),
  -- checksums
  ('crc', 'previous out of range', $q$SELECT compresslab.crc32c('abc'::bytea, 4294967296)$q$),
  ('crc', 'negative previous',     $q$SELECT compresslab.crc32c('abc'::bytea, -1)$q$),
  -- arguments: a NULL where a value is needed is 22004 naming the argument, whatever its place
  ('arguments', 'NULL slice_size',   $q$SELECT compresslab.bench_overhead('abc'::bytea, '{lz4}', NULL)$q$),
  ('arguments', 'NULL seed',         $q$SELECT compresslab.synthetic('text', 100, NULL)$q$),
  ('arguments', 'NULL size',         $q$SELECT compresslab.bench_synthetic('text', NULL)$q$),
  ('arguments', 'NULL hole',         $q$SELECT compresslab.bench_pages('pg_class', hole => NULL)$q$),
  ('arguments', 'NULL start_byte',   $q$SELECT compresslab.bench_file('postgresql.conf', NULL, NULL, NULL, NULL)$q$),
  ('arguments', 'NULL seed (toast)', $q$SELECT compresslab.estimate_toast_compression('pg_class', 'relname', 10, NULL)$q$),
  -- a start past the end of the file: 22023, not the seek's "Invalid argument"
  ('arguments', 'start_byte 2^62',   $q$SELECT compresslab.bench_file('PG_VERSION', start_byte => (2::numeric ^ 62)::bigint)$q$),
  -- results nested deeper than serde_json reads: 22023 with a plain message
  ('lab', 'markdown of JSON nested 200 deep', $q$SELECT compresslab.markdown((repeat('[', 200) || repeat(']', 200))::jsonb)$q$),
  ('lab', 'svg_chart of JSON nested 200 deep', $q$SELECT compresslab.svg_chart((repeat('[', 200) || repeat(']', 200))::jsonb)$q$),
  ('lab', 'markdown of a JSON object', $q$SELECT compresslab.markdown('{"a": 1}'::jsonb)$q$),
  ('lab', 'svg_stored_chart of bars without bytes', $q$SELECT compresslab.svg_stored_chart('[{"column": "t.c", "method": "lz4"}]'::jsonb)$q$),
  -- a view stores no values to sample: 42809
  ('arguments', 'a view (bench_column)', $q$SELECT compresslab.bench_column('a_view', 'body')$q$),
  ('arguments', 'a view (estimate_toast_compression)', $q$SELECT compresslab.estimate_toast_compression('a_view', 'body')$q$)
) AS cases(codec, name, q)
ORDER BY codec, name;
-- the hint of the server's pglz_compress over its bound
SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 4194305)) IS NULL;
-- after all that the backend is still here
SELECT 'still alive' AS status;
-- A cancelled call inside Rust code, on a server started with RUST_BACKTRACE=1
-- (scripts/cluster.sh): the ERROR carries no DETAIL (no backtrace reaches the client).
SET statement_timeout = '200ms';
SELECT count(*) FROM compresslab.bench_synthetic('text', 400000000, 1, '{pglz}', '{0}', 1);
RESET statement_timeout;
SELECT 'still alive' AS status;
-- 0.5.0's SQL on this library (the package installed, ALTER EXTENSION compresslab UPDATE not
-- yet run): the functions that gained arguments since say to update, never an internal error
DROP EXTENSION compresslab;
CREATE EXTENSION compresslab VERSION '0.5.0';
SELECT * FROM compresslab.wal_whatif();
SELECT * FROM compresslab.wal_whatif_by_relation();
SELECT * FROM compresslab.advise('1 s');
ALTER EXTENSION compresslab UPDATE;
SELECT count(*) >= 0 AS advise_runs FROM compresslab.advise('1 s');
