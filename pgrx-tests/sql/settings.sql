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
-- PostgreSQL 17 and 18 print the valid range with units ("0 B .. 1073741818 B"):
-- expected/settings_1.out is this file's output there.
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
-- the prefix is reserved once the library is loaded: a misspelt setting is an error, not a
-- silent placeholder
SET compresslab.zstd_levle = 5;
-- before the library loads, a SET is only a placeholder (as for every extension that is not
-- preloaded); loading the library warns about it and removes it. session_preload_libraries =
-- 'compresslab' loads it at connection time, so that SHOW and SET are checked from the start.
\connect
SET compresslab.zstd_levle = 5;
SELECT compresslab.version() IS NOT NULL AS loaded;
SHOW compresslab.zstd_levle;
-- and every setting is documented: its description is not empty
SELECT name, context, short_desc <> '' AS described FROM pg_settings WHERE name LIKE 'compresslab.%' ORDER BY name;
-- the one-argument forms read the settings (STABLE); the forms with explicit arguments do not
-- (IMMUTABLE), so they can serve in indexes and generated columns
SET compresslab.zstd_level = 19;
SELECT compresslab.compress(data, 'zstd') = compresslab.compress(data, 'zstd', 3) AS explicit_method_uses_level_3,
       compresslab.compress(data) = compresslab.compress(data, 'lz4') AS one_argument_uses_settings
FROM (SELECT convert_to(repeat('settings ', 1000), 'UTF8') AS data) v;
RESET compresslab.zstd_level;
