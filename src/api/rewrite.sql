-- compresslab.recompress: a column's stored values recompressed in place, online, batch by
-- batch, each batch its own transaction (src/api/rewrite.rs has the functions it calls).
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
    plan record;
    b record;
    st record;
    statement pg_catalog.text;
    leaf pg_catalog.oid;
    tries pg_catalog.int4;
    pass_end pg_catalog.int8;
    at_end pg_catalog.bool;
    finished pg_catalog.bool;
    began pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    mark pg_catalog.timestamptz;
    last_notice pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    wal_run pg_catalog.int8 := 0;
    pause pg_catalog.float8;
    cursor_block pg_catalog.int8;
    n_read pg_catalog.int8 := 0;
    round pg_catalog.int4 := 0;
    round_changes pg_catalog.int8;
    hidden pg_catalog.int8;
    n_rewritten pg_catalog.int8 := 0;
    n_skipped pg_catalog.int8 := 0;
    before_bytes pg_catalog.int8 := 0;
    after_bytes pg_catalog.int8 := 0;
    wal_estimate pg_catalog.int8 := 0;
    est record;
    pass_mark pg_catalog.int8;
    pass_batches pg_catalog.int8;
    quiet pg_catalog.bool;
BEGIN
    SELECT p.* INTO plan
      FROM compresslab.recompress_prepare(relation, column_name, method, batch_rows, max_wal_rate, max_replay_lag,
                                          lock_timeout, triggers, dry_run) p;
    IF dry_run THEN
        FOREACH leaf IN ARRAY plan.leaves LOOP
            cursor_block := 0;
            LOOP
                SELECT r.* INTO b FROM compresslab.recompress_batch(leaf, column_name, plan.method, cursor_block,
                                                                    batch_rows, plan.batch_bytes, true) r;
                n_read := n_read OPERATOR(pg_catalog.+) b.rows_examined;
                n_rewritten := n_rewritten OPERATOR(pg_catalog.+) b.rows_rewritten;
                before_bytes := before_bytes OPERATOR(pg_catalog.+) b.bytes_before;
                after_bytes := after_bytes OPERATOR(pg_catalog.+) b.bytes_after;
                wal_estimate := wal_estimate OPERATOR(pg_catalog.+) b.wal_bytes;
                cursor_block := b.next_block;
                EXIT WHEN cursor_block OPERATOR(pg_catalog.>=) b.total_blocks;
            END LOOP;
        END LOOP;
        SELECT e.* INTO est FROM compresslab.recompress_estimate(0, wal_estimate, plan.wal_rate) e;
        RAISE NOTICE 'compresslab.recompress dry run of %: % values read, % to rewrite, storing % now and % with % (TOAST''s own compression of each); about % of WAL (each new row version in full), about % s %',
            plan.target, n_read, n_rewritten, pg_catalog.pg_size_pretty(before_bytes),
            pg_catalog.pg_size_pretty(after_bytes), plan.method, pg_catalog.pg_size_pretty(est.wal_bytes),
            pg_catalog.ceil(est.seconds),
            CASE WHEN plan.wal_rate IS NULL THEN 'at full speed' ELSE 'at max_wal_rate ' OPERATOR(pg_catalog.||) max_wal_rate END;
        RETURN;
    END IF;
    -- Outside a transaction block only: each batch commits. (Fails here, before any change.)
    COMMIT;
    -- The column's method first, so that rows other sessions write from now on use it. Each
    -- ALTER TABLE waits at most lock_timeout for its ACCESS EXCLUSIVE lock, and is retried.
    FOREACH statement IN ARRAY plan.alter_statements LOOP
        tries := 0;
        LOOP
            BEGIN
                PERFORM pg_catalog.set_config('lock_timeout', plan.lock_timeout_ms::pg_catalog.text, true);
                EXECUTE statement;
                EXIT;
            EXCEPTION WHEN lock_not_available THEN
                tries := tries OPERATOR(pg_catalog.+) 1;
                IF tries OPERATOR(pg_catalog.>=) 10 THEN
                    RAISE EXCEPTION USING ERRCODE = 'lock_not_available',
                        MESSAGE = pg_catalog.format('compresslab.recompress: %s did not get its lock within lock_timeout (%s) in %s tries', statement, lock_timeout, tries),
                        HINT = 'A long transaction holds a lock on the table (see pg_locks); CALL again once it ends, or give a longer lock_timeout.';
                END IF;
                RAISE NOTICE 'compresslab.recompress: % waited lock_timeout (%) for its lock; trying again', statement, lock_timeout;
            END;
            PERFORM pg_catalog.pg_sleep(LEAST(tries, 5));
        END LOOP;
        COMMIT;
    END LOOP;
    -- Rounds over every table holding rows: with several, a row another session moved into one
    -- already done carries its old value with it, so rounds go on until one rewrites nothing
    -- (three at most).
    LOOP
        round := round OPERATOR(pg_catalog.+) 1;
        round_changes := n_rewritten OPERATOR(pg_catalog.+) n_skipped;
        FOREACH leaf IN ARRAY plan.leaves LOOP
            -- A later round reads the table again from its first block, its counts kept.
            IF round OPERATOR(pg_catalog.>) 1 THEN
                UPDATE compresslab.recompress_state s SET state = 'running', pass = 1, next_block = 0, pass_changes = 0
                 WHERE s.relid OPERATOR(pg_catalog.=) leaf AND s.column_name OPERATOR(pg_catalog.=) column_name;
            END IF;
            -- A finished run, or one with another method, starts over; so does one whose saved state
            -- does not fit the table (a pass past the third, a block past its end): any other goes on.
            DELETE FROM compresslab.recompress_state s
             WHERE s.relid OPERATOR(pg_catalog.=) leaf AND s.column_name OPERATOR(pg_catalog.=) column_name
               AND (s.state OPERATOR(pg_catalog.=) 'done' OR s.method OPERATOR(pg_catalog.<>) plan.method
                    OR s.pass OPERATOR(pg_catalog.<) 1 OR s.pass OPERATOR(pg_catalog.>) 3
                    OR s.next_block OPERATOR(pg_catalog.<) 0 OR s.pass_changes OPERATOR(pg_catalog.<) 0
                    OR s.next_block OPERATOR(pg_catalog.>) (pg_catalog.pg_relation_size(leaf)
                       OPERATOR(pg_catalog./) pg_catalog.current_setting('block_size')::pg_catalog.int8));
            INSERT INTO compresslab.recompress_state AS s
                (relid, column_name, method, state, pass, next_block, total_blocks, rows_examined, rows_rewritten,
                 rows_skipped, pass_changes, bytes_before, bytes_after, wal_bytes, run_seconds, pid, started, updated)
            VALUES (leaf, column_name, plan.method, 'running', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, pg_catalog.pg_backend_pid(),
                    pg_catalog.now(), pg_catalog.now())
            ON CONFLICT ON CONSTRAINT recompress_state_pkey DO UPDATE SET pid = EXCLUDED.pid, updated = EXCLUDED.updated;
            COMMIT;
            mark := pg_catalog.clock_timestamp();
            -- A pass that begins in this CALL with no transaction holding an ID notes the next one.
            pass_mark := CASE WHEN (SELECT s.next_block FROM compresslab.recompress_state s
                                     WHERE s.relid OPERATOR(pg_catalog.=) leaf
                                       AND s.column_name OPERATOR(pg_catalog.=) column_name) OPERATOR(pg_catalog.=) 0
                              THEN compresslab.recompress_next_xid(true) END;
            pass_batches := 0;
            LOOP
                WHILE max_replay_lag IS NOT NULL AND EXISTS (
                        SELECT FROM pg_catalog.pg_stat_replication r WHERE r.replay_lag OPERATOR(pg_catalog.>) max_replay_lag) LOOP
                    IF pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) last_notice OPERATOR(pg_catalog.>) '5 s'::pg_catalog.interval THEN
                        RAISE NOTICE 'compresslab.recompress: paused while a standby replays more than % behind', max_replay_lag;
                        last_notice := pg_catalog.clock_timestamp();
                    END IF;
                    PERFORM pg_catalog.pg_sleep(0.5);
                END LOOP;
                IF triggers OPERATOR(pg_catalog.=) 'skip' THEN
                    PERFORM pg_catalog.set_config('session_replication_role', 'replica', true);
                END IF;
                SELECT s.* INTO st FROM compresslab.recompress_state s
                 WHERE s.relid OPERATOR(pg_catalog.=) leaf AND s.column_name OPERATOR(pg_catalog.=) column_name FOR UPDATE;
                SELECT r.* INTO b FROM compresslab.recompress_batch(leaf, column_name, plan.method, st.next_block, batch_rows,
                                                                    plan.batch_bytes, false) r;
                -- A pass ends at the block the table ended at when it began (the rows it rewrites
                -- land after it); another follows while the last one rewrote or skipped rows
                -- (other sessions may have moved rows behind it), three at most; none if the pass
                -- began in this CALL and no transaction but its batches (one ID each) took a
                -- transaction ID since: no other session wrote the table meanwhile.
                pass_batches := pass_batches OPERATOR(pg_catalog.+) 1;
                pass_end := CASE WHEN st.next_block OPERATOR(pg_catalog.=) 0 OR st.total_blocks OPERATOR(pg_catalog.=) 0
                                 THEN b.total_blocks ELSE LEAST(st.total_blocks, b.total_blocks) END;
                at_end := b.next_block OPERATOR(pg_catalog.>=) pass_end;
                quiet := at_end AND pass_mark IS NOT NULL
                         AND compresslab.recompress_next_xid(false) OPERATOR(pg_catalog.=) (pass_mark OPERATOR(pg_catalog.+) pass_batches);
                finished := at_end AND (st.pass_changes OPERATOR(pg_catalog.+) b.rows_rewritten OPERATOR(pg_catalog.+) b.rows_skipped
                                        OPERATOR(pg_catalog.=) 0 OR st.pass OPERATOR(pg_catalog.>=) 3 OR quiet);
                UPDATE compresslab.recompress_state s SET
                    next_block = CASE WHEN at_end AND NOT finished THEN 0 ELSE LEAST(b.next_block, pass_end) END,
                    pass = s.pass OPERATOR(pg_catalog.+) CASE WHEN at_end AND NOT finished THEN 1 ELSE 0 END,
                    pass_changes = CASE WHEN at_end THEN 0
                                        ELSE s.pass_changes OPERATOR(pg_catalog.+) b.rows_rewritten OPERATOR(pg_catalog.+) b.rows_skipped END,
                    total_blocks = pass_end,
                    rows_examined = s.rows_examined OPERATOR(pg_catalog.+) b.rows_examined,
                    rows_rewritten = s.rows_rewritten OPERATOR(pg_catalog.+) b.rows_rewritten,
                    rows_skipped = s.rows_skipped OPERATOR(pg_catalog.+) b.rows_skipped,
                    bytes_before = s.bytes_before OPERATOR(pg_catalog.+) b.bytes_before,
                    bytes_after = s.bytes_after OPERATOR(pg_catalog.+) b.bytes_after,
                    wal_bytes = s.wal_bytes OPERATOR(pg_catalog.+) b.wal_bytes,
                    run_seconds = s.run_seconds OPERATOR(pg_catalog.+)
                                  pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) mark),
                    state = CASE WHEN finished THEN 'done' ELSE 'running' END,
                    pid = pg_catalog.pg_backend_pid(),
                    updated = pg_catalog.clock_timestamp()
                 WHERE s.relid OPERATOR(pg_catalog.=) leaf AND s.column_name OPERATOR(pg_catalog.=) column_name;
                COMMIT;
                mark := pg_catalog.clock_timestamp();
                IF at_end AND NOT finished THEN
                    pass_mark := compresslab.recompress_next_xid(true);
                    pass_batches := 0;
                END IF;
                wal_run := wal_run OPERATOR(pg_catalog.+) b.wal_bytes;
                n_read := n_read OPERATOR(pg_catalog.+) b.rows_examined;
                n_rewritten := n_rewritten OPERATOR(pg_catalog.+) b.rows_rewritten;
                n_skipped := n_skipped OPERATOR(pg_catalog.+) b.rows_skipped;
                before_bytes := before_bytes OPERATOR(pg_catalog.+) b.bytes_before;
                after_bytes := after_bytes OPERATOR(pg_catalog.+) b.bytes_after;
                EXIT WHEN finished;
                IF pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) last_notice OPERATOR(pg_catalog.>) '5 s'::pg_catalog.interval THEN
                    RAISE NOTICE 'compresslab.recompress: %: pass %, block % of %; this call: % rows rewritten (% skipped: changed meanwhile), % stored before, % after, % of WAL',
                        plan.leaf_targets[pg_catalog.array_position(plan.leaves, leaf)], st.pass, b.next_block, pass_end,
                        n_rewritten, n_skipped, pg_catalog.pg_size_pretty(before_bytes), pg_catalog.pg_size_pretty(after_bytes),
                        pg_catalog.pg_size_pretty(wal_run);
                    last_notice := pg_catalog.clock_timestamp();
                END IF;
                IF plan.wal_rate IS NOT NULL THEN
                    pause := compresslab.recompress_pause(wal_run,
                        pg_catalog.date_part('epoch', pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) began), plan.wal_rate);
                    IF pause OPERATOR(pg_catalog.>) 0 THEN
                        PERFORM pg_catalog.pg_sleep(pause);
                    END IF;
                END IF;
            END LOOP;
        END LOOP;
        round_changes := n_rewritten OPERATOR(pg_catalog.+) n_skipped OPERATOR(pg_catalog.-) round_changes;
        EXIT WHEN pg_catalog.cardinality(plan.leaves) OPERATOR(pg_catalog.<=) 1 OR round_changes OPERATOR(pg_catalog.=) 0
                  OR round OPERATOR(pg_catalog.>=) 3;
        RAISE NOTICE 'compresslab.recompress: %: round % rewrote % rows; another round over its % tables finds any row moved into one already done',
            plan.target, round, round_changes, pg_catalog.cardinality(plan.leaves);
    END LOOP;
    -- Under FORCE ROW LEVEL SECURITY the owner's own policies hide rows from the rewrite, which
    -- runs as the owner: what they leave is counted (a heap scan reads every row), not taken
    -- as done.
    FOREACH leaf IN ARRAY plan.leaves LOOP
        CONTINUE WHEN NOT (SELECT c.relrowsecurity AND c.relforcerowsecurity FROM pg_catalog.pg_class c
                            WHERE c.oid OPERATOR(pg_catalog.=) leaf);
        hidden := 0;
        cursor_block := 0;
        LOOP
            SELECT r.* INTO b FROM compresslab.recompress_batch(leaf, column_name, plan.method, cursor_block,
                                                                batch_rows, plan.batch_bytes, true) r;
            hidden := hidden OPERATOR(pg_catalog.+) b.rows_rewritten;
            cursor_block := b.next_block;
            EXIT WHEN cursor_block OPERATOR(pg_catalog.>=) b.total_blocks;
        END LOOP;
        UPDATE compresslab.recompress_state s SET rows_hidden = hidden
         WHERE s.relid OPERATOR(pg_catalog.=) leaf AND s.column_name OPERATOR(pg_catalog.=) column_name;
        COMMIT;
        IF hidden OPERATOR(pg_catalog.>) 0 THEN
            RAISE WARNING 'compresslab.recompress: %: % values left as they were, in rows the table owner''s row-level security policies hide from the rewrite (FORCE ROW LEVEL SECURITY) or written meanwhile',
                plan.leaf_targets[pg_catalog.array_position(plan.leaves, leaf)], hidden
                USING HINT = 'A role that bypasses row-level security sees them: ALTER TABLE ... NO FORCE ROW LEVEL SECURITY for the rewrite, or give the owner a policy that shows them.';
        END IF;
    END LOOP;
    RAISE NOTICE 'compresslab.recompress: % done: % rows read, % rewritten (% skipped: changed meanwhile, then picked up by a later pass), % stored before, % after, % of WAL. The old row versions stay as dead tuples until autovacuum or a VACUUM of the table removes them; plain VACUUM makes their space reusable without shrinking the files (VACUUM FULL does, under an ACCESS EXCLUSIVE lock).',
        plan.target, n_read, n_rewritten, n_skipped, pg_catalog.pg_size_pretty(before_bytes),
        pg_catalog.pg_size_pretty(after_bytes), pg_catalog.pg_size_pretty(wal_run);
END
$recompress$;
COMMENT ON PROCEDURE compresslab.recompress(pg_catalog.regclass, pg_catalog.name, pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.interval, pg_catalog.interval, pg_catalog.text, pg_catalog.bool) IS
'Recompress a column''s stored values with its method (or method): sets the column''s compression, then rewrites, in batches that each commit, the values a new write would store differently, each checked byte for byte; resumable; CALL it outside a transaction block; see compresslab.recompress_progress';
