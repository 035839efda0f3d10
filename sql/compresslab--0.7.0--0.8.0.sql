-- compresslab 0.7.0 -> 0.8.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.7.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.8.0;
-- pgrx-tests/t/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.8.0'" to load this file. \quit

-- estimate_toast_compression: each method's stored bytes with their 95% interval, which 0.7.0
-- gave only in a NOTICE.
ALTER TYPE compresslab.toast_compression_estimate
    ADD ATTRIBUTE stored_bytes_low bigint, ADD ATTRIBUTE stored_bytes_high bigint;
COMMENT ON TYPE compresslab.toast_compression_estimate IS 'A column under one TOAST compression method: values, values kept compressed, raw and stored bytes (pg_column_size), ratio, compression and decompression speed, the 95% interval of the stored bytes (equal to them where every row was read)';

-- recompress: lock_timeout and max_replay_lag checked before anything changes, a standby and
-- the tables below an inheritance parent handled in its plan, and the NOTICEs naming tables and
-- columns as the statements compresslab prints do (on one line). Its nine helpers become one
-- step function (the run's state machine in the library); the library keeps their C symbols,
-- each refusing with 55000 until this update has run. recompress_state: a role writes the
-- progress of a column it may update only (0.7.0: of any table it could update a column of),
-- and a run whose saved state does not fit its table starts over.
DROP POLICY recompress_state_own ON compresslab.recompress_state;
-- has_column_privilege of the column by its number, which the subquery gives as NULL once the
-- column (or its table) is gone: the privilege is then NULL, and the row no role's but a
-- superuser's (who bypasses the policies).
CREATE POLICY recompress_state_read ON compresslab.recompress_state FOR SELECT
    USING (pg_catalog.has_column_privilege(relid, (SELECT a.attnum FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) relid AND a.attname OPERATOR(pg_catalog.=) column_name
                          AND NOT a.attisdropped), 'SELECT'));
CREATE POLICY recompress_state_insert ON compresslab.recompress_state FOR INSERT
    WITH CHECK (pg_catalog.has_column_privilege(relid, (SELECT a.attnum FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) relid AND a.attname OPERATOR(pg_catalog.=) column_name
                          AND NOT a.attisdropped), 'UPDATE'));
CREATE POLICY recompress_state_update ON compresslab.recompress_state FOR UPDATE
    USING (pg_catalog.has_column_privilege(relid, (SELECT a.attnum FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) relid AND a.attname OPERATOR(pg_catalog.=) column_name
                          AND NOT a.attisdropped), 'UPDATE'))
    WITH CHECK (pg_catalog.has_column_privilege(relid, (SELECT a.attnum FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) relid AND a.attname OPERATOR(pg_catalog.=) column_name
                          AND NOT a.attisdropped), 'UPDATE'));
CREATE POLICY recompress_state_delete ON compresslab.recompress_state FOR DELETE
    USING (pg_catalog.has_column_privilege(relid, (SELECT a.attnum FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) relid AND a.attname OPERATOR(pg_catalog.=) column_name
                          AND NOT a.attisdropped), 'UPDATE'));
DROP FUNCTION compresslab.recompress_prepare(pg_catalog.regclass, text, text, integer, text, interval, text, boolean);
DROP FUNCTION compresslab.recompress_batch(pg_catalog.regclass, text, text, bigint, integer, bigint, boolean);
DROP FUNCTION compresslab.recompress_wanted(anyelement, pg_catalog.tid);
DROP FUNCTION compresslab.recompress_copy(anyelement);
DROP FUNCTION compresslab.recompress_copied();
DROP FUNCTION compresslab.recompress_next_xid(boolean);
DROP FUNCTION compresslab.recompress_pause(bigint, double precision, double precision);
DROP FUNCTION compresslab.recompress_estimate(bigint, bigint, double precision);
DROP FUNCTION compresslab.fresh_copy(anyelement);
CREATE FUNCTION compresslab."recompress_step"(
	"run" bigint,
	"relation" regclass,
	"column_name" TEXT,
	"method" TEXT,
	"batch_rows" INT,
	"max_wal_rate" TEXT,
	"max_replay_lag" interval,
	"lock_timeout" interval,
	"triggers" TEXT,
	"dry_run" bool
) RETURNS bigint
VOLATILE PARALLEL UNSAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'recompress_step_wrapper';
-- The values row-level security hides from the owner, counted (FORCE ROW LEVEL SECURITY).
ALTER TABLE compresslab.recompress_state ADD COLUMN rows_hidden pg_catalog.int8 NOT NULL DEFAULT 0;
CREATE OR REPLACE VIEW compresslab.recompress_progress WITH (security_invoker = true) AS
SELECT s.relid::pg_catalog.regclass AS relation,
       s.column_name AS "column",
       s.method,
       CASE WHEN s.state OPERATOR(pg_catalog.=) 'done' AND s.rows_hidden OPERATOR(pg_catalog.>) 0
                 THEN 'done but for rows_hidden: rows row-level security hides from the table''s owner'
            WHEN s.state OPERATOR(pg_catalog.=) 'done' THEN 'done'
            WHEN EXISTS (SELECT FROM pg_catalog.pg_stat_activity a
                          WHERE a.pid OPERATOR(pg_catalog.=) s.pid
                            AND a.state IS DISTINCT FROM 'idle'
                            AND a.state IS DISTINCT FROM 'idle in transaction (aborted)') THEN 'running'
            ELSE 'stopped: CALL it again to go on' END AS state,
       s.pass,
       s.next_block AS blocks_done,
       s.total_blocks,
       s.rows_examined,
       s.rows_rewritten,
       s.rows_skipped,
       s.bytes_before,
       s.bytes_after,
       s.wal_bytes,
       CASE WHEN s.run_seconds OPERATOR(pg_catalog.>) 0
            THEN pg_catalog.round((s.rows_rewritten::pg_catalog.float8 OPERATOR(pg_catalog./) s.run_seconds)::pg_catalog.numeric, 1) END
           AS rows_per_second,
       CASE WHEN s.run_seconds OPERATOR(pg_catalog.>) 0
            THEN pg_catalog.round(s.wal_bytes::pg_catalog.float8 OPERATOR(pg_catalog./) s.run_seconds)::pg_catalog.int8 END
           AS wal_bytes_per_second,
       CASE WHEN s.state OPERATOR(pg_catalog.<>) 'done' AND s.pass OPERATOR(pg_catalog.=) 1
                 AND s.next_block OPERATOR(pg_catalog.>) 0 AND s.run_seconds OPERATOR(pg_catalog.>) 0
            THEN pg_catalog.make_interval(secs => pg_catalog.round((s.run_seconds
                      OPERATOR(pg_catalog.*) (s.total_blocks OPERATOR(pg_catalog.-) s.next_block)
                      OPERATOR(pg_catalog./) s.next_block)::pg_catalog.numeric)::pg_catalog.float8) END AS eta,
       s.started,
       s.updated,
       s.rows_hidden
  FROM compresslab.recompress_state s;
COMMENT ON VIEW compresslab.recompress_progress IS
'compresslab.recompress runs: where each stands (blocks of the current pass, rows rewritten and skipped, stored bytes before and after, WAL written, rate, time left of the first pass, values left in rows the owner''s row-level security hides), for the columns you may read';
CREATE OR REPLACE PROCEDURE compresslab.recompress(
    relation pg_catalog.regclass,
    column_name pg_catalog.name,
    method pg_catalog.text DEFAULT NULL,
    batch_rows pg_catalog.int4 DEFAULT 1000,
    max_wal_rate pg_catalog.text DEFAULT NULL,
    max_replay_lag pg_catalog.interval DEFAULT NULL,
    lock_timeout pg_catalog.interval DEFAULT '1 s',
    triggers pg_catalog.text DEFAULT 'refuse',
    dry_run pg_catalog.bool DEFAULT false
) LANGUAGE plpgsql SECURITY INVOKER AS $recompress$
#variable_conflict use_variable
DECLARE
    run pg_catalog.int8;
BEGIN
    -- The first step checks the call and plans it (a dry run does all its work there); each
    -- later one is one step of the run (an ALTER TABLE, a batch, ...) that this COMMIT keeps.
    -- Outside a transaction block only: the first COMMIT fails there, before any change.
    LOOP
        run := compresslab.recompress_step(run, relation, column_name, method, batch_rows, max_wal_rate,
                                           max_replay_lag, lock_timeout, triggers, dry_run);
        EXIT WHEN run IS NULL;
        COMMIT;
    END LOOP;
END
$recompress$;
-- svg_stored_chart: columns' stored bytes under each method with their intervals (the report's
-- second chart).
CREATE FUNCTION compresslab."svg_stored_chart"(
	"results" jsonb,
	"title" TEXT DEFAULT 'stored bytes per column and method'
) RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'svg_stored_chart_wrapper';
