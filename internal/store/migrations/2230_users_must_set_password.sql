-- A portal user made by an admin signs in first with the password the admin
-- gave (an invitation) and must choose their own before anything else works;
-- set while that invitation password is the user's password.
ALTER TABLE users ADD COLUMN must_set_password BOOLEAN NOT NULL DEFAULT FALSE;
