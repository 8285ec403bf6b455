// Package idempotency stores the responses of requests made with an
// Idempotency-Key so that a retry replays the first answer byte for byte.
//
// A key is claimed with Begin (an INSERT that only one of many concurrent
// requests can win, on both engines); the winner runs the request and stores
// the response with Complete. Others see the claim: a different request under
// the same key is refused (422), the same request while the first is running
// waits for nothing and gets 409, and once stored every retry gets the stored
// response. A claim whose request died (process killed) expires after its
// lease, and responses are kept 24 hours.
package idempotency

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/store"
)

// Retention is how long stored responses are replayed (CONTRACT section 2).
const Retention = 24 * time.Hour

// Lease is how long an in-flight claim blocks retries before it is presumed
// abandoned. It exceeds every request timeout payd has (the sandbox
// network_timeout delay included, in its default configuration).
const Lease = 2 * time.Minute

// Scope is whose key it is: CONTRACT scopes keys by merchant, mode and key.
type Scope struct {
	MerchantID  string
	Livemode    bool
	PrincipalID string
}

// Stored is a recorded response.
type Stored struct {
	Status      int
	ContentType string
	Body        []byte
}

// RequestHash fingerprints a request: method, path and body.
func RequestHash(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Begin claims key for this request. It returns (nil, nil) when the caller
// owns the key and must run the request, a stored response to replay, or an
// error: 422 idempotency_key_reused or 409 idempotency_key_in_use.
func Begin(ctx context.Context, db *store.DB, s Scope, key, method, path, hash string) (*Stored, error) {
	var replay *Stored
	err := db.InTx(ctx, func(tx *store.Tx) error {
		replay = nil
		if err := asyncCommit(ctx, tx); err != nil {
			return err
		}
		now := tx.Now()
		res, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (merchant_id, livemode, principal_id, idem_key, method, path, request_hash, state, locked_until, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'in_flight', ?, ?) ON CONFLICT (merchant_id, livemode, principal_id, idem_key) DO NOTHING`,
			s.MerchantID, s.Livemode, s.PrincipalID, key, method, path, hash, store.Micros(now.Add(Lease)), store.Micros(now))
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var m, p, h, state string
		var status sql.NullInt64
		var ctype sql.NullString
		var body []byte
		var lockedUntil, created int64
		err = tx.QueryRow(ctx, `SELECT method, path, request_hash, state, status_code, content_type, body, locked_until, created_at
			FROM idempotency_keys WHERE merchant_id = ? AND livemode = ? AND principal_id = ? AND idem_key = ?`+tx.Dialect().ForUpdate(),
			s.MerchantID, s.Livemode, s.PrincipalID, key).Scan(&m, &p, &h, &state, &status, &ctype, &body, &lockedUntil, &created)
		if err != nil {
			return err
		}
		expired := store.FromMicros(created).Add(Retention).Before(now)
		abandoned := state == "in_flight" && store.FromMicros(lockedUntil).Before(now)
		if expired || abandoned {
			_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET method = ?, path = ?, request_hash = ?, state = 'in_flight', status_code = NULL,
				content_type = NULL, body = NULL, locked_until = ?, created_at = ? WHERE merchant_id = ? AND livemode = ? AND principal_id = ? AND idem_key = ?`,
				method, path, hash, store.Micros(now.Add(Lease)), store.Micros(now), s.MerchantID, s.Livemode, s.PrincipalID, key)
			return err
		}
		if m != method || p != path || h != hash {
			return &errs.Error{Kind: errs.KindIdempotency, Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused",
				Message: "this Idempotency-Key was used with a different request; use a new key for a new request"}
		}
		if state == "in_flight" {
			return &errs.Error{Kind: errs.KindIdempotency, Status: http.StatusConflict, Code: "idempotency_key_in_use",
				Message: "a request with this Idempotency-Key is still being processed; retry later"}
		}
		replay = &Stored{Status: int(status.Int64), ContentType: ctype.String, Body: body}
		return nil
	})
	return replay, err
}

// asyncCommit lets a claim's commit return before its WAL record is flushed
// (PostgreSQL). It is safe: the request's effect commits later, synchronously,
// and that flush covers every earlier WAL record, the claim included; if a
// crash loses the claim, it also lost the effect, which had not happened yet.
// It saves one disk flush per idempotent request.
func asyncCommit(ctx context.Context, tx *store.Tx) error {
	if tx.Dialect() != store.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off")
	return err
}

// Complete stores the response of the request that owns key.
func Complete(ctx context.Context, db *store.DB, s Scope, key string, resp Stored) error {
	_, err := db.Exec(ctx, `UPDATE idempotency_keys SET state = 'done', status_code = ?, content_type = ?, body = ?
		WHERE merchant_id = ? AND livemode = ? AND principal_id = ? AND idem_key = ? AND state = 'in_flight'`,
		resp.Status, resp.ContentType, resp.Body, s.MerchantID, s.Livemode, s.PrincipalID, key)
	return err
}

// Release drops the claim of a request that failed without an answer worth
// replaying (a 5xx), so a retry runs it again.
func Release(ctx context.Context, db *store.DB, s Scope, key string) error {
	_, err := db.Exec(ctx, `DELETE FROM idempotency_keys WHERE merchant_id = ? AND livemode = ? AND principal_id = ? AND idem_key = ? AND state = 'in_flight'`,
		s.MerchantID, s.Livemode, s.PrincipalID, key)
	return err
}

// Purge deletes keys older than the retention period.
func Purge(ctx context.Context, db *store.DB) (int64, error) {
	res, err := db.Exec(ctx, "DELETE FROM idempotency_keys WHERE created_at < ?", store.Micros(db.Now().Add(-Retention)))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
