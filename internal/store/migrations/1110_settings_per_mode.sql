-- Four-eyes controls per merchant AND mode: a test key can no longer touch
-- live money's threshold. Loosening a control (raising or clearing the
-- threshold) from an API key is a pending change another person approves.

CREATE TABLE merchant_settings (
    merchant_id               TEXT NOT NULL REFERENCES merchants (id),
    livemode                  BOOLEAN NOT NULL,
    approval_threshold_minor  BIGINT,                  -- NULL: no threshold
    updated_at                BIGINT NOT NULL,
    PRIMARY KEY (merchant_id, livemode)
);

-- Both modes start from the threshold each merchant had.
INSERT INTO merchant_settings (merchant_id, livemode, approval_threshold_minor, updated_at)
    SELECT id, (1 = 0), approval_threshold_minor, created_at FROM merchants;
INSERT INTO merchant_settings (merchant_id, livemode, approval_threshold_minor, updated_at)
    SELECT id, (1 = 1), approval_threshold_minor, created_at FROM merchants;

CREATE TABLE settings_changes (
    id                        TEXT PRIMARY KEY,        -- setchg_...
    merchant_id               TEXT NOT NULL REFERENCES merchants (id),
    livemode                  BOOLEAN NOT NULL,
    approval_threshold_minor  BIGINT,                  -- the value asked for (NULL: clear)
    status                    TEXT NOT NULL CHECK (status IN ('pending','applied','canceled')),
    requested_by              TEXT NOT NULL,           -- key_... or usr_...
    approved_by               TEXT,
    created_at                BIGINT NOT NULL,
    decided_at                BIGINT
);
CREATE INDEX settings_changes_merchant ON settings_changes (merchant_id, livemode, status);
