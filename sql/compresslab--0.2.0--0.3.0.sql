-- compresslab 0.2.0 -> 0.3.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.2.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.3.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.3.0'" to load this file. \quit

-- CPU seconds now come from the thread's CPU clock (nanoseconds), not getrusage (scheduler ticks).
COMMENT ON TYPE compresslab.bench_result IS 'One benchmark row: payload source, method and level, slice size; bytes in and out; median and best MB/s and median ns per uncompressed byte; wall and CPU (thread CPU clock) seconds of the timed iterations';

-- WAL what-if: the server's real WAL replayed under every wal_compression setting.
-- compresslab_core::scenarios::wal::WalWhatIfRow: wal_whatif.
CREATE TYPE compresslab.wal_whatif_row AS (
    wal_compression text, start_lsn text, end_lsn text, records bigint, fpi_images bigint,
    sampled_images bigint, compressed_images bigint, stored_images bigint, fpi_bytes bigint,
    wal_bytes bigint, saving_percent float8, compress_cpu_seconds float8, decompress_cpu_seconds float8
);
COMMENT ON TYPE compresslab.wal_whatif_row IS 'A range of WAL under one wal_compression setting: records, full-page images (sampled, that would be compressed, really stored this way), image bytes (fpi_length), WAL bytes as laid out, saving against off, CPU seconds to compress (write) and decompress (replay) the images';

-- compresslab_core::scenarios::wal::WalWhatIfRelationRow: wal_whatif_by_relation.
CREATE TYPE compresslab.wal_whatif_relation_row AS (
    relation text, fork text, wal_compression text, fpi_images bigint, fpi_bytes bigint, saving_percent float8
);
COMMENT ON TYPE compresslab.wal_whatif_relation_row IS 'One relation fork''s full-page images in a range of WAL under one wal_compression setting: images, image bytes, saving against off';

CREATE FUNCTION compresslab."wal_whatif"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0
) RETURNS SETOF compresslab.wal_whatif_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision) IS
'What the WAL from start_lsn (default: the oldest in pg_wal) to end_lsn (default: the flush LSN) would take under each wal_compression setting, with the CPU to write and replay its full-page images; sample < 1 compresses that fraction of the images';

CREATE FUNCTION compresslab."wal_whatif_by_relation"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0
) RETURNS SETOF compresslab.wal_whatif_relation_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_by_relation_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif_by_relation(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision) IS
'wal_whatif per relation fork: full-page images and their bytes under each wal_compression setting, largest first';

-- The advisor.
-- compresslab_core::advisor::AdviceRow: advise.
CREATE TYPE compresslab.advice AS (
    area text, target text, current text, recommended text, bytes_now bigint, bytes_recommended bigint,
    saving_percent float8, compress_cpu_seconds_per_day float8, decompress_cpu_seconds_per_day float8,
    compress_cpu_seconds_per_gb float8, decompress_cpu_seconds_per_gb float8, basis text, confidence text,
    apply_sql text, note text
);
COMMENT ON TYPE compresslab.advice IS 'One decision of advise(): area (wal_compression, toast, spill), target, the setting in force and the one to use, bytes now and then (per day for WAL and spill, in total for a column), saving, CPU per day and per GB, what was measured, confidence, the statement that applies it, and why';

CREATE FUNCTION compresslab."advise"(
    "budget" interval DEFAULT '30 s',
    "wal_since" pg_catalog.pg_lsn DEFAULT NULL
) RETURNS SETOF compresslab.advice
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'advise_wrapper';
COMMENT ON FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn) IS
'Should this server change wal_compression or a column''s TOAST compression? One row per decision, measured within the budget on this server''s WAL (from wal_since, default the oldest in pg_wal) and the tables the caller may read, with the statement that applies it';
