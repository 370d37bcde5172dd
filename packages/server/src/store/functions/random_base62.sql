-- random_base62: `p_length` base62 characters from random(): delivery ids past those the caller drew
-- (outbox_enqueue). VOLATILE, so a statement that calls it per row gets a new id per row.
CREATE OR REPLACE FUNCTION random_base62(p_length integer) RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 1 + floor(random() * 62)::int, 1), '')
    FROM generate_series(1, p_length)
$$;
