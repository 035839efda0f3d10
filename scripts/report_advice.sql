-- The report's opening section: compresslab.advise() on the database the report runs on.
-- Prints Markdown to standard output (scripts/report.sh puts it first in results/report.md);
-- creates nothing but temporary tables. Variables: budget (an interval, e.g. '30 s'), and
-- columns_chart: the file the chart of the columns' stored bytes goes to (report.sh sets it).
\set ON_ERROR_STOP 1
-- Only pg_catalog's operators, functions and types, whatever the role's or database's search_path
-- says: a schema another role owns must not run its code as the DBA (temporary tables last).
SET search_path = pg_catalog, pg_temp;
\pset footer off
SET client_min_messages = warning;
\qecho '## Advice: should this server change wal_compression or TOAST compression?'
\qecho
SELECT format('`SELECT * FROM compresslab.advise(%L)` on database `%s` (%s): one row per decision. `now`/`then`: a column''s stored bytes in total; for WAL and spill, the bytes over `period` (what pg_stat_wal, pg_stat_replication_slots or the archive''s WAL observed: measured, not extrapolated), and `per_day_now`/`per_day_then` the same scaled to a day. Columns storing under 1 MB each are one row (`verbose => true` lists them). CPU is the server''s own code. The rules are in docs/advisor.md.',
              :'budget', current_database(), pg_size_pretty(pg_database_size(current_database()))) AS advice_intro \gset
\qecho :advice_intro
\qecho
CREATE TEMP TABLE report_advice AS SELECT * FROM compresslab.advise(:'budget');
\qecho '```'
SELECT area, target, current, recommended, pg_size_pretty(bytes_now) AS now, pg_size_pretty(bytes_recommended) AS then,
       justify_hours(date_trunc('second', observed_period)) AS period, pg_size_pretty(bytes_per_day_now) AS per_day_now,
       pg_size_pretty(bytes_per_day_recommended) AS per_day_then, round(saving_percent::numeric, 1) AS saving_percent,
       round(compress_cpu_seconds_per_gb::numeric, 2) AS compress_s_per_gb,
       round(decompress_cpu_seconds_per_gb::numeric, 2) AS decompress_s_per_gb, confidence
  FROM report_advice ORDER BY array_position(ARRAY['wal_compression', 'toast', 'spill'], area), bytes_now DESC;
\qecho '```'
\qecho
\qecho 'To apply:'
\qecho
\qecho '```sql'
\pset format unaligned
\pset tuples_only on
SELECT coalesce(string_agg(apply_sql, E'\n' ORDER BY area DESC, target), '-- nothing to change') FROM report_advice;
\qecho '```'
\qecho
\qecho 'Why, and what was measured:'
\qecho
SELECT string_agg(format('- **%s** `%s`: %s *Measured:* %s (confidence %s).', area, target, note, basis, confidence), E'\n'
                  ORDER BY array_position(ARRAY['wal_compression', 'toast', 'spill'], area), bytes_now DESC)
  FROM report_advice;
\pset tuples_only off
\pset format aligned
-- The advice's largest columns (eight at most, one column a row), each sampled again under
-- every method with estimate_toast_compression: their stored bytes with 95% intervals, in a
-- table and in the chart columns_chart. A target names its column as quote_ident would.
CREATE TEMP TABLE column_bytes AS
SELECT a.target AS "column", e.method, e.stored_bytes, e.stored_bytes_low, e.stored_bytes_high, a.bytes_now
  FROM (SELECT r.target, r.bytes_now, c.oid AS relid, t.attname
          FROM report_advice r, pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               JOIN pg_attribute t ON t.attrelid = c.oid AND t.attnum > 0 AND NOT t.attisdropped
         WHERE r.area = 'toast' AND r.target = quote_ident(n.nspname) || '.' || quote_ident(c.relname) || '.' || quote_ident(t.attname)
         ORDER BY r.bytes_now DESC NULLS LAST LIMIT 8) a,
       compresslab.estimate_toast_compression(a.relid::regclass, a.attname, 500) e;
\qecho
\qecho '## Columns: what they would store under each method'
\qecho
\qecho 'The advice''s largest columns (at most eight), each sampled again (500 values, `estimate_toast_compression`): the bytes it would store under each method, with the 95% interval. The chart `columns.svg` draws the same rows.'
\qecho
\qecho '```'
SELECT "column", method, pg_size_pretty(stored_bytes) AS stored,
       pg_size_pretty(stored_bytes_low) || '..' || pg_size_pretty(stored_bytes_high) AS interval_95
  FROM column_bytes ORDER BY bytes_now DESC NULLS LAST, "column", method;
\qecho '```'
\if :{?columns_chart}
\pset format unaligned
\pset tuples_only on
\o :columns_chart
SELECT compresslab.svg_stored_chart(coalesce(jsonb_agg(b ORDER BY b.bytes_now DESC NULLS LAST, b."column"), '[]'),
                                    'stored bytes of the columns of ' || current_database() || ', under each method')
  FROM column_bytes b;
\o
\endif
\pset tuples_only off
\pset format aligned
\qecho
