-- The smoke test of PostgreSQL 16 (pgrx-tests/t/smoke_pg16.sh): every row is one check, `ok`
-- must be true. 16's server here is the pgserver wheel's 16.2, built without lz4 and zstd and
-- without contrib, so what needs those (the server's liblz4/libzstd, pg_walinspect,
-- pageinspect) is checked on 15, 17 and 18 only; here: the extension loads, our codecs round
-- trip, pglz and CRC-32C agree with the server's own C routines both ways, the WAL reader of 16
-- (rlocator, RelidByRelfilenumber) replays real WAL exactly, and what 16 lacks gets an ERROR.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION compresslab;
CREATE TEMP TABLE checks (name text, ok boolean);
CREATE TEMP TABLE samples AS
SELECT n, convert_to(string_agg(md5((n * 1000 + g)::text) || repeat(' row ', g % 7), ',' ORDER BY g), 'UTF8') AS v
  FROM generate_series(1, 40) n, generate_series(1, n * 50) g GROUP BY n
UNION ALL SELECT 0, ''::bytea
UNION ALL SELECT -1, compresslab.synthetic('random', 100000, 1)
UNION ALL SELECT -2, compresslab.synthetic('pgbench', 100000, 1);

INSERT INTO checks
SELECT 'server version is 16', current_setting('server_version_num')::int / 10000 = 16;
INSERT INTO checks
SELECT 'versions() names PostgreSQL 16, and no server liblz4 or libzstd',
       bool_or(component = 'PostgreSQL' AND version LIKE '16.%')
       AND bool_and(version IS NULL) FILTER (WHERE component LIKE '%(server''s)')
  FROM compresslab.versions();
INSERT INTO checks
SELECT 'our codecs round trip (' || m || ')', bool_and(compresslab.decompress(compresslab.compress(v, m)) = v)
  FROM samples, unnest(ARRAY['pglz', 'lz4', 'zstd']) m GROUP BY m;
INSERT INTO checks
SELECT 'lz4 and zstd frames round trip',
       bool_and(compresslab.lz4_frame_decompress(compresslab.lz4_frame_compress(v)) = v
                AND compresslab.zstd_decompress(compresslab.zstd_compress(v)) = v)
  FROM samples;
INSERT INTO checks
SELECT 'pglz_compress writes the server''s pglz byte for byte',
       bool_and(compresslab.pglz_compress(v) IS NOT DISTINCT FROM compresslab.server_pglz_compress(v))
  FROM samples;
INSERT INTO checks
SELECT 'the server''s pglz_decompress reads ours, ours reads the server''s',
       bool_and(compresslab.server_pglz_decompress(compresslab.pglz_compress(v), length(v)) = v
                AND compresslab.pglz_decompress(compresslab.server_pglz_compress(v), length(v)) = v)
  FROM samples WHERE compresslab.pglz_compress(v) IS NOT NULL;
INSERT INTO checks
SELECT 'crc32c equals the server''s pg_comp_crc32c',
       bool_and(compresslab.crc32c(v) = compresslab.server_crc32c(v))
  FROM samples;

-- The WAL reader: two runs of the what-if workload (16 has pglz only), each replayed under its
-- own setting equals what the server wrote, record for record and byte for byte.
ALTER SYSTEM SET autovacuum = off;
ALTER SYSTEM SET checkpoint_timeout = '1h';
ALTER SYSTEM SET max_wal_size = '4GB';
ALTER SYSTEM SET wal_keep_size = '2GB';
SELECT pg_catalog.pg_reload_conf() \gset
CREATE TEMP TABLE whatif_runs (setting text, start_lsn pg_lsn, end_lsn pg_lsn);
\set setting off
\ir ../sql/include/wal_whatif_run.sql
\set setting pglz
\ir ../sql/include/wal_whatif_run.sql
INSERT INTO checks
SELECT 'wal_whatif offers the settings this server has: off, pglz',
       array_agg(w.wal_compression ORDER BY w.wal_compression) = ARRAY['off', 'pglz']
  FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn) w
 WHERE r.setting = 'off';
INSERT INTO checks
SELECT 'wal_whatif under ' || r.setting || ' equals the server''s WAL bytes',
       w.wal_bytes = r.end_lsn - r.start_lsn AND w.stored_images > 0
  FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn) w
 WHERE w.wal_compression = r.setting;
INSERT INTO checks
SELECT 'wal_whatif predicts the pglz run from the off run within 2%',
       abs(w.wal_bytes - (p.end_lsn - p.start_lsn))::float8 / (p.end_lsn - p.start_lsn) < 0.02
  FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn) w, whatif_runs p
 WHERE r.setting = 'off' AND p.setting = 'pglz' AND w.wal_compression = 'pglz';
INSERT INTO checks
SELECT 'wal_whatif_by_relation names the table',
       bool_or(w.relation LIKE '%whatif_accounts%')
  FROM whatif_runs r, compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn) w
 WHERE r.setting = 'pglz';
INSERT INTO checks
SELECT 'estimate_wal_compression reads 16''s pages, offers off and pglz',
       array_agg(e.wal_compression ORDER BY e.wal_compression) = ARRAY['off', 'pglz']
       AND bool_and(e.images = pg_relation_size('whatif_accounts') / 8192 AND e.stored_bytes <= e.raw_bytes)
  FROM compresslab.estimate_wal_compression('whatif_accounts', NULL) e;
INSERT INTO checks
SELECT 'advise recommends a wal_compression 16 here has: ' || coalesce(string_agg(recommended, ','), 'no row'),
       coalesce(bool_and(recommended IN ('off', 'pglz')), false)
  FROM compresslab.advise('10 s') WHERE area = 'wal_compression';
INSERT INTO checks
SELECT 'estimate_toast_compression offers pglz only', array_agg(method) = ARRAY['pglz']
  FROM compresslab.estimate_toast_compression('whatif_accounts', 'filler');

-- What this server lacks: an ERROR that says so, not a crash.
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
INSERT INTO checks
SELECT 'server_lz4_compress without liblz4 in the server: ERROR ' || s, s NOT IN ('no error', 'XX000')
  FROM pg_temp.sqlstate_of('SELECT compresslab.server_lz4_compress(''abc'')') s;
INSERT INTO checks
SELECT 'server_zstd_compress without libzstd in the server: ERROR ' || s, s NOT IN ('no error', 'XX000')
  FROM pg_temp.sqlstate_of('SELECT compresslab.server_zstd_compress(''abc'')') s;

SELECT name, ok FROM checks ORDER BY ok, name;
