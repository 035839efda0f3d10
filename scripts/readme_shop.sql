-- The database of the example in docs/advisor.md ("An example"):
-- a table `orders` of 20,000 rows (a customer name, a JSON list of 30 items, a note of 0 to
-- 2,400 bytes), a checkpoint, then an update of every fifth row's note (so that the WAL holds
-- full-page images). Run as a superuser (CHECKPOINT) on an empty database:
--   createdb shop && psql -X -v ON_ERROR_STOP=1 -d shop -f scripts/readme_shop.sql
-- then the report on it: REPORT_BUDGET='10 s' bash scripts/report.sh --dbname 'dbname=shop ...'.
SET search_path = pg_catalog, public;
CREATE EXTENSION IF NOT EXISTS compresslab;
CREATE TABLE public.orders (id int PRIMARY KEY, customer text, items text, note text);
INSERT INTO public.orders
SELECT i, 'customer ' || md5(i::text),
       (SELECT jsonb_agg(jsonb_build_object('sku', 'SKU-' || ((i * 31 + k) % 5000), 'qty', 1 + (i + k) % 9,
                                            'price', round(((i * k) % 10000) / 100.0, 2)))::text
          FROM generate_series(1, 30) k),
       repeat('note ' || (i % 97) || ' ', (i * 7919) % 300)
  FROM generate_series(1, 20000) i;
ANALYZE public.orders;
CHECKPOINT;
UPDATE public.orders SET note = note || '.' WHERE id % 5 = 0;
