-- Who made a portal user (the admin's user id; NULL for users made at
-- merchant creation or by the CLI), so four-eyes can refuse an approval by a
-- user an admin made after asking for the money movement themselves.
ALTER TABLE users ADD COLUMN created_by TEXT;
