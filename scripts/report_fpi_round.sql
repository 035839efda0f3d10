-- One validation round of the report under wal_compression = :setting (see report.sql).
DROP TABLE IF EXISTS fpw;
CREATE TABLE fpw WITH (fillfactor = 90, autovacuum_enabled = off) AS SELECT * FROM pgbench_accounts WHERE aid <= 100000;
-- Hint bits set before the checkpoint: with data checksums (on by default from PostgreSQL 18)
-- setting them after it would write each page's image then (XLOG_FPI_FOR_HINT) instead of
-- with the update.
SELECT count(*) AS hinted FROM fpw \gset
SET wal_compression = :'setting';
CHECKPOINT;
SELECT pg_current_wal_lsn() AS start_lsn \gset
UPDATE fpw SET abalance = abalance + 1 WHERE ctid IN (SELECT min(ctid) FROM fpw GROUP BY (ctid::text::point)[0]);
SELECT pg_current_wal_lsn() AS end_lsn \gset
INSERT INTO fpi_validation
SELECT :'setting', count(*) FILTER (WHERE fpi_length > 0), coalesce(sum(fpi_length), 0), e.images, e.stored_bytes
  FROM pg_get_wal_records_info(:'start_lsn', :'end_lsn') w, compresslab.estimate_wal_compression('fpw', sample_pages => NULL) e
 WHERE e.wal_compression = :'setting' AND w.block_ref LIKE '%/' || pg_relation_filenode('fpw') || ' %'
 GROUP BY e.images, e.stored_bytes;
RESET wal_compression;
