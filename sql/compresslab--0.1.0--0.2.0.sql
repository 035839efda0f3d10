-- compresslab 0.1.0 -> 0.2.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.1.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.2.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.2.0'" to load this file. \quit

-- The result rows that were RETURNS TABLE (...) in 0.1.0 have composite types of their own
-- (sql/result_types.sql). compresslab.bench_result is unchanged.
CREATE TYPE compresslab.checksum_result AS (
    source text, implementation text, family text, slice_size int, slices bigint, input_bytes bigint,
    mbps float8, mbps_best float8, ns_per_byte float8, wall_s float8, cpu_s float8, iterations int
);
COMMENT ON TYPE compresslab.checksum_result IS 'One checksum benchmark row: implementation and family, slice size; median and best MB/s, median ns per byte; wall and CPU seconds';

CREATE TYPE compresslab.spill_result AS (
    strategy text, records bigint, raw_bytes bigint, stored_bytes bigint, ratio float8,
    seconds float8, cpu_seconds float8, raw_records bigint
);
COMMENT ON TYPE compresslab.spill_result IS 'One spill-file strategy: records, raw and stored bytes (headers included), ratio, wall and CPU seconds to write and read back, records stored raw';

CREATE TYPE compresslab.wal_compression_estimate AS (
    wal_compression text, images bigint, compressed_images bigint, fpi_bytes bigint, ratio float8,
    cpu_ns_per_image float8
);
COMMENT ON TYPE compresslab.wal_compression_estimate IS 'Full-page images under one wal_compression setting: images, images kept compressed, image bytes, ratio against off, CPU per image';

CREATE TYPE compresslab.toast_compression_estimate AS (
    method text, "values" bigint, compressed_values bigint, raw_bytes bigint, stored_bytes bigint,
    ratio float8, compress_mbps float8, decompress_mbps float8
);
COMMENT ON TYPE compresslab.toast_compression_estimate IS 'A column under one TOAST compression method: values, values kept compressed, raw and stored bytes (pg_column_size), ratio, compression and decompression speed';

-- A function's result type cannot be changed in place (CREATE OR REPLACE refuses), so the four
-- functions that now return SETOF a composite are dropped and created again. No CASCADE: a view
-- or function of the user's that depends on one of them stops the update with an error naming
-- it, instead of being dropped silently.
DROP FUNCTION compresslab.bench_crc(bytea, int[], int);
CREATE FUNCTION compresslab.bench_crc(
	"data" bytea DEFAULT NULL,
	"slice_sizes" INT[] DEFAULT ARRAY[16,64,256,1024,8192],
	"iterations" INT DEFAULT NULL
) RETURNS SETOF compresslab.checksum_result
VOLATILE
LANGUAGE c
AS 'MODULE_PATHNAME', 'bench_crc_wrapper';

-- Also no longer STRICT: a NULL relation or column is an ERROR (22004), not an empty result.
DROP FUNCTION compresslab.estimate_toast_compression(regclass, text, int, int);
CREATE FUNCTION compresslab.estimate_toast_compression(
	"rel" regclass,
	"col" TEXT,
	"sample_values" INT DEFAULT 1000,
	"seed" INT DEFAULT 0
) RETURNS SETOF compresslab.toast_compression_estimate
VOLATILE
LANGUAGE c
AS 'MODULE_PATHNAME', 'estimate_toast_compression_wrapper';

DROP FUNCTION compresslab.estimate_wal_compression(regclass, int, int);
CREATE FUNCTION compresslab.estimate_wal_compression(
	"rel" regclass DEFAULT NULL,
	"sample_pages" INT DEFAULT NULL,
	"seed" INT DEFAULT 0
) RETURNS SETOF compresslab.wal_compression_estimate
VOLATILE
LANGUAGE c
AS 'MODULE_PATHNAME', 'estimate_wal_compression_wrapper';

DROP FUNCTION compresslab.simulate_spill(text, text[], int);
CREATE FUNCTION compresslab.simulate_spill(
	"query" TEXT,
	"strategies" TEXT[] DEFAULT NULL,
	"zstd_level" INT DEFAULT 1
) RETURNS SETOF compresslab.spill_result
VOLATILE
LANGUAGE c
AS 'MODULE_PATHNAME', 'simulate_spill_wrapper';

-- New in 0.2.0.
CREATE FUNCTION compresslab.methods() RETURNS TABLE (
	"method" TEXT,
	"family" TEXT,
	"server_code" bool,
	"min_level" INT,
	"max_level" INT,
	"description" TEXT
)
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'methods_wrapper';

CREATE FUNCTION compresslab.synthetic(
	"kind" TEXT,
	"size" bigint DEFAULT 1048576,
	"seed" INT DEFAULT 0
) RETURNS bytea
IMMUTABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'synthetic_wrapper';
