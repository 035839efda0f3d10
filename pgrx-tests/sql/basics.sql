-- The extension's objects are in schema compresslab, a member of the extension (whose own
-- schema is pg_catalog, as plpgsql's); it reports its version and what it offers.
CREATE EXTENSION compresslab;
SELECT n.nspname AS schema, e.extrelocatable AS relocatable
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'compresslab';
SELECT compresslab.version() = extversion AS version_matches_catalog
  FROM pg_extension WHERE extname = 'compresslab';
-- versions(): compresslab's is the installed extension's, PostgreSQL's the server's; each C
-- library's dotted version is the number its *_versionNumber() returned, and the server's
-- libraries were loaded from a file of that library (Debian's liblz4.so.1.9.4, or for 17 and
-- 19 the one of the Debian suite they run on).
SELECT component,
       CASE component
         WHEN 'compresslab' THEN version = (SELECT extversion FROM pg_extension WHERE extname = 'compresslab')
         WHEN 'PostgreSQL' THEN version = current_setting('server_version')
              AND detail = 'server_version_num = ' || current_setting('server_version_num')
         WHEN 'lz4_flex' THEN version ~ '^0\.11\.[0-9]+$'
         ELSE nullif(split_part(detail, '() = ', 2), '')::int = split_part(version, '.', 1)::int * 10000
              + split_part(version, '.', 2)::int * 100 + split_part(version, '.', 3)::int
       END AS consistent,
       CASE WHEN component LIKE '%server''s%' THEN detail ~ ('^/\S*/' || split_part(component, ' ', 1) || '[^/,]*\.so[.0-9]*, ') END
         AS loaded_from_that_library
  FROM compresslab.versions();
-- methods() names the library each method runs, with the version versions() reports
SELECT method, server_code, regexp_replace(library, '[0-9]+((\.[0-9]+)+|(beta|rc)[0-9]+)', 'N', 'g') AS library
  FROM compresslab.methods() ORDER BY method;
SELECT bool_and(m.library LIKE '% ' || v.version || '%') AS same_versions
  FROM compresslab.methods() m
  JOIN compresslab.versions() v ON v.component = CASE m.method
    WHEN 'server_lz4' THEN 'liblz4 (server''s)' WHEN 'server_zstd' THEN 'libzstd (server''s)'
    WHEN 'zstd' THEN 'libzstd (compresslab''s)' WHEN 'lz4_frame' THEN 'lz4_flex' ELSE 'compresslab' END
 WHERE NOT m.method LIKE 'server_pglz%';
SELECT kind, name, ok FROM compresslab.capabilities() ORDER BY kind, name;
-- Volatility, strictness and parallel safety are declared like core's: i/s/v, strict,
-- s(afe)/r(estricted)/u(nsafe), per overload.
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'compresslab'
 ORDER BY 1, 2;
-- The rules, checked: codecs and checksums with explicit arguments are IMMUTABLE STRICT
-- PARALLEL SAFE; decompression is STABLE (it reads the size limit); benchmarks and estimates
-- are VOLATILE. This query must return no rows.
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS arguments, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'compresslab' AND NOT CASE
   WHEN p.proname ~ '^(crc32|crc32c|crc32_legacy|server_crc32c|pglz_compress|lz4_compress|lz4_frame_compress|server_pglz_compress)$'
     THEN p.provolatile = 'i' AND p.proisstrict AND p.proparallel = 's'
   WHEN p.proname IN ('compress', 'zstd_compress')
     THEN p.proisstrict AND p.proparallel = 's'
          AND p.provolatile = CASE WHEN p.pronargs = 1 THEN 's' ELSE 'i' END
   WHEN p.proname ~ 'decompress$' THEN p.provolatile = 's' AND p.proisstrict AND p.proparallel = 's'
   WHEN p.proname ~ '^(bench|estimate_|simulate_)' THEN p.provolatile = 'v'
   ELSE true END;
-- so they serve in an expression index and a generated column
CREATE TABLE docs (body bytea, packed bytea GENERATED ALWAYS AS (compresslab.compress(body, 'lz4')) STORED);
CREATE INDEX docs_crc ON docs (compresslab.crc32c(body));
CREATE INDEX docs_zstd ON docs (compresslab.zstd_compress(body, 1));
INSERT INTO docs (body) SELECT convert_to(repeat('row ' || i, 50), 'UTF8') FROM generate_series(1, 100) i;
SET enable_seqscan = off;
SELECT count(*) FROM docs WHERE compresslab.crc32c(body) = compresslab.crc32c(convert_to(repeat('row 7', 50), 'UTF8'));
EXPLAIN (COSTS OFF) SELECT * FROM docs WHERE compresslab.crc32c(body) = 1;
RESET enable_seqscan;
SELECT count(*) FILTER (WHERE compresslab.decompress(packed) = body) AS round_trips FROM docs;
