-- A hostile search_path runs nobody's code. A role that can put a schema of hers first in a
-- superuser's search_path (directly, or through a SECURITY DEFINER wrapper that does not pin
-- it) must not get her operators, functions, aggregates or types run by compresslab's internal
-- queries or by the report's SQL scripts. Schema "evil" below shadows every built-in operator,
-- every plain function and aggregate of pg_catalog whose signature it can copy, and every base
-- type's name (as a domain with a CHECK); each shadow behaves as the original but first records
-- its call. Then every function of the extension (taken from the catalogue: a function without a
-- call below fails the test) and the two scripts report.sh runs on a DBA's database are run as
-- superuser under search_path = evil, pg_catalog, public, and the record must stay empty.
CREATE EXTENSION compresslab;
CREATE TABLE docs (id int PRIMARY KEY, body text, blob bytea);
INSERT INTO docs SELECT i, repeat('row ' || i || ' of some document text ', 40 + i % 200),
                        compresslab.synthetic('pgbench', 3000 + i * 7, i)
  FROM generate_series(1, 400) i;
ANALYZE docs;
CREATE SCHEMA evil;
CREATE TABLE evil.trap_calls (shadow text, query text);
CREATE FUNCTION evil.record(shadow text) RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
  INSERT INTO evil.trap_calls VALUES (shadow, pg_catalog.current_query());
  RETURN true;
END $$;

-- Every base type's name, as a domain whose CHECK records its use.
DO $$
DECLARE t record;
BEGIN
  FOR t IN SELECT oid::regtype AS name, typname FROM pg_type
            WHERE typnamespace = 'pg_catalog'::regnamespace AND typtype = 'b' AND typelem = 0
              AND typname !~ '^_' AND typname <> 'unknown'
  LOOP
    EXECUTE format('CREATE DOMAIN evil.%I AS %s CHECK (evil.record(%L))', t.typname, t.name, 'type ' || t.typname);
  END LOOP;
END $$;

-- Every operator of pg_catalog whose operand and result types are not pseudo-types.
DO $$
DECLARE o record; args text; call text;
BEGIN
  FOR o IN SELECT p.oid, p.oprname, p.oprleft, p.oprleft::regtype AS l, p.oprright::regtype AS r, p.oprresult::regtype AS res
             FROM pg_operator p
            WHERE p.oprnamespace = 'pg_catalog'::regnamespace AND p.oprcode <> 0
              AND NOT EXISTS (SELECT FROM pg_type t WHERE t.oid IN (p.oprleft, p.oprright, p.oprresult) AND t.typtype = 'p')
  LOOP
    IF o.oprleft = 0 THEN
      args := format('b %s', o.r);
      call := format('OPERATOR(pg_catalog.%s) b', o.oprname);
    ELSE
      args := format('a %s, b %s', o.l, o.r);
      call := format('a OPERATOR(pg_catalog.%s) b', o.oprname);
    END IF;
    EXECUTE format('CREATE FUNCTION evil.op_%s(%s) RETURNS %s LANGUAGE plpgsql SET search_path = pg_catalog '
                   'AS $f$BEGIN PERFORM evil.record(%L); RETURN %s; END$f$',
                   o.oid, args, o.res, format('operator %s(%s, %s)', o.oprname, o.l, o.r), call);
    EXECUTE format('CREATE OPERATOR evil.%s (FUNCTION = evil.op_%s, %s RIGHTARG = %s)',
                   o.oprname, o.oid, CASE WHEN o.oprleft = 0 THEN '' ELSE format('LEFTARG = %s,', o.l) END, o.r);
  END LOOP;
END $$;

-- Every plain function of pg_catalog (set-returning ones included) whose argument and result
-- types are not pseudo-types, and every plain aggregate of such types, count(*) among them.
DO $$
DECLARE f record; params text; args text; body text;
BEGIN
  FOR f IN SELECT p.oid, p.proname, p.proretset, p.prorettype::regtype AS res, ARRAY(SELECT pg_catalog.unnest(p.proargtypes::oid[])) AS types
             FROM pg_proc p
            WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind IN ('f', 'a') AND p.provariadic = 0
              AND p.proallargtypes IS NULL
              AND NOT EXISTS (SELECT FROM pg_type t WHERE (t.oid = ANY (p.proargtypes) OR t.oid = p.prorettype) AND t.typtype = 'p')
              AND (p.prokind = 'f' OR EXISTS (SELECT FROM pg_aggregate a WHERE a.aggfnoid = p.oid AND a.aggkind = 'n'))
  LOOP
    SELECT coalesce(string_agg(format('a%s %s', i, t::regtype), ', ' ORDER BY i), ''),
           coalesce(string_agg(format('a%s', i), ', ' ORDER BY i), '')
      INTO params, args
      FROM unnest(f.types) WITH ORDINALITY AS u(t, i);
    IF f.oid IN (SELECT aggfnoid FROM pg_aggregate) THEN
      CONTINUE WHEN f.types = '{}' OR f.proretset;
      -- The state is the first argument's type; the final function records the use.
      EXECUTE format('CREATE FUNCTION evil.agg_step_%s(s %s, %s) RETURNS %s LANGUAGE sql AS $f$SELECT a1$f$',
                     f.oid, f.types[1]::regtype, params, f.types[1]::regtype);
      EXECUTE format('CREATE FUNCTION evil.agg_final_%s(s %s) RETURNS %s LANGUAGE plpgsql SET search_path = pg_catalog '
                     'AS $f$BEGIN PERFORM evil.record(%L); RETURN s; END$f$',
                     f.oid, f.types[1]::regtype, f.types[1]::regtype, format('aggregate %s(%s)', f.proname, params));
      EXECUTE format('CREATE AGGREGATE evil.%I(%s) (SFUNC = evil.agg_step_%s, STYPE = %s, FINALFUNC = evil.agg_final_%s, FINALFUNC_MODIFY = READ_ONLY)',
                     f.proname, (SELECT string_agg(t::regtype::text, ', ') FROM unnest(f.types) t), f.oid, f.types[1]::regtype, f.oid);
      CONTINUE;
    END IF;
    IF f.proretset THEN
      body := format('PERFORM evil.record(%L); RETURN QUERY SELECT * FROM pg_catalog.%I(%s);',
                     format('function %s(%s)', f.proname, params), f.proname, args);
    ELSE
      body := format('PERFORM evil.record(%L); RETURN pg_catalog.%I(%s);',
                     format('function %s(%s)', f.proname, params), f.proname, args);
    END IF;
    EXECUTE format('CREATE FUNCTION evil.%I(%s) RETURNS %s %s LANGUAGE plpgsql SET search_path = pg_catalog AS $f$BEGIN %s END$f$',
                   f.proname, params, CASE WHEN f.proretset THEN 'SETOF' ELSE '' END, f.res, body);
  END LOOP;
  EXECUTE 'CREATE FUNCTION evil.count_step(s int8) RETURNS int8 LANGUAGE sql AS $f$SELECT s OPERATOR(pg_catalog.+) 1$f$';
  EXECUTE 'CREATE FUNCTION evil.count_final(s int8) RETURNS int8 LANGUAGE plpgsql SET search_path = pg_catalog '
          'AS $f$BEGIN PERFORM evil.record(''aggregate count(*)''); RETURN s; END$f$';
  EXECUTE 'CREATE AGGREGATE evil.count(*) (SFUNC = evil.count_step, STYPE = int8, INITCOND = 0, FINALFUNC = evil.count_final)';
END $$;
SELECT count(*) > 500 AS operators_shadowed FROM pg_operator WHERE oprnamespace = 'evil'::regnamespace;
SELECT count(*) > 1500 AS functions_shadowed FROM pg_proc WHERE pronamespace = 'evil'::regnamespace AND prokind = 'f';
SELECT count(*) > 50 AS aggregates_shadowed FROM pg_proc WHERE pronamespace = 'evil'::regnamespace AND prokind = 'a';
SELECT count(*) > 50 AS types_shadowed FROM pg_type WHERE typnamespace = 'evil'::regnamespace AND typtype = 'd';
-- The shadows work: an unqualified operator, function, aggregate and cast under the hostile
-- path reach them (so zero calls below means the extension never reached one).
SET search_path = evil, pg_catalog, public;
SELECT 1 = 1 AS eq, length('abc') AS len, count(*) AS n, '7'::int4 AS cast FROM (VALUES (1)) v;
RESET search_path;
SELECT shadow FROM evil.trap_calls ORDER BY shadow;
TRUNCATE evil.trap_calls;

-- One call of every function of the extension, each as a superuser would make it; the WAL
-- functions read what the inserts above wrote, from pg_wal and from a directory of archived
-- segments (wal_dir: the segment the inserts ended in, closed by a switch).
SELECT format('cat >/dev/null; rm -rf search_path_archive && mkdir search_path_archive && cp pg_wal/%s search_path_archive/',
              pg_walfile_name(pg_switch_wal())) AS copy_segment \gset
COPY (SELECT 1) TO PROGRAM :'copy_segment';
CREATE TEMP TABLE calls (name text, sql text);
INSERT INTO calls VALUES
  ('advise',                     $q$SELECT * FROM compresslab.advise('20 s')$q$),
  ('advise over wal_dir',        $q$SELECT * FROM compresslab.advise('5 s', wal_dir => 'search_path_archive')$q$),
  ('bench',                      $q$SELECT * FROM compresslab.bench('\x000102'::pg_catalog.bytea, ARRAY['lz4', 'server_pglz'], ARRAY[0], 1)$q$),
  ('bench_column',               $q$SELECT * FROM compresslab.bench_column('public.docs', 'body', ARRAY['pglz', 'server_lz4'], ARRAY[0], 1, 50)$q$),
  ('bench_crc',                  $q$SELECT * FROM compresslab.bench_crc('\x000102'::pg_catalog.bytea, ARRAY[1], 1)$q$),
  ('bench_file',                 $q$SELECT * FROM compresslab.bench_file('postgresql.conf', ARRAY['lz4'], ARRAY[0], 1, start_byte => 10, byte_count => 100)$q$),
  ('bench_overhead',             $q$SELECT * FROM compresslab.bench_overhead('\x000102'::pg_catalog.bytea, ARRAY['lz4'], 8192, 1)$q$),
  ('bench_pages',                $q$SELECT * FROM compresslab.bench_pages('public.docs', ARRAY['pglz'], ARRAY[0], 1, 8)$q$),
  ('bench_suite',                $q$SELECT * FROM compresslab.bench_suite(1)$q$),
  ('bench_suite_json',           $q$SELECT compresslab.bench_suite_json(1)$q$),
  ('bench_synthetic',            $q$SELECT * FROM compresslab.bench_synthetic('text', 20000, 1, ARRAY['zstd'], ARRAY[0], 1)$q$),
  ('capabilities',               $q$SELECT * FROM compresslab.capabilities()$q$),
  ('compress',                   $q$SELECT compresslab.compress('\x000102'::pg_catalog.bytea, 'zstd', 3), compresslab.compress('\x000102'::pg_catalog.bytea, 'lz4'), compresslab.compress('\x000102'::pg_catalog.bytea)$q$),
  ('compression_info',           $q$SELECT * FROM compresslab.compression_info(compresslab.compress(compresslab.synthetic('text', 5000), 'pglz'))$q$),
  ('crc32',                      $q$SELECT compresslab.crc32('\x000102'::pg_catalog.bytea), compresslab.crc32('\x0102'::pg_catalog.bytea, 7)$q$),
  ('crc32_legacy',               $q$SELECT compresslab.crc32_legacy('\x000102'::pg_catalog.bytea), compresslab.crc32_legacy('\x0102'::pg_catalog.bytea, 7)$q$),
  ('crc32c',                     $q$SELECT compresslab.crc32c('\x000102'::pg_catalog.bytea), compresslab.crc32c('\x0102'::pg_catalog.bytea, 7)$q$),
  ('decompress',                 $q$SELECT compresslab.decompress(compresslab.compress(compresslab.synthetic('text', 5000), 'lz4'))$q$),
  ('estimate_toast_compression', $q$SELECT * FROM compresslab.estimate_toast_compression('public.docs', 'blob', 100)$q$),
  ('estimate_wal_compression',   $q$SELECT * FROM compresslab.estimate_wal_compression('public.docs', 16) r, compresslab.estimate_wal_compression(NULL, 16) a$q$),
  ('lz4_compress',               $q$SELECT compresslab.lz4_compress(compresslab.synthetic('text', 5000)), compresslab.lz4_compress(compresslab.synthetic('text', 5000), true)$q$),
  ('lz4_decompress',             $q$SELECT compresslab.lz4_decompress(compresslab.lz4_compress(compresslab.synthetic('text', 5000), true)), compresslab.lz4_decompress(compresslab.lz4_compress(compresslab.synthetic('text', 5000)), 5000)$q$),
  ('lz4_frame_compress',         $q$SELECT compresslab.lz4_frame_compress(compresslab.synthetic('text', 5000))$q$),
  ('lz4_frame_decompress',       $q$SELECT compresslab.lz4_frame_decompress(compresslab.lz4_frame_compress(compresslab.synthetic('text', 5000)))$q$),
  ('markdown',                   $q$SELECT compresslab.markdown(compresslab.bench_suite_json(1))$q$),
  ('methods',                    $q$SELECT * FROM compresslab.methods()$q$),
  ('recompress (dry run)',       $q$CALL compresslab.recompress('public.docs', 'body', 'lz4', dry_run => true)$q$),
  ('pglz_compress',              $q$SELECT compresslab.pglz_compress(compresslab.synthetic('text', 5000))$q$),
  ('pglz_decompress',            $q$SELECT compresslab.pglz_decompress(compresslab.pglz_compress(compresslab.synthetic('text', 5000)), 5000)$q$),
  ('server_crc32c',              $q$SELECT compresslab.server_crc32c('\x000102'::pg_catalog.bytea)$q$),
  ('server_lz4_compress',        $q$SELECT compresslab.server_lz4_compress(compresslab.synthetic('text', 5000))$q$),
  ('server_lz4_decompress',      $q$SELECT compresslab.server_lz4_decompress(compresslab.server_lz4_compress(compresslab.synthetic('text', 5000)), 5000)$q$),
  ('server_pglz_compress',       $q$SELECT compresslab.server_pglz_compress(compresslab.synthetic('text', 5000))$q$),
  ('server_pglz_decompress',     $q$SELECT compresslab.server_pglz_decompress(compresslab.server_pglz_compress(compresslab.synthetic('text', 5000)), 5000)$q$),
  ('server_zstd_compress',       $q$SELECT compresslab.server_zstd_compress(compresslab.synthetic('text', 5000), 3)$q$),
  ('server_zstd_decompress',     $q$SELECT compresslab.server_zstd_decompress(compresslab.server_zstd_compress(compresslab.synthetic('text', 5000)), 5000)$q$),
  ('simulate_spill',             $q$SELECT * FROM compresslab.simulate_spill('SELECT body FROM public.docs', ARRAY['lz4'])$q$),
  ('svg_chart',                  $q$SELECT compresslab.svg_chart(compresslab.bench_suite_json(1), 'title')$q$),
  ('svg_stored_chart',           $q$SELECT compresslab.svg_stored_chart(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('column', 'public.docs.body') OPERATOR(pg_catalog.||) pg_catalog.to_jsonb(e))) FROM compresslab.estimate_toast_compression('public.docs', 'body') e$q$),
  ('synthetic',                  $q$SELECT compresslab.synthetic('pgbench', 1000, 2)$q$),
  ('version',                    $q$SELECT compresslab.version()$q$),
  ('versions',                   $q$SELECT * FROM compresslab.versions()$q$),
  ('wal_whatif',                 $q$SELECT * FROM compresslab.wal_whatif(sample => 0.1)$q$),
  ('wal_whatif_by_relation',     $q$SELECT * FROM compresslab.wal_whatif_by_relation(sample => 0.1)$q$),
  ('wal_whatif over wal_dir',    $q$SELECT * FROM compresslab.wal_whatif(wal_dir => 'search_path_archive')$q$),
  ('wal_whatif_by_relation over wal_dir', $q$SELECT * FROM compresslab.wal_whatif_by_relation(wal_dir => 'search_path_archive')$q$),
  ('zstd_compress',              $q$SELECT compresslab.zstd_compress(compresslab.synthetic('text', 5000)), compresslab.zstd_compress(compresslab.synthetic('text', 5000), 19)$q$),
  ('zstd_decompress',            $q$SELECT compresslab.zstd_decompress(compresslab.zstd_compress(compresslab.synthetic('text', 5000)))$q$),
  ('zstd with a dictionary',     $q$SELECT compresslab.zstd_decompress(compresslab.zstd_compress(compresslab.synthetic('text', 5000), 3, compresslab.synthetic('text', 2000, 9)), compresslab.synthetic('text', 2000, 9))$q$);
-- Each call under the hostile path (an error is reported as a WARNING naming the call), then
-- every function of the extension that none of them reached, by the statistics of this
-- transaction (empty when every function, every overload, was called).
BEGIN;
SET LOCAL track_functions = 'all';
DO $$
DECLARE c record;
BEGIN
  FOR c IN SELECT * FROM calls ORDER BY name LOOP
    BEGIN
      PERFORM pg_catalog.set_config('search_path', 'evil, pg_catalog, public', true);
      EXECUTE c.sql;
      PERFORM pg_catalog.set_config('search_path', 'public', true);
    EXCEPTION WHEN OTHERS THEN
      RAISE WARNING '%: %', c.name, SQLERRM;
    END;
  END LOOP;
END $$;
SELECT p.oid::regprocedure AS function_not_called
  FROM pg_proc p
 WHERE p.pronamespace = 'compresslab'::regnamespace
   AND NOT EXISTS (SELECT FROM pg_stat_xact_user_functions f WHERE f.funcid = p.oid)
 ORDER BY 1;
COMMIT;
SELECT shadow, query FROM evil.trap_calls ORDER BY shadow, query;

-- The scripts report.sh runs on a DBA's database, under the same path (their output is not
-- what this test compares).
\set budget '5 s'
\set chart /dev/null
SET search_path = evil, pg_catalog, public;
\set ECHO none
\o /dev/null
\ir ../../scripts/report_advice.sql
SET search_path = evil, pg_catalog, public;
\ir ../../scripts/report_user.sql
\o
\set ECHO all
\pset footer on
RESET search_path;
SELECT shadow, query FROM evil.trap_calls ORDER BY shadow, query;
