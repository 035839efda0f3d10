-- One round of the full-page-image validation under wal_compression = :setting.
DROP TABLE IF EXISTS fpw;
CREATE TABLE fpw (id int, filler text) WITH (fillfactor = 60, autovacuum_enabled = off);
INSERT INTO fpw SELECT i, md5(i::text) || ' ' || repeat(chr(65 + i % 26), 20 + i % 40) || ' ' || (i * 7919 % 100003)
  FROM generate_series(1, 30000) i;
-- Hint bits set before the checkpoint: with data checksums (on by default from PostgreSQL 18)
-- setting them after it would write each page's image then (XLOG_FPI_FOR_HINT, the page
-- before the update) instead of with the update (the page as it stays).
SELECT count(*) AS hinted FROM fpw \gset
SET wal_compression = :'setting';
CHECKPOINT;
SELECT pg_current_wal_lsn() AS start_lsn \gset
UPDATE fpw SET id = id WHERE ctid IN (SELECT min(ctid) FROM fpw GROUP BY (ctid::text::point)[0]);
SELECT pg_current_wal_lsn() AS end_lsn \gset
INSERT INTO validation
SELECT :'setting', pg_relation_size('fpw') / 8192,
       count(*) FILTER (WHERE fpi_length > 0), coalesce(sum(fpi_length), 0),
       e.images, e.stored_bytes
  FROM pg_get_wal_records_info(:'start_lsn', :'end_lsn') w,
       compresslab.estimate_wal_compression('fpw', sample_pages => NULL) e
 WHERE e.wal_compression = :'setting'
   AND w.block_ref LIKE '%/' || pg_relation_filenode('fpw') || ' %'
 GROUP BY e.images, e.stored_bytes;
RESET wal_compression;
