-- The extension installs into schema compresslab, reports its version and what it offers.
CREATE EXTENSION compresslab;
SELECT n.nspname AS schema, e.extrelocatable AS relocatable
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'compresslab';
SELECT compresslab.version() = extversion AS version_matches_catalog
  FROM pg_extension WHERE extname = 'compresslab';
SELECT kind, name, ok FROM compresslab.capabilities() ORDER BY kind, name;
-- Volatility and strictness are declared where true.
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'compresslab'
 ORDER BY 1, 2, 3;
