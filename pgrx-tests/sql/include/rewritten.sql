-- The bytes of a column measured for the TOAST tests: rewritten under a method, and as stored now.
-- A copy of the table with `col` under `method`, every variable-length value written anew
-- (`|| ''`: INSERT ... SELECT alone would keep the compressed datums as they are); the bytes
-- pg_column_size then reports for `col`.
CREATE FUNCTION rewritten(src regclass, col name, method text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  copy text := src::text || '_' || method;
  cols text;
  bytes bigint;
BEGIN
  EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING ALL)', copy, src);
  EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET COMPRESSION %s', copy, col, method);
  SELECT string_agg(CASE atttypid WHEN 'text'::regtype THEN format('%I || %L', attname, '')
                                  WHEN 'bytea'::regtype THEN format('%I || %L::bytea', attname, '')
                                  ELSE quote_ident(attname) END, ', ' ORDER BY attnum)
    INTO cols FROM pg_attribute WHERE attrelid = src AND attnum > 0 AND NOT attisdropped;
  EXECUTE format('INSERT INTO %I SELECT %s FROM %s', copy, cols, src);
  EXECUTE format('SELECT sum(pg_column_size(%I)) FROM %I', col, copy) INTO bytes;
  EXECUTE format('DROP TABLE %I', copy);
  RETURN bytes;
END $$;
-- The bytes pg_column_size reports for `col` as the table stores it now.
CREATE FUNCTION stored_now(src regclass, col name) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE bytes bigint;
BEGIN
  EXECUTE format('SELECT sum(pg_column_size(%I)) FROM %s', col, src) INTO bytes;
  RETURN bytes;
END $$;
