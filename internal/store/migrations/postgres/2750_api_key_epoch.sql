-- Every process holds recently verified API keys in memory for a few seconds
-- (internal/auth KeyCache). api_key_epoch is the one number they compare
-- against what they last read, at most every quarter second: any change to
-- an API key (revoked, rolled, deleted, by payd of any release or by hand)
-- or to a merchant row increments it, in the changing transaction, through
-- these triggers, and a process that sees it move forgets every key it held.
CREATE TABLE api_key_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL);
INSERT INTO api_key_epoch (id, epoch) VALUES (1, 0);
CREATE FUNCTION api_key_epoch_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE api_key_epoch SET epoch = epoch + 1 WHERE id = 1; RETURN NULL; END $$; -- engine-specific
CREATE TRIGGER api_keys_update_epoch AFTER UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_key_epoch_bump(); -- engine-specific
CREATE TRIGGER api_keys_delete_epoch AFTER DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_key_epoch_bump(); -- engine-specific
CREATE TRIGGER merchants_update_epoch AFTER UPDATE ON merchants FOR EACH ROW EXECUTE FUNCTION api_key_epoch_bump(); -- engine-specific
CREATE TRIGGER merchants_delete_epoch AFTER DELETE ON merchants FOR EACH ROW EXECUTE FUNCTION api_key_epoch_bump(); -- engine-specific
