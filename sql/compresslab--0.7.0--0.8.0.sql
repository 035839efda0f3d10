-- compresslab 0.7.0 -> 0.8.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.7.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.8.0;
-- pgrx-tests/t/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.8.0'" to load this file. \quit

-- estimate_toast_compression: each method's stored bytes with their 95% interval, which 0.7.0
-- gave only in a NOTICE.
ALTER TYPE compresslab.toast_compression_estimate
    ADD ATTRIBUTE stored_bytes_low bigint, ADD ATTRIBUTE stored_bytes_high bigint;
COMMENT ON TYPE compresslab.toast_compression_estimate IS 'A column under one TOAST compression method: values, values kept compressed, raw and stored bytes (pg_column_size), ratio, compression and decompression speed, the 95% interval of the stored bytes (equal to them where every row was read)';
