package app_test

import (
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestAPIReferenceServed checks that a running payd serves the reference at
// /docs without a key, under a policy that forbids outside requests, with
// every operation of the embedded document, and that the portal links to it.
func TestAPIReferenceServed(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		r := e.Do(apptest.Request{Method: "GET", Path: "/docs", Key: ""})
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /docs: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Fatalf("GET /docs: Content-Security-Policy %q", csp)
		}
		for _, id := range []string{"createPaymentIntent", "confirmPaymentIntent", "listPayouts", "getRefund", "createTransfer"} {
			if !strings.Contains(string(r.Body), `id="`+id+`"`) {
				t.Errorf("GET /docs lacks the operation %s", id)
			}
		}
		if y := e.Do(apptest.Request{Method: "GET", Path: "/docs/openapi.yaml", Key: ""}); y.Status != 200 ||
			!strings.Contains(string(y.Body), "operationId: createPaymentIntent") {
			t.Fatalf("GET /docs/openapi.yaml: %d", y.Status)
		}
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		if page := p.Get("/portal/test/"); !strings.Contains(page.Body, `href="/docs"`) {
			t.Error("the portal does not link to /docs")
		}
	})
}
