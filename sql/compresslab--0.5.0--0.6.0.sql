-- compresslab 0.5.0 -> 0.6.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.5.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.6.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.6.0'" to load this file. \quit

-- ==== labapi (issue 30 "Versions" and "API"): begin ====
-- bench_result: decompression figures NULL where every slice was stored raw (no type change),
-- and the busy flag (wall time over 1.5 times CPU time).
ALTER TYPE compresslab.bench_result ADD ATTRIBUTE busy boolean;
COMMENT ON TYPE compresslab.bench_result IS 'One benchmark row: payload source, method and level, slice size; bytes in and out; median and best MB/s and median ns per uncompressed byte (decompression: NULL where every slice was stored raw); wall and CPU (thread CPU clock) seconds of the timed iterations; busy: wall time over 1.5 times CPU time';

-- bench_file: "offset" (a reserved word) and "length" renamed start_byte and byte_count. An
-- argument's name cannot change in place, and an overload with the old names would have the
-- same argument types: calls naming offset or length break (CHANGELOG), positional calls work.
DROP FUNCTION compresslab.bench_file(text, text[], int[], int, bigint, bigint);
CREATE FUNCTION compresslab."bench_file"(
    "path" TEXT,
    "methods" TEXT[] DEFAULT NULL,
    "slice_sizes" INT[] DEFAULT NULL,
    "iterations" INT DEFAULT NULL,
    "start_byte" bigint DEFAULT 0,
    "byte_count" bigint DEFAULT NULL
) RETURNS SETOF compresslab.bench_result
VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'bench_file_wrapper';

-- methods(): the library each method runs (STABLE: it asks the server for versions).
DROP FUNCTION compresslab.methods();
CREATE FUNCTION compresslab."methods"() RETURNS TABLE (
    "method" TEXT,
    "family" TEXT,
    "server_code" bool,
    "min_level" INT,
    "max_level" INT,
    "description" TEXT,
    "library" TEXT
)
STABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'methods_wrapper';

-- versions(): compresslab's, its libzstd's and lz4_flex's, the server's liblz4 and libzstd,
-- PostgreSQL's.
CREATE FUNCTION compresslab."versions"() RETURNS TABLE (
    "component" TEXT,
    "version" TEXT,
    "detail" TEXT
)
STABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'versions_wrapper';
-- ==== labapi: end ====

-- ---- waldir (issue 30, "A day of WAL measured"): wal_whatif, wal_whatif_by_relation and
-- ---- advise take wal_dir, a directory of archived WAL segments to read instead of pg_wal.
DROP FUNCTION compresslab.wal_whatif(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision);
CREATE FUNCTION compresslab."wal_whatif"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0,
    "wal_dir" text DEFAULT NULL
) RETURNS SETOF compresslab.wal_whatif_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision, text) IS
'What the WAL from start_lsn (default: the oldest in pg_wal) to end_lsn (default: the flush LSN) would take under each wal_compression setting, with the CPU to write and replay its full-page images; sample < 1 compresses that fraction of the images; wal_dir reads the archived segments of that directory (by default all of them) instead of pg_wal';

DROP FUNCTION compresslab.wal_whatif_by_relation(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision);
CREATE FUNCTION compresslab."wal_whatif_by_relation"(
    "start_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "end_lsn" pg_catalog.pg_lsn DEFAULT NULL,
    "sample" double precision DEFAULT 1.0,
    "wal_dir" text DEFAULT NULL
) RETURNS SETOF compresslab.wal_whatif_relation_row
VOLATILE PARALLEL RESTRICTED
LANGUAGE c AS 'MODULE_PATHNAME', 'wal_whatif_by_relation_wrapper';
COMMENT ON FUNCTION compresslab.wal_whatif_by_relation(pg_catalog.pg_lsn, pg_catalog.pg_lsn, double precision, text) IS
'wal_whatif per relation fork: full-page images and their bytes under each wal_compression setting, largest first; wal_dir as for wal_whatif';

-- advise: wal_dir (archived WAL), verbose (every column its own row), and its result type
-- compresslab.advice with observed_period and bytes per day beside bytes_now (issue 30, "A
-- report a DBA reads at a glance"). The type can only be dropped once the function returning
-- it is.
DROP FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn);
DROP TYPE compresslab.advice;
CREATE TYPE compresslab.advice AS (
    area text, target text, current text, recommended text, bytes_now bigint, bytes_recommended bigint,
    observed_period interval, bytes_per_day_now bigint, bytes_per_day_recommended bigint,
    saving_percent float8, compress_cpu_seconds_per_day float8, decompress_cpu_seconds_per_day float8,
    compress_cpu_seconds_per_gb float8, decompress_cpu_seconds_per_gb float8, basis text, confidence text,
    apply_sql text, note text
);
COMMENT ON TYPE compresslab.advice IS 'One decision of advise(): area (wal_compression, toast, spill), target, the setting in force and the one to use; bytes now and then (a column: stored in total; WAL and spill: over observed_period, as measured and as predicted), observed_period (WAL and spill), the same bytes per day (WAL and spill), saving, CPU per day and per GB, what was measured, confidence, the statement that applies it, and why';
CREATE FUNCTION compresslab."advise"(
    "budget" interval DEFAULT '30 s',
    "wal_since" pg_catalog.pg_lsn DEFAULT NULL,
    "wal_dir" text DEFAULT NULL,
    "verbose" boolean DEFAULT false
) RETURNS SETOF compresslab.advice
VOLATILE PARALLEL UNSAFE
LANGUAGE c AS 'MODULE_PATHNAME', 'advise_wrapper';
COMMENT ON FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn, text, boolean) IS
'Should this server change wal_compression or a column''s TOAST compression? One row per decision, measured within the budget on this server''s WAL (from wal_since, default the oldest in pg_wal, or in the archived segments of wal_dir) and the tables the caller may read, with the statement that applies it; columns storing under 1 MB each are one row unless verbose';
-- ---- end of waldir
