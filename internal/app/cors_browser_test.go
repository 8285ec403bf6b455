package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
)

// chromium starts a headless Chromium with a fresh profile and none of its
// own network services. It skips when Chromium is not installed, unless
// CI=true, where a missing browser fails.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("PAYD_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path != "" {
			break
		}
		if p, err := exec.LookPath(name); err == nil {
			path = p
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed and CI=true: the browser tests are mandatory in CI (apt-get install -y chromium)")
		}
		t.Skip("browser test skipped: chromium not found (apt-get install -y chromium, or set PAYD_CHROMIUM to its path)")
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()))
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// fetchResult is what the page's script reports of one fetch.
type fetchResult struct {
	OK     bool   `json:"ok"`     // the page could read the answer
	Status int    `json:"status"` // its status, when readable
	Body   string `json:"body"`
	Error  string `json:"error"` // the browser's refusal, when not
}

// TestBrowserConfirmFromAnotherOrigin: a merchant's checkout page, served
// from another origin than payd, confirms a payment intent with the
// publishable key through fetch — the browser's CORS checks (preflight, then
// the answer's Access-Control-Allow-Origin) let it read the answer. The same
// page cannot read any other API route with that key, nor an answer to a
// secret key on confirm itself.
func TestBrowserConfirmFromAnotherOrigin(t *testing.T) {
	e := apptest.Start(t, "sqlite")
	ctx := chromium(t)
	newIntent := func(key string) string {
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payment_intents", Key: e.SK, Headers: map[string]string{"Idempotency-Key": key},
			Body: map[string]any{"amount": 1200, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "77123456"}})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		id, _ := r.Map(t)["id"].(string)
		return id
	}
	id := newIntent("cors-1")
	// The merchant's page, on its own origin (another port).
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>checkout</title><p>Enter the code we sent you.</p>`))
	}))
	defer shop.Close()
	if strings.TrimPrefix(shop.URL, "http://") == strings.TrimPrefix(e.URL, "http://") {
		t.Fatal("the page and payd share an origin")
	}
	if _, err := chromedp.Run(ctx, chromedp.Navigate(shop.URL)); err != nil {
		t.Fatal(err)
	}
	call := func(method, path, key, body string) fetchResult {
		t.Helper()
		opts := map[string]any{"method": method, "headers": map[string]string{"Authorization": "Bearer " + key}}
		if body != "" {
			opts["body"] = body
			opts["headers"].(map[string]string)["Content-Type"] = "application/json"
			opts["headers"].(map[string]string)["Idempotency-Key"] = "browser-" + path + "-" + key[:8]
		}
		o, _ := json.Marshal(opts)
		u, _ := json.Marshal(e.URL + path)
		js := `fetch(` + string(u) + `, ` + string(o) + `).then(async r => ({ok: true, status: r.status, body: await r.text(), error: ""}),
			err => ({ok: false, status: 0, body: "", error: String(err)}))`
		res, err := chromedp.Run(ctx, chromedp.Evaluate[fetchResult](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s %s from the page: %v", method, path, err)
		}
		return res
	}

	// Confirm with the publishable key: preflighted (JSON body and an
	// Authorization header), allowed, and the page reads the intent.
	res := call("POST", "/v1/payment_intents/"+id+"/confirm", e.PK, `{"otp":"123456"}`)
	if !res.OK || res.Status != 200 || !strings.Contains(res.Body, `"status":"succeeded"`) {
		t.Fatalf("confirm with the publishable key from another origin: %+v", res)
	}
	if r := e.Get("/v1/payment_intents/" + id); r.Map(t)["status"] != "succeeded" {
		t.Fatalf("the intent is %v after the browser's confirm", r.Map(t)["status"])
	}

	// Any other route, with the same key: the browser refuses to let the page
	// read it (payd answers no CORS there).
	for _, path := range []string{"/v1/payment_intents/" + id, "/v1/balance"} {
		if res := call("GET", path, e.PK, ""); res.OK || res.Error == "" {
			t.Errorf("GET %s with the publishable key was readable from another origin: %+v", path, res)
		}
	}
	if res := call("POST", "/v1/refunds", e.PK, `{"payment_intent":"`+id+`"}`); res.OK {
		t.Errorf("POST /v1/refunds was readable from another origin: %+v", res)
	}
	// Confirm itself, with a secret key: the answer carries no
	// Access-Control-Allow-Origin, so the page cannot read it.
	other := newIntent("cors-2")
	if res := call("POST", "/v1/payment_intents/"+other+"/confirm", e.SK, `{"otp":"000000"}`); res.OK {
		t.Errorf("an answer to a secret key was readable from another origin: %+v", res)
	}
}
