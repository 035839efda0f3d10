-- compresslab.advise(:'budget') run in a psql of its own with client_min_messages = notice,
-- as a DBA sees it: its output (the count of rows, then every NOTICE, one a line) goes into
-- the temporary table advise_output, and the seconds it took into :advise_seconds. Used by
-- pgrx-tests/sql/advise.sql and memory_limited.sql (NOTICEs carry timings, so the tests
-- assert on lines of them rather than print them).
CREATE TEMP TABLE IF NOT EXISTS advise_output (line text);
TRUNCATE advise_output;
SELECT format('psql -X -q -A -t -h %s -p %s -d %s -c "SET client_min_messages = notice" '
              '-c "SELECT pg_catalog.count(*) FROM compresslab.advise(''%s'')" 2>&1',
              current_setting('unix_socket_directories'), current_setting('port'), current_database(),
              :'budget') AS advise_command \gset
SELECT clock_timestamp() AS advise_t0 \gset
COPY advise_output FROM PROGRAM :'advise_command';
SELECT extract(epoch FROM clock_timestamp() - :'advise_t0'::timestamptz) AS advise_seconds \gset
