-- Facts about this payd installation, one row per name, each written once:
-- 'secrets_key_check' holds the check value of the secrets key the database's
-- sealed values use (never the key), so a process started with another key
-- refuses to start; 'demo_merchant' records that the demo merchant decision
-- was taken (made, or skipped because merchants existed), so it is made at
-- most once per database.

CREATE TABLE instance_facts (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
