-- Login throttling as counters, one row per key, reserved with a
-- compare-and-set before any password is hashed (so concurrent guesses
-- cannot all slip under the limit), and a per-account guard on the second
-- factor that no correct password resets.

CREATE TABLE portal_throttle (
    bucket        TEXT PRIMARY KEY,            -- 'ip:<addr>', 'email:<hash>' or 'pair:<hash>:<addr>'
    failures      INTEGER NOT NULL DEFAULT 0,  -- failures (and reservations in flight) in the window
    window_start  BIGINT NOT NULL DEFAULT 0    -- when the current window began (µs)
);
CREATE INDEX portal_throttle_window ON portal_throttle (window_start);

CREATE TABLE portal_mfa_guard (
    user_id       TEXT PRIMARY KEY REFERENCES users (id),
    failures      INTEGER NOT NULL DEFAULT 0,  -- wrong codes since the last right one or the last lock
    locked_until  BIGINT NOT NULL DEFAULT 0    -- no code is checked before this instant (µs)
);

-- The row-per-failure table this replaces.
DROP TABLE portal_login_failures;
