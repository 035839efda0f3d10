-- WAL is the cluster's: wal_whatif_by_relation names a relation of another database by that
-- database (its name and the relfilenode: this session cannot look the relation up there),
-- and one of a database dropped since by its OID. Full-page images are written in a database
-- of its own after a checkpoint, then read from this one.
CREATE EXTENSION compresslab;
SELECT current_database() AS test_db \gset
-- the WAL read stays in pg_wal through the checkpoints below
ALTER SYSTEM SET wal_keep_size = '1GB';
SELECT pg_reload_conf() AS reloaded \gset
DROP DATABASE IF EXISTS whatif_elsewhere;
CREATE DATABASE whatif_elsewhere;
DROP DATABASE IF EXISTS whatif_gone;
CREATE DATABASE whatif_gone;
SELECT pg_current_wal_insert_lsn() AS other_start \gset
\c whatif_elsewhere
CREATE TABLE far (id int, body text);
INSERT INTO far SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 20000) g;
SELECT pg_relation_filenode('far') AS far_filenode \gset
CHECKPOINT;
UPDATE far SET body = upper(body);
\c whatif_gone
CREATE TABLE gone (id int, body text);
INSERT INTO gone SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 20000) g;
CHECKPOINT;
UPDATE gone SET body = upper(body);
\c :test_db
SELECT pg_current_wal_insert_lsn() AS other_end \gset
DROP DATABASE whatif_gone;
-- the images of the other database's table, named by database and relfilenode
SELECT relation = format('(database whatif_elsewhere, relfilenode %s)', :far_filenode) AS named_by_database,
       fork, fpi_images > 100 AS many_images
  FROM compresslab.wal_whatif_by_relation(:'other_start', :'other_end')
 WHERE wal_compression = 'off' AND relation LIKE '(database whatif_elsewhere,%' AND fork = 'main'
   AND fpi_images > 100;
-- and those of the dropped database's, by its OID
SELECT count(*) AS dropped_database_relations
  FROM compresslab.wal_whatif_by_relation(:'other_start', :'other_end')
 WHERE wal_compression = 'off' AND relation ~ '^\(database [0-9]+ \(dropped\), relfilenode [0-9]+\)$'
   AND fork = 'main' AND fpi_images > 100;
DROP DATABASE whatif_elsewhere;
ALTER SYSTEM RESET wal_keep_size;
SELECT pg_reload_conf() AS reloaded \gset
