-- The report's WAL what-if section, run by scripts/report.sh in the database `whatif` after the
-- same pgbench run was made under each wal_compression setting (their ranges in whatif_runs).
-- Prints Markdown to standard output, which report.sh appends to results/report.md.
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
\qecho
\qecho '## WAL what-if: one pgbench run replayed under every wal_compression setting'
\qecho
\qecho 'The same run — `pgbench -i -s 2` with uuid text filler, `VACUUM`, `CHECKPOINT`, then `pgbench -n -c 1 -t 3000 --random-seed 7` with autovacuum off — made once under each setting, from the same starting state. Measured: the run''s WAL bytes (insert LSN after minus before) and pg_walinspect''s `fpi_length`. Predicted: `compresslab.wal_whatif()` over the `off` run''s range, and `off` predicted from the `zstd` run''s range.'
\qecho
CREATE TEMP TABLE measured AS
SELECT r.setting, r.end_lsn - r.start_lsn AS wal_bytes,
       (SELECT sum(fpi_length) FROM pg_get_wal_records_info(r.start_lsn, r.end_lsn)) AS fpi_bytes
  FROM whatif_runs r;
SELECT clock_timestamp() AS whatif_t0 \gset
CREATE TEMP TABLE predicted AS
SELECT r.setting AS run, w.* FROM whatif_runs r, compresslab.wal_whatif(r.start_lsn, r.end_lsn) w;
SELECT extract(epoch FROM clock_timestamp() - :'whatif_t0') AS whatif_seconds,
       (SELECT sum(wal_bytes) FROM measured) AS whatif_bytes \gset
\qecho '```'
SELECT p.run AS predicted_from, m.setting AS wal_compression,
       m.wal_bytes AS measured_wal_bytes, p.wal_bytes AS predicted_wal_bytes,
       round(100.0 * (p.wal_bytes - m.wal_bytes) / m.wal_bytes, 3) AS wal_error_percent,
       m.fpi_bytes AS measured_fpi_bytes, p.fpi_bytes AS predicted_fpi_bytes,
       round(100.0 * (p.fpi_bytes - m.fpi_bytes) / m.fpi_bytes, 3) AS fpi_error_percent
  FROM measured m JOIN predicted p ON p.wal_compression = m.setting
 WHERE p.run = 'off' OR (p.run = 'zstd' AND m.setting = 'off')
 ORDER BY p.run, array_position(ARRAY['off','pglz','lz4','zstd'], m.setting);
\qecho '```'
\qecho
\qecho 'Each run replayed under the setting it was written with gives back the server''s own figures exactly:'
\qecho
\qecho '```'
SELECT m.setting AS run, p.wal_bytes = m.wal_bytes AS exact_wal_bytes, p.fpi_bytes = m.fpi_bytes AS exact_fpi_bytes
  FROM measured m JOIN predicted p ON p.run = m.setting AND p.wal_compression = m.setting
 ORDER BY array_position(ARRAY['off','pglz','lz4','zstd'], m.setting);
\qecho '```'
\qecho
\qecho 'The `off` run under each setting (CPU: the server''s own pglz, liblz4 and libzstd on these images; compress = writing the WAL, decompress = replaying it):'
\qecho
\qecho '```'
SELECT wal_compression, records, fpi_images, compressed_images, stored_images, fpi_bytes, wal_bytes,
       round(saving_percent::numeric, 1) AS saving_percent,
       round((1e3 * compress_cpu_seconds)::numeric, 1) AS compress_cpu_ms,
       round((1e3 * decompress_cpu_seconds)::numeric, 1) AS decompress_cpu_ms
  FROM predicted WHERE run = 'off' ORDER BY array_position(ARRAY['off','pglz','lz4','zstd'], wal_compression);
\qecho '```'
\qecho
\qecho 'Which relations wrote the full-page images (the `zstd` run, whose tables still exist):'
\qecho
\qecho '```'
SELECT b.relation, b.fork, b.wal_compression, b.fpi_images, b.fpi_bytes, round(b.saving_percent::numeric, 1) AS saving_percent
  FROM whatif_runs r, compresslab.wal_whatif_by_relation(r.start_lsn, r.end_lsn) b
 WHERE r.setting = 'zstd'
 ORDER BY max(b.fpi_bytes) OVER (PARTITION BY b.relation, b.fork) DESC, b.relation, b.fork,
          array_position(ARRAY['off','pglz','lz4','zstd'], b.wal_compression);
\qecho '```'
\qecho
SELECT format('Reading the four runs'' %s of WAL and replaying every image under every setting took %s s (%s MB/s of WAL).',
              pg_size_pretty(:whatif_bytes::bigint), round(:whatif_seconds::numeric, 2),
              round((:whatif_bytes / 1048576.0 / :whatif_seconds)::numeric, 1)) AS whatif_speed \gset
\qecho :whatif_speed
