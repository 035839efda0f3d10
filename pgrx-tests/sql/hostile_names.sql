-- What advise() prints is safe to run line by line, whatever a role named its tables: an
-- ordinary role names a schema, tables and columns with newlines, carriage returns, quotes,
-- backslashes, `;`, `--`, `$$`, a line starting with `\!` and non-ASCII; a superuser runs each
-- line of apply_sql alone with `psql -c`, as the README says; nothing happens but the
-- compression change and the values' rewrite (the CALL line, run on the hostile tables).
CREATE EXTENSION compresslab;
-- (every line runs, as a DBA pasting them would; the program fails if any line failed)
SELECT format('failed=0; while IFS= read -r line; do psql -X -q -v ON_ERROR_STOP=1 -h %s -p %s -d %s -c "$line" >/dev/null 2>&1 || failed=1; done; exit $failed',
              current_setting('unix_socket_directories'), current_setting('port'), current_database()) AS psql_each_line \gset
CREATE ROLE hostile_owner LOGIN;
CREATE SCHEMA hostile AUTHORIZATION hostile_owner;
CREATE SCHEMA U&"s\000A--" AUTHORIZATION hostile_owner;
SET ROLE hostile_owner;
CREATE FUNCTION hostile.json_text(g int) RETURNS text LANGUAGE sql AS $$
  SELECT jsonb_agg(jsonb_build_object('id', g * 100 + k, 'name', 'customer ' || (g * 100 + k),
                                      'email', md5((g * 100 + k)::text) || '@example.com'))::text
    FROM generate_series(1, 60) k $$;
CREATE TABLE hostile.U&"t\000AALTER ROLE hostile_owner SUPERUSER; --" (id int, body text COMPRESSION pglz);
CREATE TABLE hostile.U&"u\000A\\! id > pwned\000A" (id int, U&"c\000D\000A\\! id > pwned_too\000A" text COMPRESSION pglz);
CREATE TABLE U&"s\000A--".U&"v""$$;--\2028é" (id int, "x;$$--""\" text COMPRESSION pglz);
INSERT INTO hostile.U&"t\000AALTER ROLE hostile_owner SUPERUSER; --" SELECT g, hostile.json_text(g) FROM generate_series(1, 150) g;
INSERT INTO hostile.U&"u\000A\\! id > pwned\000A" SELECT g, hostile.json_text(g) FROM generate_series(1, 150) g;
INSERT INTO U&"s\000A--".U&"v""$$;--\2028é" SELECT g, hostile.json_text(g) FROM generate_series(1, 150) g;
ANALYZE hostile.U&"t\000AALTER ROLE hostile_owner SUPERUSER; --", hostile.U&"u\000A\\! id > pwned\000A",
        U&"s\000A--".U&"v""$$;--\2028é";
RESET ROLE;
CREATE TEMP TABLE hostile_advice AS
SELECT * FROM compresslab.advise('20 s', verbose => true) WHERE area = 'toast' AND apply_sql IS NOT NULL;
-- every hostile column is advised a change, each statement one line, no name raw
SELECT count(*) AS statements,
       count(*) FILTER (WHERE line ~ '^SET lock_timeout = ''1s''; ALTER TABLE .* ALTER COLUMN .* SET COMPRESSION lz4;$') AS alters,
       count(*) FILTER (WHERE line ~ '^CALL compresslab\.recompress\(E?''.*'', E?''.*'', ''lz4''\);$') AS calls
  FROM hostile_advice, unnest(string_to_array(apply_sql, E'\n')) line;
SELECT target ~ '[\n\r\u2028]' AS raw_line_break, count(*) FROM hostile_advice GROUP BY 1;
-- a superuser pastes them, line by line (CSV with a delimiter and quote no line holds: each
-- line as it is, where COPY's text format would double every backslash)
COPY (SELECT unnest(string_to_array(apply_sql, E'\n')) FROM hostile_advice) TO PROGRAM :'psql_each_line'
  WITH (FORMAT csv, DELIMITER E'\x02', QUOTE E'\x01');
SELECT rolsuper AS became_superuser FROM pg_roles WHERE rolname = 'hostile_owner';
SELECT pg_stat_file('pwned', true) IS NULL AND pg_stat_file('pwned_too', true) IS NULL AS no_shell_command_ran;
-- every value of the hostile columns rewritten: none left with pglz
SELECT (SELECT count(*) FROM hostile.U&"t\000AALTER ROLE hostile_owner SUPERUSER; --" WHERE pg_column_compression(body) = 'pglz')
     + (SELECT count(*) FROM hostile.U&"u\000A\\! id > pwned\000A" WHERE pg_column_compression(U&"c\000D\000A\\! id > pwned_too\000A") = 'pglz')
     + (SELECT count(*) FROM U&"s\000A--".U&"v""$$;--\2028é" WHERE pg_column_compression("x;$$--""\") = 'pglz') AS values_left_in_pglz;
SELECT count(*) AS columns, bool_and(a.attcompression = 'l') AS all_set_to_lz4
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname IN ('hostile', E's\n--') AND a.attnum > 1 AND c.relkind = 'r';
-- recompress's NOTICEs name the tables and columns as apply_sql does: each on one line. The
-- dry run's WAL counts an image of each page changed first since the last checkpoint: frozen
-- (no hint bit left to set) and checkpointed, every page is, whatever the server did meanwhile.
VACUUM (FREEZE) hostile.U&"t\000AALTER ROLE hostile_owner SUPERUSER; --", hostile.U&"u\000A\\! id > pwned\000A";
CHECKPOINT;
SET client_min_messages = notice;
CALL compresslab.recompress(E'hostile."t\nALTER ROLE hostile_owner SUPERUSER; --"', 'body', 'pglz', dry_run => true);
CALL compresslab.recompress(E'hostile."u\n\\! id > pwned\n"', E'c\r\n\\! id > pwned_too\n', 'pglz', dry_run => true);
RESET client_min_messages;
-- markdown() and svg_chart() of a hostile table's figures: the name stays in its cell (one
-- line per row, nine cells, nothing an HTML page would read as markup) and in well-formed SVG
CREATE TABLE hostile.U&"w|x\000A# heading\000D<script>alert(1)</script> & \\|" (body text);
INSERT INTO hostile.U&"w|x\000A# heading\000D<script>alert(1)</script> & \\|" SELECT hostile.json_text(1);
CREATE TEMP TABLE hostile_bench AS
SELECT jsonb_agg(b ORDER BY method) AS rows
  FROM compresslab.bench_column(U&'hostile."w|x\000A# heading\000D<script>alert(1)</script> & \\|"'::regclass,
                                'body', ARRAY['lz4', 'pglz'], ARRAY[0], 1) b;
SELECT rows -> 0 ->> 'source' ~ E'\n' AS source_has_newline FROM hostile_bench;
SELECT array_length(string_to_array(md, E'\n'), 1) AS lines,
       (SELECT count(*) FROM regexp_matches(split_part(md, E'\n', 3), '(?<!\\)(\\\\)*\|', 'g')) AS row_cell_bars,
       md ~ '[<\r]' AS has_raw_markup_or_cr,
       strpos(split_part(md, E'\n', 3), 'w\|x # heading &lt;script&gt;alert(1)&lt;/script&gt; &amp; \\\|') > 0 AS name_escaped
  FROM (SELECT compresslab.markdown(rows) AS md FROM hostile_bench) m;
-- (expected/hostile_names_1.out: a server built without libxml, as 18 is here, cannot parse
-- the SVG; the core test hostile_names_make_well_formed_svg checks it on every build)
SELECT xml_is_well_formed_document(compresslab.svg_chart(rows, E'a\x01<b>')) AS svg_well_formed FROM hostile_bench;
DROP SCHEMA hostile CASCADE;
DROP SCHEMA U&"s\000A--" CASCADE;
DROP ROLE hostile_owner;
