package app_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
)

// TestKeyRevocationAcrossInstances: two payd instances on one database; a
// key that the second has just answered (and holds in memory) is revoked
// through the first, and the second answers 401 to every request begun
// more than auth.DefaultEpochCheck after the revocation committed.
func TestKeyRevocationAcrossInstances(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		cfg := e.Main.Config
		cfg.Addr = "127.0.0.1:0"
		cfg.Workers = false
		second := &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(io.Discard, "warn")}
		if err := second.Run(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { second.Close() })
		nk, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, false, auth.KindSecret)
		if err != nil {
			t.Fatal(err)
		}
		get := func(base string) int {
			req, _ := http.NewRequest("GET", base+"/v1/balance", nil)
			req.Header.Set("Authorization", "Bearer "+nk.Secret)
			resp, err := e.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, base := range []string{e.URL, second.URL(), second.URL()} {
			if s := get(base); s != 200 {
				t.Fatalf("before revocation: %s answered %d", base, s)
			}
		}
		if err := e.Main.Merchants.RevokeKey(ctx, e.Merchant.MerchantID, nk.ID); err != nil {
			t.Fatal(err)
		}
		committed := time.Now()
		if s := get(e.URL); s != 401 {
			t.Fatalf("the revoking instance answered %d", s)
		}
		for {
			began := time.Now()
			s := get(second.URL())
			if began.Sub(committed) > auth.DefaultEpochCheck {
				if s != 401 {
					t.Fatalf("the other instance answered %d %v after the revocation committed", s, began.Sub(committed))
				}
				break
			}
			if s == 401 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
