-- Run by scripts/test.sh on a cluster whose processes are limited to 1.5 GB of address space
-- (ulimit -v), as on a host with vm.overcommit_memory = 2: every allocation that does not fit
-- must be an ERROR (53200 out_of_memory), never an abort that restarts every session.
CREATE EXTENSION compresslab;
CREATE FUNCTION pg_temp.survives(q text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN true;
EXCEPTION WHEN out_of_memory THEN
  RETURN true;
END $$;
SELECT name, pg_temp.survives(q) AS error_or_result FROM (VALUES
  ('the review''s reproducer: 3 MB in 1-byte slices', $q$SELECT count(*) FROM compresslab.bench_synthetic('zeros', 3000000, 0, '{memcpy}', '{1}', 1)$q$),
  ('bench of a 600 MB value',                         $q$SELECT count(*) FROM compresslab.bench(compresslab.synthetic('random', 600000000), '{lz4}', '{0}', 1)$q$),
  ('a 1 GB synthetic value',                          $q$SELECT length(compresslab.synthetic('zeros', 1000000000))$q$),
  ('compress() of 700 MB',                            $q$SELECT length(compresslab.compress(compresslab.synthetic('random', 700000000), 'lz4'))$q$),
  ('zstd_compress of 700 MB',                         $q$SELECT length(compresslab.zstd_compress(compresslab.synthetic('random', 700000000), 1))$q$),
  ('lz4_frame_compress of 700 MB',                    $q$SELECT length(compresslab.lz4_frame_compress(compresslab.synthetic('random', 700000000)))$q$),
  ('spill of three 400 MB records',                   $q$SELECT count(*) FROM compresslab.simulate_spill($s$SELECT compresslab.synthetic('random', 400000000) FROM generate_series(1, 3)$s$, '{lz4,lz4_stream,zstd_stream}')$q$),
  ('bench_synthetic of 1 GB',                         $q$SELECT count(*) FROM compresslab.bench_synthetic('text', 1000000000, 1, '{lz4}', '{0}', 1)$q$),
  ('300 MB in 1-byte slices (1.2 GB of index)',                  $q$SELECT count(*) FROM compresslab.bench_synthetic('zeros', 300000000, 0, '{memcpy}', '{1}', 1)$q$)
) AS cases(name, q);
-- Frames that declare their sizes decode straight into the result: 900 MB of content from
-- 225 frames of 4 MB fits in this cluster, where decoding aside and copying (1.8 GB) did not.
CREATE TEMP TABLE frames AS
SELECT string_agg(f, ''::bytea) AS f
  FROM generate_series(1, 225), (SELECT compresslab.lz4_frame_compress(compresslab.synthetic('zeros', 4000000)) AS f) one;
SELECT length(compresslab.lz4_frame_decompress(f)) AS decoded_in_place FROM frames;
-- synthetic() generates straight into its result too: 1 GB, where a copy needed 2 GB. (The
-- size comes from a subquery: with constant arguments the planner would evaluate the
-- immutable function itself and copy its result.)
SELECT length(compresslab.synthetic('zeros', (SELECT 1000000000))) AS generated_in_place;
-- Checksums in 1-byte slices of 128 MB: the implementations are compared through a digest of
-- their values, not a copy of them per family (which took 1 GB and aborted the server here).
SELECT count(*) AS checksum_rows FROM compresslab.bench_crc(compresslab.synthetic('text', 128000000), '{1}', 1);
-- 20 million 2-byte records for the spill simulation (a case of the 0.5.0 review): an ERROR (53200) when
-- memory runs out, or the simulation's rows, never an abort of the server. The records are held
-- in one fallibly grown buffer (60 MB here), not one allocation each; how far it gets under
-- the limit may differ between majors.
SELECT pg_temp.survives($q$SELECT count(*) FROM compresslab.simulate_spill('select ''ab'' from generate_series(1,20000000)')$q$)
       AS spill_of_20_million_records;
-- advise() on a column of values too big to read here (300 MB each, 64 MB the most a
-- column's sample holds): the column is skipped with a NOTICE naming it, the call returns rows
CREATE TABLE huge (id int, v bytea COMPRESSION lz4);
INSERT INTO huge SELECT g, compresslab.synthetic('zeros', (SELECT 300000000)) FROM generate_series(1, 2) g;
ANALYZE huge;
\set budget '30 s'
\ir include/advise_notices.sql
SELECT (SELECT line::int > 0 FROM advise_output WHERE line ~ '^[0-9]+$') AS returns_rows,
       (SELECT count(*) FROM advise_output
         WHERE line ~ '^NOTICE:  compresslab: advise: public\.huge\.v skipped, no value measured: the next value \(286 MB\) did not fit in the 64 MB left') AS column_skipped;
DROP TABLE huge;
-- after all that the backend is still here (and scripts/test.sh checks the log for crashes)
SELECT 'still alive' AS status;
