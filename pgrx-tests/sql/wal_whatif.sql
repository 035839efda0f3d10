-- Validation of wal_whatif against the real server. The same workload (include/
-- wal_whatif_run.sql) runs under each wal_compression setting from the same starting state;
-- measured = the WAL bytes of each run (insert LSN after minus before) and its image bytes
-- (pg_walinspect's fpi_length); predicted = wal_whatif over the `off` run's range (and, the
-- other way round, `off` predicted from the zstd run).
CREATE EXTENSION compresslab;
CREATE EXTENSION pg_walinspect;
-- No other writer in the ranges: autovacuum off, no timed checkpoint during a run; and the
-- runs' WAL kept in pg_wal until it is read.
ALTER SYSTEM SET autovacuum = off;
ALTER SYSTEM SET checkpoint_timeout = '1h';
ALTER SYSTEM SET max_wal_size = '4GB';
ALTER SYSTEM SET wal_keep_size = '2GB';
SELECT pg_reload_conf();
CREATE TEMP TABLE whatif_runs (setting text, start_lsn pg_lsn, end_lsn pg_lsn);
\set setting off
\ir include/wal_whatif_run.sql
\set setting pglz
\ir include/wal_whatif_run.sql
\set setting lz4
\ir include/wal_whatif_run.sql
\set setting zstd
\ir include/wal_whatif_run.sql
CREATE TEMP TABLE measured AS
SELECT r.setting, r.start_lsn, r.end_lsn, r.end_lsn - r.start_lsn AS wal_bytes,
       (SELECT sum(fpi_length) FROM pg_get_wal_records_info(r.start_lsn, r.end_lsn)) AS fpi_bytes,
       (SELECT count(*) FROM pg_get_wal_records_info(r.start_lsn, r.end_lsn)) AS records
  FROM whatif_runs r;
CREATE TEMP TABLE predicted AS
SELECT r.setting AS run, w.*
  FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn) w;
-- the workload wrote full-page images, and compression paid off
SELECT setting, records > 4000 AS many_records, fpi_bytes > 1000000 AS many_image_bytes,
       fpi_bytes < (SELECT fpi_bytes FROM measured WHERE setting = 'off') OR setting = 'off' AS smaller_than_off
  FROM measured ORDER BY setting;
-- each run replayed under its own setting gives back exactly what the server wrote
SELECT m.setting, p.records = m.records AS same_records, p.wal_bytes = m.wal_bytes AS exact_wal_bytes,
       p.fpi_bytes = m.fpi_bytes AS exact_fpi_bytes, p.stored_images > 0 AS setting_seen
  FROM measured m JOIN predicted p ON p.run = m.setting AND p.wal_compression = m.setting
 ORDER BY 1;
-- predicted from the off run (and off from the zstd run) against each measured run: within 2%
-- (the goal is 0.5%)
SELECT p.run AS predicted_from, m.setting,
       abs(p.wal_bytes - m.wal_bytes)::float8 / m.wal_bytes < 0.02 AS wal_within_2_percent,
       abs(p.fpi_bytes - m.fpi_bytes)::float8 / m.fpi_bytes < 0.02 AS fpi_within_2_percent,
       abs(p.wal_bytes - m.wal_bytes)::float8 / m.wal_bytes < 0.005 AS wal_within_half_percent
  FROM measured m JOIN predicted p ON p.wal_compression = m.setting
 WHERE (p.run = 'off' AND m.setting <> 'off') OR (p.run = 'zstd' AND m.setting = 'off')
 ORDER BY 1, 2;
-- CPU: writing costs something under every compressing setting, replay too; off costs nothing
SELECT wal_compression, compress_cpu_seconds > 0 AS compress_cpu, decompress_cpu_seconds > 0 AS decompress_cpu
  FROM predicted WHERE run = 'off' ORDER BY 1;
-- a sample of one image in ten: the same counts, bytes within 5% of the full replay
SELECT s.wal_compression, s.sampled_images < s.fpi_images / 5 AS sampled, s.records = f.records AS same_records,
       abs(s.wal_bytes - f.wal_bytes)::float8 / f.wal_bytes < 0.05 AS wal_close
  FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn, 0.1) s
  JOIN predicted f ON f.run = 'off' AND f.wal_compression = s.wal_compression
 WHERE r.setting = 'off' ORDER BY 1;
-- by relation (the zstd run: its table still exists): the table and its index wrote the
-- images, named; and they add up to the total
-- (with data checksums, on by default from PostgreSQL 18, a hint set on a free-space-map page
-- writes its image too: the fsm rows of expected/wal_whatif_2.out)
SELECT relation, fork, wal_compression, fpi_images > 100 AS many_images
  FROM whatif_runs r, compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn)
 WHERE r.setting = 'zstd' AND wal_compression IN ('off', 'lz4') ORDER BY relation, wal_compression;
SELECT b.wal_compression, sum(b.fpi_bytes) = min(p.fpi_bytes) AS adds_up
  FROM whatif_runs r, compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn) b
  JOIN predicted p ON p.run = 'zstd' AND p.wal_compression = b.wal_compression
 WHERE r.setting = 'zstd' GROUP BY 1 ORDER BY 1;
-- a relation that no longer exists (the off run's table was dropped) is still counted (the
-- range may also hold main-fork images of a catalogue page, depending on the major and on
-- timing: not counted here)
SELECT count(*) AS dropped_relation_settings
  FROM whatif_runs r, compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn)
 WHERE r.setting = 'off' AND fork = 'main' AND relation LIKE '(dropped or rewritten: relfilenode %)';
-- the default range: from the oldest WAL in pg_wal to the flush LSN, covering every run
SELECT count(*) AS settings, bool_and(records > 8000) AS covers_the_runs FROM compresslab.wal_whatif(sample => 0.05);
-- bad ranges and arguments are clear errors (LSNs and segment names masked)
CREATE FUNCTION error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text; hint text;
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RETURN state || ': ' || regexp_replace(regexp_replace(regexp_replace(message, '[0-9A-F]{24}', 'SEGMENT', 'g'),
                                               '[0-9A-F]+/[0-9A-F]+', 'X/X', 'g'), 'offset [0-9]+', 'offset N', 'g')
         || coalesce(' HINT: ' || nullif(hint, ''), '');
END $$;
SELECT error_of($$SELECT * FROM compresslab.wal_whatif('0/10', NULL)$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(pg_current_wal_flush_lsn(), pg_current_wal_flush_lsn() - 100)$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(NULL, pg_current_wal_flush_lsn() + 1000000)$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(sample => 0)$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(sample => 1.5)$$);
-- an empty range is zeros, not an error
SELECT wal_compression, records, fpi_images, wal_bytes
  FROM compresslab.wal_whatif(pg_current_wal_flush_lsn(), pg_current_wal_flush_lsn()) ORDER BY 1;
-- WAL holds every row of every table: superuser or pg_read_server_files only
CREATE ROLE whatif_user;
CREATE ROLE whatif_reader IN ROLE pg_read_server_files;
GRANT USAGE ON SCHEMA compresslab TO whatif_user, whatif_reader;
SET ROLE whatif_user;
SELECT error_of($$SELECT * FROM compresslab.wal_whatif()$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif_by_relation()$$);
RESET ROLE;
SELECT start_lsn AS off_start, end_lsn AS off_end FROM whatif_runs WHERE setting = 'off' \gset
SET ROLE whatif_reader;
SELECT count(*) AS settings, bool_and(fpi_images > 0) AS has_images FROM compresslab.wal_whatif(:'off_start', :'off_end');
RESET ROLE;
-- cancel and statement_timeout stop a long read well before it would end
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) AS settings FROM compresslab.wal_whatif();
SELECT extract(epoch FROM clock_timestamp() - :'t0') AS full_seconds, clock_timestamp() AS t1 \gset
SET statement_timeout = '20ms';
\set VERBOSITY terse
SELECT count(*) FROM compresslab.wal_whatif();
\set VERBOSITY default
RESET statement_timeout;
SELECT :full_seconds > 0.1 AS a_long_read, extract(epoch FROM clock_timestamp() - :'t1') < :full_seconds / 4 AS stopped_early;
DROP OWNED BY whatif_user, whatif_reader;
DROP ROLE whatif_user, whatif_reader;
-- Damaged and missing WAL (last, as it harms the runs' WAL): an ERROR naming the LSN or the
-- segment, never a number built on part of the range. Both segments are older than the last
-- checkpoint, so the server itself no longer needs them; each is put back after its check, so
-- that tests run after this one on the same cluster read whole WAL.
SELECT start_lsn AS pglz_start, end_lsn AS pglz_end FROM whatif_runs WHERE setting = 'pglz' \gset
-- the off run's first segment removed (moved out of pg_wal)
SELECT format('cat >/dev/null; mv pg_wal/%1$s %1$s.moved', pg_walfile_name(:'off_start')) AS remove_segment,
       format('cat >/dev/null; mv %1$s.moved pg_wal/%1$s', pg_walfile_name(:'off_start')) AS restore_segment \gset
COPY (SELECT 1) TO PROGRAM :'remove_segment';
SELECT error_of(format($$SELECT * FROM compresslab.wal_whatif(%L, %L)$$, :'off_start', :'off_end'));
-- advise reads back from the flush LSN to the oldest segment after which none is missing: the
-- WAL it reads starts after the gap, and no reader's ERROR (undefined_file) comes of it, nor a
-- NOTICE of starting again (a psql of its own shows the NOTICEs)
CREATE TEMP TABLE advise_output (line text);
SELECT format('psql -X -q -A -t -h %s -p %s -d %s -c "SET client_min_messages = notice" '
              '-c "SELECT basis FROM compresslab.advise(''5 s'') WHERE area = ''wal_compression''" 2>&1',
              current_setting('unix_socket_directories'), current_setting('port'), current_database()) AS advise_command \gset
COPY advise_output FROM PROGRAM :'advise_command';
SELECT :'off_start'::pg_lsn - (:'off_start'::pg_lsn - '0/0'::pg_lsn) % pg_size_bytes(current_setting('wal_segment_size'))
       + pg_size_bytes(current_setting('wal_segment_size')) AS after_the_gap \gset
SELECT count(*) FILTER (WHERE line ~ '^(NOTICE:  compresslab: advise: a segment of pg_wal was gone|ERROR)') AS started_again_or_failed,
       count(*) FILTER (WHERE substring(line FROM '^the cluster''s WAL \(every database''s\) ([0-9A-F]+/[0-9A-F]+)\.\.')::pg_lsn >= :'after_the_gap'::pg_lsn) AS read_after_the_gap
  FROM advise_output;
COPY (SELECT 1) TO PROGRAM :'restore_segment';
-- a page of zeros two pages into the pglz run, the page kept aside (the commands read the row
-- COPY sends first: one that exits before the write fails the COPY with a broken pipe)
SELECT format('cat >/dev/null; dd if=pg_wal/%1$s of=page.saved bs=8192 skip=%2$s count=1 status=none'
              ' && dd if=/dev/zero of=pg_wal/%1$s bs=8192 seek=%2$s count=1 conv=notrunc status=none',
              pg_walfile_name(:'pglz_start'::pg_lsn + 16384),
              ((:'pglz_start'::pg_lsn + 16384 - '0/0'::pg_lsn)::bigint % 16777216) / 8192) AS zero_page,
       format('cat >/dev/null; dd if=page.saved of=pg_wal/%1$s bs=8192 seek=%2$s count=1 conv=notrunc status=none && rm page.saved',
              pg_walfile_name(:'pglz_start'::pg_lsn + 16384),
              ((:'pglz_start'::pg_lsn + 16384 - '0/0'::pg_lsn)::bigint % 16777216) / 8192) AS restore_page \gset
COPY (SELECT 1) TO PROGRAM :'zero_page';
-- (PostgreSQL 17 and 18 word the reader's message "invalid magic number 0000 in WAL segment
-- SEGMENT, LSN X/X, offset N": expected/wal_whatif_1.out)
SELECT error_of(format($$SELECT * FROM compresslab.wal_whatif(%L, %L)$$, :'pglz_start', :'pglz_end'));
COPY (SELECT 1) TO PROGRAM :'restore_page';
-- both put back: the runs' whole range reads again
SELECT max(end_lsn) AS runs_end FROM whatif_runs \gset
SELECT count(*) AS settings FROM compresslab.wal_whatif(:'off_start', :'runs_end');
ALTER SYSTEM RESET autovacuum;
ALTER SYSTEM RESET checkpoint_timeout;
ALTER SYSTEM RESET max_wal_size;
ALTER SYSTEM RESET wal_keep_size;
SELECT pg_reload_conf();
