-- wal_whatif, wal_whatif_by_relation and advise over archived WAL (wal_dir): segments copied
-- from pg_wal into a directory, as archive_command or pg_receivewal would, give row for row
-- what the same LSN range read from pg_wal gives; pg_receivewal's .partial segment ends
-- cleanly at its last complete record; a missing or unreadable directory, a gap, a wrong size,
-- two timelines, a misplaced partial segment and a range outside the directory are ERRORs
-- with their SQLSTATE, naming the segment. Directories are relative to the data directory.
CREATE EXTENSION compresslab;
-- No other writer in the range; its WAL kept in pg_wal until it is read.
ALTER SYSTEM SET autovacuum = off;
ALTER SYSTEM SET checkpoint_timeout = '1h';
ALTER SYSTEM SET wal_keep_size = '1GB';
SELECT pg_reload_conf();
-- Three segments of WAL, each ended by pg_switch_wal, the second and third with full-page
-- images (each after a checkpoint).
SELECT pg_switch_wal() IS NOT NULL AS switched;
CREATE TABLE archived (id int PRIMARY KEY, body text);
SELECT file_name AS first_segment, pg_current_wal_insert_lsn() - file_offset::numeric AS archive_start
  FROM pg_walfile_name_offset(pg_current_wal_insert_lsn()) \gset
INSERT INTO archived SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 20000) g;
SELECT pg_switch_wal() IS NOT NULL AS switched;
CHECKPOINT;
UPDATE archived SET body = upper(body) WHERE id % 3 = 0;
SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS middle_segment \gset
SELECT pg_switch_wal() IS NOT NULL AS switched;
CHECKPOINT;
DELETE FROM archived WHERE id % 5 = 0;
SELECT pg_switch_wal() AS last_switch \gset
SELECT file_name AS last_segment,
       :'last_switch'::pg_lsn - file_offset::numeric + pg_size_bytes(current_setting('wal_segment_size')) AS archive_end
  FROM pg_walfile_name_offset(:'last_switch') \gset
-- WAL after the range, so that pg_wal holds all of it (flushed past its end)
CREATE TABLE after_archive AS SELECT g FROM generate_series(1, 1000) g;
SELECT pg_current_wal_flush_lsn() > :'archive_end'::pg_lsn AS flushed_past_the_range;
-- the archive: the three segments, as archive_command would copy them
SELECT format('cat >/dev/null; mkdir archive && cp %s archive/', string_agg('pg_wal/' || name, ' ' ORDER BY name)) AS copy,
       count(*) AS segments
  FROM pg_ls_waldir() WHERE name BETWEEN :'first_segment' AND :'last_segment' \gset
SELECT :segments AS segments;
COPY (SELECT 1) TO PROGRAM :'copy';
\set whatif_columns 'wal_compression, start_lsn, end_lsn, records, fpi_images, sampled_images, compressed_images, stored_images, fpi_bytes, wal_bytes, saving_percent'
CREATE TEMP TABLE from_pg_wal AS SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'archive_end');
CREATE TEMP TABLE from_archive AS
SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'archive_end', wal_dir => 'archive');
-- by default everything in the directory: the same range
CREATE TEMP TABLE from_archive_default AS SELECT :whatif_columns FROM compresslab.wal_whatif(wal_dir => 'archive');
-- the range holds records and images under every setting
SELECT count(*) AS settings, bool_and(records > 1000) AS many_records, bool_and(fpi_images > 500) AS many_images,
       bool_and(start_lsn::pg_lsn - :'archive_start'::pg_lsn < 100) AS from_the_start
  FROM from_pg_wal;
-- row for row the same figures (CPU seconds aside: they are measured, not counted)
SELECT count(*) AS differing_rows FROM (
  (TABLE from_pg_wal EXCEPT ALL TABLE from_archive) UNION ALL (TABLE from_archive EXCEPT ALL TABLE from_pg_wal)
  UNION ALL (TABLE from_pg_wal EXCEPT ALL TABLE from_archive_default)
  UNION ALL (TABLE from_archive_default EXCEPT ALL TABLE from_pg_wal)) d;
-- per relation too
SELECT count(DISTINCT relation) >= 2 AS several_relations
  FROM compresslab.wal_whatif_by_relation(:'archive_start', :'archive_end');
SELECT count(*) AS differing_relation_rows FROM (
  (SELECT * FROM compresslab.wal_whatif_by_relation(:'archive_start', :'archive_end')
   EXCEPT ALL SELECT * FROM compresslab.wal_whatif_by_relation(wal_dir => 'archive'))
  UNION ALL
  (SELECT * FROM compresslab.wal_whatif_by_relation(wal_dir => 'archive')
   EXCEPT ALL SELECT * FROM compresslab.wal_whatif_by_relation(:'archive_start', :'archive_end'))) d;
-- a range inside the directory: the second segment alone
SELECT :'archive_start'::pg_lsn + pg_size_bytes(current_setting('wal_segment_size')) AS second_start,
       :'archive_start'::pg_lsn + 2 * pg_size_bytes(current_setting('wal_segment_size')) AS second_end \gset
SELECT count(*) AS differing_rows FROM (
  (SELECT :whatif_columns FROM compresslab.wal_whatif(:'second_start', :'second_end')
   EXCEPT ALL SELECT :whatif_columns FROM compresslab.wal_whatif(:'second_start', :'second_end', wal_dir => 'archive'))
  UNION ALL
  (SELECT :whatif_columns FROM compresslab.wal_whatif(:'second_start', :'second_end', wal_dir => 'archive')
   EXCEPT ALL SELECT :whatif_columns FROM compresslab.wal_whatif(:'second_start', :'second_end'))) d;
-- pg_receivewal's segment in progress: the archive and the current segment of pg_wal as
-- NAME.partial (the rest of its file is zeros or recycled WAL); the WAL ends at its last
-- complete record, and up to there it is what pg_wal holds
SELECT format('cat >/dev/null; cp -r archive archive_partial && cp pg_wal/%1$s archive_partial/%1$s.partial',
              pg_walfile_name(pg_current_wal_flush_lsn())) AS copy \gset
COPY (SELECT 1) TO PROGRAM :'copy';
CREATE TEMP TABLE from_partial AS SELECT :whatif_columns FROM compresslab.wal_whatif(wal_dir => 'archive_partial');
SELECT min(end_lsn) AS partial_end FROM from_partial \gset
SELECT :'partial_end'::pg_lsn > :'archive_end'::pg_lsn AS read_into_the_partial_segment,
       :'partial_end'::pg_lsn <= pg_current_wal_flush_lsn() AS ends_at_written_wal;
SELECT count(*) AS differing_rows FROM (
  (TABLE from_partial EXCEPT ALL SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'partial_end'))
  UNION ALL
  (SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'partial_end') EXCEPT ALL TABLE from_partial)) d;
-- advise reads the directory back from its newest WAL for its wal_compression row; its period
-- is the seconds the steady WAL it read took to write, timed by its commit and checkpoint
-- records (seconds here), bytes_now that WAL as written, and the per-day columns both scaled
-- by that period
SELECT area, target, observed_period > interval '0' AND observed_period < interval '1 hour' AS period_of_the_archive,
       -- (the LSN span read: the setting in force's row, within 0.5%, where no session set its own)
       abs(bytes_now - (SELECT wal_bytes FROM from_archive WHERE wal_compression = current_setting('wal_compression')))
         <= 0.005 * bytes_now AS bytes_read,
       abs(bytes_per_day_now - bytes_now * 86400 / extract(epoch FROM observed_period)) <= 1e-6 * bytes_per_day_now
         AND abs(bytes_per_day_recommended - bytes_recommended * 86400 / extract(epoch FROM observed_period)) <= 1e-6 * bytes_per_day_recommended
         AS per_day_scaled,
       basis ~ '; the period is the steady WAL read''s own, [0-9A-F/., ]+: .* written and [0-9]+ full-page images over [0-9]+ (s|min), timed by the [0-9]+ times its commit and checkpoint records carry(;|$)' AS basis_says_so,
       confidence AS confidence_under_an_hour
  FROM compresslab.advise('10 s', wal_dir => 'archive') WHERE area = 'wal_compression';
-- Errors: SQLSTATE, message (the test's segments named, other segments, LSNs and system
-- identifiers masked), hint.
CREATE FUNCTION error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE state text; message text; hint text;
BEGIN
  EXECUTE query;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  message := replace(replace(replace(message, current_setting('compresslab_test.first'), 'FIRST'),
                             current_setting('compresslab_test.middle'), 'MIDDLE'),
                     current_setting('compresslab_test.last'), 'LAST');
  RETURN state || ': ' || regexp_replace(regexp_replace(regexp_replace(message, '[0-9A-F]{24}', 'SEGMENT', 'g'),
                                                        '[0-9A-F]+/[0-9A-F]+', 'X/X', 'g'),
                                         '[0-9]{15,}', 'SYSID', 'g')
         || coalesce(' HINT: ' || nullif(hint, ''), '');
END $$;
SELECT set_config('compresslab_test.first', :'first_segment', false),
       set_config('compresslab_test.middle', :'middle_segment', false),
       set_config('compresslab_test.last', :'last_segment', false) \gset
-- a directory that does not exist, one with no segment, one the server may not read
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'no_such_directory')$$);
SELECT format('cat >/dev/null; mkdir archive_empty archive_unreadable && chmod 000 archive_unreadable'
              ' && touch archive_empty/readme.txt && mkdir archive_gap archive_short archive_timelines archive_misplaced'
              ' && cp archive/%1$s archive/%3$s archive_gap/'
              ' && cp archive/* archive_short/ && truncate -s 8192 archive_short/%2$s'
              ' && cp archive/* archive_timelines/ && cp archive/%3$s archive_timelines/00000002%4$s'
              ' && cp archive/%1$s archive/%3$s archive_misplaced/ && cp archive/%2$s archive_misplaced/%2$s.partial',
              :'first_segment', :'middle_segment', :'last_segment', substr(:'last_segment', 9)) AS make_bad_archives \gset
COPY (SELECT 1) TO PROGRAM :'make_bad_archives';
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_empty')$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_unreadable')$$);
-- a segment missing in the range (only the range matters: each side of the gap reads)
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_gap')$$);
SELECT count(*) AS settings FROM compresslab.wal_whatif(NULL, :'second_start', wal_dir => 'archive_gap');
-- a segment of the wrong size, segments of two timelines, a partial segment not the newest
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_short')$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_timelines')$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_misplaced')$$);
-- a FIFO named like the oldest segment is skipped with a NOTICE, never opened for reading:
-- the calls return at once (opening it would block the backend beyond cancel; a writer opens
-- it after 20 s so that a backend that did block is freed, and the test fails instead of hanging)
SELECT substr(:'first_segment', 1, 8) || '0000000000000001' AS fifo_segment \gset
SELECT format('cat >/dev/null; mkdir archive_fifo archive_fifo_only && mkfifo archive_fifo/%1$s archive_fifo_only/%1$s'
              ' && cp archive/%2$s archive/%3$s archive_fifo/; for f in archive_fifo/%1$s archive_fifo_only/%1$s; do'
              ' (sleep 20; timeout 5 sh -c ": > $f") >/dev/null 2>&1 & done',
              :'fifo_segment', :'middle_segment', :'last_segment') AS make_fifo_archives \gset
COPY (SELECT 1) TO PROGRAM :'make_fifo_archives';
SELECT clock_timestamp() AS fifo_call_start \gset
SET client_min_messages = notice;
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_fifo_only')$$);
RESET client_min_messages;
SELECT count(*) AS settings, min(start_lsn)::pg_lsn - :'second_start'::pg_lsn < 100 AS from_the_second_segment
  FROM compresslab.wal_whatif(wal_dir => 'archive_fifo');
SELECT clock_timestamp() - :'fifo_call_start'::timestamptz < interval '10 s' AS returned_at_once;
-- another cluster's WAL (the first segment of a cluster initdb makes): every segment's long
-- header is checked against this cluster's system identifier, and one of another cluster is
-- skipped with a NOTICE. Alone, it is refused; named like the oldest, the rest is read;
-- named like the middle segment, it leaves a gap
SELECT setting AS bindir FROM pg_config WHERE name = 'BINDIR' \gset
SELECT format('cat >/dev/null; other=$(mktemp -d) && %5$s/initdb -D "$other/data" -A trust --no-sync >/dev/null 2>&1'
              ' && mkdir archive_foreign_only archive_foreign_oldest archive_foreign_middle'
              ' && cp "$other/data/pg_wal/000000010000000000000001" archive_foreign_only/%4$s'
              ' && cp "$other/data/pg_wal/000000010000000000000001" archive_foreign_oldest/%4$s'
              ' && cp archive/%2$s archive/%3$s archive_foreign_oldest/'
              ' && cp archive/%1$s archive/%3$s archive_foreign_middle/'
              ' && cp "$other/data/pg_wal/000000010000000000000001" archive_foreign_middle/%2$s; rm -rf "$other"',
              :'first_segment', :'middle_segment', :'last_segment', :'fifo_segment', :'bindir') AS make_foreign_archives \gset
COPY (SELECT 1) TO PROGRAM :'make_foreign_archives';
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_foreign_only')$$);
SELECT count(*) AS settings, min(start_lsn)::pg_lsn - :'second_start'::pg_lsn < 100 AS from_the_second_segment
  FROM compresslab.wal_whatif(wal_dir => 'archive_foreign_oldest');
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_foreign_middle')$$);
-- a range outside the directory, or reversed
SELECT error_of(format($$SELECT * FROM compresslab.wal_whatif(%L::pg_lsn - 1, NULL, wal_dir => 'archive')$$, :'archive_start'));
SELECT error_of(format($$SELECT * FROM compresslab.wal_whatif(NULL, %L::pg_lsn + 1, wal_dir => 'archive')$$, :'archive_end'));
SELECT error_of(format($$SELECT * FROM compresslab.wal_whatif(%L, %L, wal_dir => 'archive')$$, :'second_end', :'second_start'));
-- advise: an ERROR of the WAL part (a directory that is not there, only another cluster's
-- segments) leaves out the wal_compression row, with a NOTICE, never the whole advice
SELECT count(*) FILTER (WHERE area = 'wal_compression') AS wal_rows, count(*) > 0 AS other_rows
  FROM compresslab.advise('5 s', wal_dir => 'no_such_directory');
SELECT count(*) FILTER (WHERE area = 'wal_compression') AS wal_rows, count(*) > 0 AS other_rows
  FROM compresslab.advise('5 s', wal_dir => 'archive_foreign_only');
-- wal_dir naming the live pg_wal ('pg_wal', a relative path, a symlink, the absolute path) is
-- read as pg_wal, up to the flush LSN: the same rows as without wal_dir, never "invalid record
-- length" at the end of the segment being written
COPY (SELECT 1) TO PROGRAM 'cat >/dev/null; ln -s pg_wal archive_pg_wal_link';
CREATE TEMP TABLE live_pg_wal_dirs (n int, dir text);
INSERT INTO live_pg_wal_dirs VALUES (1, 'pg_wal'), (2, './pg_wal/'), (3, 'archive_pg_wal_link'),
  (4, current_setting('data_directory') || '/pg_wal');
SELECT n, (SELECT count(*) FROM (
         (SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'archive_end', wal_dir => l.dir)
          EXCEPT ALL TABLE from_pg_wal)
         UNION ALL
         (TABLE from_pg_wal
          EXCEPT ALL SELECT :whatif_columns FROM compresslab.wal_whatif(:'archive_start', :'archive_end', wal_dir => l.dir))) d
       ) AS differing_rows
  FROM live_pg_wal_dirs l ORDER BY n;
SELECT n, count(*) AS settings, bool_and(w.end_lsn::pg_lsn <= pg_current_wal_flush_lsn()) AS to_the_flush_lsn
  FROM live_pg_wal_dirs l, compresslab.wal_whatif(wal_dir => l.dir) w GROUP BY n ORDER BY n;
SELECT count(*) AS wal_rows FROM compresslab.advise('5 s', wal_dir => 'pg_wal') WHERE area = 'wal_compression';
-- Sessions that set wal_compression themselves (the setting in force stays off): advise's
-- bytes_now is the WAL as the server wrote it, the LSN span of the range read, not the
-- what-if's row for the setting in force (which would lay out every image uncompressed).
SELECT pg_switch_wal() IS NOT NULL AS switched;
SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS mixed_first \gset
CHECKPOINT;
SET wal_compression = lz4;
UPDATE archived SET body = lower(body) WHERE id % 2 = 0;
SET wal_compression = pglz;
CHECKPOINT;
UPDATE archived SET body = upper(body) WHERE id % 2 = 1;
RESET wal_compression;
SELECT pg_walfile_name(pg_switch_wal()) AS mixed_last \gset
SELECT format('cat >/dev/null; mkdir archive_mixed && cp %s archive_mixed/', string_agg('pg_wal/' || name, ' ' ORDER BY name)) AS copy
  FROM pg_ls_waldir() WHERE name BETWEEN :'mixed_first' AND :'mixed_last' \gset
COPY (SELECT 1) TO PROGRAM :'copy';
CREATE TEMP TABLE mixed AS SELECT * FROM compresslab.wal_whatif(wal_dir => 'archive_mixed');
SELECT count(*) FILTER (WHERE wal_compression IN ('pglz', 'lz4') AND stored_images > 0) = 2 AS images_written_both_ways,
       bool_and(start_lsn = (SELECT min(start_lsn) FROM mixed)) AS one_range
  FROM mixed;
SELECT abs(a.bytes_now - (m.end_lsn::pg_lsn - m.start_lsn::pg_lsn)) <= 0.005 * a.bytes_now AS bytes_now_as_written,
       a.bytes_now < 0.9 * m.wal_bytes AS not_the_off_row
  FROM compresslab.advise('10 s', wal_dir => 'archive_mixed') a, mixed m
 WHERE a.area = 'wal_compression' AND m.wal_compression = 'off';
-- superuser or pg_read_server_files, checked before the directory is looked at
CREATE ROLE archive_user;
CREATE ROLE archive_reader IN ROLE pg_read_server_files;
GRANT USAGE ON SCHEMA compresslab TO archive_user, archive_reader;
SET ROLE archive_user;
SELECT error_of($$SELECT * FROM compresslab.wal_whatif(wal_dir => 'no_such_directory')$$);
SELECT error_of($$SELECT * FROM compresslab.wal_whatif_by_relation(wal_dir => 'archive')$$);
SET ROLE archive_reader;
SELECT count(*) AS settings, bool_and(fpi_images > 500) AS has_images FROM compresslab.wal_whatif(wal_dir => 'archive');
RESET ROLE;
DROP OWNED BY archive_user, archive_reader;
DROP ROLE archive_user, archive_reader;
COPY (SELECT 1) TO PROGRAM 'cat >/dev/null; chmod 700 archive_unreadable && rm -rf archive archive_*';
ALTER SYSTEM RESET autovacuum;
ALTER SYSTEM RESET checkpoint_timeout;
ALTER SYSTEM RESET wal_keep_size;
SELECT pg_reload_conf();
