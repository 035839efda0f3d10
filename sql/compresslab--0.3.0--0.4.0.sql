-- compresslab 0.3.0 -> 0.4.0 (ALTER EXTENSION compresslab UPDATE).
-- Turns a 0.3.0 installation into exactly what CREATE EXTENSION compresslab creates in 0.4.0;
-- pgrx-tests/upgrade.sh compares the two catalogues object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.4.0'" to load this file. \quit
