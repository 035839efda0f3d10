-- The functions that only read assign no transaction ID: a standby refuses one ("cannot assign
-- TransactionIds during recovery"), and so does the leader of a parallel query ("cannot assign
-- XIDs during a parallel operation"). Each call below runs beside a parallel aggregate (the
-- plans are forced parallel), then in a transaction that must still have no ID.
CREATE EXTENSION compresslab;
CREATE TABLE ev (id int, body text);
INSERT INTO ev SELECT i, repeat(md5(i::text), 100) FROM generate_series(1, 2000) i;
CREATE TABLE big AS SELECT i FROM generate_series(1, 100000) i;
ANALYZE ev, big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE FUNCTION plan_has_gather(query text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%Gather%' THEN RETURN true; END IF;
    END LOOP;
    RETURN false;
END $$;
-- the shape that failed: a function scan beside a parallel InitPlan
SELECT plan_has_gather($q$SELECT e.method, (SELECT sum(i) FROM big) FROM compresslab.estimate_toast_compression('ev', 'body') e$q$);
SELECT e.method, (SELECT sum(i) FROM big) AS beside
  FROM compresslab.estimate_toast_compression('ev', 'body', 200) e ORDER BY 1;
SELECT count(*) > 0 AS rows, (SELECT sum(i) FROM big) AS beside
  FROM compresslab.bench_column('ev', 'body', ARRAY['pglz', 'lz4'], sample_values => 50) b;
SELECT count(*) > 0 AS rows, (SELECT sum(i) FROM big) AS beside FROM compresslab.advise('1 s');
SELECT compresslab.version() = extversion AS version, (SELECT sum(i) FROM big) AS beside
  FROM pg_extension WHERE extname = 'compresslab';
-- and none of them took a transaction ID
BEGIN;
SELECT count(*) > 0 AS rows FROM compresslab.estimate_toast_compression('ev', 'body', 200);
SELECT count(*) > 0 AS rows FROM compresslab.bench_column('ev', 'body', ARRAY['pglz'], sample_values => 50);
SELECT count(*) > 0 AS rows FROM compresslab.advise('1 s');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_transaction_id;
ROLLBACK;
