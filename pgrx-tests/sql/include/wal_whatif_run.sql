-- One run of the WAL what-if workload under wal_compression = :'setting', from the same
-- starting state every time: a pgbench-like accounts table (100,000 rows, uuid text filler)
-- built afresh, a checkpoint, then 2,000 one-row update transactions in a fixed pseudo-random
-- order (the first touch of each page after the checkpoint writes its full-page image). The
-- run's WAL range (pg_current_wal_insert_lsn before and after) goes into whatif_runs.
-- Used by pgrx-tests/sql/wal_whatif.sql and scripts/report.sql.
SET wal_compression = :'setting';
DROP TABLE IF EXISTS whatif_accounts;
CREATE TABLE whatif_accounts (aid int PRIMARY KEY, bid int, abalance int, filler text)
  WITH (autovacuum_enabled = off);
INSERT INTO whatif_accounts
SELECT g, (g - 1) / 10000 + 1, 0, md5(g::text)::uuid::text || ' ' || md5((-g)::text)::uuid::text
  FROM generate_series(1, 100000) g;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS whatif_start \gset
DO $$
BEGIN
  FOR i IN 1..2000 LOOP
    UPDATE whatif_accounts SET abalance = abalance + i WHERE aid = (i * 7919) % 100000 + 1;
    COMMIT;
  END LOOP;
END $$;
SELECT pg_current_wal_insert_lsn() AS whatif_end \gset
INSERT INTO whatif_runs VALUES (:'setting', :'whatif_start', :'whatif_end');
RESET wal_compression;
