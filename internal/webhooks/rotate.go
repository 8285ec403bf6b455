package webhooks

import (
	"context"
	"time"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// Rotating an endpoint's signing secret. The new secret signs at once; the
// old one keeps signing beside it for a grace period, so a receiver can
// switch to the new secret whenever it is ready: each delivery meanwhile
// carries one v1 signature per secret. Only the secret a rotation replaces is
// kept: rotating again during the grace period ends the older one's at once.
const (
	// DefaultSecretGrace is how long the old secret keeps signing when the
	// request does not say.
	DefaultSecretGrace = 24 * time.Hour
	// MaxSecretGrace bounds it.
	MaxSecretGrace = 7 * 24 * time.Hour
	// AuditRotateSecret is a rotation's action in the audit log.
	AuditRotateSecret = "webhook_endpoint.rotate_secret"
)

// RotateSecret gives an endpoint a new signing secret and returns the
// endpoint with it (shown only in this answer, as at creation). The old
// secret signs too until grace has passed (0: it stops at once). With idem,
// a repeat answers the same secret (replayed true) while no later rotation
// replaced it (409 idempotency_key_superseded afterwards), and the key with
// another request is 422; like creation, the key is kept beside the endpoint
// so the secret is never stored in clear. With by (the principal, such as
// an API key's id) the rotation is a row of the merchant's audit log written
// in its own transaction; a replay writes none. The portal passes "" and
// audits the attempt itself, refusals included.
func (s *Service) RotateSecret(ctx context.Context, o Owner, id string, grace time.Duration, idem *Idempotency, by string) (ep Endpoint, replayed bool, err error) {
	if grace < 0 || grace > MaxSecretGrace {
		return Endpoint{}, false, errs.Invalid("expires_in_seconds", "parameter_invalid",
			"expires_in_seconds must be from 0 (the old secret stops signing at once) to %d (7 days)", int(MaxSecretGrace/time.Second))
	}
	if idem != nil {
		if ep, ok, err := s.replayRotation(ctx, o, id, idem); ok || err != nil {
			return ep, ok, err
		}
	}
	// Only a live endpoint needs PAYD_SECRETS_KEY; the mode is the key's.
	secret := newSecret()
	sealed, err := s.sealSecret(ctx, secret, id, o.Livemode)
	if err != nil {
		return Endpoint{}, false, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if ep, err = readEndpoint(ctx, tx, o, id, tx.Dialect().ForUpdate()); err != nil {
			return err
		}
		now := tx.Now()
		var prevSealed, prevExpires any
		ep.PreviousSecretExpiresAt = nil
		if grace > 0 {
			until := now.Add(grace)
			prevSealed, prevExpires = ep.sealed, store.Micros(until)
			ep.PreviousSecretExpiresAt = &Time{until}
		}
		res, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET secret_sealed = ?, previous_secret_sealed = ?, previous_secret_expires_at = ?,
			secret_version = secret_version + 1, updated_at = ? WHERE id = ? AND merchant_id = ? AND livemode = ? AND deleted_at IS NULL AND secret_version = ?`,
			sealed, prevSealed, prevExpires, store.Micros(now), id, o.MerchantID, o.Livemode, ep.secretVersion)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errs.InvalidState("webhook endpoint %s changed while this request ran; retrieve it and try again", id)
		}
		ep.secretVersion++
		if by != "" {
			if err := merchants.AuditInTx(ctx, tx, o.MerchantID, o.Livemode, by, AuditRotateSecret, id, "old secret signs for "+grace.String()); err != nil {
				return err
			}
		}
		if idem != nil {
			_, err = tx.Exec(ctx, `INSERT INTO webhook_secret_rotations (merchant_id, livemode, idem_principal, idem_key, idem_hash, endpoint_id,
				secret_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, o.MerchantID, o.Livemode, idem.PrincipalID, idem.Key, idem.RequestHash,
				id, ep.secretVersion, store.Micros(now))
		}
		return err
	})
	if store.IsConflict(err) && idem != nil {
		// The same key raced us and won: answer what it made.
		if ep, ok, err := s.replayRotation(ctx, o, id, idem); ok || err != nil {
			return ep, ok, err
		}
	}
	if err != nil {
		return Endpoint{}, false, err
	}
	ep.Secret = secret
	return ep, false, nil
}

// replayRotation answers a repeated rotation request: the endpoint with the
// secret that rotation made, if it is still the current one.
func (s *Service) replayRotation(ctx context.Context, o Owner, id string, idem *Idempotency) (Endpoint, bool, error) {
	var hash, endpointID string
	var version int
	err := s.db.QueryRow(ctx, `SELECT idem_hash, endpoint_id, secret_version FROM webhook_secret_rotations
		WHERE merchant_id = ? AND livemode = ? AND idem_principal = ? AND idem_key = ?`, o.MerchantID, o.Livemode, idem.PrincipalID, idem.Key).
		Scan(&hash, &endpointID, &version)
	if store.IsNotFound(err) {
		return Endpoint{}, false, nil
	}
	if err != nil {
		return Endpoint{}, false, err
	}
	if hash != idem.RequestHash || endpointID != id {
		return Endpoint{}, false, &errs.Error{Kind: errs.KindIdempotency, Status: 422, Code: "idempotency_key_reused",
			Message: "this Idempotency-Key was used with a different request; use a new key for a new request"}
	}
	ep, err := getEndpoint(ctx, s.db, o, id)
	if err != nil {
		return Endpoint{}, false, err
	}
	if ep.secretVersion != version {
		return Endpoint{}, false, errs.Conflict("idempotency_key_superseded",
			"the rotation made with this Idempotency-Key was followed by another; its secret is no longer the endpoint's secret")
	}
	if ep.Secret, err = s.openSecret(ctx, ep.sealed, ep.ID); err != nil {
		return Endpoint{}, false, err
	}
	return ep, true, nil
}
