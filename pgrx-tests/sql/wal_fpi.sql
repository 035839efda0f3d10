-- Validation of estimate_wal_compression against the real server. Under each wal_compression
-- setting the same table is built afresh, a checkpoint taken, and one fixed workload run: one
-- HOT update per page, so each page is modified exactly once (no earlier dead tuples, so no
-- pruning) and the full-page image is the page as it stays. The image bytes the server wrote
-- for the table (pg_walinspect's fpi_length) are compared with the estimate for its pages.
CREATE EXTENSION compresslab;
CREATE EXTENSION pg_walinspect;
CREATE TEMP TABLE validation (wal_compression text, pages int, measured_images bigint, measured_bytes bigint,
                              predicted_images bigint, predicted_bytes bigint);
\set setting off
\ir include/fpi_round.sql
\set setting pglz
\ir include/fpi_round.sql
\set setting lz4
\ir include/fpi_round.sql
\set setting zstd
\ir include/fpi_round.sql
-- every page gave one image, and the predicted bytes are within 10% (in fact far closer)
SELECT wal_compression, measured_images = pages AS one_image_per_page, predicted_images = measured_images AS same_images,
       abs(predicted_bytes - measured_bytes)::float8 / measured_bytes < 0.10 AS within_10_percent,
       abs(predicted_bytes - measured_bytes)::float8 / measured_bytes < 0.01 AS within_1_percent
  FROM validation ORDER BY wal_compression;
-- compression paid off on this table, in the order the thread found (lz4/zstd beat pglz)
SELECT (SELECT measured_bytes FROM validation WHERE wal_compression = 'off') >
       (SELECT measured_bytes FROM validation WHERE wal_compression = 'pglz') AS pglz_saves,
       (SELECT measured_bytes FROM validation WHERE wal_compression = 'zstd') <
       (SELECT measured_bytes FROM validation WHERE wal_compression = 'pglz') AS zstd_beats_pglz;
-- a database-wide estimate is superuser-only; a relation estimate needs SELECT on it
SELECT count(*) AS settings FROM compresslab.estimate_wal_compression();
CREATE ROLE fpi_user;
GRANT USAGE ON SCHEMA compresslab TO fpi_user;
SET ROLE fpi_user;
SELECT * FROM compresslab.estimate_wal_compression();
SELECT * FROM compresslab.estimate_wal_compression('fpw');
RESET ROLE;
GRANT SELECT ON fpw TO fpi_user;
SET ROLE fpi_user;
SELECT wal_compression, images > 0 AS has_images FROM compresslab.estimate_wal_compression('fpw');
RESET ROLE;
DROP OWNED BY fpi_user;
DROP ROLE fpi_user;
-- a sampled estimate scales to the whole relation
SELECT e.wal_compression, s.images = e.images AS same_image_count,
       abs(s.stored_bytes - e.stored_bytes)::float8 / e.stored_bytes < 0.15 AS sample_close
  FROM compresslab.estimate_wal_compression('fpw', sample_pages => NULL) e
  JOIN compresslab.estimate_wal_compression('fpw', sample_pages => 100, seed => 1) s USING (wal_compression)
 ORDER BY 1;
