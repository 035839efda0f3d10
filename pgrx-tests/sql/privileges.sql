-- Who may benchmark what: a non-superuser needs SELECT (or pg_read_all_data) for pages and
-- columns, no row-level security in the way for pages, and superuser or pg_read_server_files
-- for server files.
CREATE EXTENSION compresslab;
CREATE TABLE secret (id int, note text);
INSERT INTO secret SELECT i, repeat('classified ', 30) FROM generate_series(1, 500) i;
CREATE TABLE open_table (id int, note text);
INSERT INTO open_table SELECT i, repeat('public ', 30) FROM generate_series(1, 500) i;
CREATE TABLE policed (owner_name text, note text);
INSERT INTO policed SELECT 'someone', repeat('hidden ', 30) FROM generate_series(1, 500);
ALTER TABLE policed ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON policed USING (owner_name = current_user);
DROP ROLE IF EXISTS lab_user;
DROP ROLE IF EXISTS lab_reader;
CREATE ROLE lab_user;
CREATE ROLE lab_reader;
GRANT pg_read_all_data, pg_read_server_files TO lab_reader;
-- As docs/security.md states: before USAGE on the schema, nothing; after it, the codec functions
-- on one's own bytes, and nothing that reads server files.
SET ROLE lab_user;
SELECT compresslab.crc32c('abc'::bytea);
SELECT length(compresslab.lz4_compress('abc'::bytea)) > 0 AS before_grant;
RESET ROLE;
GRANT USAGE ON SCHEMA compresslab TO lab_user, lab_reader;
SET ROLE lab_user;
SELECT compresslab.crc32c('abc'::bytea) AS crc32c, length(compresslab.zstd_compress('abc'::bytea)) > 0 AS zstd,
       compresslab.decompress(compresslab.compress('abc'::bytea, 'pglz')) = 'abc'::bytea AS round_trip;
SELECT * FROM compresslab.wal_whatif();
RESET ROLE;
GRANT SELECT ON open_table, policed TO lab_user;
SET ROLE lab_user;
SELECT count(*) > 0 AS own_bytea_ok FROM compresslab.bench('abc'::bytea, ARRAY['lz4'], ARRAY[0], 1);
SELECT slices > 0 AS pages_ok FROM compresslab.bench_pages('open_table', ARRAY['lz4'], ARRAY[0], 1);
SELECT slices > 0 AS column_ok FROM compresslab.bench_column('open_table', 'note', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.bench_pages('secret', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.bench_column('secret', 'note', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.bench_pages('policed', ARRAY['lz4'], ARRAY[0], 1);
-- through SQL the policies apply: the user sees none of these rows, so there is nothing to measure
SELECT slices, raw_bytes FROM compresslab.bench_column('policed', 'note', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.bench_file('postgresql.conf', ARRAY['lz4'], ARRAY[0], 1);
RESET ROLE;
SET ROLE lab_reader;
SELECT slices > 0 AS pages_via_read_all_data FROM compresslab.bench_pages('secret', ARRAY['lz4'], ARRAY[0], 1);
SELECT slices > 0 AS column_via_read_all_data FROM compresslab.bench_column('secret', 'note', ARRAY['lz4'], ARRAY[0], 1);
SELECT raw_bytes > 0 AS file_via_read_server_files FROM compresslab.bench_file('postgresql.conf', ARRAY['lz4'], ARRAY[0], 1);
RESET ROLE;
-- SELECT on some columns of a table: the sample may not name ctid, so its blocks are read by a
-- heap scan of the columns granted. advise() advises on the column granted and leaves the
-- other out (it did fail as a whole with 42501); the estimate's NOTICE names the column left
-- out of the row's model; a column not granted is refused with 42501, a partitioned table or
-- one whose row-level security applies is skipped by advise() (its sample needs ctid).
CREATE TABLE partial (id int, note text, secret text);
INSERT INTO partial SELECT i, repeat('note ' || i || ' ', 300), repeat(md5(i::text), 50 + i % 20) FROM generate_series(1, 300) i;
CREATE TABLE partial_policed (owner_name text, note text);
INSERT INTO partial_policed SELECT 'someone', repeat('hidden ', 400) FROM generate_series(1, 100);
ALTER TABLE partial_policed ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON partial_policed USING (owner_name = current_user);
-- Rows hidden by row-level security, the others readable; a table of which one column is
-- granted: the advice's CALL counts no page image of the table (an image, and its size under a
-- codec, holds every column of every row), and says so.
CREATE TABLE policed_docs (owner_name text, body text COMPRESSION pglz);
INSERT INTO policed_docs SELECT CASE WHEN i % 2 = 0 THEN 'lab_user' ELSE 'someone' END,
                                repeat('document ' || i || ' of the archive, ', 150) FROM generate_series(1, 400) i;
ALTER TABLE policed_docs ALTER COLUMN body SET COMPRESSION lz4;
ALTER TABLE policed_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON policed_docs USING (owner_name = current_user);
GRANT SELECT ON policed_docs TO lab_user;
CREATE TABLE granted_docs (secret text, body text COMPRESSION pglz);
INSERT INTO granted_docs SELECT md5(i::text), repeat('document ' || i || ' of the archive, ', 150) FROM generate_series(1, 400) i;
ALTER TABLE granted_docs ALTER COLUMN body SET COMPRESSION lz4;
GRANT SELECT (body) ON granted_docs TO lab_user;
GRANT SELECT (id, note) ON partial TO lab_user;
GRANT SELECT (owner_name, note) ON partial_policed TO lab_user;
SET ROLE lab_user;
SET client_min_messages = warning;
SELECT target, recommended IS NOT NULL AS advised FROM compresslab.advise('5 s', verbose => true) WHERE area = 'toast' ORDER BY 1;
SELECT target, note LIKE '%CALL rewrites%full-page images not counted here (you may not read whole rows of the table%'
         AS images_not_counted
  FROM compresslab.advise('5 s', verbose => true) WHERE target IN ('public.policed_docs.body', 'public.granted_docs.body') ORDER BY 1;
SET client_min_messages = notice;
SELECT method, values, raw_bytes, stored_bytes < raw_bytes AS saves FROM compresslab.estimate_toast_compression('partial', 'note') ORDER BY 1;
RESET client_min_messages;
SELECT slices, raw_bytes FROM compresslab.bench_column('partial', 'note', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.estimate_toast_compression('partial', 'secret');
SELECT * FROM compresslab.bench_column('partial', 'secret', ARRAY['lz4'], ARRAY[0], 1);
SELECT * FROM compresslab.bench_column('partial_policed', 'note', ARRAY['lz4'], ARRAY[0], 1);
RESET ROLE;
SELECT sum(length(note)) AS raw_bytes_as_superuser FROM partial;
DROP OWNED BY lab_user, lab_reader;
DROP ROLE lab_user;
DROP ROLE lab_reader;
