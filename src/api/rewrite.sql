-- compresslab.recompress: a column's stored values recompressed in place, online, batch by
-- batch, each batch its own transaction (src/api/rewrite.rs has the step function it calls).
-- Progress is kept in recompress_state (one row per table holding rows, and column): a CALL
-- after a cancel, a crash or a restart goes on from the last batch committed. Each role sees
-- the rows of the columns it may read, and writes (inserts, updates, deletes) only those of the
-- columns it may update: a role that may not rewrite a column cannot move its run's progress.
CREATE TABLE compresslab.recompress_state (
    relid pg_catalog.oid NOT NULL,
    column_name pg_catalog.name NOT NULL,
    method pg_catalog.text NOT NULL,
    state pg_catalog.text NOT NULL,
    pass pg_catalog.int4 NOT NULL,
    next_block pg_catalog.int8 NOT NULL,
    total_blocks pg_catalog.int8 NOT NULL,
    rows_examined pg_catalog.int8 NOT NULL,
    rows_rewritten pg_catalog.int8 NOT NULL,
    rows_skipped pg_catalog.int8 NOT NULL,
    pass_changes pg_catalog.int8 NOT NULL,
    bytes_before pg_catalog.int8 NOT NULL,
    bytes_after pg_catalog.int8 NOT NULL,
    wal_bytes pg_catalog.int8 NOT NULL,
    run_seconds pg_catalog.float8 NOT NULL,
    pid pg_catalog.int4,
    started pg_catalog.timestamptz NOT NULL,
    updated pg_catalog.timestamptz NOT NULL,
    rows_hidden pg_catalog.int8 NOT NULL DEFAULT 0,
    CONSTRAINT recompress_state_pkey PRIMARY KEY (relid, column_name)
);
ALTER TABLE compresslab.recompress_state ENABLE ROW LEVEL SECURITY;
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
GRANT SELECT, INSERT, UPDATE, DELETE ON compresslab.recompress_state TO PUBLIC;
COMMENT ON TABLE compresslab.recompress_state IS
'Where each compresslab.recompress run stands (one row per table holding rows, and column); read it through compresslab.recompress_progress';

CREATE VIEW compresslab.recompress_progress WITH (security_invoker = true) AS
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
GRANT SELECT ON compresslab.recompress_progress TO PUBLIC;
COMMENT ON VIEW compresslab.recompress_progress IS
'compresslab.recompress runs: where each stands (blocks of the current pass, rows rewritten and skipped, stored bytes before and after, WAL written, rate, time left of the first pass, values left in rows the owner''s row-level security hides), for the columns you may read';

CREATE PROCEDURE compresslab.recompress(
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
COMMENT ON PROCEDURE compresslab.recompress(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.interval, pg_catalog.interval, pg_catalog.text, pg_catalog.bool) IS
'Recompress a column''s stored values with its method (or method): sets the column''s compression, then rewrites, in batches that each commit, the values a new write would store differently, each checked byte for byte; resumable; CALL it outside a transaction block; see compresslab.recompress_progress';
