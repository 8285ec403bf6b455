package app_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store/storetest"
)

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if r := e.Do(apptest.Request{Method: "GET", Path: "/healthz"}); r.Status != 200 {
			t.Fatalf("healthz %d", r.Status)
		}
		r := e.Do(apptest.Request{Method: "GET", Path: "/readyz"})
		if r.Status != 200 || r.Map(t)["engine"] != string(e.Engine) {
			t.Fatalf("readyz %d %s", r.Status, r.Body)
		}
		e.Get("/v1/balance")
		m := e.Do(apptest.Request{Method: "GET", Path: "/metrics"})
		if m.Status != 200 || !bytes.Contains(m.Body, []byte(`payd_http_requests_total{code="200",route="GET /v1/balance"}`)) {
			t.Fatalf("metrics %d lack the request counter:\n%.400s", m.Status, m.Body)
		}
		// The commit counters, read from one scrape each: every commit
		// carries at least one unit of work (on PostgreSQL exactly one:
		// units are grouped into a commit only on SQLite), in every scrape,
		// even while background jobs commit between and during the
		// scrapes; and a keyed write adds at least one of each (jobs may
		// add more meanwhile).
		counts := func() (commits, units float64) {
			t.Helper()
			body := e.Do(apptest.Request{Method: "GET", Path: "/metrics"}).Body
			commits, units = metricValue(t, body, "payd_db_commits_total"), metricValue(t, body, "payd_db_committed_units_total")
			if commits <= 0 || units < commits || e.Engine == storetest.Postgres && units != commits {
				t.Fatalf("one scrape shows %v commits carrying %v units", commits, units)
			}
			return commits, units
		}
		c0, u0 := counts()
		if r := e.Post("/v1/sandbox/topups", `{"currency":"DJF","amount_minor":5}`); r.Status != 200 && r.Status != 201 {
			t.Fatalf("topup %d %s", r.Status, r.Body)
		}
		c1, u1 := counts()
		if c1 <= c0 || u1 <= u0 {
			t.Fatalf("the top-up added no commit or no unit: commits %v then %v, units %v then %v", c0, c1, u0, u1)
		}
	})
}

// metricValue reads an unlabelled metric's value from a /metrics body.
func metricValue(t *testing.T, body []byte, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// TestAuthentication covers every way a key can be wrong; none reveals
// anything about the merchant.
func TestAuthentication(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		revoked, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, false, "secret")
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: revoked.Secret}); r.Status != 200 {
			t.Fatalf("fresh key: %d", r.Status)
		}
		if err := e.Main.Merchants.RevokeKey(ctx, e.Merchant.MerchantID, revoked.ID); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, key, header string
			status            int
			code              string
		}{
			{"missing", "", "", 401, "invalid_api_key"},
			{"not bearer", "", "Basic abc", 401, "invalid_api_key"},
			{"unknown", "sk_test_" + strings.Repeat("x", 52), "", 401, "invalid_api_key"},
			{"wrong prefix", "xk_test_abc", "", 401, "invalid_api_key"},
			{"mode swapped", "sk_live_" + strings.TrimPrefix(e.SK, "sk_test_"), "", 401, "invalid_api_key"},
			{"revoked", revoked.Secret, "", 401, "invalid_api_key"},
			{"publishable", e.PK, "", 403, "permission_denied"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				req := apptest.Request{Method: "GET", Path: "/v1/balance", Key: c.key}
				if c.header != "" {
					req.Headers = map[string]string{"Authorization": c.header}
				}
				r := e.Do(req)
				if r.Status != c.status || r.ErrorCode() != c.code {
					t.Fatalf("got %d %s, want %d %s", r.Status, r.Body, c.status, c.code)
				}
				if bytes.Contains(r.Body, []byte(e.Merchant.MerchantID)) {
					t.Fatal("error reveals the merchant id")
				}
			})
		}
		e.RequireSecretsAbsent(e.SK, e.SK2, e.PK, revoked.Secret)
	})
}

// TestModeAndMerchantIsolation: money added in test mode is invisible to a
// live key and to another merchant; live keys need KYC and a provider.
func TestModeAndMerchantIsolation(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": 5000}); r.Status != 201 {
			t.Fatalf("topup %d %s", r.Status, r.Body)
		}
		if _, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, true, "secret"); err == nil {
			t.Fatal("live key created without KYC")
		}
		e.Main.Merchants.SetKYC(ctx, e.Merchant.MerchantID, "approved")
		if _, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, true, "secret"); err == nil {
			t.Fatal("live key created without a connected provider")
		}
		if err := e.Main.Merchants.ConnectProvider(ctx, e.Merchant.MerchantID, "bank_a", merchants.ProviderConfig{
			BaseURL: "http://127.0.0.1:9/bank_a", APIKey: "prov-secret-123", CallbackSecret: "cb-secret-456"}); err != nil {
			t.Fatal(err)
		}
		live, err := e.Main.Merchants.CreateKey(ctx, e.Merchant.MerchantID, true, "secret")
		if err != nil {
			t.Fatal(err)
		}
		var bal struct {
			Livemode bool
			Balances []ledger.Balance
		}
		e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: live.Secret}).JSON(t, &bal)
		if !bal.Livemode || len(bal.Balances) != 0 {
			t.Fatalf("live key sees test money: %+v", bal)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/topups", Key: live.Secret, Body: map[string]any{"currency": "DJF", "amount_minor": 1}}); r.Status != 403 {
			t.Fatalf("live sandbox topup: %d", r.Status)
		}
		other, _ := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Other"})
		e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: other.SecretKeys[0]}).JSON(t, &bal)
		if len(bal.Balances) != 0 {
			t.Fatalf("another merchant sees the balance: %+v", bal)
		}
		e.Get("/v1/balance").JSON(t, &bal)
		if len(bal.Balances) != 1 || bal.Balances[0].Available != 5000 {
			t.Fatalf("own balance %+v", bal)
		}
		cfg, err := e.Main.Merchants.ProviderConnection(ctx, e.Main.DB, e.Merchant.MerchantID, "bank_a")
		if err != nil || cfg.APIKey != "prov-secret-123" {
			t.Fatalf("provider config round trip: %+v %v", cfg, err)
		}
		var sealed string
		e.Main.DB.QueryRow(ctx, "SELECT config FROM provider_connections").Scan(&sealed)
		if strings.Contains(sealed, "prov-secret-123") || strings.Contains(sealed, "cb-secret-456") {
			t.Fatal("provider secrets stored in clear")
		}
		e.RequireSecretsAbsent(live.Secret, "prov-secret-123", "cb-secret-456")
	})
}

// TestIdempotencyUnderConcurrency sends 200 identical requests with one key at
// once: exactly one top-up happens, every answer is the first one or a 409
// while it runs, and later retries replay it byte for byte.
func TestIdempotencyUnderConcurrency(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		body := map[string]any{"currency": "USD", "amount_minor": 700}
		req := apptest.Request{Method: "POST", Path: "/v1/sandbox/topups", Key: e.SK, Body: body, Headers: map[string]string{"Idempotency-Key": "same-key"}}
		var wg sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		bodies := map[string]int{}
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do(req)
				mu.Lock()
				statuses[r.Status]++
				if r.Status == 201 {
					bodies[string(r.Body)]++
				} else if r.Status != 409 || r.ErrorCode() != "idempotency_key_in_use" {
					t.Errorf("unexpected answer %d %s", r.Status, r.Body)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(bodies) != 1 {
			t.Fatalf("%d different 201 bodies: %v", len(bodies), statuses)
		}
		var n int
		e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM ledger_transactions WHERE kind = 'sandbox_topup'").Scan(&n)
		if n != 1 {
			t.Fatalf("%d top-ups made, want 1 (statuses %v)", n, statuses)
		}
		first := e.Do(req)
		again := e.Do(req)
		if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, again.Body) {
			t.Fatalf("replay: %d %q", first.Status, first.Header.Get("Idempotent-Replayed"))
		}
		for b := range bodies {
			if b != string(first.Body) {
				t.Fatal("replay differs from the first answer")
			}
		}
		other := req
		other.Body = map[string]any{"currency": "USD", "amount_minor": 701}
		if r := e.Do(other); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
			t.Fatalf("reuse with another body: %d %s", r.Status, r.Body)
		}
		// Another principal of the same merchant has its own key space.
		second := req
		second.Key = e.SK2
		if r := e.Do(second); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("second principal: %d", r.Status)
		}
		long := req
		long.Headers = map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}
		if r := e.Do(long); r.Status != 400 {
			t.Fatalf("256-char key: %d", r.Status)
		}
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBadRequests: oversized, malformed, unknown fields, wrong content type,
// bad values — each a clear error naming the problem, and nothing written.
func TestBadRequests(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		big := `{"currency":"DJF","amount_minor":1,"pad":"` + strings.Repeat("x", 1<<20) + `"}`
		cases := []struct {
			name   string
			body   string
			ctype  string
			status int
			code   string
			param  string
		}{
			{"oversized", big, "application/json", 413, "request_too_large", ""},
			{"malformed", `{"currency":"DJF",`, "application/json", 400, "invalid_json", ""},
			{"syntax", `{"currency" "DJF"}`, "application/json", 400, "invalid_json", ""},
			{"unknown field", `{"currency":"DJF","amount_minor":1,"colour":"red"}`, "application/json", 400, "parameter_unknown", "colour"},
			{"wrong type", `{"currency":"DJF","amount_minor":"ten"}`, "application/json", 400, "parameter_invalid", "amount_minor"},
			{"fraction", `{"currency":"DJF","amount_minor":1.5}`, "application/json", 400, "parameter_invalid", "amount_minor"},
			{"overflow", `{"currency":"DJF","amount_minor":92233720368547758070}`, "application/json", 400, "parameter_invalid", "amount_minor"},
			{"zero", `{"currency":"DJF","amount_minor":0}`, "application/json", 400, "amount_invalid", "amount_minor"},
			{"negative", `{"currency":"DJF","amount_minor":-5}`, "application/json", 400, "amount_invalid", "amount_minor"},
			{"missing amount", `{"currency":"DJF"}`, "application/json", 400, "parameter_missing", "amount_minor"},
			{"bad currency", `{"currency":"XYZ","amount_minor":5}`, "application/json", 400, "currency_invalid", "currency"},
			{"two values", `{"currency":"DJF","amount_minor":5}{}`, "application/json", 400, "invalid_json", ""},
			{"content type", `{"currency":"DJF","amount_minor":5}`, "text/plain", 415, "unsupported_media_type", ""},
			{"empty", ``, "application/json", 400, "body_missing", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/topups", Key: e.SK, Body: []byte(c.body), Headers: map[string]string{"Content-Type": c.ctype}})
				var body struct {
					Error struct{ Code, Param, Message, RequestID string }
				}
				r.JSON(t, &body)
				if r.Status != c.status || body.Error.Code != c.code || body.Error.Param != c.param {
					t.Fatalf("got %d %s", r.Status, r.Body)
				}
			})
		}
		var n int
		e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM ledger_transactions").Scan(&n)
		if n != 0 {
			t.Fatalf("bad requests wrote %d ledger transactions", n)
		}
		r := e.Do(apptest.Request{Method: "GET", Path: "/v1/nothing-here", Key: e.SK})
		if r.Status != 404 || r.ErrorCode() != "resource_missing" {
			t.Fatalf("unknown route: %d %s", r.Status, r.Body)
		}
		var eb struct {
			Error struct {
				RequestID string `json:"request_id"`
			}
		}
		r.JSON(t, &eb)
		if eb.Error.RequestID != r.Header.Get("Request-Id") {
			t.Fatalf("error.request_id %q differs from Request-Id %q", eb.Error.RequestID, r.Header.Get("Request-Id"))
		}
	})
}

func TestRateLimit(t *testing.T) {
	e := apptest.Start(t, "sqlite", func(c *app.Config) { c.RateLimit = 5; c.RateBurst = 5 })
	var limited *apptest.Response
	for i := 0; i < 20 && limited == nil; i++ {
		if r := e.Get("/v1/balance"); r.Status == http.StatusTooManyRequests {
			limited = r
		}
	}
	if limited == nil {
		t.Fatal("never rate limited")
	}
	if limited.ErrorCode() != "rate_limited" || limited.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without code or Retry-After: %s %v", limited.Body, limited.Header)
	}
	// Another key of the same merchant has its own bucket.
	if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: e.SK2}); r.Status != 200 {
		t.Fatalf("second key limited too: %d", r.Status)
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		if r := e.Get("/v1/settings"); !bytes.Contains(r.Body, []byte(`"approval_threshold_minor":null`)) {
			t.Fatalf("default threshold: %s", r.Body)
		}
		r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 10000})
		if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"approval_threshold_minor":10000`)) {
			t.Fatalf("set threshold: %d %s", r.Status, r.Body)
		}
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": -1}); r.Status != 400 {
			t.Fatalf("negative threshold: %d", r.Status)
		}
	})
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{"PAYD_WEBHOOK_RETRY_SCHEDULE": "1s,1s,2s", "PAYD_RATE_LIMIT": "0", "PAYD_SANDBOX_PUSH_DELAY": "250ms"}
	c, err := app.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(c.WebhookRetrySchedule) != 3 || c.RateLimit != 0 || c.SandboxPushDelay.Milliseconds() != 250 || c.DatabaseURL != "sqlite:payd.db" || c.Addr != "127.0.0.1:8080" {
		t.Fatalf("%+v", c)
	}
	for k, v := range map[string]string{"PAYD_SANDBOX_TIMEOUT_DELAY": "soon", "PAYD_RATE_LIMIT": "-1", "PAYD_WEBHOOK_RETRY_SCHEDULE": "1m,later"} {
		if _, err := app.ConfigFromEnv(func(key string) string {
			if key == k {
				return v
			}
			return ""
		}); err == nil {
			t.Errorf("%s=%s accepted", k, v)
		}
	}
	_ = fmt.Sprint()
}
