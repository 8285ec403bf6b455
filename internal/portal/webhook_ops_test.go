package portal_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestWebhookEndpointOperations: from the endpoint page an admin rotates the
// signing secret (the new one shown once, the old one's grace shown), sets
// and clears the rate limit (a bad value refused on the page) and recovers
// failed deliveries; each is in the audit log.
func TestWebhookEndpointOperations(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/webhook_endpoints").Contains(t, "Add an endpoint")
		pg := p.Post("/portal/test/webhook_endpoints", url.Values{"url": {"http://localhost:4242/hook"}, "enabled_events": {"payout.failed"}})
		if pg.Status != http.StatusCreated {
			t.Fatalf("create endpoint: %d %.600s", pg.Status, pg.Body)
		}
		m := endpointRE.FindStringSubmatch(strings.ReplaceAll(pg.Body, "\n", " "))
		if m == nil {
			t.Fatalf("no secret shown:\n%.1500s", pg.Body)
		}
		first := m[1]
		epPath := "/portal/test/webhook_endpoints/" + regexpEndpointID(t, pg.Body)
		p.Get(epPath).Contains(t, "Rotate secret", `id="endpoint-max-rate">none`, "Recover failed deliveries")

		rot := p.Post(epPath+"/rotate_secret", url.Values{"grace_seconds": {"3600"}})
		if rot.Status != http.StatusOK {
			t.Fatalf("rotate: %d %.600s", rot.Status, rot.Body)
		}
		rot.Contains(t, "Signing secret rotated.", "The old secret signs too until", `id="endpoint-previous-secret"`)
		m = endpointRE.FindStringSubmatch(strings.ReplaceAll(rot.Body, "\n", " "))
		if m == nil || m[1] == first || !strings.HasPrefix(m[1], "whsec_") {
			t.Fatalf("no new secret shown:\n%.1500s", rot.Body)
		}
		if strings.Contains(p.Get(epPath).Body, m[1]) {
			t.Fatal("the new secret is shown again")
		}
		if bad := p.Post(epPath+"/rotate_secret", url.Values{"grace_seconds": {"9999999"}}); bad.Status != http.StatusBadRequest {
			t.Fatalf("grace of 115 days: %d", bad.Status)
		}

		if pg := p.Post(epPath+"/max_rate", url.Values{"max_rate": {"5"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("set max_rate: %d %.400s", pg.Status, pg.Body)
		}
		p.Get(epPath).Contains(t, `id="endpoint-max-rate">5 deliveries per second`)
		if bad := p.Post(epPath+"/max_rate", url.Values{"max_rate": {"5000"}}); bad.Status != http.StatusBadRequest {
			t.Fatalf("max_rate 5000: %d", bad.Status)
		}
		if pg := p.Post(epPath+"/max_rate", url.Values{"max_rate": {""}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("clear max_rate: %d", pg.Status)
		}
		p.Get(epPath).Contains(t, `id="endpoint-max-rate">none`)

		if pg := p.Post(epPath+"/recover", url.Values{"since_hours": {"24"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("recover: %d %.400s", pg.Status, pg.Body)
		}
		p.Get("/portal/test/audit").Contains(t, "webhook_endpoint.rotate_secret", "webhook_endpoint.max_rate", "webhook_endpoint.recover")
		e.RequireSecretsAbsent(first, m[1])
	})
}

func regexpEndpointID(t *testing.T, body string) string {
	t.Helper()
	m := endpointIDRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no endpoint id on the page:\n%.1000s", body)
	}
	return m[1]
}

var endpointIDRE = regexp.MustCompile(`Webhook endpoint <code>(we_[0-9A-Za-z_]+)</code>`)
