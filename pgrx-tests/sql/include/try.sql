-- try(q) in schema :try_schema (pg_temp, or a real schema for a script that reconnects): runs
-- q and returns 'ok', or the SQLSTATE and message of the error it raised.
CREATE FUNCTION :try_schema.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
