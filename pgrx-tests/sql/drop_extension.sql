-- Everything CREATE EXTENSION compresslab makes goes with DROP EXTENSION: the schema
-- compresslab is a member of the extension (whose own schema is pg_catalog, as plpgsql's), so
-- it goes with its grants, and a role granted them can then be dropped. (Up to 0.6.0 the
-- control file named the schema: created before the extension, it stayed behind.)
CREATE TEMP TABLE catalogue_counts (moment text, catalog text, n bigint);
CREATE FUNCTION count_catalogues(moment text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO catalogue_counts
  VALUES (moment, 'pg_namespace', (SELECT count(*) FROM pg_namespace)),
         (moment, 'pg_class', (SELECT count(*) FROM pg_class)),
         (moment, 'pg_type', (SELECT count(*) FROM pg_type)),
         (moment, 'pg_proc', (SELECT count(*) FROM pg_proc)),
         (moment, 'pg_policy', (SELECT count(*) FROM pg_policy)),
         (moment, 'pg_description', (SELECT count(*) FROM pg_description)),
         (moment, 'pg_depend', (SELECT count(*) FROM pg_depend)),
         (moment, 'pg_init_privs', (SELECT count(*) FROM pg_init_privs)),
         (moment, 'pg_shdepend', (SELECT count(*) FROM pg_shdepend))
$$;
SELECT count_catalogues('before');
CREATE EXTENSION compresslab;
SELECT n.nspname AS extension_schema,
       (SELECT string_agg(pg_describe_object(d.classid, d.objid, d.objsubid), ', ')
          FROM pg_depend d
         WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
           AND d.classid = 'pg_namespace'::regclass AND d.deptype = 'e') AS member_schemas
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'compresslab';
-- the search_path the install script sets lasts no longer than the script
SELECT current_setting('search_path') AS search_path_after_create;
CREATE ROLE compresslab_drop_user;
GRANT USAGE ON SCHEMA compresslab TO compresslab_drop_user;
GRANT EXECUTE ON FUNCTION compresslab.version() TO compresslab_drop_user;
GRANT SELECT ON compresslab.recompress_progress TO compresslab_drop_user;
DROP EXTENSION compresslab;
SELECT count(*) AS schemas_named_compresslab FROM pg_namespace WHERE nspname = 'compresslab';
SELECT count_catalogues('after');
SELECT b.catalog, a.n = b.n AS same_rows_as_before
  FROM catalogue_counts b JOIN catalogue_counts a ON a.catalog = b.catalog AND a.moment = 'after'
 WHERE b.moment = 'before' ORDER BY b.catalog;
DROP ROLE compresslab_drop_user;
-- a schema compresslab left behind by DROP EXTENSION of 0.6.0 or earlier: CREATE EXTENSION
-- says what to do
CREATE SCHEMA compresslab;
\set SHOW_CONTEXT never
CREATE EXTENSION compresslab;
\set SHOW_CONTEXT errors
DROP SCHEMA compresslab;
CREATE EXTENSION compresslab;
SELECT compresslab.version() = extversion AS works FROM pg_extension WHERE extname = 'compresslab';
