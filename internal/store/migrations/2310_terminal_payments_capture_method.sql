-- How a terminal payment's approval is captured: automatic, or manual (the
-- card gateway holds the authorisation and the intent waits in
-- requires_capture). Reconciliation records an approval whose answer was
-- lost the way its request would have, so a held authorisation is never
-- credited as captured.
ALTER TABLE terminal_payments ADD COLUMN capture_method TEXT NOT NULL DEFAULT 'automatic' CHECK (capture_method IN ('automatic','manual'));
