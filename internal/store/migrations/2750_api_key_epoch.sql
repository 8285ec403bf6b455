-- Every process holds recently verified API keys in memory for a few seconds
-- (internal/auth KeyCache). api_key_epoch is the one number they compare
-- against what they last read, at most every quarter second: any change to
-- an API key (revoked, rolled, deleted, by payd of any release or by hand)
-- or to a merchant row increments it, in the changing transaction, through
-- these triggers, and a process that sees it move forgets every key it held.
CREATE TABLE api_key_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL);
INSERT INTO api_key_epoch (id, epoch) VALUES (1, 0);
-- SQLite runs a trigger's statements itself (PostgreSQL calls a function): -- engine-specific
CREATE TRIGGER api_keys_update_epoch AFTER UPDATE ON api_keys BEGIN UPDATE api_key_epoch SET epoch = epoch + 1 WHERE id = 1; END; -- engine-specific
CREATE TRIGGER api_keys_delete_epoch AFTER DELETE ON api_keys BEGIN UPDATE api_key_epoch SET epoch = epoch + 1 WHERE id = 1; END; -- engine-specific
CREATE TRIGGER merchants_update_epoch AFTER UPDATE ON merchants BEGIN UPDATE api_key_epoch SET epoch = epoch + 1 WHERE id = 1; END; -- engine-specific
CREATE TRIGGER merchants_delete_epoch AFTER DELETE ON merchants BEGIN UPDATE api_key_epoch SET epoch = epoch + 1 WHERE id = 1; END; -- engine-specific
