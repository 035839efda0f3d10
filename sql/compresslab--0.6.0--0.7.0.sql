-- compresslab 0.6.0 -> 0.7.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.6.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.7.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.7.0'" to load this file. \quit
