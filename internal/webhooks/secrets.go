package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
)

// Endpoint signing secrets are needed in clear to sign each delivery (the
// HMAC key is the whole "whsec_..." string), so they cannot be hashed like API
// keys. They are sealed with AES-256-GCM, bound to the endpoint id:
//   - "v1:..." under PAYD_SECRETS_KEY (secretbox), which never reaches the
//     database: a copy of the database alone does not reveal them;
//   - "k1:v1:..." under a key kept in the webhook_keyring table, for test-mode
//     endpoints when PAYD_SECRETS_KEY is not set (a newcomer's first
//     `payd serve`). That only keeps secrets out of plain sight in dumps of
//     the endpoints table; live endpoints therefore require PAYD_SECRETS_KEY.

const keyringPrefix = "k1:"

// newSecret returns a fresh signing secret.
func newSecret() string { return ids.Secret("whsec_", 32) }

func (s *Service) sealSecret(ctx context.Context, secret, endpointID string, livemode bool) (string, error) {
	if sealed, err := s.box.Seal([]byte(secret), "webhook_endpoint/"+endpointID); err == nil {
		return sealed, nil
	}
	if livemode {
		return "", &errs.Error{Kind: errs.KindUnavailable, Code: "secrets_key_missing", Status: 503,
			Message: "live webhook endpoints need the server's PAYD_SECRETS_KEY to seal their signing secrets; ask the operator to configure it"}
	}
	kr, err := s.keyringBox(ctx)
	if err != nil {
		return "", err
	}
	sealed, err := kr.Seal([]byte(secret), "webhook_endpoint/"+endpointID)
	if err != nil {
		return "", err
	}
	return keyringPrefix + sealed, nil
}

func (s *Service) openSecret(ctx context.Context, sealed, endpointID string) (string, error) {
	box := s.box
	if strings.HasPrefix(sealed, keyringPrefix) {
		kr, err := s.keyringBox(ctx)
		if err != nil {
			return "", err
		}
		box, sealed = kr, strings.TrimPrefix(sealed, keyringPrefix)
	}
	pt, err := box.Open(sealed, "webhook_endpoint/"+endpointID)
	if err != nil {
		return "", err
	}
	return string(pt), nil
}

// keyringBox loads (making it on first use) the database's own sealing key.
// Several processes may race to make it: the insert is a no-op for all but
// the first, and all read the one stored.
func (s *Service) keyringBox(ctx context.Context) (*secretbox.Box, error) {
	s.keyringOnce.Lock()
	defer s.keyringOnce.Unlock()
	if s.keyring != nil {
		return s.keyring, nil
	}
	var keyHex string
	err := s.db.QueryRow(ctx, "SELECT key_hex FROM webhook_keyring WHERE id = 'test_mode'").Scan(&keyHex)
	if store.IsNotFound(err) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO webhook_keyring (id, key_hex, created_at) VALUES ('test_mode', ?, ?)
				ON CONFLICT (id) DO NOTHING`, hex.EncodeToString(k), store.Micros(tx.Now()))
			return err
		})
		if err == nil {
			err = s.db.QueryRow(ctx, "SELECT key_hex FROM webhook_keyring WHERE id = 'test_mode'").Scan(&keyHex)
		}
	}
	if err != nil {
		return nil, err
	}
	box, err := secretbox.New(keyHex)
	if err != nil {
		return nil, err
	}
	s.keyring = box
	return box, nil
}
