-- Recent API requests per merchant and mode, for `payd logs tail` and
-- GET /v1/request_logs (internal/requestlog). Written in batches by a
-- background flusher, never in a request's own transaction; pruned to the
-- newest rows of each merchant and mode and to a maximum age. No body, query
-- string, header or key material is kept: the principal's id, the method, the
-- URL path, the status, the request id and the latency.
CREATE TABLE request_logs (
    id           TEXT PRIMARY KEY,
    merchant_id  TEXT NOT NULL,
    livemode     BOOLEAN NOT NULL,
    principal_id TEXT NOT NULL,
    method       TEXT NOT NULL,
    path         TEXT NOT NULL,
    status       INTEGER NOT NULL,
    request_id   TEXT NOT NULL,
    latency_us   BIGINT NOT NULL,
    created_at   BIGINT NOT NULL
);
-- Newest first per merchant and mode (the list, and the count pruning).
CREATE INDEX request_logs_scope ON request_logs (merchant_id, livemode, id);
-- The age pruning.
CREATE INDEX request_logs_age ON request_logs (created_at);
