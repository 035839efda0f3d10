\echo 'compresslab smoke report'
SELECT compresslab.version() AS compresslab, current_setting('server_version') AS postgresql;
\echo 'codecs and checksums of this build, each exercised once'
SELECT kind, name, ok, detail FROM compresslab.capabilities() ORDER BY kind DESC, name;
