package merchants

import (
	"context"

	"github.com/payd/payd/internal/store"
)

// HeldKeys is how many verified API keys the service holds in memory.
func (s *Service) HeldKeys() int { return s.keys.Len() }

// InsertKeyForTest makes a key of any mode and kind without the checks live
// keys need (KYC, a connected provider).
func InsertKeyForTest(ctx context.Context, db *store.DB, merchantID string, livemode bool, kind string) (NewKey, error) {
	var out NewKey
	err := db.InTx(ctx, func(tx *store.Tx) error {
		secret, id, err := insertKey(ctx, tx, merchantID, livemode, kind)
		out = NewKey{Key: Key{ID: id, Kind: kind, Livemode: livemode}, Secret: secret}
		return err
	})
	return out, err
}
