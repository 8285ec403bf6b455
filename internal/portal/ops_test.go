package portal_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

var termRE = regexp.MustCompile(`/portal/test/terminals/(term_[0-9A-Z]+)`)

// TestTerminalPages: register through the form (a bad model is refused next
// to the field), activate, deregister; a second activation is refused on the
// page; a viewer cannot register.
func TestTerminalPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/terminals").Contains(t, "Register a terminal", `<label for="f-serial_number">`)
		bad := p.Post("/portal/test/terminals", url.Values{"serial_number": {"SN-1"}, "model": {"toaster"}})
		if bad.Status != http.StatusBadRequest {
			t.Fatalf("bad model: %d", bad.Status)
		}
		bad.Contains(t, `id="f-model-error"`, `value="SN-1"`)
		pg := p.Post("/portal/test/terminals", url.Values{"serial_number": {"SN-1"}, "model": {"countertop"}, "outlet_id": {"shop-1"}, "label": {"Till 1"}})
		m := termRE.FindStringSubmatch(pg.Location)
		if pg.Status != http.StatusSeeOther || m == nil {
			t.Fatalf("register: %d %s %.400s", pg.Status, pg.Location, pg.Body)
		}
		id := m[1]
		p.Get(pg.Location).Contains(t, "inactive", "SN-1", "Till 1", "Activate")
		if dup := p.Post("/portal/test/terminals", url.Values{"serial_number": {"SN-1"}, "model": {"mobile"}}); dup.Status != http.StatusConflict {
			t.Fatalf("duplicate serial: %d", dup.Status)
		}
		if pg := p.Post("/portal/test/terminals/"+id+"/activate", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("activate: %d", pg.Status)
		}
		p.Get("/portal/test/terminals/"+id).Contains(t, `id="terminal-status">active<`)
		again := p.Post("/portal/test/terminals/"+id+"/activate", nil)
		if again.Status != http.StatusConflict {
			t.Fatalf("second activation: %d", again.Status)
		}
		again.Contains(t, "invalid_state")
		if pg := p.Post("/portal/test/terminals/"+id+"/deregister", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("deregister: %d", pg.Status)
		}
		if list := p.Get("/portal/test/terminals"); strings.Contains(list.Body, id) {
			t.Fatal("a deregistered terminal is listed without the status filter")
		}
		p.Get("/portal/test/terminals?status=deregistered").Contains(t, id)
		if pg := p.Get("/portal/live/terminals/" + id); pg.Status != http.StatusNotFound {
			t.Fatalf("live mode: %d", pg.Status)
		}
		p.Get("/portal/test/users")
		p.Post("/portal/test/users", url.Values{"email": {"v@example.com"}, "password": {"viewer-password-1"}, "role": {"viewer"}})
		v := e.NewPortal()
		setOwnPassword(t, v, "v@example.com", "viewer-password-1", "viewer-own-password-1")
		v.Get("/portal/test/terminals")
		if pg := v.Post("/portal/test/terminals", url.Values{"serial_number": {"SN-2"}, "model": {"mobile"}}); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer registered a terminal: %d", pg.Status)
		}
	})
}

// receiver is a webhook endpoint on loopback that fails its first n
// deliveries with 500.
type receiver struct {
	mu       sync.Mutex
	failFor  int
	received []string // Service-Event-Id of each request
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.received = append(rc.received, r.Header.Get("Service-Event-Id"))
	if rc.failFor > 0 {
		rc.failFor--
		w.WriteHeader(500)
		return
	}
	w.WriteHeader(200)
}

func (rc *receiver) count(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, x := range rc.received {
		if x == id {
			n++
		}
	}
	return n
}

var endpointRE = regexp.MustCompile(`id="new-endpoint".*?<code id="endpoint-secret">(whsec_[^<]+)</code>`)

// waitFor polls cond for up to 10 s (deliveries are asynchronous).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestWebhookPages: add an endpoint (secret shown once), see its deliveries
// with each attempt's status and latency (a 500 then a retried 200),
// redeliver an event from the endpoint page and from the event's page.
func TestWebhookPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		rc := &receiver{failFor: 1}
		srv := httptest.NewServer(rc)
		defer srv.Close()
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		p.Get("/portal/test/webhook_endpoints").Contains(t, "Add an endpoint", "payment_intent.succeeded")
		bad := p.Post("/portal/test/webhook_endpoints", url.Values{"url": {"ftp://example.com/x"}, "enabled_events": {"*"}})
		if bad.Status != http.StatusBadRequest {
			t.Fatalf("bad url: %d", bad.Status)
		}
		bad.Contains(t, `id="f-url-error"`)
		pg := p.Post("/portal/test/webhook_endpoints", url.Values{"url": {srv.URL + "/hook"}, "enabled_events": {"payment_intent.succeeded"}, "description": {"shop"}})
		if pg.Status != http.StatusCreated {
			t.Fatalf("create endpoint: %d %.600s", pg.Status, pg.Body)
		}
		body := strings.ReplaceAll(pg.Body, "\n", " ")
		m := endpointRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no secret shown:\n%.1500s", pg.Body)
		}
		secret := m[1]
		epID := regexp.MustCompile(`Webhook endpoint <code>(we_[0-9A-Za-z_]+|[a-z]+_[0-9A-Z]+)</code>`).FindStringSubmatch(pg.Body)[1]
		if strings.Contains(p.Get("/portal/test/webhook_endpoints/"+epID).Body, secret) {
			t.Fatal("the secret is shown again")
		}
		pi := newIntent(t, e, 1000, "success")
		var evID string
		waitFor(t, "a delivery of payment_intent.succeeded", func() bool {
			ep := p.Get("/portal/test/webhook_endpoints/" + epID)
			if mm := regexp.MustCompile(`/events/(evt_[0-9A-Z]+)"`).FindStringSubmatch(ep.Body); mm != nil {
				evID = mm[1]
			}
			return evID != "" && rc.count(evID) >= 2 && strings.Contains(ep.Body, ">succeeded<")
		})
		ep := p.Get("/portal/test/webhook_endpoints/" + epID)
		ep.Contains(t, "<td>500</td>", "<td>200</td>", "Redeliver")
		if pg := p.Post("/portal/test/webhook_endpoints/"+epID+"/redeliver", url.Values{"event_id": {evID}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("redeliver: %d %.400s", pg.Status, pg.Body)
		}
		waitFor(t, "the redelivery", func() bool { return rc.count(evID) >= 3 })
		ev := p.Get("/portal/test/events/" + evID)
		ev.Contains(t, "payment_intent.succeeded", pi, epID, "Send again to every subscribed endpoint")
		if pg := p.Post("/portal/test/events/"+evID+"/redeliver", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("redeliver event: %d", pg.Status)
		}
		waitFor(t, "the second redelivery", func() bool { return rc.count(evID) >= 4 })
		if pg := p.Post("/portal/test/webhook_endpoints/"+epID+"/redeliver", url.Values{"event_id": {"evt_nope"}}); pg.Status != http.StatusNotFound {
			t.Fatalf("redeliver an unknown event: %d", pg.Status)
		}
		if pg := p.Get("/portal/live/webhook_endpoints/" + epID); pg.Status != http.StatusNotFound {
			t.Fatalf("live mode: %d", pg.Status)
		}
		p.Get("/portal/test/audit").Contains(t, "webhook_endpoint.create", "webhook.redeliver")
		e.RequireSecretsAbsent(secret)
	})
}
