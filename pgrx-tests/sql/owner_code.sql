-- Code of a table's owner that compresslab causes to run runs as that owner, in a
-- security-restricted operation with search_path 'pg_catalog, pg_temp', and leaves the
-- caller's session as it found it, on success and on ERROR; reading a table's values (the
-- dry run, the TOAST estimates, bench_column, the advisor's samplers) plans no query on it, so
-- none of the owner's code runs as the caller. The owner here is eve; the callers are a
-- superuser and dba, a role that is not eve but was granted SELECT and UPDATE.
CREATE EXTENSION compresslab;
\set try_schema public
\ir include/try.sql
CREATE ROLE owner_eve;
CREATE ROLE owner_dba;
CREATE SCHEMA eve AUTHORIZATION owner_eve;
GRANT USAGE ON SCHEMA eve TO owner_dba;
GRANT USAGE ON SCHEMA compresslab TO owner_dba;
SET ROLE owner_eve;
-- eve's now(), which a search_path naming eve first would run for anyone's now()
CREATE FUNCTION eve.now() RETURNS timestamptz LANGUAGE sql AS $$ SELECT 'epoch'::timestamptz $$;
-- an index expression that sets the session's search_path whenever it is evaluated
CREATE FUNCTION eve.hijack(t text) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'eve, pg_catalog', false);
  RETURN pg_catalog.length(t);
END $$;
-- a spy the planner folds (immutable, no argument): an ERROR when run as anyone but eve
CREATE FUNCTION eve.spy() RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  IF current_user OPERATOR(pg_catalog.<>) 'owner_eve' THEN
    RAISE EXCEPTION 'eve''s code ran as another role';
  END IF;
  RETURN 1;
END $$;
-- a trigger that says as whom and under which search_path it runs, then sets search_path
CREATE TABLE eve.log (who name, search_path text);
CREATE FUNCTION eve.log_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO eve.log VALUES (current_user, pg_catalog.current_setting('search_path'));
  PERFORM pg_catalog.set_config('search_path', 'eve, pg_catalog', false);
  RETURN NEW;
END $$;
CREATE TABLE eve.docs (id int PRIMARY KEY, body text COMPRESSION pglz);
INSERT INTO eve.docs SELECT g, repeat('eve doc ' || g || ' ', 400) FROM generate_series(1, 30) g;
CREATE INDEX docs_hijack ON eve.docs (eve.hijack(body));
CREATE INDEX docs_partial ON eve.docs (id) WHERE eve.spy() > 0;
CREATE STATISTICS eve.docs_spied ON (id + eve.spy()) FROM eve.docs;
CREATE TRIGGER docs_update BEFORE UPDATE ON eve.docs FOR EACH ROW EXECUTE FUNCTION eve.log_update();
GRANT SELECT, UPDATE ON eve.docs TO owner_dba;
RESET ROLE;
RESET search_path;
-- What PostgreSQL leaves open: any query a superuser plans on eve's table folds eve's
-- immutable functions as the superuser.
SELECT public.try('SELECT count(*) FROM eve.docs') AS a_superusers_own_query;
-- The dry run, the estimates and the lab read the values without planning a query on the table.
\c
SHOW search_path;
CALL compresslab.recompress('eve.docs', 'body', 'lz4', triggers => 'fire', dry_run => true);
SELECT count(*) > 0 AS estimated FROM compresslab.estimate_toast_compression('eve.docs', 'body');
SELECT count(*) > 0 AS benched FROM compresslab.bench_column('eve.docs', 'body', '{lz4}', '{0}', 1);
SELECT count(*) FILTER (WHERE target LIKE 'eve.docs.body%') AS advised FROM compresslab.advise('3 s') WHERE area = 'toast';
-- The rewrite runs eve's index expression and trigger as eve, restricted; what they set is
-- rolled back before the CALL returns.
\c
SHOW search_path;
CALL compresslab.recompress('eve.docs', 'body', 'lz4', triggers => 'fire');
SHOW search_path;
SELECT pg_catalog.now() <> 'epoch' AS now_is_the_servers, now() <> 'epoch' AS unqualified_now_too;
SET ROLE owner_eve;
SELECT who, search_path, count(*) FROM eve.log GROUP BY 1, 2;
SELECT pg_column_compression(body), count(*) FROM eve.docs GROUP BY 1;
TRUNCATE eve.log;
ALTER TABLE eve.docs ALTER COLUMN body SET COMPRESSION pglz;
RESET ROLE;
RESET search_path;
-- A role that is not the owner: the same, once its own privileges are checked.
\c
SET ROLE owner_dba;
SHOW search_path;
CALL compresslab.recompress('eve.docs', 'body', triggers => 'fire', dry_run => true);
CALL compresslab.recompress('eve.docs', 'body', triggers => 'fire');
SHOW search_path;
SELECT current_user AS still_dba;
RESET ROLE;
SET ROLE owner_eve;
SELECT who, search_path, count(*) FROM eve.log GROUP BY 1, 2;
SELECT pg_column_compression(body), count(*) FROM eve.docs GROUP BY 1;
-- On ERROR: a CHECK constraint whose function sets search_path, then fails the row. The batch
-- is rolled back, and so are the setting and the user.
CREATE FUNCTION eve.refuse(t text) RETURNS bool IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_catalog.set_config('search_path', 'eve, pg_catalog', false);
  RETURN false;
END $$;
CREATE TABLE eve.strict (id int, body text COMPRESSION pglz);
INSERT INTO eve.strict SELECT g, repeat('strict ' || g || ' ', 400) FROM generate_series(1, 5) g;
ALTER TABLE eve.strict ADD CONSTRAINT strict_refuses CHECK (eve.refuse(body)) NOT VALID;
RESET ROLE;
RESET search_path;
\c
SHOW search_path;
\set VERBOSITY terse
CALL compresslab.recompress('eve.strict', 'body', 'lz4');
\set VERBOSITY default
SHOW search_path;
SELECT current_user = session_user AS user_restored;
-- Row-level security that applies to the caller: refused before anything changes (as the
-- owner, the rewrite would reach rows the caller cannot see). A superuser, to whom it never
-- applies, rewrites every row.
SET ROLE owner_eve;
CREATE TABLE eve.private (id int, who name, body text COMPRESSION pglz);
INSERT INTO eve.private SELECT g, CASE WHEN g % 2 = 0 THEN 'owner_dba' ELSE 'owner_eve' END, repeat('private ' || g || ' ', 400)
  FROM generate_series(1, 10) g;
ALTER TABLE eve.private ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON eve.private USING (who = current_user);
GRANT SELECT, UPDATE ON eve.private TO owner_dba;
ALTER TABLE eve.private ALTER COLUMN body SET COMPRESSION lz4;
SET ROLE owner_dba;
SELECT public.try($q$CALL compresslab.recompress('eve.private', 'body')$q$) AS rls_applies;
SELECT public.try($q$CALL compresslab.recompress('eve.private', 'body', dry_run => true)$q$) AS rls_applies_dry_run;
RESET ROLE;
-- With row-level security enabled, PostgreSQL analyses the UPDATE again as the owner: it names
-- only the table and its column, so the owner needs nothing of compresslab's.
CALL compresslab.recompress('eve.private', 'body');
SET ROLE owner_eve;
ALTER TABLE eve.private DISABLE ROW LEVEL SECURITY;
SELECT pg_column_compression(body), count(*) FROM eve.private GROUP BY 1;
RESET ROLE;
-- recompress_step is callable by any role: without UPDATE on the column it refuses, though the
-- batches would run as the owner.
CREATE ROLE owner_reader;
GRANT USAGE ON SCHEMA compresslab, eve TO owner_reader;
GRANT SELECT ON eve.docs TO owner_reader;
SET ROLE owner_reader;
SELECT public.try($q$SELECT compresslab.recompress_step(NULL, 'eve.docs', 'body', 'lz4', 10, NULL, NULL, '1 s', 'refuse', false)$q$)
    AS reader_step;
RESET ROLE;
-- The advisor's spill row reads rows of the most-written table (here eve's, its statistics
-- expression folding eve.spy) without planning a query on it.
SET logical_decoding_work_mem = '64kB';
SELECT 'slot' FROM pg_create_logical_replication_slot('owner_code_slot', 'test_decoding');
SET ROLE owner_eve;
CREATE TABLE eve.changes (id int, action text, detail text);
CREATE STATISTICS eve.changes_spied ON (id + eve.spy()) FROM eve.changes;
INSERT INTO eve.changes SELECT g, 'INSERT', 'change number ' || g FROM generate_series(1, 100000) g;
RESET ROLE;
SELECT count(*) > 100000 AS decoded FROM pg_logical_slot_get_changes('owner_code_slot', NULL, NULL);
SELECT pg_stat_force_next_flush();
SELECT basis LIKE '%rows of eve.changes as change records%' AS samples_eves_table, saving_percent > 0 AS saves
  FROM compresslab.advise('5 s') WHERE area = 'spill';
SELECT pg_drop_replication_slot('owner_code_slot');
RESET logical_decoding_work_mem;
SHOW search_path;
DROP SCHEMA eve CASCADE;
REVOKE USAGE ON SCHEMA compresslab FROM owner_dba, owner_reader;
DROP ROLE owner_eve, owner_dba, owner_reader;
