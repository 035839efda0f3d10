-- CALL compresslab.recompress: a column's stored values recompressed in place. Every value
-- reads back the same, every row stays, values a fresh write would store differently end up
-- as a fresh write stores them, and a second call finds nothing to do. Then what it refuses
-- (SQLSTATE and message), triggers, a partitioned table, privileges and row-level security.
CREATE EXTENSION compresslab;
-- pglz, the default before PostgreSQL 19 (19's is lz4), for this database's sessions too: the
-- figures below are pglz's (pgrx-tests/t/pg_upgrade.sh tests 19's default).
SELECT format('ALTER DATABASE %I SET default_toast_compression = pglz', current_database()) \gexec
SET default_toast_compression = pglz;
\set try_schema pg_temp
\ir include/try.sql
-- Values of every kind: text, bytea and jsonb compressed with pglz, inline and external;
-- bytea that pglz gives up on (no match in its first kilobyte) and lz4 shrinks; random bytes
-- no method shrinks; short values; NULLs.
CREATE FUNCTION pg_temp.noise(n int, seed int) RETURNS bytea LANGUAGE sql AS $$
  SELECT decode(string_agg(md5((seed * 100000 + k)::text), ''), 'hex') FROM generate_series(1, (n + 15) / 16) k $$;
CREATE TABLE docs (id int PRIMARY KEY, body text COMPRESSION pglz, blob bytea COMPRESSION pglz, doc jsonb COMPRESSION pglz);
INSERT INTO docs
SELECT g,
       CASE g % 5 WHEN 0 THEN NULL WHEN 1 THEN 'short ' || g
                  WHEN 2 THEN repeat('row ' || g || ' of the docs table; ', 150)       -- ~4 kB: inline pglz
                  ELSE repeat('row ' || g || ' of the docs table; ', 2000) END,     -- ~50 kB: external pglz
       CASE g % 4 WHEN 0 THEN NULL
                  WHEN 1 THEN pg_temp.noise(1100, g) || decode(repeat('00ff', 3000), 'hex')  -- pglz gives up, lz4 shrinks
                  WHEN 2 THEN pg_temp.noise(9000, g)                                          -- nothing shrinks it
                  ELSE decode(repeat(md5(g::text), 200), 'hex') END,                         -- pglz, inline
       CASE WHEN g % 3 = 0 THEN NULL
            ELSE (SELECT jsonb_agg(jsonb_build_object('id', g * 1000 + k, 'name', 'customer ' || k, 'tags', '[1, 2, 3]'::jsonb))
                    FROM generate_series(1, 40 + (g % 7) * 30) k) END
  FROM generate_series(1, 300) g;
ANALYZE docs;
CREATE TEMP TABLE before AS
SELECT id, md5(body) AS body, md5(blob) AS blob, md5(doc::text) AS doc,
       pg_column_compression(body) AS body_was, pg_column_compression(blob) AS blob_was
  FROM docs;
SELECT 'body' AS col, pg_column_compression(body) AS method, count(*) FROM docs GROUP BY 2
UNION ALL SELECT 'blob', pg_column_compression(blob), count(*) FROM docs GROUP BY 2
UNION ALL SELECT 'doc', pg_column_compression(doc), count(*) FROM docs GROUP BY 2 ORDER BY 1, 2;
-- What a fresh write stores: each value written anew into an lz4 twin (|| and a cast make new values).
CREATE TABLE twin (id int, body text COMPRESSION lz4, blob bytea COMPRESSION lz4, doc jsonb COMPRESSION lz4);
INSERT INTO twin SELECT id, body || '', blob || ''::bytea, doc::text::jsonb FROM docs;
-- A dry run counts and changes nothing.
CALL compresslab.recompress('docs', 'body', 'lz4', dry_run => true);
SELECT count(*) AS progress_rows FROM compresslab.recompress_progress;
SELECT attcompression AS still_pglz FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attname = 'body';
CALL compresslab.recompress('docs', 'body', 'lz4', batch_rows => 7);
CALL compresslab.recompress('docs', 'blob', 'lz4');
CALL compresslab.recompress('docs', 'doc', 'lz4', batch_rows => 50);
-- every row and value as it was; each value stored as a fresh lz4 write stores it
SELECT count(*) AS rows, count(*) FILTER (WHERE b.body IS NOT DISTINCT FROM md5(d.body) AND b.blob IS NOT DISTINCT FROM md5(d.blob)
                                            AND b.doc IS NOT DISTINCT FROM md5(d.doc::text)) AS unchanged
  FROM docs d FULL JOIN before b USING (id);
SELECT count(*) AS values_stored_unlike_a_fresh_write
  FROM docs d JOIN twin w USING (id)
 WHERE pg_column_compression(d.body) IS DISTINCT FROM pg_column_compression(w.body)
    OR pg_column_compression(d.blob) IS DISTINCT FROM pg_column_compression(w.blob)
    OR pg_column_compression(d.doc) IS DISTINCT FROM pg_column_compression(w.doc);
-- the kinds of value: what moved to lz4, what stayed raw
SELECT 'body' AS col, b.body_was AS was, pg_column_compression(d.body) AS now, count(*)
  FROM docs d JOIN before b USING (id) GROUP BY 2, 3
UNION ALL
SELECT 'blob', b.blob_was, pg_column_compression(d.blob), count(*) FROM docs d JOIN before b USING (id) GROUP BY 2, 3
ORDER BY 1, 2, 3;
SELECT relation, "column", method, state, rows_rewritten > 0 AS rewrote, rows_skipped, bytes_after < bytes_before AS smaller,
       wal_bytes > 0 AS wrote_wal, blocks_done = total_blocks AS every_block
  FROM compresslab.recompress_progress ORDER BY 2;
-- a second call finds nothing to do
CALL compresslab.recompress('docs', 'body', 'lz4');
CALL compresslab.recompress('docs', 'blob');
SELECT "column", rows_rewritten, pass FROM compresslab.recompress_progress WHERE "column" IN ('body', 'blob') ORDER BY 1;
-- What it refuses, before it changes anything.
CREATE TABLE kinds (id int, n int, ext text, gen text GENERATED ALWAYS AS (id::text) STORED);
ALTER TABLE kinds ALTER COLUMN ext SET STORAGE EXTERNAL;
CREATE VIEW docs_view AS SELECT * FROM docs;
SELECT name, pg_temp.try(q) AS result FROM (VALUES
  ('unknown method',      $q$CALL compresslab.recompress('docs', 'body', 'zstd')$q$),
  ('no such column',      $q$CALL compresslab.recompress('docs', 'nope')$q$),
  ('fixed-length column', $q$CALL compresslab.recompress('kinds', 'n')$q$),
  ('STORAGE EXTERNAL',    $q$CALL compresslab.recompress('kinds', 'ext')$q$),
  ('generated column',    $q$CALL compresslab.recompress('kinds', 'gen')$q$),
  ('a view',              $q$CALL compresslab.recompress('docs_view', 'body')$q$),
  ('batch_rows 0',        $q$CALL compresslab.recompress('docs', 'body', batch_rows => 0)$q$),
  ('not a rate',          $q$CALL compresslab.recompress('docs', 'body', max_wal_rate => '20 MB')$q$),
  ('bad triggers mode',   $q$CALL compresslab.recompress('docs', 'body', triggers => 'maybe')$q$),
  ('lock_timeout -1 s',   $q$CALL compresslab.recompress('docs', 'body', lock_timeout => '-1 s')$q$),
  ('lock_timeout 25 days', $q$CALL compresslab.recompress('docs', 'body', lock_timeout => '25 days')$q$),
  ('lock_timeout 1000000 years', $q$CALL compresslab.recompress('docs', 'body', lock_timeout => '1000000 years')$q$),
  ('lock_timeout NULL',   $q$CALL compresslab.recompress('docs', 'body', lock_timeout => NULL)$q$),
  ('negative max_replay_lag', $q$CALL compresslab.recompress('docs', 'body', max_replay_lag => '-1 s')$q$),
  ('no relation',         $q$CALL compresslab.recompress(NULL, 'body')$q$),
  ('in a transaction',    $q$CALL compresslab.recompress('docs', 'body')$q$)
) AS t(name, q);
-- a bad lock_timeout is refused before the column's method changes
CREATE TABLE early (id int, body text COMPRESSION pglz);
INSERT INTO early VALUES (1, repeat('early ', 900));
SELECT pg_temp.try($q$CALL compresslab.recompress('early', 'body', 'lz4', lock_timeout => '25 days')$q$) AS refused;
SELECT attcompression AS still_pglz FROM pg_attribute WHERE attrelid = 'early'::regclass AND attname = 'body';
DROP TABLE early;
-- What an UPDATE costs beyond its row, said before it runs (a NOTICE)
SET client_min_messages = notice;
CREATE TABLE keyed (id text PRIMARY KEY, body text);
ALTER TABLE keyed REPLICA IDENTITY FULL;
CALL compresslab.recompress('keyed', 'id', dry_run => true);
RESET client_min_messages;
-- Triggers: refused unless told; 'fire' runs them; 'skip' does not.
CREATE TABLE audited (id int, body text COMPRESSION pglz);
INSERT INTO audited SELECT g, repeat('audited row ' || g, 400) FROM generate_series(1, 20) g;
CREATE TABLE audit_log (id int);
CREATE FUNCTION log_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit_log VALUES (NEW.id); RETURN NEW; END $$;
CREATE TRIGGER audited_update AFTER UPDATE ON audited FOR EACH ROW EXECUTE FUNCTION log_update();
SELECT pg_temp.try($q$CALL compresslab.recompress('audited', 'body', 'lz4')$q$) AS refused;
CALL compresslab.recompress('audited', 'body', 'lz4', triggers => 'fire');
SELECT count(*) AS trigger_fired FROM audit_log;
CALL compresslab.recompress('audited', 'body', 'pglz', triggers => 'skip');
SELECT count(*) AS not_fired_again FROM audit_log;
SELECT pg_column_compression(body), count(*) FROM audited GROUP BY 1;
-- A statement-level UPDATE trigger and an ON UPDATE rule are refused alike; 'fire' runs the
-- rule for every row rewritten; an INSTEAD rule, which would replace the UPDATE, is refused
-- whatever triggers says.
CREATE TABLE stated (id int, body text COMPRESSION pglz);
INSERT INTO stated SELECT g, repeat('stated row ' || g, 400) FROM generate_series(1, 10) g;
CREATE FUNCTION log_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO audit_log VALUES (-1); RETURN NULL; END $$;
CREATE TRIGGER stated_update AFTER UPDATE ON stated FOR EACH STATEMENT EXECUTE FUNCTION log_statement();
SELECT pg_temp.try($q$CALL compresslab.recompress('stated', 'body', 'lz4')$q$) AS statement_trigger;
DROP TRIGGER stated_update ON stated;
TRUNCATE audit_log;
CREATE RULE stated_rule AS ON UPDATE TO stated DO ALSO INSERT INTO audit_log VALUES (NEW.id);
SELECT pg_temp.try($q$CALL compresslab.recompress('stated', 'body', 'lz4')$q$) AS rule;
CALL compresslab.recompress('stated', 'body', 'lz4', triggers => 'fire');
SELECT count(*) AS rule_ran FROM audit_log;
DROP RULE stated_rule ON stated;
CREATE RULE stated_instead AS ON UPDATE TO stated DO INSTEAD NOTHING;
SELECT pg_temp.try($q$CALL compresslab.recompress('stated', 'body', 'pglz', triggers => 'fire')$q$) AS instead_rule;
DROP TABLE stated;
DROP FUNCTION log_statement();
-- A deferrable constraint trigger on another role's table: a superuser's CALL (which rewrites
-- as the owner, in a security-restricted operation, where PostgreSQL will not fire it) is
-- refused before anything changes; the owner's own CALL fires it.
CREATE ROLE recompress_deferrer;
CREATE TABLE deferred_t (id int, body text COMPRESSION pglz);
INSERT INTO deferred_t SELECT g, repeat('deferred row ' || g, 400) FROM generate_series(1, 10) g;
CREATE FUNCTION public.deferred_check() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER deferred_check AFTER UPDATE ON deferred_t DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION public.deferred_check();
ALTER TABLE deferred_t OWNER TO recompress_deferrer;
SELECT pg_temp.try($q$CALL compresslab.recompress('deferred_t', 'body', 'lz4', triggers => 'fire')$q$) AS not_the_owner;
SELECT attcompression AS still_pglz FROM pg_attribute WHERE attrelid = 'deferred_t'::regclass AND attname = 'body';
GRANT USAGE ON SCHEMA compresslab TO recompress_deferrer;
SET ROLE recompress_deferrer;
CALL compresslab.recompress('deferred_t', 'body', 'lz4', triggers => 'fire');
RESET ROLE;
SELECT pg_column_compression(body), count(*) FROM deferred_t GROUP BY 1;
DROP TABLE deferred_t;
DROP FUNCTION public.deferred_check();
REVOKE USAGE ON SCHEMA compresslab FROM recompress_deferrer;
DROP ROLE recompress_deferrer;
-- An inheritance parent: its own rows and its children's, as a partitioned table's partitions.
CREATE TABLE inh_parent (id int, body text COMPRESSION pglz);
CREATE TABLE inh_child (extra int) INHERITS (inh_parent);
INSERT INTO inh_parent SELECT g, repeat('parent row ' || g, 400) FROM generate_series(1, 10) g;
INSERT INTO inh_child SELECT g, repeat('child row ' || g, 400), g FROM generate_series(11, 30) g;
CREATE TEMP TABLE inh_before AS SELECT id, md5(body) AS m FROM inh_parent;
CALL compresslab.recompress('inh_parent', 'body', 'lz4');
SELECT tableoid::regclass, pg_column_compression(body), count(*) FROM inh_parent GROUP BY 1, 2 ORDER BY 1;
SELECT count(*) AS unchanged FROM inh_parent JOIN inh_before USING (id) WHERE md5(body) = m;
DROP TABLE inh_child, inh_parent;
-- A superuser rewriting another role's table runs the table's code (here its trigger) as the
-- table's owner, not as a superuser: pasting the advice's CALL runs nothing with more rights.
-- The owner's code runs with search_path 'pg_catalog, pg_temp' (owner_code.sql): it names its
-- table with its schema.
CREATE ROLE recompress_owner;
CREATE TABLE owned (id int, body text COMPRESSION pglz);
CREATE TABLE owned_log (who name);
ALTER TABLE owned OWNER TO recompress_owner;
ALTER TABLE owned_log OWNER TO recompress_owner;
CREATE FUNCTION log_who() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO public.owned_log VALUES (current_user); RETURN NEW; END $$;
CREATE TRIGGER owned_update BEFORE UPDATE ON owned FOR EACH ROW EXECUTE FUNCTION log_who();
INSERT INTO owned SELECT g, repeat('owned ' || g, 500) FROM generate_series(1, 5) g;
TRUNCATE owned_log;
CALL compresslab.recompress('owned', 'body', 'lz4', triggers => 'fire');
SELECT who, count(*) FROM owned_log GROUP BY 1;
SELECT pg_column_compression(body), count(*) FROM owned GROUP BY 1;
DROP TABLE owned, owned_log;
DROP FUNCTION log_who();
DROP ROLE recompress_owner;
-- A partitioned table: each partition in turn, and each partition's column set too.
CREATE TABLE events (id int, payload text COMPRESSION pglz) PARTITION BY RANGE (id);
CREATE TABLE events_a PARTITION OF events FOR VALUES FROM (0) TO (100);
CREATE TABLE events_b PARTITION OF events FOR VALUES FROM (100) TO (200);
INSERT INTO events SELECT g, repeat('event ' || g || ' ', 600) FROM generate_series(0, 199) g;
CREATE TEMP TABLE events_before AS SELECT id, md5(payload) AS m FROM events;
CALL compresslab.recompress('events', 'payload', 'lz4');
SELECT relation, state, rows_rewritten FROM compresslab.recompress_progress WHERE "column" = 'payload' ORDER BY 1;
SELECT tableoid::regclass, pg_column_compression(payload), count(*) FROM events GROUP BY 1, 2 ORDER BY 1;
SELECT c.relname, a.attcompression FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relname IN ('events', 'events_a', 'events_b') AND a.attname = 'payload' ORDER BY 1;
SELECT count(*) AS unchanged FROM events JOIN events_before USING (id) WHERE md5(payload) = m;
-- Privileges: the invoker's. No privilege: 42501; SELECT alone: 42501; a role that may update
-- the column (the method already set) but to which row-level security applies: 42501, dry run
-- included (the rewrite runs as the owner, and the dry run reads the heap: neither would apply
-- its policies). Without row-level security it rewrites the table, as the owner, and sees only
-- its own tables' progress.
CREATE ROLE recompress_nobody;
CREATE ROLE recompress_reader;
CREATE ROLE recompress_writer;
CREATE TABLE shared (id int, owner_name text, body text COMPRESSION pglz);
INSERT INTO shared SELECT g, CASE WHEN g % 2 = 0 THEN 'recompress_writer' ELSE 'someone' END, repeat('shared ' || g, 500)
  FROM generate_series(1, 40) g;
ALTER TABLE shared ALTER COLUMN body SET COMPRESSION lz4;
GRANT SELECT ON shared TO recompress_reader;
GRANT SELECT, UPDATE ON shared TO recompress_writer;
ALTER TABLE shared ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON shared USING (owner_name = current_user);
GRANT USAGE ON SCHEMA compresslab TO recompress_nobody, recompress_reader, recompress_writer;
SET ROLE recompress_nobody;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4')$q$) AS nobody;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4', dry_run => true)$q$) AS nobody_dry_run;
SET ROLE recompress_reader;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4')$q$) AS reader;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4', dry_run => true)$q$) AS reader_dry_run;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4', triggers => 'skip')$q$) AS reader_skip;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4', max_replay_lag => '10 s', dry_run => true)$q$) AS reader_replay_lag;
SET ROLE recompress_writer;
SELECT pg_temp.try($q$CALL compresslab.recompress('shared', 'body', 'lz4')$q$) AS writer_under_row_security;
RESET ROLE;
ALTER TABLE shared DISABLE ROW LEVEL SECURITY;
SET ROLE recompress_writer;
CALL compresslab.recompress('shared', 'body', 'lz4');
SELECT relation::text, rows_rewritten FROM compresslab.recompress_progress;
RESET ROLE;
SELECT owner_name, pg_column_compression(body), count(*) FROM shared GROUP BY 1, 2 ORDER BY 1;
-- SELECT and UPDATE on the column only: the dry run counts no page image (a page holds every
-- column of every row), and says so.
CREATE TABLE columns_granted (id int, secret text, body text COMPRESSION pglz);
INSERT INTO columns_granted SELECT g, md5(g::text), repeat('granted ' || g, 500) FROM generate_series(1, 20) g;
GRANT SELECT (body), UPDATE (body) ON columns_granted TO recompress_writer;
SET ROLE recompress_writer;
SET client_min_messages = notice;
CALL compresslab.recompress('columns_granted', 'body', 'lz4', dry_run => true);
RESET client_min_messages;
RESET ROLE;
-- FORCE ROW LEVEL SECURITY: the owner's own policy hides the odd rows from the rewrite (which
-- runs as the owner): what it leaves is counted and said, not taken as done.
CREATE ROLE recompress_forcer;
CREATE TABLE forced (id int, body text COMPRESSION pglz);
INSERT INTO forced SELECT g, repeat('forced row ' || g, 400) FROM generate_series(1, 20) g;
ALTER TABLE forced OWNER TO recompress_forcer;
ALTER TABLE forced ENABLE ROW LEVEL SECURITY;
ALTER TABLE forced FORCE ROW LEVEL SECURITY;
CREATE POLICY even ON forced USING (id % 2 = 0);
GRANT USAGE ON SCHEMA compresslab TO recompress_forcer;
CALL compresslab.recompress('forced', 'body', 'lz4');
SELECT state, rows_rewritten, rows_hidden FROM compresslab.recompress_progress WHERE relation = 'forced'::regclass;
SELECT pg_column_compression(body), count(*) FROM forced GROUP BY 1 ORDER BY 1;
DROP TABLE forced;
REVOKE USAGE ON SCHEMA compresslab FROM recompress_forcer;
DROP ROLE recompress_forcer;
-- The progress of a column moves only for a role that may update that column: one that may
-- update another column of the table (and read all of it) neither updates nor deletes the
-- row of the run above.
CREATE ROLE recompress_other;
GRANT USAGE ON SCHEMA compresslab TO recompress_other;
GRANT SELECT, UPDATE (owner_name) ON shared TO recompress_other;
SET ROLE recompress_other;
WITH moved AS (UPDATE compresslab.recompress_state SET next_block = 1000000, state = 'done' RETURNING 1)
SELECT count(*) AS rows_moved FROM moved;
WITH deleted AS (DELETE FROM compresslab.recompress_state RETURNING 1) SELECT count(*) AS rows_deleted FROM deleted;
SELECT count(*) AS rows_seen FROM compresslab.recompress_state;
RESET ROLE;
REVOKE USAGE ON SCHEMA compresslab FROM recompress_other;
REVOKE ALL ON shared FROM recompress_other;
DROP ROLE recompress_other;
-- A saved state that does not fit its table (here forged: a block far past the end) is not
-- trusted: the run starts over and rewrites every value.
CREATE TABLE forged (id int, body text COMPRESSION lz4);  -- its values pglz, its method lz4
INSERT INTO forged SELECT g, repeat('forged row ' || g, 400) FROM generate_series(1, 50) g;
ALTER TABLE forged ALTER COLUMN body SET COMPRESSION pglz;
UPDATE forged SET body = body || '';
ALTER TABLE forged ALTER COLUMN body SET COMPRESSION lz4;
INSERT INTO compresslab.recompress_state VALUES ('forged'::regclass, 'body', 'lz4', 'running', 1, 1000000000, 1000000000,
  0, 0, 0, 0, 0, 0, 0, 0, NULL, now(), now());
CALL compresslab.recompress('forged', 'body');
SELECT pg_column_compression(body), count(*) FROM forged GROUP BY 1;
SELECT state, rows_rewritten FROM compresslab.recompress_progress WHERE relation = 'forged'::regclass;
DROP TABLE forged;
-- a column of an array type (no array holds its values: a statement a row), and a domain over
-- jsonb (an array of the domain holds them): rewritten alike, unchanged
CREATE DOMAIN doc AS jsonb CHECK (VALUE IS NOT NULL);
CREATE TABLE arrays (id int PRIMARY KEY, nums int[] COMPRESSION pglz, d doc COMPRESSION pglz);
INSERT INTO arrays SELECT g, array_fill(g, ARRAY[2000]), jsonb_build_object('k', repeat('v' || g, 900)) FROM generate_series(1, 40) g;
CREATE TEMP TABLE arrays_before AS SELECT id, md5(nums::text) AS n, md5(d::text) AS j FROM arrays;
CALL compresslab.recompress('arrays', 'nums', 'lz4', batch_rows => 15);
CALL compresslab.recompress('arrays', 'd', 'lz4', batch_rows => 15);
SELECT pg_column_compression(nums) AS nums, pg_column_compression(d) AS d, count(*) FROM arrays GROUP BY 1, 2;
SELECT count(*) AS changed FROM arrays a JOIN arrays_before b USING (id) WHERE md5(a.nums::text) <> b.n OR md5(a.d::text) <> b.j;
DROP TABLE arrays;
DROP DOMAIN doc;
-- its step function, which any role may call, refuses what the procedure would never pass it
SELECT compresslab.recompress_step(NULL, 'docs', 'body', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false) AS run \gset
SELECT name, pg_temp.try(q) AS result FROM (VALUES
  ('a run not in progress', $q$SELECT compresslab.recompress_step(424242, 'docs', 'body', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false)$q$),
  ('another column',        format($q$SELECT compresslab.recompress_step(%s, 'docs', 'id', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false)$q$, :run)),
  ('a fixed-length column', $q$SELECT compresslab.recompress_step(NULL, 'kinds', 'n', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false)$q$)
) AS t(name, q);
-- and the run goes on after them
SELECT compresslab.recompress_step(:run, 'docs', 'body', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false) = :run AS goes_on;
DROP TABLE shared, columns_granted;
REVOKE USAGE ON SCHEMA compresslab FROM recompress_nobody, recompress_reader, recompress_writer;
DROP ROLE recompress_nobody, recompress_reader, recompress_writer;
