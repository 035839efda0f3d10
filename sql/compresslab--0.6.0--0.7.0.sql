-- compresslab 0.6.0 -> 0.7.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.6.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.7.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.7.0'" to load this file. \quit

-- ==== sampling (samples of the whole table with 95% intervals): begin ====
-- compresslab.advice gains the 95% intervals of a column's bytes now and recommended. The type
-- can only be dropped once the function returning it is; a user's view or function on advise()
-- stops the update with an ERROR naming it (drop it, update, create it again).
DROP FUNCTION compresslab.advise(interval, pg_catalog.pg_lsn, text, boolean);
DROP TYPE compresslab.advice;
CREATE TYPE compresslab.advice AS (
    area text, target text, current text, recommended text, bytes_now bigint, bytes_recommended bigint,
    bytes_now_low bigint, bytes_now_high bigint, bytes_recommended_low bigint, bytes_recommended_high bigint,
    observed_period interval, bytes_per_day_now bigint, bytes_per_day_recommended bigint,
    saving_percent float8, compress_cpu_seconds_per_day float8, decompress_cpu_seconds_per_day float8,
    compress_cpu_seconds_per_gb float8, decompress_cpu_seconds_per_gb float8, basis text, confidence text,
    apply_sql text, note text
);
COMMENT ON TYPE compresslab.advice IS 'One decision of advise(): area (wal_compression, toast, spill), target, the setting in force and the one to use; bytes now and then (a column: stored in total; WAL and spill: over observed_period, as measured and as predicted), a column''s 95% intervals of both from its block sample, observed_period (WAL and spill), the same bytes per day (WAL and spill), saving, CPU per day and per GB, what was measured, confidence, the statement that applies it, and why';
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
-- ==== sampling: end ====
