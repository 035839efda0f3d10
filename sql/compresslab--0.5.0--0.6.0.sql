-- compresslab 0.5.0 -> 0.6.0 (run by ALTER EXTENSION compresslab UPDATE).
-- Each block below names the change it carries; pgrx-tests/upgrade.sh compares the result with
-- a fresh install of 0.6.0, object by object.
\echo Use "ALTER EXTENSION compresslab UPDATE TO '0.6.0'" to load this file. \quit
