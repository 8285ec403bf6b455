package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/merchants"
)

type requestLogEntry struct {
	ID        string  `json:"id"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	RequestID string  `json:"request_id"`
	KeyID     string  `json:"key_id"`
	CreatedAt string  `json:"created_at"`
	Status    int     `json:"status"`
	LatencyMS float64 `json:"latency_ms"`
	Livemode  bool    `json:"livemode"`
}

type requestLogList struct {
	Data    []requestLogEntry `json:"data"`
	HasMore bool              `json:"has_more"`
}

// readRequestLog flushes the log (as its worker would within half a second)
// and reads GET /v1/request_logs with key.
func readRequestLog(t *testing.T, e *apptest.Env, key, query string) requestLogList {
	t.Helper()
	if err := e.Main.RequestLog().Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := e.Do(apptest.Request{Method: "GET", Path: "/v1/request_logs" + query, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET /v1/request_logs%s: %d %s", query, r.Status, r.Body)
	}
	var l requestLogList
	r.JSON(t, &l)
	return l
}

// TestRequestLog drives the API and reads its requests back: newest first,
// with method, path (no query string), status, request id, latency and key;
// the read itself is not recorded; another merchant, the other mode and
// requests without a valid key see nothing of them; no key or body is kept.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		create := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK,
			Headers: map[string]string{"Idempotency-Key": "rl-1"},
			Body:    map[string]any{"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456", "description": "body-marker-7731"}})
		missing := e.Do(apptest.Request{Method: "GET", Path: "/v1/payouts/po_missing?expand=secret-query-marker", Key: e.SK2})
		bad := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts", Key: e.SK, Body: map[string]any{"amount": -1}})
		e.Do(apptest.Request{Method: "GET", Path: "/v1/balance", Key: "sk_test_not_a_key"}) // 401: no merchant, not kept

		got := readRequestLog(t, e, e.SK, "")
		want := []struct {
			r            *apptest.Response
			method, path string
		}{{bad, "POST", "/v1/payouts"}, {missing, "GET", "/v1/payouts/po_missing"}, {create, "POST", "/v1/payment_intents"}}
		if len(got.Data) != len(want) {
			t.Fatalf("request log holds %d requests, want %d: %+v", len(got.Data), len(want), got.Data)
		}
		for i, w := range want {
			g := got.Data[i]
			if g.Method != w.method || g.Path != w.path || g.Status != w.r.Status || g.RequestID != w.r.Header.Get("Request-Id") ||
				g.LatencyMS <= 0 || !strings.HasPrefix(g.KeyID, "key_") || g.Livemode || !strings.HasPrefix(g.ID, "rlog_") {
				t.Errorf("entry %d: %+v, want %s %s %d %s", i, g, w.method, w.path, w.r.Status, w.r.Header.Get("Request-Id"))
			}
		}
		if got.Data[0].KeyID == got.Data[1].KeyID {
			t.Errorf("the two keys' requests carry one key id %s", got.Data[0].KeyID)
		}
		// The key filter, and reading does not add to the log.
		only := readRequestLog(t, e, e.SK, "?key_id="+got.Data[1].KeyID)
		if len(only.Data) != 1 || only.Data[0].RequestID != missing.Header.Get("Request-Id") {
			t.Fatalf("key_id filter: %+v", only.Data)
		}
		// --follow polls with ending_before: only newer requests.
		newer := readRequestLog(t, e, e.SK, "?ending_before="+got.Data[1].ID)
		if len(newer.Data) != 1 || newer.Data[0].RequestID != bad.Header.Get("Request-Id") {
			t.Fatalf("ending_before: %+v", newer.Data)
		}
		// Live mode and another merchant see none of it.
		live := e.LiveKey(t, "wallet_a")
		if l := readRequestLog(t, e, live, ""); len(l.Data) != 0 {
			t.Fatalf("live mode sees test requests: %+v", l.Data)
		}
		other, err := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Other merchant"})
		if err != nil {
			t.Fatal(err)
		}
		if l := readRequestLog(t, e, other.SecretKeys[0], ""); len(l.Data) != 0 {
			t.Fatalf("another merchant sees the requests: %+v", l.Data)
		}
		// A publishable key cannot read it.
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/request_logs", Key: e.PK}); r.Status != 403 {
			t.Fatalf("publishable key: %d", r.Status)
		}
		// Nothing but the listed fields is stored: no key, body or query string.
		rows, err := e.Main.DB.Query(ctx, "SELECT id, merchant_id, principal_id, method, path, request_id FROM request_logs")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var cols [6]string
			if err := rows.Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5]); err != nil {
				t.Fatal(err)
			}
			row := strings.Join(cols[:], " ")
			for _, secret := range []string{e.SK, e.SK2, live, "body-marker-7731", "secret-query-marker", "sk_test_not_a_key"} {
				if strings.Contains(row, secret) {
					t.Fatalf("request_logs row holds %.12s…: %s", secret, row)
				}
			}
		}
	})
}

// TestRequestLogRedactsPaths: a live secret key and a card number placed in
// URL paths are kept neither by GET /v1/request_logs nor by the access log
// on stdout. (Before, the key was stored in clear and the card number kept
// in both.)
func TestRequestLogRedactsPaths(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		const liveKey = "sk_live_4eC39HqLyjWDarjtT1zdp7dcQ9"
		const pan = "4111111111111111"
		e.Do(apptest.Request{Method: "GET", Path: "/v1/payouts/" + liveKey, Key: e.SK})
		e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + pan, Key: e.SK})
		e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/4111%201111%201111%201111", Key: e.SK})
		got := readRequestLog(t, e, e.SK, "")
		want := []string{"/v1/payment_intents/[redacted-pan]", "/v1/payment_intents/[redacted-pan]", "/v1/payouts/sk_live_[redacted]"}
		if len(got.Data) != len(want) {
			t.Fatalf("request log holds %d requests, want %d: %+v", len(got.Data), len(want), got.Data)
		}
		for i, w := range want {
			if got.Data[i].Path != w {
				t.Errorf("entry %d: path %q, want %q", i, got.Data[i].Path, w)
			}
		}
		e.RequireSecretsAbsent(liveKey, liveKey[len("sk_live_"):], pan, "4111 1111 1111 1111")
		if !strings.Contains(e.Logs.String(), "sk_live_[redacted]") {
			t.Errorf("the access log does not show the redacted path")
		}
	})
}
