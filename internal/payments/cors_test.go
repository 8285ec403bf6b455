package payments_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// testConfirmCORS: a page on another origin can confirm with the publishable
// key (preflight and actual request), never read an answer given to a secret
// key, and no other route answers CORS.
func testConfirmCORS(t *testing.T, e *apptest.Env) {
	const origin = "https://shop.example"
	in := decode(t, mustStatus(t, create(e, bankA(100), ""), 201))
	path := "/v1/payment_intents/" + in.ID + "/confirm"

	pre := e.Do(apptest.Request{Method: "OPTIONS", Path: path, Headers: map[string]string{"Origin": origin,
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"}})
	allowHeaders := strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers"))
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" || pre.Header.Get("Access-Control-Allow-Methods") != "POST" ||
		!strings.Contains(allowHeaders, "authorization") || !strings.Contains(allowHeaders, "idempotency-key") {
		t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
	}

	bySecret := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.SK, Headers: map[string]string{"Origin": origin}})
	if got := bySecret.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Fatalf("an answer to a secret key is readable cross-origin: %q", got)
	}
	r := e.Do(apptest.Request{Method: "POST", Path: path, Key: e.PK, Body: map[string]string{"otp": "123456"}, Headers: map[string]string{"Origin": origin}})
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Request-Id") {
		t.Fatalf("confirm with the publishable key from another origin: %d %v %s", r.Status, r.Header, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/payment_intents/" + in.ID, Key: e.PK, Headers: map[string]string{"Origin": origin}}); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a route a publishable key cannot use answers CORS")
	}
	for _, p := range []string{"/v1/payment_intents", "/v1/balance", "/v1/payouts", "/v1/payment_intents/" + in.ID} {
		req, _ := http.NewRequest("OPTIONS", e.URL+p, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := e.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.StatusCode == 204 {
			t.Errorf("OPTIONS %s answers CORS: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
}
