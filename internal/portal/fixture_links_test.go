package portal_test

import (
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
)

// TestSandboxFixturesLinkNowhere: an event triggered without an object of
// the merchant's carries a synthetic fixture; the portal shows its id without
// a link (it has no page), while a real object's event links to its page.
func TestSandboxFixturesLinkNowhere(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		fixtures := map[string]string{}
		for _, typ := range []string{"payout.failed", "payment_intent.succeeded", "payout_batch.completed", "transfer.settled"} {
			r := e.Post("/v1/sandbox/webhooks/trigger", map[string]any{"event_type": typ})
			if r.Status != 201 {
				t.Fatalf("trigger %s: %d %s", typ, r.Status, r.Body)
			}
			m := r.Map(t)
			data, _ := m["data"].(map[string]any)
			fixtures[m["id"].(string)], _ = data["id"].(string)
		}
		real := newIntent(t, e, 1300, "success")
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		list := p.Get("/portal/test/events").Body
		for evID, objID := range fixtures {
			if objID == "" {
				t.Fatalf("event %s names no object", evID)
			}
			if strings.Contains(list, `/`+objID+`"`) {
				t.Errorf("the events list links the fixture %s", objID)
			}
			if !strings.Contains(list, "<code>"+objID+"</code>") {
				t.Errorf("the events list does not show the fixture %s", objID)
			}
			page := p.Get("/portal/test/events/" + evID).Body
			if strings.Contains(page, `/`+objID+`"`) || !strings.Contains(page, "sandbox fixture") {
				t.Errorf("the event page of %s links its fixture or does not say what it is", evID)
			}
		}
		if !strings.Contains(list, `href="/portal/test/payment_intents/`+real+`"`) {
			t.Error("a real payment intent's event is not linked")
		}
	})
}
