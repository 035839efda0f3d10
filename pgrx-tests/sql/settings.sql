-- compresslab.* settings are per session: SET and RESET change this session only, and an
-- invalid value is rejected.
CREATE EXTENSION compresslab;
SHOW compresslab.method;
SHOW compresslab.zstd_level;
SHOW compresslab.max_decompressed_size;
CREATE TEMP TABLE v AS SELECT convert_to(repeat('settings ', 1000), 'UTF8') AS data;
SELECT method FROM v, compresslab.compression_info(compresslab.compress(data));
SET compresslab.method = 'zstd';
SELECT method FROM v, compresslab.compression_info(compresslab.compress(data));
SET compresslab.zstd_level = 1;
SELECT length(compresslab.compress(data)) AS zstd1_len FROM v \gset
SET compresslab.zstd_level = 19;
SELECT length(compresslab.compress(data)) <= :zstd1_len AS level19_not_larger FROM v;
SELECT compresslab.zstd_compress(data) = compresslab.zstd_compress(data, 19) AS function_default_follows_setting FROM v;
SET compresslab.zstd_level = 23;
SET compresslab.zstd_level = -200000;
SET compresslab.method = 'snappy';
SHOW compresslab.method;
SET compresslab.max_decompressed_size = '4kB';
SHOW compresslab.max_decompressed_size;
SELECT length(compresslab.decompress(compresslab.compress(data))) FROM v;
SET compresslab.max_decompressed_size = -1;
RESET compresslab.max_decompressed_size;
SELECT length(compresslab.decompress(compresslab.compress(data))) FROM v;
-- a new session starts from the defaults again (the settings exist once the library is
-- loaded: by the first compresslab call, or session_preload_libraries)
\connect
SELECT compresslab.version() IS NOT NULL AS loaded;
SHOW compresslab.method;
SHOW compresslab.zstd_level;
-- SET LOCAL lasts for the transaction
BEGIN;
SET LOCAL compresslab.method = 'pglz';
SELECT method FROM compresslab.compression_info(compresslab.compress(convert_to(repeat('local ', 100), 'UTF8')));
COMMIT;
SHOW compresslab.method;
