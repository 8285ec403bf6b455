package merchants

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// Key is an API key as listed (never its secret).
type Key struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	Kind      string     `json:"kind"`
	Livemode  bool       `json:"livemode"`
	Display   string     `json:"display"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewKey is a freshly made key with its secret, shown once.
type NewKey struct {
	Key
	Secret string `json:"secret"`
}

func insertKey(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, kind string) (string, string, error) {
	return insertKeyBy(ctx, tx, merchantID, livemode, kind, "", "")
}

// insertKeyBy makes a key created by a portal user (createdBy, "" for none)
// with an identity: its own id, or the identity of the key it rolls.
func insertKeyBy(ctx context.Context, tx *store.Tx, merchantID string, livemode bool, kind, createdBy, identity string) (string, string, error) {
	secret := ids.Secret(auth.KeyPrefix(kind, livemode), 32)
	id := ids.New("key_")
	if identity == "" {
		identity = id
	}
	var by any
	if createdBy != "" {
		by = createdBy
	}
	display := secret[:len(auth.KeyPrefix(kind, livemode))] + "…" + secret[len(secret)-4:]
	_, err := tx.Exec(ctx, `INSERT INTO api_keys (id, merchant_id, livemode, kind, secret_hash, display, created_at, created_by, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, merchantID, livemode, kind, auth.HashKey(secret), display, store.Micros(tx.Now()), by, identity)
	return secret, id, err
}

// MaxActiveKeys is how many unrevoked API keys (secret and publishable
// together) a merchant may hold in one mode; making another is refused with
// 409 too_many_api_keys until one is revoked. Each key has its own upload and
// rate budget, so an unbounded number of keys would multiply them.
const MaxActiveKeys = 20

// errTooManyKeys refuses a key past MaxActiveKeys.
func errTooManyKeys(livemode bool) error {
	mode := "test"
	if livemode {
		mode = "live"
	}
	return errs.Conflict("too_many_api_keys", "a merchant may have at most %d active %s-mode API keys; revoke one before making another", MaxActiveKeys, mode)
}

// CreateKey makes one more key. Live keys need approved KYC and at least one
// connected live provider.
func (s *Service) CreateKey(ctx context.Context, merchantID string, livemode bool, kind string) (NewKey, error) {
	return s.CreateKeyBy(ctx, merchantID, livemode, kind, "", "")
}

// CreateKeyBy makes a key as a portal user (userID, recorded as the key's
// creator so four-eyes treats the user and the key as one person). With
// rolls set (a key of the merchant in the same mode) the new key continues
// that key's identity and the old one is revoked in the same transaction.
func (s *Service) CreateKeyBy(ctx context.Context, merchantID string, livemode bool, kind, userID, rolls string) (NewKey, error) {
	return s.createKey(ctx, merchantID, livemode, kind, userID, rolls, "")
}

// createKey is CreateKeyBy; with auditAs set it also writes the merchant's
// audit row naming that principal, in the key's transaction.
func (s *Service) createKey(ctx context.Context, merchantID string, livemode bool, kind, userID, rolls, auditAs string) (NewKey, error) {
	if kind != auth.KindSecret && kind != auth.KindPublishable {
		return NewKey{}, errs.Invalid("kind", "parameter_invalid", "kind must be secret or publishable")
	}
	m, err := Get(ctx, s.db, merchantID)
	if err != nil {
		return NewKey{}, err
	}
	if livemode {
		if m.KYCStatus != "approved" {
			return NewKey{}, errs.Permission("kyc_not_approved", "live keys need approved KYC (merchant %s is %s)", m.ID, m.KYCStatus)
		}
		provs, err := s.ConnectedProviders(ctx, merchantID)
		if err != nil {
			return NewKey{}, err
		}
		if len(provs) == 0 {
			return NewKey{}, errs.Permission("no_live_provider", "live keys need at least one connected live provider")
		}
	}
	var out NewKey
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		// The merchant's row is locked (PostgreSQL; SQLite's writers are
		// already serialised) so two concurrent creations cannot both
		// see room for one more key.
		var locked string
		if err := tx.QueryRow(ctx, "SELECT id FROM merchants WHERE id = ?"+s.db.Dialect().ForUpdate(), merchantID).Scan(&locked); err != nil {
			return err
		}
		identity := ""
		if rolls != "" {
			err := tx.QueryRow(ctx, "SELECT identity FROM api_keys WHERE id = ? AND merchant_id = ? AND livemode = ? AND kind = ? AND revoked_at IS NULL",
				rolls, merchantID, livemode, kind).Scan(&identity)
			if store.IsNotFound(err) {
				return errs.NotFound("api_key", rolls)
			}
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE api_keys SET revoked_at = ? WHERE id = ?", store.Micros(tx.Now()), rolls); err != nil {
				return err
			}
			tx.AfterCommit(s.keys.Invalidate)
		}
		var active int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM api_keys WHERE merchant_id = ? AND livemode = ? AND revoked_at IS NULL",
			merchantID, livemode).Scan(&active); err != nil {
			return err
		}
		if active >= MaxActiveKeys {
			return errTooManyKeys(livemode)
		}
		secret, id, err := insertKeyBy(ctx, tx, merchantID, livemode, kind, userID, identity)
		if err != nil {
			return err
		}
		out = NewKey{Key: Key{ID: id, Object: "api_key", Kind: kind, Livemode: livemode, CreatedAt: tx.Now(),
			Display: secret[:len(auth.KeyPrefix(kind, livemode))] + "…" + secret[len(secret)-4:]}, Secret: secret}
		if auditAs != "" {
			return AuditInTx(ctx, tx, merchantID, livemode, auditAs, "api_key.create", id, kind+" key "+out.Display)
		}
		return nil
	})
	return out, err
}

// RevokeKey revokes a key of the merchant; it stops working at once in this
// process and within auth.DefaultEpochCheck (a quarter second) in others.
func (s *Service) RevokeKey(ctx context.Context, merchantID, keyID string) error {
	return s.revokeKey(ctx, merchantID, keyID, "")
}

// ListKeys lists a merchant's keys in one mode, newest first.
func (s *Service) ListKeys(ctx context.Context, merchantID string, livemode bool) ([]Key, error) {
	rows, err := s.db.Query(ctx, `SELECT id, kind, livemode, display, created_at, revoked_at FROM api_keys
		WHERE merchant_id = ? AND livemode = ? ORDER BY id DESC`, merchantID, livemode)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		var k Key
		var created int64
		var revoked sql.NullInt64
		if err := rows.Scan(&k.ID, &k.Kind, &k.Livemode, &k.Display, &created, &revoked); err != nil {
			return nil, err
		}
		k.Object = "api_key"
		k.CreatedAt = store.FromMicros(created)
		k.RevokedAt = store.NullMicros(revoked)
		out = append(out, k)
	}
	return out, rows.Err()
}

// Authenticate resolves a presented API key to its principal. Unknown,
// malformed and revoked keys all give the same 401, revealing nothing. A key
// verified in the last few seconds is answered from memory (auth.KeyCache);
// a revocation in any process is honoured within auth.DefaultEpochCheck.
func (s *Service) Authenticate(ctx context.Context, key string) (auth.Principal, error) {
	unauth := &errs.Error{Kind: errs.KindUnauthenticated, Code: "invalid_api_key", Message: "invalid API key provided"}
	kind, live, ok := auth.ParseKeyPrefix(key)
	if !ok || len(key) > 200 {
		return auth.Principal{}, unauth
	}
	sum := auth.SumKey(key)
	if p, ok := s.keys.Lookup(ctx, sum); ok && p.Kind == kind && p.Livemode == live {
		return p, nil
	}
	gen := s.keys.Generation()
	hash := hex.EncodeToString(sum[:])
	var p auth.Principal
	var storedHash string
	var revoked sql.NullInt64
	err := s.db.QueryRow(ctx, `SELECT id, merchant_id, livemode, kind, secret_hash, revoked_at FROM api_keys WHERE secret_hash = ?`, hash).
		Scan(&p.ID, &p.MerchantID, &p.Livemode, &p.Kind, &storedHash, &revoked)
	if store.IsNotFound(err) {
		return auth.Principal{}, unauth
	}
	if err != nil {
		return auth.Principal{}, err
	}
	if !auth.EqualHash(storedHash, hash) || revoked.Valid || p.Kind != kind || p.Livemode != live {
		return auth.Principal{}, unauth
	}
	s.keys.Put(sum, p, gen)
	return p, nil
}

// keyEpoch reads the number every change to an API key or a merchant
// increments (migration 2750's triggers): the key cache's freshness check.
func (s *Service) keyEpoch(ctx context.Context) (int64, error) {
	var e int64
	err := s.db.QueryRow(ctx, "SELECT epoch FROM api_key_epoch WHERE id = 1").Scan(&e)
	return e, err
}

// OperatorPrincipal is the principal an operator's command-line key actions
// are recorded under in the merchant's audit log.
const OperatorPrincipal = "operator"

// CreateKeyByOperator is CreateKey for `payd key create`: the key and the
// audit row naming the operator commit together.
func (s *Service) CreateKeyByOperator(ctx context.Context, merchantID string, livemode bool, kind string) (NewKey, error) {
	return s.createKey(ctx, merchantID, livemode, kind, "", "", OperatorPrincipal)
}

// RevokeKeyByOperator is RevokeKey for `payd key revoke`: the revocation
// and the audit row naming the operator commit together.
func (s *Service) RevokeKeyByOperator(ctx context.Context, merchantID, keyID string) error {
	return s.revokeKey(ctx, merchantID, keyID, OperatorPrincipal)
}

// revokeKey revokes a key once (the guard is in the UPDATE) and, when
// auditAs names who did it, writes the audit row in the same transaction.
func (s *Service) revokeKey(ctx context.Context, merchantID, keyID, auditAs string) error {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var live bool
		err := tx.QueryRow(ctx, "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND merchant_id = ? AND revoked_at IS NULL RETURNING livemode",
			store.Micros(tx.Now()), keyID, merchantID).Scan(&live)
		if errors.Is(err, sql.ErrNoRows) || store.IsNotFound(err) {
			return errs.NotFound("api_key", keyID)
		}
		if err != nil || auditAs == "" {
			return err
		}
		return AuditInTx(ctx, tx, merchantID, live, auditAs, "api_key.revoke", keyID, "")
	})
	if err == nil {
		s.keys.Invalidate()
	}
	return err
}
