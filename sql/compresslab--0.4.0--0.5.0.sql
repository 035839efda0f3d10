-- compresslab 0.4.0 -> 0.5.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.4.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.5.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.5.0'" to load this file. \quit

-- The server's liblz4 and libzstd at the SQL level, beside server_pglz_* (issue 13: the
-- report's SQL-level figures against the server's routine for every codec it loads).
CREATE FUNCTION compresslab."server_lz4_compress"(
    "data" bytea
) RETURNS bytea
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'server_lz4_compress_wrapper';

CREATE FUNCTION compresslab."server_lz4_decompress"(
    "data" bytea,
    "raw_size" INT
) RETURNS bytea
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'server_lz4_decompress_wrapper';

CREATE FUNCTION compresslab."server_zstd_compress"(
    "data" bytea,
    "level" INT DEFAULT 3
) RETURNS bytea
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'server_zstd_compress_wrapper';

CREATE FUNCTION compresslab."server_zstd_decompress"(
    "data" bytea,
    "raw_size" INT
) RETURNS bytea
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'server_zstd_decompress_wrapper';
