package merchants_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

func isTooManyKeys(err error) bool {
	e := errs.As(err)
	return e != nil && e.Kind == errs.KindConflict && e.Code == "too_many_api_keys" && strings.Contains(e.Message, "20")
}

func activeKeys(t *testing.T, ms *merchants.Service, merchantID string, live bool) int {
	t.Helper()
	keys, err := ms.ListKeys(context.Background(), merchantID, live)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if k.RevokedAt == nil {
			n++
		}
	}
	return n
}

// TestActiveKeysCapped: a merchant holds at most MaxActiveKeys unrevoked
// keys per mode. Concurrent creations past the cap never both win; the
// refusal is 409 too_many_api_keys naming the number; rolling a key at the
// cap still works (the old one is revoked in the same transaction); revoking
// one makes room; another merchant is unaffected.
func TestActiveKeysCapped(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms, m := newMerchant(t, db, "Key Cap")
		other, err := ms.Create(ctx, merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		have := activeKeys(t, ms, m.MerchantID, false)
		var wg sync.WaitGroup
		var mu sync.Mutex
		made, refused := 0, 0
		for i := 0; i < merchants.MaxActiveKeys+10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := ms.CreateKey(ctx, m.MerchantID, false, auth.KindSecret)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					made++
				case isTooManyKeys(err):
					refused++
				default:
					t.Errorf("create: %v", err)
				}
			}()
		}
		wg.Wait()
		if made != merchants.MaxActiveKeys-have || refused != merchants.MaxActiveKeys+10-made {
			t.Fatalf("made %d and refused %d of %d with %d already active; want %d made", made, refused, merchants.MaxActiveKeys+10, have, merchants.MaxActiveKeys-have)
		}
		if n := activeKeys(t, ms, m.MerchantID, false); n != merchants.MaxActiveKeys {
			t.Fatalf("%d active test keys, want %d", n, merchants.MaxActiveKeys)
		}
		if _, err := ms.CreateKey(ctx, m.MerchantID, false, auth.KindPublishable); !isTooManyKeys(err) {
			t.Fatalf("a publishable key past the cap: %v, want too_many_api_keys", err)
		}
		keys, _ := ms.ListKeys(ctx, m.MerchantID, false)
		var victim merchants.Key
		for _, k := range keys {
			if k.RevokedAt == nil && k.Kind == auth.KindSecret {
				victim = k
				break
			}
		}
		if _, err := ms.CreateKeyBy(ctx, m.MerchantID, false, auth.KindSecret, "", victim.ID); err != nil {
			t.Fatalf("rolling a key at the cap: %v", err)
		}
		if n := activeKeys(t, ms, m.MerchantID, false); n != merchants.MaxActiveKeys {
			t.Fatalf("after rolling: %d active test keys, want %d", n, merchants.MaxActiveKeys)
		}
		if _, err := ms.CreateKey(ctx, other.MerchantID, false, auth.KindSecret); err != nil {
			t.Fatalf("another merchant's key: %v", err)
		}
		keys, _ = ms.ListKeys(ctx, m.MerchantID, false)
		for _, k := range keys {
			if k.RevokedAt == nil {
				if err := ms.RevokeKey(ctx, m.MerchantID, k.ID); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		if _, err := ms.CreateKey(ctx, m.MerchantID, false, auth.KindSecret); err != nil {
			t.Fatalf("a key after revoking one: %v", err)
		}
	})
}
