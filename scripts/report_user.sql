-- The report on the user's own database (scripts/report.sh --dbname ...): what its WAL would
-- take under each wal_compression setting, which relations write the full-page images, and
-- the lab on page images of its largest tables. Reads only; creates nothing but temporary
-- tables. Prints Markdown to standard output.
\set ON_ERROR_STOP 1
-- Only pg_catalog's operators, functions and types, whatever the role's or database's search_path
-- says: a schema another role owns must not run its code as the DBA (temporary tables last).
SET search_path = pg_catalog, pg_temp;
\pset footer off
SET client_min_messages = warning;
SET compresslab.bench_iterations = 5;
\qecho '## Versions'
\qecho
\qecho 'compresslab, the libraries it runs and those of the server (compresslab.versions()).'
\qecho
\qecho '```'
SELECT component, version, detail FROM compresslab.versions();
\qecho '```'
\qecho
SELECT rolsuper OR pg_has_role('pg_read_server_files', 'MEMBER') AS may_read_wal FROM pg_roles WHERE rolname = current_user \gset
\if :may_read_wal
\qecho '## WAL what-if: the WAL in pg_wal under every wal_compression setting'
\qecho
\qecho 'From the oldest WAL still in pg_wal to the flush LSN; images sampled one in ten.'
\qecho
\qecho '```'
SELECT wal_compression, start_lsn, end_lsn, records, fpi_images, sampled_images, compressed_images, stored_images,
       pg_size_pretty(fpi_bytes) AS fpi_bytes, pg_size_pretty(wal_bytes) AS wal_bytes,
       round(saving_percent::numeric, 1) AS saving_percent, round(compress_cpu_seconds::numeric, 3) AS compress_cpu_s,
       round(decompress_cpu_seconds::numeric, 3) AS decompress_cpu_s
  FROM compresslab.wal_whatif(sample => 0.1);
\qecho '```'
\qecho
\qecho 'The relations of this database writing the most full-page images (top 10), the system catalogs'' (pg_catalog, information_schema and their TOAST tables) summed in one line per setting; WAL is the cluster''s, so other databases'' images follow, one line per database and setting:'
\qecho
-- A catalog: in pg_catalog or information_schema, or a TOAST table of an OID below
-- FirstNormalObjectId (16384), which only initdb assigns.
CREATE TEMP TABLE by_relation AS
SELECT b.*, split_part(b.relation, '.', 1) IN ('pg_catalog', 'information_schema')
            OR coalesce(substring(b.relation FROM '^pg_toast\.pg_toast_([0-9]+)$')::bigint < 16384, false) AS catalog
  FROM compresslab.wal_whatif_by_relation(sample => 0.1) b;
\qecho '```'
WITH here AS (SELECT * FROM by_relation WHERE relation NOT LIKE '(database %' AND NOT catalog),
     top AS (SELECT relation, fork FROM here WHERE wal_compression = 'off' ORDER BY fpi_bytes DESC LIMIT 10)
SELECT relation, fork, wal_compression, fpi_images, pg_size_pretty(fpi_bytes) AS fpi_bytes, round(saving_percent::numeric, 1) AS saving_percent
  FROM here WHERE (relation, fork) IN (SELECT relation, fork FROM top)
 ORDER BY max(fpi_bytes) OVER (PARTITION BY relation, fork) DESC, relation, fork,
          array_position(ARRAY['off','pglz','lz4','zstd'], wal_compression);
SELECT 'system catalogs' AS relation, wal_compression, sum(fpi_images) AS fpi_images, pg_size_pretty(sum(fpi_bytes)) AS fpi_bytes
  FROM by_relation WHERE catalog
 GROUP BY 2 ORDER BY array_position(ARRAY['off','pglz','lz4','zstd'], wal_compression);
SELECT substring(relation FROM '^\(database (.*), relfilenode [0-9]+\)$') AS other_database, wal_compression,
       sum(fpi_images) AS fpi_images, pg_size_pretty(sum(fpi_bytes)) AS fpi_bytes
  FROM by_relation WHERE relation LIKE '(database %'
 GROUP BY 1, 2 ORDER BY 1, array_position(ARRAY['off','pglz','lz4','zstd'], wal_compression);
\qecho '```'
\else
\qecho '## WAL what-if'
\qecho
\qecho 'Left out: reading WAL needs superuser or pg_read_server_files.'
\endif
\qecho
\qecho '## The lab: page images of the three largest tables you may read'
\qecho
\qecho 'A seeded sample of 256 pages of each, each page image (hole removed) compressed on its own as a full-page write would be; MB/s of uncompressed bytes, median (best). The chart `chart.svg` plots these rows, ratio against compression speed: one marker shape per table (`source`), one colour per method, each with its legend entry. These are the tables'' heap pages (what a full-page write stores); their TOAST values are the advice''s columns and `columns.svg`.'
\qecho
\qecho 'The `server_*` rows are the server''s own C routines (`pglz_compress`, and liblz4 and libzstd as PostgreSQL links them): what the server itself would spend compressing these pages; `pglz`, `lz4` and `zstd` are compresslab''s code on the same pages.'
\qecho
-- Only what this role may read whole: SELECT on the table, and no row-level security hiding
-- rows from it (page images hold every row, so bench_pages refuses those to all but a
-- superuser); what is left out is said below the table.
CREATE TEMP TABLE candidates AS
SELECT c.oid::regclass AS rel, pg_relation_size(c.oid) AS bytes,
       has_table_privilege(c.oid, 'SELECT') AND (NOT row_security_active(c.oid) OR rolsuper) AS readable
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, pg_roles r
 WHERE r.rolname = current_user AND c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
   AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_toast' AND pg_relation_size(c.oid) > 0;
CREATE TEMP TABLE largest AS SELECT rel FROM candidates WHERE readable ORDER BY bytes DESC LIMIT 3;
CREATE TEMP TABLE lab AS
SELECT r.* FROM largest l, compresslab.bench_pages(l.rel, ARRAY['server_pglz','pglz','server_lz4','lz4','server_zstd:1','server_zstd:3','zstd:9'],
                                                  ARRAY[0], sample_pages => 256, seed => 1) r;
\pset format unaligned
\pset tuples_only on
SELECT coalesce(compresslab.markdown(jsonb_agg(r ORDER BY r.source, r.compress_mbps DESC)), 'No table with data to sample.') FROM lab r;
SELECT format(E'\nLeft out: %s larger table(s) this role may not read whole (no SELECT, or row-level security hides rows from it).', count(*))
  FROM candidates WHERE NOT readable AND bytes > (SELECT coalesce(min(pg_relation_size(rel)), 0) FROM largest)
HAVING count(*) > 0;
-- The chart of the same rows, into the file named by the variable chart (report.sh sets it).
\if :{?chart}
\o :chart
SELECT compresslab.svg_chart(coalesce(jsonb_agg(r), '[]'), 'heap page images of ' || current_database() || '''s largest tables (TOAST values: columns.svg)') FROM lab r;
\o
\endif
\pset tuples_only off
\pset format aligned
