-- Four-eyes compares people, not only principals: a key records the portal
-- user who created it (NULL for keys made at merchant creation or by the
-- CLI), and its identity, which a rolled key inherits from its predecessor.

ALTER TABLE api_keys ADD COLUMN created_by TEXT;
ALTER TABLE api_keys ADD COLUMN identity TEXT;
UPDATE api_keys SET identity = id;
CREATE INDEX api_keys_identity ON api_keys (identity);
