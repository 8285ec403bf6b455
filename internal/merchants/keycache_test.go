package merchants_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
)

// twoProcesses opens the database at url twice (two connection pools, as
// two payd processes have) with a merchants service over each.
func twoProcesses(t *testing.T, url string) (a, b *merchants.Service, dbs [2]*store.DB) {
	t.Helper()
	box, err := secretbox.New(strings.Repeat("5a", 32))
	if err != nil {
		t.Fatal(err)
	}
	var svcs [2]*merchants.Service
	for i := range 2 {
		db, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i], svcs[i] = db, merchants.NewService(db, box)
	}
	return svcs[0], svcs[1], dbs
}

// TestKeyRevokedAcrossProcesses: two processes on one database; a key that
// the second holds in memory is revoked through the first (or changed by
// hand in the database), and every authentication the second begins more
// than auth.DefaultEpochCheck after that commit refuses it (the bound holds
// whatever the machine's speed: such a call reads the epoch before using
// any held key). Each way a key stops being valid is a case.
func TestKeyRevokedAcrossProcesses(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			ctx := context.Background()
			a, b, dbs := twoProcesses(t, storetest.MigratedURL(t, eng))
			m, err := a.Create(ctx, merchants.CreateParams{Name: "Revoker"})
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name   string
				revoke func(keyID string) error
			}{
				{"RevokeKey", func(id string) error { return a.RevokeKey(ctx, m.MerchantID, id) }},
				{"RevokeKeyByOperator", func(id string) error { return a.RevokeKeyByOperator(ctx, m.MerchantID, id) }},
				{"Roll", func(id string) error {
					_, err := a.CreateKeyBy(ctx, m.MerchantID, false, auth.KindSecret, "", id)
					return err
				}},
				{"UpdateByHand", func(id string) error {
					_, err := dbs[0].Exec(ctx, "UPDATE api_keys SET revoked_at = 1 WHERE id = ?", id)
					return err
				}},
				{"DeleteByHand", func(id string) error {
					_, err := dbs[0].Exec(ctx, "DELETE FROM api_keys WHERE id = ?", id)
					return err
				}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					nk, err := a.CreateKey(ctx, m.MerchantID, false, auth.KindSecret)
					if err != nil {
						t.Fatal(err)
					}
					for range 3 {
						if p, err := b.Authenticate(ctx, nk.Secret); err != nil || p.ID != nk.ID {
							t.Fatalf("before revocation: %v %v", p, err)
						}
					}
					if b.HeldKeys() == 0 {
						t.Fatal("the second process does not hold the key: the test would prove nothing")
					}
					if err := c.revoke(nk.ID); err != nil {
						t.Fatal(err)
					}
					committed := time.Now()
					if _, err := a.Authenticate(ctx, nk.Secret); err == nil {
						t.Fatal("the revoking process still accepts the key")
					}
					// Calls begun before the bound may still be answered
					// from memory; the first begun after it must refuse.
					for {
						began := time.Now()
						_, err := b.Authenticate(ctx, nk.Secret)
						if began.Sub(committed) > auth.DefaultEpochCheck {
							if err == nil {
								t.Fatalf("the other process accepted the key %v after its revocation committed", began.Sub(committed))
							}
							break
						}
						if err != nil {
							break // refused already
						}
						time.Sleep(10 * time.Millisecond)
					}
					if _, err := b.Authenticate(ctx, nk.Secret); err == nil {
						t.Fatal("accepted again after a refusal")
					}
				})
			}
		})
	}
}

// TestKeyCacheIsolation: keys of two merchants in both modes, secret and
// publishable, authenticated concurrently and repeatedly (so mostly from
// memory) in one process: each always resolves to its own principal, never
// to another merchant's or the other mode's.
func TestKeyCacheIsolation(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms, m1 := newMerchant(t, db, "One")
		m2, err := ms.Create(ctx, merchants.CreateParams{Name: "Two"})
		if err != nil {
			t.Fatal(err)
		}
		type want struct {
			secret string
			p      auth.Principal
		}
		var keys []want
		for _, mid := range []string{m1.MerchantID, m2.MerchantID} {
			for _, kind := range []string{auth.KindSecret, auth.KindPublishable} {
				for _, live := range []bool{false, true} {
					nk, err := merchants.InsertKeyForTest(ctx, db, mid, live, kind)
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, want{nk.Secret, auth.Principal{ID: nk.ID, MerchantID: mid, Livemode: live, Kind: kind}})
				}
			}
		}
		var wg sync.WaitGroup
		errc := make(chan string, 16)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 400 {
					k := keys[(g*7+i*3)%len(keys)]
					p, err := ms.Authenticate(ctx, k.secret)
					if err != nil || p != k.p {
						select {
						case errc <- k.p.ID + ": " + p.ID + " " + p.MerchantID:
						default:
						}
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for e := range errc {
			t.Errorf("a key resolved to another principal: %s", e)
		}
		if ms.HeldKeys() != len(keys) {
			t.Fatalf("%d keys held, want %d: the test would not exercise the cache", ms.HeldKeys(), len(keys))
		}
	})
}

// TestKeyCacheFloodOfRandomKeys: a flood of well-formed random keys (each
// refused) adds nothing to memory: only verified keys are held.
func TestKeyCacheFloodOfRandomKeys(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ms, m := newMerchant(t, db, "Flooded")
		if _, err := ms.Authenticate(ctx, m.SecretKeys[0]); err != nil {
			t.Fatal(err)
		}
		n := 3000
		if testing.Short() {
			n = 500
		}
		buf := make([]byte, 24)
		for i := range n {
			rand.Read(buf)
			key := []string{"sk_test_", "sk_live_", "pk_test_", "pk_live_"}[i%4] + hex.EncodeToString(buf)
			if _, err := ms.Authenticate(ctx, key); err == nil {
				t.Fatalf("random key %s accepted", key)
			}
		}
		if got := ms.HeldKeys(); got != 1 {
			t.Fatalf("%d keys held after a flood of %d random keys; want only the one real key", got, n)
		}
	})
}
