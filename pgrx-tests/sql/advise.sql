-- The advisor on a database built for it: a JSON column stored with pglz, a column of random
-- bytes, a pgbench-like workload's WAL, a table of random data only, a spilling logical
-- decoding; then the budget and privileges. Each recommendation is checked against what the
-- server then really does.
CREATE EXTENSION compresslab;
-- pglz, the default before PostgreSQL 19 (19's is lz4), for this database's sessions too: the
-- figures below are pglz's (pgrx-tests/t/pg_upgrade.sh tests 19's default).
SELECT format('ALTER DATABASE %I SET default_toast_compression = pglz', current_database()) \gexec
SET default_toast_compression = pglz;
-- A shell loop that runs each line of its input with `psql -c` on this database, as a DBA
-- pastes the lines of apply_sql (COPY ... TO PROGRAM feeds it the lines).
SELECT format('while IFS= read -r line; do psql -X -q -v ON_ERROR_STOP=1 -h %s -p %s -d %s -c "$line" >/dev/null || exit 1; done',
              current_setting('unix_socket_directories'), current_setting('port'), current_database()) AS psql_each_line \gset
ALTER SYSTEM SET autovacuum = off;
ALTER SYSTEM SET checkpoint_timeout = '1h';
ALTER SYSTEM SET max_wal_size = '4GB';
ALTER SYSTEM SET wal_keep_size = '2GB';
SELECT pg_reload_conf();
-- (a) JSON documents stored with pglz, (b) random bytes (4 KB values: TOAST tries them)
CREATE TABLE docs (id int PRIMARY KEY, body text COMPRESSION pglz, other int DEFAULT 0);
INSERT INTO docs (id, body)
SELECT g, (SELECT jsonb_agg(jsonb_build_object('id', g * 100 + k, 'name', 'customer ' || (g * 100 + k),
                                               'email', md5((g * 100 + k)::text) || '@example.com',
                                               'tags', jsonb_build_array('a', 'b', k % 7)))::text
             FROM generate_series(1, 60) k)
  FROM generate_series(1, 250) g;
CREATE TABLE blobs (id int, payload bytea);
INSERT INTO blobs SELECT g, decode(string_agg(md5(g || ':' || k), '' ORDER BY k), 'hex')
  FROM generate_series(1, 200) g, generate_series(1, 256) k GROUP BY g;
ANALYZE docs, blobs;
-- (verbose: every column its own row; these tables store under 1 MB each, which advise folds
-- into one row by default, see toast_advice.sql)
CREATE TEMP TABLE toast_advice AS
SELECT * FROM compresslab.advise('20 s', verbose => true) WHERE area = 'toast';
-- a column's bytes are a total: no period, nothing per day
SELECT count(*) AS columns, bool_and(observed_period IS NULL AND bytes_per_day_now IS NULL AND bytes_per_day_recommended IS NULL) AS totals_only
  FROM toast_advice;
SELECT target, current, recommended, apply_sql, confidence, saving_percent > -5 AS not_much_bigger
  FROM toast_advice ORDER BY target;
-- the note says what happens to existing values, and the rule's reason
SELECT target, (note LIKE '%VACUUM FULL, CLUSTER%') = (apply_sql IS NOT NULL) AS explains_existing_values_when_applying,
       note LIKE 'keep: the values do not compress%' OR note LIKE 'keep: not compressed: under the 2 kB threshold%'
       OR note LIKE 'lz4 stores %' OR note LIKE 'pglz stores%' AS gives_the_rule
  FROM toast_advice ORDER BY target;
-- What really recompresses in PostgreSQL 15 (the note's claim): VACUUM FULL, CLUSTER, a rewrite
-- by another column's type change, an UPDATE of another column, UPDATE SET body = body and
-- INSERT ... SELECT keep pglz; a new value (body || '') is compressed with the new method.
CREATE FUNCTION methods_of(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(DISTINCT coalesce(pg_column_compression(body), ''none''), '','') FROM %s', t) INTO r;
  RETURN r;
END $$;
CREATE TABLE probe AS SELECT * FROM docs;
ALTER TABLE probe ALTER COLUMN body SET COMPRESSION lz4;
SELECT 'after SET COMPRESSION' AS step, methods_of('probe');
VACUUM FULL probe;
SELECT 'VACUUM FULL' AS step, methods_of('probe');
CREATE INDEX ON probe (id);
CLUSTER probe USING probe_id_idx;
SELECT 'CLUSTER' AS step, methods_of('probe');
ALTER TABLE probe ALTER COLUMN other TYPE bigint;
SELECT 'rewrite by ALTER TYPE of another column' AS step, methods_of('probe');
UPDATE probe SET other = 1;
SELECT 'UPDATE of another column' AS step, methods_of('probe');
UPDATE probe SET body = body;
SELECT 'UPDATE SET body = body' AS step, methods_of('probe');
CREATE TABLE probe2 (id int, body text COMPRESSION lz4, other bigint);
INSERT INTO probe2 SELECT * FROM probe;
SELECT 'INSERT ... SELECT into an lz4 column' AS step, methods_of('probe2');
UPDATE probe SET body = body || '';
SELECT 'UPDATE SET body = body || ''''' AS step, methods_of('probe');
-- (a) applied: the advice's lines pasted, whose CALL compresslab.recompress rewrites the values
-- already stored; the predicted bytes are within 2% of pg_column_size
SELECT apply_sql AS docs_apply, bytes_recommended AS docs_predicted FROM toast_advice WHERE target = 'public.docs.body' \gset
COPY (SELECT unnest(string_to_array(:'docs_apply', E'\n'))) TO PROGRAM :'psql_each_line';
SELECT methods_of('docs') AS docs_now,
       abs(sum(pg_column_size(body)) - :docs_predicted)::float8 / sum(pg_column_size(body)) < 0.02 AS within_2_percent
  FROM docs;
-- and the values the note said the CALL rewrites are those it rewrote: the count itself where
-- every block was read, else within its 95% interval
SELECT CASE WHEN m[2] IS NULL THEN m[1]::int = r ELSE r BETWEEN m[2]::int AND m[3]::int END AS rewrite_count_holds
  FROM (SELECT regexp_match(note, '(\d+) values to rewrite(?: \(95% interval (\d+)\.\.(\d+)\))?') AS m
          FROM toast_advice WHERE target = 'public.docs.body') a,
       (SELECT rows_rewritten AS r FROM compresslab.recompress_progress WHERE relation = 'docs'::regclass) b;
-- rows with two wide columns: TOAST's decision is per row (here a 1.2 KB note is compressed
-- because its row is wide and the other wide value does not compress), which the advice keeps;
-- applied, its bytes are within 2% again
CREATE TABLE orders (id int PRIMARY KEY, items text, note text);
INSERT INTO orders SELECT g, (SELECT string_agg(md5(g || '-' || k), '' ORDER BY k) FROM generate_series(1, 40) k),
                          repeat('note ' || g || ' ', 120 + g % 40)
  FROM generate_series(1, 250) g;
ANALYZE orders;
SELECT recommended AS orders_rec, apply_sql AS orders_apply, bytes_recommended AS orders_predicted
  FROM compresslab.advise('20 s', verbose => true) WHERE target = 'public.orders.note' \gset
SELECT :'orders_rec' AS recommended, (SELECT count(*) FROM orders WHERE pg_column_compression(note) IS NOT NULL) > 100 AS short_values_compressed;
COPY (SELECT unnest(string_to_array(:'orders_apply', E'\n'))) TO PROGRAM :'psql_each_line';
SELECT abs(sum(pg_column_size(note)) - :orders_predicted)::float8 / sum(pg_column_size(note)) < 0.02 AS within_2_percent FROM orders;
-- a partitioned table is one row (values sampled across its partitions, bytes summed), not a
-- row per partition; SET COMPRESSION on the parent does not reach the partitions on 15, so
-- apply_sql has a statement for each (each under lock_timeout), then the CALL that rewrites the
-- values of every partition; applied, every partition's values follow it
CREATE TABLE events (id int, payload text) PARTITION BY RANGE (id);
CREATE TABLE events_a PARTITION OF events FOR VALUES FROM (0) TO (150);
CREATE TABLE events_b PARTITION OF events FOR VALUES FROM (150) TO (300);
INSERT INTO events SELECT g, (SELECT jsonb_agg(jsonb_build_object('event', g * 100 + k, 'kind', 'click ' || (k % 5),
                                                                  'session', md5((g * 100 + k)::text)))::text
                                FROM generate_series(1, 60) k)
  FROM generate_series(0, 299) g;
ANALYZE events;
CREATE TEMP TABLE events_advice AS SELECT * FROM compresslab.advise('20 s', verbose => true) WHERE target LIKE 'public.events%';
SELECT target, recommended, basis LIKE '300 values sampled, every row of the table''s % blocks across its 2 partitions (%' AS sampled_across,
       apply_sql = format(E'SET lock_timeout = \'1s\'; ALTER TABLE public.events ALTER COLUMN payload SET COMPRESSION %s;\n'
                          'SET lock_timeout = ''1s''; ALTER TABLE public.events_a ALTER COLUMN payload SET COMPRESSION %s;\n'
                          'SET lock_timeout = ''1s''; ALTER TABLE public.events_b ALTER COLUMN payload SET COMPRESSION %s;\n'
                          'CALL compresslab.recompress(''public.events'', ''payload'', ''%s'');',
                          recommended, recommended, recommended, recommended) AS a_statement_each,
       bytes_now = (SELECT sum(pg_column_size(payload)) FROM events) AS bytes_summed
  FROM events_advice;
SELECT apply_sql AS events_apply, bytes_recommended AS events_predicted FROM events_advice \gset
COPY (SELECT unnest(string_to_array(:'events_apply', E'\n'))) TO PROGRAM :'psql_each_line';
SELECT events.tableoid::regclass AS partition, string_agg(DISTINCT pg_column_compression(payload), ',') = a.recommended AS follows_the_advice
  FROM events, events_advice a GROUP BY 1, a.recommended ORDER BY 1;
SELECT abs(sum(pg_column_size(payload)) - :events_predicted)::float8 / sum(pg_column_size(payload)) < 0.02 AS within_2_percent
  FROM events;
-- (b) random bytes: no change, and the stored bytes are what the table holds
SELECT recommended = 'pglz' AND apply_sql IS NULL AS no_change,
       bytes_now = (SELECT sum(pg_column_size(payload)) FROM blobs) AS bytes_now_measured
  FROM toast_advice WHERE target = 'public.blobs.payload';
-- (c) WAL after a pgbench-like workload with uuid filler: a compressed setting, and the saving
-- it predicts is within 3 points of what the same workload then measures under it
CREATE TEMP TABLE whatif_runs (setting text, start_lsn pg_lsn, end_lsn pg_lsn);
-- the advice is on the WAL it reads back from the flush LSN to wal_since (the off run's updates,
-- after its table was built and checkpointed): its period is that WAL's own, timed by its
-- commits, so the saving it predicts is checked against the same updates re-run under the pick
SELECT pg_stat_reset_shared('wal');
-- a period of more than a second: the per-day check below holds to a millionth, and
-- observed_period is an interval, in whole microseconds
SELECT pg_sleep(1);
\set setting off
\ir include/wal_whatif_run.sql
SELECT pg_stat_force_next_flush();
SELECT start_lsn AS off_start FROM whatif_runs WHERE setting = 'off' \gset
CREATE TEMP TABLE wal_advice AS SELECT * FROM compresslab.advise('20 s', :'off_start') WHERE area = 'wal_compression';
-- the WAL read spans seconds: the per-day figures are extrapolated from them, so the
-- confidence is low and the basis names the period, the steady WAL read's own
SELECT current, recommended IN ('lz4', 'zstd') AS compressed_setting,
       confidence = 'low' AND basis ~ '; the period is the steady WAL read''s own, [0-9A-F]+/[0-9A-F]+\.\.[0-9A-F]+/[0-9A-F]+: .* written and [0-9]+ full-page images over [0-9]+ s, timed by the [0-9]+ times its commit and checkpoint records carry and the time of the flush LSN' AS low_and_says_why,
       -- bytes_now is the WAL read's bytes over observed_period (seconds here), the per-day
       -- columns the same scaled to a day
       observed_period < interval '1 hour' AS period_under_an_hour,
       bytes_now <= (SELECT wal_bytes FROM pg_stat_wal) AS bytes_measured,
       abs(bytes_per_day_now - bytes_now * 86400 / extract(epoch FROM observed_period)) <= 1e-6 * bytes_per_day_now
         AND abs(bytes_per_day_recommended - bytes_recommended * 86400 / extract(epoch FROM observed_period)) <= 1e-6 * bytes_per_day_recommended
         AS per_day_scaled,
       apply_sql ~ E'^ALTER SYSTEM SET wal_compression = \'(lz4|zstd)\';\nSELECT pg_catalog.pg_reload_conf\\(\\);$' AS apply_sql_ok
  FROM wal_advice;
-- each statement of apply_sql runs alone with psql -c, as a DBA pastes it
COPY (SELECT pg_catalog.unnest(pg_catalog.string_to_array(apply_sql, E'\n')) FROM wal_advice) TO PROGRAM :'psql_each_line';
SELECT f.setting = a.recommended AS applied_by_alter_system
  FROM pg_file_settings f, wal_advice a WHERE f.name = 'wal_compression' AND f.sourcefile LIKE '%postgresql.auto.conf';
ALTER SYSTEM RESET wal_compression;
SELECT pg_reload_conf();

SELECT recommended AS setting FROM wal_advice \gset
\ir include/wal_whatif_run.sql
SELECT abs(a.saving_percent - 100.0 * (1 - (t.end_lsn - t.start_lsn) / (o.end_lsn - o.start_lsn))) < 3 AS saving_within_3_points
  FROM wal_advice a, whatif_runs o, whatif_runs t WHERE o.setting = 'off' AND t.setting = a.recommended;
-- no full-page image in the WAL read (an empty range here; recycled WAL on a real server):
-- pages sampled from the most-written tables stand for the images
SELECT recommended IN ('off', 'pglz', 'lz4', 'zstd') AS a_setting, basis LIKE 'no full-page image in the cluster''s WAL read%' AS says_so,
       basis LIKE '%pages sampled from the most-written tables (%)%' AS names_the_tables, confidence IN ('low', 'medium') AS modest
  FROM compresslab.advise('20 s', pg_current_wal_flush_lsn()) WHERE area = 'wal_compression';
-- (d) a table of random data only: off stays
CREATE TABLE noise (id int, r bytea);
INSERT INTO noise SELECT g, decode(string_agg(md5(g || '/' || k), '' ORDER BY k), 'hex')
  FROM generate_series(1, 20000) g, generate_series(1, 60) k GROUP BY g;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS noise_start \gset
UPDATE noise SET id = -id;
SELECT current, recommended, apply_sql IS NULL AS nothing_to_apply, note LIKE 'keep: no setting saves 5%%' AS says_why
  FROM compresslab.advise('20 s', :'noise_start') WHERE area = 'wal_compression';
-- (e) logical decoding that spills: an informational row on what LZ4 streaming would save
SET logical_decoding_work_mem = '64kB';
SELECT 'slot' FROM pg_create_logical_replication_slot('advise_slot', 'test_decoding');
-- one large transaction of change-like rows, which becomes the most-written table: the
-- records the simulation samples
CREATE TABLE changes (id int, action text, relname text, detail text);
INSERT INTO changes SELECT g, 'INSERT', 'orders', 'Hello number n°' || g FROM generate_series(1, 150000) g;
SELECT count(*) > 150000 AS decoded FROM pg_logical_slot_get_changes('advise_slot', NULL, NULL);
-- The spill advice samples the most-written table (pg_stat_user_tables), which PostgreSQL 15
-- updates at most once a second: flushed now, it is `changes`.
SELECT pg_stat_force_next_flush();
SELECT target LIKE 'logical decoding spill files (1 slot(s), % transaction(s) spilled)' AS target_ok, recommended,
       saving_percent > 20 AS saves, apply_sql IS NULL AS informational,
       observed_period > interval '0' AND bytes_per_day_now >= bytes_now AS over_a_period_and_per_day,
       basis LIKE '%rows of public.changes as change records%' AS samples_changes
  FROM compresslab.advise('10 s') WHERE area = 'spill';
SELECT pg_drop_replication_slot('advise_slot');
RESET logical_decoding_work_mem;
-- the budget holds inside a column: values of 29 MB (in 0.5.0, 16 rows of 60 MB took 226 s
-- and 2.7 GB under a 2 s budget) are not read when they do not fit in the bytes the time left
-- measures; the NOTICE names each column skipped
CREATE TABLE big (id int, body text, blob bytea);
INSERT INTO big SELECT g, repeat(md5(g::text), 937500), compresslab.synthetic('text', 30000000, g)
  FROM generate_series(1, 4) g;
ANALYZE big;
\set budget '2 s'
\ir include/advise_notices.sql
SELECT :advise_seconds < 10 AS within_10_s,
       (SELECT line::int > 0 FROM advise_output WHERE line ~ '^[0-9]+$') AS returns_rows,
       (SELECT count(*) FROM advise_output
         WHERE line ~ '^NOTICE:  compresslab: advise: public\.big\.(body|blob) skipped, no value measured: the next value \(29 MB\) did not fit') AS columns_skipped,
       (SELECT count(*) FROM advise_output WHERE line ~ 'skipped, no value measured within the budget .*: public\.big\.body, public\.big\.blob') AS summarised;
DROP TABLE big;
-- one table's ERROR leaves out that table, not the advice: a table whose heap file is damaged
-- (VACUUM FULL writes its new file past shared buffers, so sampling reads the file, overwritten
-- here with a block of 0xff bytes) fails its sampling with XX001; advise() returns the other
-- rows, and a NOTICE names the table and the ERROR
CREATE TABLE damaged (id int, body text);
INSERT INTO damaged SELECT g, repeat(md5(g::text), 20) FROM generate_series(1, 5) g;
VACUUM FULL damaged;
SELECT format('head -c %s /dev/zero | tr ''\000'' ''\377'' > %s', current_setting('block_size'), pg_relation_filepath('damaged')) AS damage \gset
CREATE TEMP TABLE damage_output (line text);
COPY damage_output FROM PROGRAM :'damage';
\set budget '5 s'
\ir include/advise_notices.sql
SELECT (SELECT line::int > 0 FROM advise_output WHERE line ~ '^[0-9]+$') AS returns_rows,
       (SELECT count(*) FROM advise_output
         WHERE line ~ '^NOTICE:  compresslab: advise: column body of public\.damaged left out: invalid page in block 0 of relation "?base/') AS notice_names_table,
       (SELECT count(*) FROM advise_output WHERE line ~ 'left out on an ERROR \(each in a NOTICE above\): public\.damaged\.body') AS summarised;
DROP TABLE damaged;
-- the budget holds on a database of 2,000 small tables (some are left out)
DO $$ BEGIN
  FOR i IN 1..2000 LOOP
    EXECUTE format('CREATE TABLE small_%s (id int, body text); INSERT INTO small_%s VALUES (1, repeat(''x'', 3000))', i, i);
  END LOOP;
END $$;
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) FILTER (WHERE area = 'toast') AS toast_rows, count(*) FILTER (WHERE area = 'toast') < 2002 AS some_left_out
  FROM compresslab.advise('1 s', verbose => true) \gset
SELECT :toast_rows > 0 AS looked_at_some, :'some_left_out'::bool AS left_some_out,
       clock_timestamp() - :'t0'::timestamptz < interval '3 s' AS within_budget_plus_2_s;
-- and holds no lock on them once it returns, nor on a partitioned table's partitions: each
-- table's sizes and sample are read in a subtransaction rolled back once its figures are out
-- (10,000 tables' locks held to the end exhausted the lock table, 53200, and lost the whole
-- advice)
CREATE TABLE parted (id int, body text) PARTITION BY RANGE (id);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
CREATE TABLE parted_2 PARTITION OF parted FOR VALUES FROM (100) TO (200);
INSERT INTO parted SELECT g, repeat(md5(g::text), 100) FROM generate_series(0, 199) g;
BEGIN;
SELECT count(*) > 0 AS advised FROM compresslab.advise('1 s', verbose => true);
SELECT count(*) AS locks_left_on_tables
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.locktype = 'relation' AND l.pid = pg_backend_pid()
   AND (c.relnamespace = 'public'::regnamespace
        OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = 'public'::regnamespace));
COMMIT;
-- cancel and statement_timeout stop it long before its budget (the margins are for a loaded
-- CI machine)
SELECT clock_timestamp() AS t1 \gset
SET statement_timeout = '300ms';
\set VERBOSITY terse
SELECT count(*) FROM compresslab.advise('30 s');
\set VERBOSITY default
RESET statement_timeout;
SELECT clock_timestamp() - :'t1'::timestamptz < interval '3 s' AS stopped_within_3_s_of_30;
-- privileges: a role that may read docs only gets advice on docs only, and no WAL row
CREATE ROLE advise_user;
GRANT USAGE ON SCHEMA compresslab TO advise_user;
GRANT SELECT ON docs TO advise_user;
SET ROLE advise_user;
SELECT area, target FROM compresslab.advise('5 s', verbose => true) ORDER BY 1, 2;
RESET ROLE;
-- a bad budget
\set VERBOSITY terse
SELECT * FROM compresslab.advise('0 s');
SELECT * FROM compresslab.advise('2 days');
SELECT * FROM compresslab.advise(NULL);
\set VERBOSITY default
DROP OWNED BY advise_user;
DROP ROLE advise_user;
ALTER SYSTEM RESET autovacuum;
ALTER SYSTEM RESET checkpoint_timeout;
ALTER SYSTEM RESET max_wal_size;
ALTER SYSTEM RESET wal_keep_size;
SELECT pg_reload_conf();
