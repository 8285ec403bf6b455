package webhooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/webhooks"
	"github.com/payd/payd/webhook"
)

type endpointJSON struct {
	ID            string   `json:"id"`
	Object        string   `json:"object"`
	URL           string   `json:"url"`
	EnabledEvents []string `json:"enabled_events"`
	Description   string   `json:"description"`
	Status        string   `json:"status"`
	Livemode      bool     `json:"livemode"`
	Secret        string   `json:"secret"`
}

type deliveryJSON struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	Status     string `json:"status"`
	Attempts   []struct {
		At         time.Time `json:"at"`
		HTTPStatus *int      `json:"http_status"`
		LatencyMS  int64     `json:"latency_ms"`
		Error      *string   `json:"error"`
	} `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

type eventJSON struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Livemode  bool   `json:"livemode"`
	Data      struct {
		ID     string         `json:"id"`
		Object map[string]any `json:"object"`
	} `json:"data"`
}

// register makes an endpoint for rc with key and wires its secret in.
func register(t *testing.T, e *apptest.Env, key string, rc *receiver, events ...string) endpointJSON {
	t.Helper()
	if len(events) == 0 {
		events = []string{"*"}
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: key,
		Body: map[string]any{"url": rc.URL(), "enabled_events": events, "description": "test receiver"}})
	if r.Status != 201 {
		t.Fatalf("create endpoint: %d %s", r.Status, r.Body)
	}
	var ep endpointJSON
	r.JSON(t, &ep)
	rc.setSecret(ep.Secret)
	return ep
}

func trigger(t *testing.T, e *apptest.Env, key string, body map[string]any) eventJSON {
	t.Helper()
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/webhooks/trigger", Key: key, Body: body})
	if r.Status != 201 {
		t.Fatalf("trigger %v: %d %s", body, r.Status, r.Body)
	}
	var ev eventJSON
	r.JSON(t, &ev)
	return ev
}

func deliveries(t *testing.T, e *apptest.Env, key, eventID string) []deliveryJSON {
	t.Helper()
	r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events/" + eventID + "/deliveries", Key: key})
	if r.Status != 200 {
		t.Fatalf("deliveries: %d %s", r.Status, r.Body)
	}
	var l struct{ Data []deliveryJSON }
	r.JSON(t, &l)
	return l.Data
}

// waitDelivered waits until every delivery of the event is no longer pending
// and returns them.
func waitDelivered(t *testing.T, e *apptest.Env, key, eventID string, within time.Duration) []deliveryJSON {
	t.Helper()
	var ds []deliveryJSON
	waitFor(t, within, "deliveries of "+eventID+" to finish", func() bool {
		ds = deliveries(t, e, key, eventID)
		if len(ds) == 0 {
			return false
		}
		for _, d := range ds {
			if d.Status == webhooks.DeliveryPending {
				return false
			}
		}
		return true
	})
	return ds
}

// TestSignedDelivery: every event type reaches a receiver that checks each
// signature with the published algorithm, once, with the three headers.
func TestSignedDelivery(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		rc := newReceiver(t)
		ep := register(t, e, e.SK, rc)
		if !strings.HasPrefix(ep.Secret, "whsec_") || ep.Object != "webhook_endpoint" || ep.Status != "enabled" || ep.Livemode {
			t.Fatalf("endpoint %+v", ep)
		}
		var evs []eventJSON
		for _, typ := range webhooks.EventTypes() {
			evs = append(evs, trigger(t, e, e.SK, map[string]any{"event_type": typ}))
		}
		for _, ev := range evs {
			ds := waitDelivered(t, e, e.SK, ev.ID, 20*time.Second)
			if len(ds) != 1 || ds[0].Status != "succeeded" || ds[0].EndpointID != ep.ID || ds[0].Object != "webhook_delivery" ||
				len(ds[0].Attempts) != 1 || ds[0].Attempts[0].HTTPStatus == nil || *ds[0].Attempts[0].HTTPStatus != 200 ||
				ds[0].Attempts[0].Error != nil || ds[0].NextAttemptAt != nil {
				t.Fatalf("deliveries of %s: %+v", ev.Type, ds)
			}
		}
		got := rc.requests()
		if len(got) != len(evs) {
			t.Fatalf("receiver got %d requests, want %d", len(got), len(evs))
		}
		byID := map[string]received{}
		for _, g := range got {
			if g.Verified != nil {
				t.Fatalf("delivery of %s failed verification: %v", g.EventID, g.Verified)
			}
			byID[g.EventID] = g
		}
		for _, ev := range evs {
			g, ok := byID[ev.ID]
			if !ok || g.EventType != ev.Type {
				t.Fatalf("event %s %s not received as such: %+v", ev.ID, ev.Type, g)
			}
			var body eventJSON
			if err := json.Unmarshal(g.Body, &body); err != nil || body.ID != ev.ID || body.Data.ID != ev.Data.ID || body.Data.Object == nil {
				t.Fatalf("body of %s: %s", ev.ID, g.Body)
			}
		}
		// A tampered body, or another secret, does not verify.
		g := got[0]
		h := map[string][]string{webhook.HeaderEventID: {g.EventID}, webhook.HeaderSignature: {webhook.SignatureHeader(ep.Secret, time.Now(), g.EventID, g.Body)}}
		if _, err := webhook.Verify(ep.Secret, h, append([]byte(" "), g.Body...)); err == nil {
			t.Fatal("tampered body verified")
		}
		e.RequireSecretsAbsent(ep.Secret)
		var sealed string
		e.Main.DB.QueryRow(context.Background(), "SELECT secret_sealed FROM webhook_endpoints WHERE id = ?", ep.ID).Scan(&sealed)
		if sealed == "" || strings.Contains(sealed, ep.Secret) || strings.Contains(sealed, strings.TrimPrefix(ep.Secret, "whsec_")) {
			t.Fatalf("secret stored in clear: %q", sealed)
		}
	})
}
