package apptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/sim"
)

// Sim is a provider simulator started in-process on 127.0.0.1:0.
type Sim struct {
	*sim.Server
	T testing.TB
}

// StartSim starts the simulator with cfg (push approvals after 50 ms unless
// cfg says otherwise) and stops it when the test ends.
func StartSim(t testing.TB, cfg sim.Config) *Sim {
	t.Helper()
	if cfg.PushDelay == 0 {
		cfg.PushDelay = 50 * time.Millisecond
	}
	srv, err := sim.Serve("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return &Sim{Server: srv, T: t}
}

// OTP returns the latest code the simulator "sent by SMS" to msisdn.
func (s *Sim) OTP(msisdn string) string {
	s.T.Helper()
	resp, err := http.Get(s.URL + "/_sim/otp?msisdn=" + url.QueryEscape(msisdn))
	if err != nil {
		s.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ OTP string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		s.T.Fatalf("no code for %s (%d)", msisdn, resp.StatusCode)
	}
	return out.OTP
}

// LiveConnection is what GoLive connects for each provider.
type LiveConnection struct {
	APIKey, CallbackSecret, Timeout string
}

// GoLive approves the merchant's KYC, connects each provider to the
// simulator (API key and callback secret derived from the provider unless
// conn says otherwise) and returns a new live secret key.
func (e *Env) GoLive(s *Sim, conn LiveConnection, provs ...string) string {
	e.T.Helper()
	return e.goLive(e.T, s.URL, conn, provs...)
}

// LiveKey approves the merchant's KYC, connects provider to an address
// where nothing answers (a live call to it fails at once) and returns a new
// live secret key: for tests of what a live key sees and may do, not of
// live payments (GoLive).
func (e *Env) LiveKey(t testing.TB, provider string) string {
	t.Helper()
	return e.goLive(t, "http://127.0.0.1:9", LiveConnection{}, provider)
}

func (e *Env) goLive(t testing.TB, base string, conn LiveConnection, provs ...string) string {
	t.Helper()
	ctx := context.Background()
	if err := e.Main.Merchants.SetKYC(ctx, e.Merchant.MerchantID, "approved"); err != nil {
		t.Fatal(err)
	}
	for _, p := range provs {
		c := merchants.ProviderConfig{BaseURL: base + "/" + p, APIKey: conn.APIKey, CallbackSecret: conn.CallbackSecret, Timeout: conn.Timeout}
		if c.APIKey == "" {
			c.APIKey = "sk_sim_" + p + "_" + e.Merchant.MerchantID
		}
		if c.CallbackSecret == "" {
			c.CallbackSecret = "cbsec_" + p + "_0123456789abcdef"
		}
		if err := e.Main.Merchants.ConnectProvider(ctx, e.Merchant.MerchantID, p, c); err != nil {
			t.Fatal(err)
		}
	}
	k, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, true, auth.KindSecret)
	if err != nil {
		t.Fatal(err)
	}
	return k.Secret
}
