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
