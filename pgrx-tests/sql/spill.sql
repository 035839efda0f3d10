-- Logical-decoding spill files: the thread's data shapes at reduced scale; the ordering of
-- strategies it found is asserted, not just printed.
CREATE EXTENSION compresslab;
-- 'Hello number n°'||i (the thread: 58.9% less with LZ4 streaming at 10 M rows). A spilled
-- change carries more than the value: the action, transaction, relation and tuple header; the
-- row below stands for that with the fields a change repeats from record to record.
CREATE TEMP TABLE hello AS
SELECT * FROM compresslab.simulate_spill($$
  SELECT 'INSERT' AS action, 1663 AS spcnode, 5 AS dbnode, 16384 AS relnode, 731 AS xid, i, 'Hello number n°' || i AS t
    FROM generate_series(1, 100000) i$$);
SELECT strategy, records, raw_bytes, raw_records = records AS all_raw, stored_bytes < raw_bytes AS saves,
       round((1 - stored_bytes::numeric / raw_bytes) * 100, 1) AS saved_percent
  FROM hello ORDER BY strategy;
-- the bare value alone: far less for streaming to find, yet it still saves
SELECT strategy, round((1 - stored_bytes::numeric / raw_bytes) * 100, 1) AS saved_percent
  FROM compresslab.simulate_spill($$SELECT 'Hello number n°' || i FROM generate_series(1, 100000) i$$) ORDER BY 1;
SELECT (SELECT stored_bytes FROM hello WHERE strategy = 'lz4_stream') < 0.6 * (SELECT raw_bytes FROM hello WHERE strategy = 'raw') AS lz4_stream_saves_over_40_percent,
       (SELECT stored_bytes FROM hello WHERE strategy = 'pglz') >= (SELECT raw_bytes FROM hello WHERE strategy = 'raw') AS pglz_per_record_gains_nothing;
-- compressible rows: every method gains, streaming most
CREATE TEMP TABLE compressible AS
SELECT * FROM compresslab.simulate_spill($$SELECT i, repeat('1.5,', 60) || (i % 7), repeat('2.25,', 30) FROM generate_series(1, 20000) i$$);
-- random values, repeated rows: per-record gains nothing, streaming wins
CREATE TEMP TABLE repeated AS
SELECT * FROM compresslab.simulate_spill($$
  SELECT r.v FROM generate_series(1, 100) rep, (SELECT g, string_agg(md5(g::text || ':' || k), '') AS v
    FROM generate_series(1, 40) g, generate_series(1, 20) k GROUP BY g) r ORDER BY rep, r.g$$);
-- all random: nobody gains
CREATE TEMP TABLE all_random AS
SELECT * FROM compresslab.simulate_spill($$SELECT decode(string_agg(lpad(to_hex((random() * 2147483647)::int), 8, '0'), ''), 'hex')
    FROM generate_series(1, 3000) i, generate_series(1, 100) k GROUP BY i$$);
SELECT 'compressible' AS data, strategy, stored_bytes < raw_bytes AS saves FROM compressible
UNION ALL SELECT 'repeated', strategy, stored_bytes < 0.5 * raw_bytes FROM repeated
UNION ALL SELECT 'all random', strategy, stored_bytes < 0.98 * raw_bytes FROM all_random
ORDER BY 1, 2;
SELECT (SELECT stored_bytes FROM compressible WHERE strategy = 'lz4_stream') < (SELECT stored_bytes FROM compressible WHERE strategy = 'lz4') AS streaming_beats_per_record,
       (SELECT stored_bytes FROM repeated WHERE strategy = 'pglz') >= (SELECT raw_bytes FROM repeated WHERE strategy = 'raw') AS pglz_misses_repeats,
       (SELECT stored_bytes FROM repeated WHERE strategy = 'lz4_stream') < 0.2 * (SELECT raw_bytes FROM repeated WHERE strategy = 'raw') AS lz4_stream_finds_repeats;
-- one bytea column is taken as bytes, one other column as its text, wider rows as row text
SELECT strategy, records, raw_bytes FROM compresslab.simulate_spill($$SELECT '\x000102'::bytea FROM generate_series(1, 10)$$, ARRAY['raw']);
SELECT strategy, records, raw_bytes FROM compresslab.simulate_spill($$SELECT 'abc' FROM generate_series(1, 10)$$, ARRAY['raw']);
SELECT strategy, records, raw_bytes FROM compresslab.simulate_spill($$SELECT 'abc', 1 FROM generate_series(1, 10)$$, ARRAY['raw']);
SELECT strategy, records FROM compresslab.simulate_spill($$SELECT NULL::text UNION ALL SELECT 'x'$$, ARRAY['raw', 'zstd_stream']) ORDER BY 1;
-- bad input
SELECT * FROM compresslab.simulate_spill('SELECT 1', ARRAY['snappy']);
SELECT * FROM compresslab.simulate_spill('SELECT 1', ARRAY[]::text[]);
SELECT * FROM compresslab.simulate_spill('SELECT 1', '{zstd_stream:99}');
-- 19 reports where in the query the error is (expected/spill_1.out), as a LINE and the QUERY.
SELECT * FROM compresslab.simulate_spill('SELECT FROM nowhere');
SELECT * FROM compresslab.simulate_spill('');
