-- The merchant portal: sessions (only a hash of the cookie token is stored),
-- failed logins for throttling, TOTP second factors (secrets sealed with
-- PAYD_SECRETS_KEY), and the audit log of every portal action.

CREATE TABLE portal_sessions (
    id            TEXT PRIMARY KEY,            -- SHA-256 hex of the cookie token
    user_id       TEXT NOT NULL REFERENCES users (id),
    merchant_id   TEXT NOT NULL,
    stage         TEXT NOT NULL CHECK (stage IN ('mfa','full')),
    mfa_failures  INTEGER NOT NULL DEFAULT 0,
    ip            TEXT NOT NULL,
    user_agent    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    last_seen_at  BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);

CREATE TABLE portal_login_failures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    email_hash  TEXT NOT NULL,                 -- SHA-256 hex of the lower-cased email typed
    ip          TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX portal_login_failures_email ON portal_login_failures (email_hash, created_at);
CREATE INDEX portal_login_failures_ip ON portal_login_failures (ip, created_at);

CREATE TABLE portal_totp (
    user_id     TEXT PRIMARY KEY REFERENCES users (id),
    secret      TEXT NOT NULL,                 -- sealed (AES-256-GCM) with PAYD_SECRETS_KEY
    enabled_at  BIGINT,                        -- NULL until the user confirms a first code
    last_step   BIGINT NOT NULL DEFAULT 0,     -- the last accepted time step: a code is never accepted twice
    created_at  BIGINT NOT NULL
);

CREATE TABLE portal_audit (
    id           TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    principal_id TEXT NOT NULL,
    action       TEXT NOT NULL,
    object_id    TEXT NOT NULL DEFAULT '',
    outcome      TEXT NOT NULL DEFAULT 'ok',
    detail       TEXT NOT NULL DEFAULT '',
    ip           TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL
);
CREATE INDEX portal_audit_merchant ON portal_audit (merchant_id, livemode, id);

-- The dashboard's chart sums today's payment intents per provider
-- (payments.VolumeSince): this index lets it read only today's rows.
CREATE INDEX portal_payment_intents_created ON payment_intents (merchant_id, livemode, created_at);
