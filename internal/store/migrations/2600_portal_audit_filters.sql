-- GET /v1/audit_events filters a merchant's audit log in one mode by action
-- and by actor; these let either filter read only its own rows, newest first,
-- instead of every row of the merchant's log.
CREATE INDEX portal_audit_action ON portal_audit (merchant_id, livemode, action, id);
CREATE INDEX portal_audit_principal ON portal_audit (merchant_id, livemode, principal_id, id);
