package webhook_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/payd/payd/webhook"
)

// A receiver verifies each delivery with its endpoint's signing secret,
// answers 400 when verification fails, and acts once per event id.
func Example() {
	const secret = "whsec_exampleexampleexampleexample" // from POST /v1/webhook_endpoints
	seen := webhook.NewDedup(10000)

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _, err := webhook.VerifyRequest(r, secret)
		if err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		if !seen.FirstTime(d.EventID) {
			w.WriteHeader(http.StatusOK) // a repeat: already handled
			return
		}
		fmt.Printf("%s about %s\n", d.EventType, d.Event.Data.ID)
		w.WriteHeader(http.StatusOK)
	})

	// What payd sends, signed as payd signs it.
	body := `{"id":"evt_1","object":"event","type":"payment_intent.succeeded","created_at":"2026-11-21T10:00:00Z","livemode":false,"data":{"id":"pi_1","object":{"id":"pi_1","status":"succeeded"}}}`
	send := func() int {
		req := httptest.NewRequest("POST", "/webhooks", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhook.HeaderEventID, "evt_1")
		req.Header.Set(webhook.HeaderEventType, "payment_intent.succeeded")
		req.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader(secret, time.Now(), "evt_1", []byte(body)))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		return rec.Code
	}
	fmt.Println(send())
	fmt.Println(send()) // the same event again: acknowledged, not acted on twice

	forged := httptest.NewRequest("POST", "/webhooks", strings.NewReader(body))
	forged.Header.Set(webhook.HeaderEventID, "evt_1")
	forged.Header.Set(webhook.HeaderSignature, webhook.SignatureHeader("whsec_wrong", time.Now(), "evt_1", []byte(body)))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, forged)
	fmt.Println(rec.Code)
	// Output:
	// payment_intent.succeeded about pi_1
	// 200
	// 200
	// 400
}

// ComputeSignature is the whole algorithm: HMAC-SHA256, keyed with the whole
// secret string, over "{t}.{event_id}.{raw_body}", in lowercase hex.
func ExampleComputeSignature() {
	t := time.Unix(1700000000, 0)
	fmt.Println(webhook.ComputeSignature("whsec_test", t, "evt_123", []byte(`{"id":"evt_123"}`)))
	fmt.Println(webhook.SignatureHeader("whsec_test", t, "evt_123", []byte(`{"id":"evt_123"}`))[:13])
	// Output:
	// f7469f530ba94cb37b3ca28d1e61c04e33b1b36308b6b7cb5ebc331b1b248b6f
	// t=1700000000,
}
