-- The schema of every compresslab object, made here rather than by the control file (whose
-- `schema` is pg_catalog, as plpgsql's): a schema the install script creates is a member of
-- the extension, so DROP EXTENSION drops it with its grants (one the control file names is
-- created before the extension and stays behind). DROP EXTENSION of 0.6.0 or earlier left it
-- behind: say so rather than CREATE SCHEMA's bare "already exists".
DO $schema$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname OPERATOR(pg_catalog.=) 'compresslab') THEN
        RAISE EXCEPTION USING ERRCODE = 'duplicate_schema',
            MESSAGE = 'schema "compresslab" already exists',
            HINT = 'DROP EXTENSION of compresslab 0.6.0 or earlier leaves its schema behind: once it holds nothing of yours, DROP SCHEMA compresslab CASCADE, then CREATE EXTENSION compresslab again.';
    END IF;
END
$schema$;
CREATE SCHEMA compresslab;
COMMENT ON SCHEMA compresslab IS 'compresslab''s functions, types, tables and views; created and dropped with the extension';
-- The objects pgrx's generated script names without a schema go into it; set_config's
-- is_local, as SET LOCAL, lasts until the end of the script (a plain SET would outlive it).
SELECT pg_catalog.set_config('search_path', 'compresslab, pg_temp', true);

-- The composite types of compresslab's result rows. Each mirrors, column for column and in
-- order, a row struct of the core crate (named beside it); the extension converts the struct
-- into the type by name, and refuses to run if the two ever disagree (tested in the server).

-- compresslab_core::lab::BenchRow: bench, bench_pages, bench_column, bench_file,
-- bench_synthetic, bench_suite.
CREATE TYPE compresslab.bench_result AS (
    source text, method text, level int, slice_size int, slices bigint, raw_slices bigint,
    raw_bytes bigint, stored_bytes bigint, ratio float8,
    compress_mbps float8, decompress_mbps float8, compress_mbps_best float8, decompress_mbps_best float8,
    compress_ns_per_byte float8, decompress_ns_per_byte float8,
    compress_wall_seconds float8, compress_cpu_seconds float8, decompress_wall_seconds float8, decompress_cpu_seconds float8,
    iterations int, busy boolean
);
COMMENT ON TYPE compresslab.bench_result IS 'One benchmark row: payload source, method and level, slice size; bytes in and out; median and best MB/s and median ns per uncompressed byte (decompression: NULL where every slice was stored raw); wall and CPU (thread CPU clock) seconds of the timed iterations; busy: wall time over 1.5 times CPU time';

-- compresslab_core::lab::ChecksumRow: bench_crc.
CREATE TYPE compresslab.checksum_result AS (
    source text, implementation text, family text, slice_size int, slices bigint, raw_bytes bigint,
    mbps float8, mbps_best float8, ns_per_byte float8, wall_seconds float8, cpu_seconds float8, iterations int
);
COMMENT ON TYPE compresslab.checksum_result IS 'One checksum benchmark row: implementation and family, slice size; median and best MB/s, median ns per byte; wall and CPU seconds';

-- compresslab_core::scenarios::spill::SpillRow: simulate_spill.
CREATE TYPE compresslab.spill_result AS (
    strategy text, level int, records bigint, raw_bytes bigint, stored_bytes bigint, ratio float8,
    wall_seconds float8, cpu_seconds float8, raw_records bigint
);
COMMENT ON TYPE compresslab.spill_result IS 'One spill-file strategy: records, raw and stored bytes (headers included), ratio, wall and CPU seconds to write and read back, records stored raw';

-- compresslab_core::scenarios::fpi::FpiRow: estimate_wal_compression.
CREATE TYPE compresslab.wal_compression_estimate AS (
    wal_compression text, images bigint, compressed_images bigint, raw_bytes bigint, stored_bytes bigint,
    ratio float8, compress_cpu_seconds float8
);
COMMENT ON TYPE compresslab.wal_compression_estimate IS 'Full-page images under one wal_compression setting: images, images kept compressed, image bytes without compression (raw) and as stored, ratio raw/stored, CPU seconds to compress them';

-- compresslab_core::scenarios::toast::ToastRow: estimate_toast_compression.
CREATE TYPE compresslab.toast_compression_estimate AS (
    method text, "values" bigint, compressed_values bigint, raw_bytes bigint, stored_bytes bigint,
    ratio float8, compress_mbps float8, decompress_mbps float8, stored_bytes_low bigint, stored_bytes_high bigint
);
COMMENT ON TYPE compresslab.toast_compression_estimate IS 'A column under one TOAST compression method: values, values kept compressed, raw and stored bytes (pg_column_size), ratio, compression and decompression speed, the 95% interval of the stored bytes (equal to them where every row was read)';

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

-- compresslab_core::advisor::AdviceRow: advise.
CREATE TYPE compresslab.advice AS (
    area text, target text, current text, recommended text, bytes_now bigint, bytes_recommended bigint,
    bytes_now_low bigint, bytes_now_high bigint, bytes_recommended_low bigint, bytes_recommended_high bigint,
    observed_period interval, bytes_per_day_now bigint, bytes_per_day_recommended bigint,
    saving_percent float8, compress_cpu_seconds_per_day float8, decompress_cpu_seconds_per_day float8,
    compress_cpu_seconds_per_gb float8, decompress_cpu_seconds_per_gb float8, basis text, confidence text,
    apply_sql text, note text
);
COMMENT ON TYPE compresslab.advice IS 'One decision of advise(): area (wal_compression, toast, spill), target, the setting in force and the one to use; bytes now and then (a column: stored in total; WAL and spill: over observed_period, as measured and as predicted), a column''s 95% intervals of both from its block sample, observed_period (WAL and spill), the same bytes per day (WAL and spill), saving, CPU per day and per GB, what was measured, confidence, the statement that applies it, and why';
