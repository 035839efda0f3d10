-- Everything CREATE EXTENSION / ALTER EXTENSION UPDATE leaves in the catalogue for compresslab,
-- as (object, property, value) rows: every member of the extension (pg_depend, deptype 'e')
-- named by pg_describe_object, and what a user can see of it. pgrx-tests/t/upgrade.sh runs this
-- in a freshly created and in an updated database and compares the two.
-- Output: CSV on standard output (values may hold newlines).
COPY (
WITH ext AS (
    SELECT * FROM pg_catalog.pg_extension WHERE extname = 'compresslab'
), members AS (
    SELECT d.classid, d.objid, d.objsubid,
           pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS object
      FROM pg_catalog.pg_depend d JOIN ext ON d.refobjid = ext.oid
     WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
)
-- The extension itself.
SELECT 'extension compresslab' AS object, v.property, v.value
  FROM ext, pg_catalog.pg_namespace n,
       LATERAL (VALUES
           ('version', ext.extversion),
           ('schema', n.nspname::text),
           ('relocatable', ext.extrelocatable::text),
           ('owner', pg_catalog.pg_get_userbyid(ext.extowner)::text),
           ('configuration tables', (SELECT pg_catalog.string_agg(c::pg_catalog.regclass::text, ', ' ORDER BY c::pg_catalog.regclass::text)
                                       FROM pg_catalog.unnest(ext.extconfig) c)),
           ('configuration conditions', pg_catalog.array_to_string(ext.extcondition, ' | '))
       ) AS v(property, value)
 WHERE n.oid = ext.extnamespace
UNION ALL
-- Every member, and its comment.
SELECT m.object, 'member', m.classid::pg_catalog.regclass::text FROM members m
UNION ALL
SELECT m.object, 'comment', d.description
  FROM members m JOIN pg_catalog.pg_description d
    ON d.classoid = m.classid AND d.objoid = m.objid AND d.objsubid = m.objsubid
UNION ALL
-- Functions (and procedures, aggregates): signature, result, behaviour, the C symbol.
SELECT m.object, v.property, v.value
  FROM members m JOIN pg_catalog.pg_proc p ON m.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid = m.objid
  JOIN pg_catalog.pg_language l ON l.oid = p.prolang,
       LATERAL (VALUES
           ('arguments', pg_catalog.pg_get_function_arguments(p.oid)),
           ('result', pg_catalog.pg_get_function_result(p.oid)),
           ('kind', CASE p.prokind WHEN 'f' THEN 'function' WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate'
                                   WHEN 'w' THEN 'window' ELSE p.prokind::text END),
           ('volatility', CASE p.provolatile WHEN 'i' THEN 'immutable' WHEN 's' THEN 'stable' ELSE 'volatile' END),
           ('strict', p.proisstrict::text),
           ('parallel', CASE p.proparallel WHEN 's' THEN 'safe' WHEN 'r' THEN 'restricted' ELSE 'unsafe' END),
           ('security definer', p.prosecdef::text),
           ('leakproof', p.proleakproof::text),
           ('cost', p.procost::text),
           ('rows', p.prorows::text),
           ('settings', p.proconfig::text),
           ('language', l.lanname::text),
           ('C symbol or body', p.prosrc),
           ('library', p.probin),
           ('owner', pg_catalog.pg_get_userbyid(p.proowner)::text),
           ('privileges', p.proacl::text)
       ) AS v(property, value)
UNION ALL
-- Types: kind, owner, privileges, and for composite types every attribute in order.
SELECT m.object, v.property, v.value
  FROM members m JOIN pg_catalog.pg_type t ON m.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND t.oid = m.objid,
       LATERAL (VALUES
           ('type kind', t.typtype::text),
           ('owner', pg_catalog.pg_get_userbyid(t.typowner)::text),
           ('privileges', t.typacl::text),
           ('attributes', (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' '
                                                        || pg_catalog.format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                             FROM pg_catalog.pg_attribute a
                            WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped))
       ) AS v(property, value)
UNION ALL
-- Relations (tables, views, sequences), should a release add one.
SELECT m.object, v.property, v.value
  FROM members m JOIN pg_catalog.pg_class c ON m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = m.objid,
       LATERAL (VALUES
           ('relation kind', c.relkind::text),
           ('owner', pg_catalog.pg_get_userbyid(c.relowner)::text),
           ('privileges', c.relacl::text),
           ('columns', (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname) || ' '
                                                     || pg_catalog.format_type(a.atttypid, a.atttypmod)
                                                     || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
                                                     || COALESCE(' DEFAULT ' || pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), ''),
                                                     ', ' ORDER BY a.attnum)
                          FROM pg_catalog.pg_attribute a
                          LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)),
           ('view definition', CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid) END),
           ('indexes', (SELECT pg_catalog.string_agg(pg_catalog.pg_get_indexdef(i.indexrelid), '; '
                                                     ORDER BY pg_catalog.pg_get_indexdef(i.indexrelid))
                          FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid)),
           ('constraints', (SELECT pg_catalog.string_agg(pg_catalog.pg_get_constraintdef(k.oid), '; '
                                                         ORDER BY pg_catalog.pg_get_constraintdef(k.oid))
                              FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid))
       ) AS v(property, value)
ORDER BY 1, 2
) TO STDOUT WITH (FORMAT csv);
