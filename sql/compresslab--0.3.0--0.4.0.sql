-- compresslab 0.3.0 -> 0.4.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.3.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.4.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.4.0'" to load this file. \quit

-- The lab's loop against a bare lzbench-like loop over the same slices (issue 13).
CREATE FUNCTION compresslab."bench_overhead"(
    "data" bytea,
    "methods" TEXT[] DEFAULT NULL,
    "slice_size" INT DEFAULT 8192,
    "iterations" INT DEFAULT NULL
) RETURNS TABLE (
    "method" TEXT,
    "slice_size" INT,
    "lab_compress_mbps" double precision,
    "bare_compress_mbps" double precision,
    "compress_overhead_percent" double precision,
    "lab_decompress_mbps" double precision,
    "bare_decompress_mbps" double precision,
    "decompress_overhead_percent" double precision
)
VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'bench_overhead_wrapper';
