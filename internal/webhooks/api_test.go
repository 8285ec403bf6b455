package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/webhooks"
)

// TestEndpointBadInput: every refusal is a 400 naming the field, and nothing
// is written.
func TestEndpointBadInput(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		live := e.LiveKey(t, "bank_a")
		cases := []struct {
			name  string
			key   string
			body  any
			param string
			code  string
		}{
			{"malformed url", e.SK, map[string]any{"url": "http//nope", "enabled_events": []string{"*"}}, "url", "url_invalid"},
			{"url with spaces", e.SK, map[string]any{"url": "http://exa mple.com/x", "enabled_events": []string{"*"}}, "url", "url_invalid"},
			{"not http", e.SK, map[string]any{"url": "ftp://example.com/x", "enabled_events": []string{"*"}}, "url", "url_invalid"},
			{"missing url", e.SK, map[string]any{"enabled_events": []string{"*"}}, "url", "parameter_missing"},
			{"url not a string", e.SK, map[string]any{"url": 12, "enabled_events": []string{"*"}}, "url", "parameter_invalid"},
			{"credentials in url", e.SK, map[string]any{"url": "https://u:p@example.com/x"}, "url", "url_invalid"},
			{"non-https live url", live, map[string]any{"url": "http://example.com/hooks", "enabled_events": []string{"*"}}, "url", "url_https_required"},
			{"loopback live url", live, map[string]any{"url": "https://127.0.0.1/hooks", "enabled_events": []string{"*"}}, "url", "url_address_refused"},
			{"localhost live url", live, map[string]any{"url": "https://localhost:8443/hooks", "enabled_events": []string{"*"}}, "url", "url_address_refused"},
			{"ipv6 loopback live url", live, map[string]any{"url": "https://[::1]/hooks", "enabled_events": []string{"*"}}, "url", "url_address_refused"},
			{"private live url", live, map[string]any{"url": "https://10.1.2.3/hooks", "enabled_events": []string{"*"}}, "url", "url_address_refused"},
			{"link-local live url", live, map[string]any{"url": "https://169.254.169.254/latest", "enabled_events": []string{"*"}}, "url", "url_address_refused"},
			{"mapped loopback live url", live, map[string]any{"url": "https://[::ffff:127.0.0.1]/hooks"}, "url", "url_address_refused"},
			{"numeric host live url", live, map[string]any{"url": "https://2130706433/hooks"}, "url", "url_invalid"},
			{"hex host live url", live, map[string]any{"url": "https://0x7f.1/hooks"}, "url", "url_invalid"},
			{"metadata in test mode", e.SK, map[string]any{"url": "http://169.254.169.254/latest"}, "url", "url_address_refused"},
			{"private in test mode", e.SK, map[string]any{"url": "http://192.168.1.10/hooks"}, "url", "url_address_refused"},
			{"unknown event type", e.SK, map[string]any{"url": "http://localhost:4242/hooks", "enabled_events": []string{"payment_intent.succeeded", "charge.refunded"}}, "enabled_events", "event_type_unknown"},
			{"empty enabled_events", e.SK, map[string]any{"url": "http://localhost:4242/hooks", "enabled_events": []string{}}, "enabled_events", "parameter_invalid"},
			{"star with others", e.SK, map[string]any{"url": "http://localhost:4242/hooks", "enabled_events": []string{"*", "payout.failed"}}, "enabled_events", "parameter_invalid"},
			{"description too long", e.SK, map[string]any{"url": "http://localhost:4242/hooks", "description": strings.Repeat("d", 501)}, "description", "parameter_invalid"},
			{"unknown field", e.SK, map[string]any{"url": "http://localhost:4242/hooks", "events": []string{"*"}}, "events", "parameter_unknown"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: c.key, Body: c.body})
				var body struct {
					Error struct{ Param, Code, Message string }
				}
				r.JSON(t, &body)
				if r.Status != 400 || body.Error.Param != c.param || body.Error.Code != c.code {
					t.Fatalf("got %d %s, want 400 %s naming %s", r.Status, r.Body, c.code, c.param)
				}
			})
		}
		var n int
		e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM webhook_endpoints").Scan(&n)
		if n != 0 {
			t.Fatalf("%d endpoints written by refused requests", n)
		}
		// What is allowed: an https public live url, http loopback in test mode.
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: live, Body: map[string]any{"url": "https://93.184.215.14/hooks"}}); r.Status != 201 {
			t.Fatalf("public live url: %d %s", r.Status, r.Body)
		}
		for _, u := range []string{"http://localhost:4242/hooks", "http://127.0.0.2:9/x", "http://[::1]:4242/"} {
			if r := e.Post("/v1/webhook_endpoints", map[string]any{"url": u}); r.Status != 201 {
				t.Fatalf("test-mode %s: %d %s", u, r.Status, r.Body)
			}
		}
	})
}

// TestEndpointLifecycleAndIsolation: create, list, get, update, delete; an
// endpoint is invisible to another merchant and to the other mode; the
// secret is shown once.
func TestEndpointLifecycleAndIsolation(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		live := e.LiveKey(t, "bank_a")
		other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := 0; i < 3; i++ {
			r := e.Post("/v1/webhook_endpoints", map[string]any{"url": fmt.Sprintf("http://localhost:%d/hooks", 4000+i),
				"enabled_events": []string{"payout.succeeded", "payout.failed"}, "description": fmt.Sprintf("ep %d", i)})
			if r.Status != 201 {
				t.Fatalf("create: %d %s", r.Status, r.Body)
			}
			var ep endpointJSON
			r.JSON(t, &ep)
			ids = append(ids, ep.ID)
		}
		r := e.Get("/v1/webhook_endpoints?limit=2")
		var page struct {
			Object  string
			Data    []endpointJSON
			HasMore bool `json:"has_more"`
		}
		r.JSON(t, &page)
		if r.Status != 200 || page.Object != "list" || len(page.Data) != 2 || !page.HasMore || page.Data[0].ID != ids[2] {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		for _, ep := range page.Data {
			if ep.Secret != "" {
				t.Fatal("the list shows a secret")
			}
		}
		e.Get("/v1/webhook_endpoints?limit=2&starting_after="+ids[1]).JSON(t, &page)
		if len(page.Data) != 1 || page.Data[0].ID != ids[0] || page.HasMore {
			t.Fatalf("second page %+v", page)
		}
		var got endpointJSON
		e.Get("/v1/webhook_endpoints/"+ids[0]).JSON(t, &got)
		if got.Secret != "" || got.Description != "ep 0" || len(got.EnabledEvents) != 2 {
			t.Fatalf("get %+v", got)
		}
		for _, key := range []string{live, other.SecretKeys[0]} {
			if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/webhook_endpoints/" + ids[0], Key: key}); r.Status != 404 || r.ErrorCode() != "resource_missing" {
				t.Fatalf("seen by another mode or merchant: %d", r.Status)
			}
			if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints/" + ids[0], Key: key, Body: map[string]any{"description": "x"}}); r.Status != 404 {
				t.Fatalf("updated by another mode or merchant: %d", r.Status)
			}
			if r := e.Do(apptest.Request{Method: "DELETE", Path: "/v1/webhook_endpoints/" + ids[0], Key: key}); r.Status != 404 {
				t.Fatalf("deleted by another mode or merchant: %d", r.Status)
			}
			var l struct{ Data []endpointJSON }
			e.Do(apptest.Request{Method: "GET", Path: "/v1/webhook_endpoints", Key: key}).JSON(t, &l)
			if len(l.Data) != 0 {
				t.Fatalf("another mode or merchant lists %d endpoints", len(l.Data))
			}
		}
		r = e.Post("/v1/webhook_endpoints/"+ids[0], map[string]any{"url": "http://127.0.0.1:5555/new", "enabled_events": []string{"*"}, "disabled": true})
		r.JSON(t, &got)
		if r.Status != 200 || got.URL != "http://127.0.0.1:5555/new" || got.Status != "disabled" || got.EnabledEvents[0] != "*" || got.Description != "ep 0" {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		if r := e.Post("/v1/webhook_endpoints/"+ids[0], map[string]any{"enabled_events": []string{"nope"}}); r.Status != 400 {
			t.Fatalf("bad update: %d", r.Status)
		}
		r = e.Do(apptest.Request{Method: "DELETE", Path: "/v1/webhook_endpoints/" + ids[0], Key: e.SK})
		if r.Status != 200 || r.Map(t)["deleted"] != true {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if r := e.Get("/v1/webhook_endpoints/" + ids[0]); r.Status != 404 {
			t.Fatalf("deleted endpoint still there: %d", r.Status)
		}
		if r := e.Do(apptest.Request{Method: "DELETE", Path: "/v1/webhook_endpoints/" + ids[0], Key: e.SK}); r.Status != 404 {
			t.Fatalf("second delete: %d", r.Status)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/webhook_endpoints", Key: e.PK}); r.Status != 403 {
			t.Fatalf("publishable key: %d", r.Status)
		}
	})
}

// TestTrigger covers the sandbox trigger's refusals and both object sources.
func TestTrigger(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		live := e.LiveKey(t, "bank_a")
		// Real objects, as their capabilities record them.
		const uetr = "3f1c2b9e-8d4a-4c3b-9a1e-5b6c7d8e9f01"
		objects := []struct{ typ, objType, id string }{
			{"payment_intent.succeeded", "payment_intent", "pi_REAL1"},
			{"payout.created", "payout", "po_REAL1"},
			{"payout_batch.completed", "payout_batch", "batch_REAL1"},
			{"transfer.settled", "transfer", uetr},
		}
		for _, o := range objects {
			err := e.Main.DB.InTx(ctx, func(tx *store.Tx) error {
				for v := 1; v <= 2; v++ {
					if _, err := events.Emit(ctx, tx, e.Merchant.MerchantID, false, o.typ, o.objType, o.id, map[string]any{"id": o.id, "version": v}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name   string
			key    string
			body   any
			status int
			code   string
			param  string
		}{
			{"unknown type", e.SK, map[string]any{"event_type": "charge.succeeded"}, 400, "event_type_unknown", "event_type"},
			{"missing type", e.SK, map[string]any{}, 400, "parameter_missing", "event_type"},
			{"wrong kind", e.SK, map[string]any{"event_type": "payout.created", "related_object_id": "pi_REAL1"}, 400, "related_object_mismatch", "related_object_id"},
			{"bulk id for payout", e.SK, map[string]any{"event_type": "payout.failed", "related_object_id": "po_bulk_X"}, 400, "related_object_mismatch", "related_object_id"},
			{"not a uetr", e.SK, map[string]any{"event_type": "transfer.settled", "related_object_id": "tr_1"}, 400, "related_object_mismatch", "related_object_id"},
			{"unknown object", e.SK, map[string]any{"event_type": "payment_intent.succeeded", "related_object_id": "pi_NOPE"}, 404, "resource_missing", "related_object_id"},
			{"unknown invoice", e.SK, map[string]any{"event_type": "invoice.paid", "related_object_id": "in_NOPE"}, 404, "resource_missing", "related_object_id"},
			{"live key", live, map[string]any{"event_type": "payout.created"}, 403, "permission_denied", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/webhooks/trigger", Key: c.key, Body: c.body})
				var body struct{ Error struct{ Param, Code string } }
				r.JSON(t, &body)
				if r.Status != c.status || body.Error.Code != c.code || body.Error.Param != c.param {
					t.Fatalf("got %d %s, want %d %s %s", r.Status, r.Body, c.status, c.code, c.param)
				}
			})
		}
		// Another merchant's object is unknown here.
		other, _ := e.Main.Merchants.Create(ctx, merchants.CreateParams{Name: "Other"})
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/webhooks/trigger", Key: other.SecretKeys[0],
			Body: map[string]any{"event_type": "payment_intent.succeeded", "related_object_id": "pi_REAL1"}}); r.Status != 404 {
			t.Fatalf("another merchant's object: %d", r.Status)
		}
		for _, o := range objects {
			id := o.id
			if o.objType == "transfer" {
				id = strings.ToUpper(id)
			}
			ev := trigger(t, e, e.SK, map[string]any{"event_type": o.typ, "related_object_id": id})
			if ev.Type != o.typ || ev.Data.ID != o.id || ev.Data.Object["version"] != float64(2) || ev.Livemode {
				t.Fatalf("%s wraps %+v, want the latest snapshot of %s", o.typ, ev.Data, o.id)
			}
		}
		// Synthetic fixtures have the kind's id and shape.
		for _, typ := range webhooks.EventTypes() {
			ev := trigger(t, e, e.SK, map[string]any{"event_type": typ})
			kind, _ := webhooks.KindOf(typ)
			if k, ok := webhooks.KindOfID(ev.Data.ID); !ok || k != kind || ev.Object != "event" || !strings.HasPrefix(ev.ID, "evt_") {
				t.Fatalf("%s fixture id %q", typ, ev.Data.ID)
			}
			if _, err := time.Parse(time.RFC3339, ev.CreatedAt); err != nil || !strings.HasSuffix(ev.CreatedAt, "Z") {
				t.Fatalf("created_at %q", ev.CreatedAt)
			}
			obj := ev.Data.Object
			switch kind {
			case webhooks.KindPaymentIntent:
				if obj["object"] != "payment_intent" || obj["amount_minor"] == nil || obj["status"] == nil {
					t.Fatalf("%s: %v", typ, obj)
				}
			case webhooks.KindPayout:
				if obj["object"] != "payout" || obj["amount"] == nil || obj["status"] == nil {
					t.Fatalf("%s: %v", typ, obj)
				}
			case webhooks.KindTransfer:
				if obj["uetr"] != ev.Data.ID || obj["status"] == nil {
					t.Fatalf("%s: %v", typ, obj)
				}
			case webhooks.KindDispute:
				if obj["object"] != "dispute" || obj["amount_minor"] == nil || obj["status"] == nil || obj["evidence"] == nil {
					t.Fatalf("%s: %v", typ, obj)
				}
			}
		}
		if ev := trigger(t, e, e.SK, map[string]any{"event_type": "payment_intent.canceled"}); ev.Data.Object["status"] != "canceled" {
			t.Fatalf("canceled fixture %v", ev.Data.Object)
		}
	})
}

// TestEventsAPI: list with filters and pages, retrieve, deliveries,
// redeliver; all isolated by merchant and mode.
func TestEventsAPI(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		live := e.LiveKey(t, "bank_a")
		rc := newReceiver(t)
		ep := register(t, e, e.SK, rc, "payout.succeeded", "payout.failed")
		var made []eventJSON
		for _, typ := range []string{"payout.succeeded", "payout.failed", "payment_intent.created", "payout.succeeded"} {
			made = append(made, trigger(t, e, e.SK, map[string]any{"event_type": typ}))
		}
		var l struct {
			Data    []eventJSON
			HasMore bool `json:"has_more"`
		}
		e.Get("/v1/events").JSON(t, &l)
		if len(l.Data) != 4 || l.Data[0].ID != made[3].ID || l.HasMore {
			t.Fatalf("list %+v", l)
		}
		e.Get("/v1/events?type=payout.succeeded").JSON(t, &l)
		if len(l.Data) != 2 || l.Data[0].ID != made[3].ID || l.Data[1].ID != made[0].ID {
			t.Fatalf("type filter %+v", l)
		}
		e.Get("/v1/events?type=payout.*&limit=2").JSON(t, &l)
		if len(l.Data) != 2 || !l.HasMore {
			t.Fatalf("prefix filter %+v", l)
		}
		e.Get("/v1/events?related_object_id="+made[1].Data.ID).JSON(t, &l)
		if len(l.Data) != 1 || l.Data[0].ID != made[1].ID {
			t.Fatalf("object filter %+v", l)
		}
		e.Get("/v1/events?ending_before="+made[0].ID).JSON(t, &l)
		if len(l.Data) != 3 || l.Data[2].ID != made[1].ID {
			t.Fatalf("ending_before %+v", l)
		}
		if r := e.Get("/v1/events?limit=101"); r.Status != 400 {
			t.Fatalf("limit 101: %d", r.Status)
		}
		var one eventJSON
		e.Get("/v1/events/"+made[2].ID).JSON(t, &one)
		if one.ID != made[2].ID || one.Type != "payment_intent.created" || one.Data.ID != made[2].Data.ID {
			t.Fatalf("get %+v", one)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events/" + made[2].ID, Key: live}); r.Status != 404 {
			t.Fatalf("live key sees a test event: %d", r.Status)
		}
		e.Do(apptest.Request{Method: "GET", Path: "/v1/events", Key: live}).JSON(t, &l)
		if len(l.Data) != 0 {
			t.Fatal("live key lists test events")
		}
		// Only subscribed types are delivered.
		waitDelivered(t, e, e.SK, made[3].ID, 20*time.Second)
		if ds := deliveries(t, e, e.SK, made[2].ID); len(ds) != 0 {
			t.Fatalf("unsubscribed type delivered: %+v", ds)
		}
		// Redeliver: new deliveries, answered 202, then sent.
		r := e.Post("/v1/events/"+made[0].ID+"/redeliver", nil)
		var rl struct {
			Object string
			Data   []deliveryJSON
		}
		r.JSON(t, &rl)
		if r.Status != 202 || rl.Object != "list" || len(rl.Data) != 1 || rl.Data[0].Status != "pending" || rl.Data[0].EndpointID != ep.ID || rl.Data[0].EventID != made[0].ID {
			t.Fatalf("redeliver: %d %s", r.Status, r.Body)
		}
		waitFor(t, 20*time.Second, "the redelivery", func() bool { return rc.acked()[made[0].ID] == 2 })
		ds := waitDelivered(t, e, e.SK, made[0].ID, 20*time.Second)
		if len(ds) != 2 || ds[0].ID != rl.Data[0].ID || ds[0].Status != "succeeded" {
			t.Fatalf("deliveries after redeliver %+v", ds)
		}
		r = e.Do(apptest.Request{Method: "POST", Path: "/v1/events/" + made[0].ID + "/redeliver", Key: e.SK, Body: map[string]any{"endpoint_id": "we_nope"}})
		if r.Status != 400 || !strings.Contains(string(r.Body), "endpoint_id") {
			t.Fatalf("redeliver to unknown endpoint: %d %s", r.Status, r.Body)
		}
		if r := e.Post("/v1/events/evt_NOPE/redeliver", nil); r.Status != 404 {
			t.Fatalf("redeliver unknown: %d", r.Status)
		}
		if r := e.Do(apptest.Request{Method: "GET", Path: "/v1/events/" + made[0].ID + "/deliveries", Key: live}); r.Status != 404 {
			t.Fatalf("live key sees deliveries: %d", r.Status)
		}
		// The portal's view: an endpoint's deliveries.
		owner := webhooks.Owner{MerchantID: e.Merchant.MerchantID}
		waitDelivered(t, e, e.SK, made[1].ID, 20*time.Second)
		byEndpoint, _, err := e.Main.Webhooks().ListEndpointDeliveries(context.Background(), owner, ep.ID, pagination.Page{Limit: 10})
		if err != nil || len(byEndpoint) != 4 || byEndpoint[0].ID != rl.Data[0].ID || len(byEndpoint[0].Attempts) != 1 {
			t.Fatalf("endpoint deliveries %+v %v", byEndpoint, err)
		}
		if _, _, err := e.Main.Webhooks().ListEndpointDeliveries(context.Background(), webhooks.Owner{MerchantID: e.Merchant.MerchantID, Livemode: true}, ep.ID, pagination.Page{Limit: 10}); err == nil {
			t.Fatal("live mode sees a test endpoint's deliveries")
		}
		// A deleted endpoint gets no new deliveries; its past ones stay.
		e.Do(apptest.Request{Method: "DELETE", Path: "/v1/webhook_endpoints/" + ep.ID, Key: e.SK})
		late := trigger(t, e, e.SK, map[string]any{"event_type": "payout.failed"})
		waitFor(t, 10*time.Second, "dispatch", func() bool {
			var d *int64
			e.Main.DB.QueryRow(context.Background(), "SELECT dispatched_at FROM events WHERE id = ?", late.ID).Scan(&d)
			return d != nil
		})
		if ds := deliveries(t, e, e.SK, late.ID); len(ds) != 0 {
			t.Fatalf("deleted endpoint got a delivery: %+v", ds)
		}
		if ds := deliveries(t, e, e.SK, made[0].ID); len(ds) != 2 {
			t.Fatalf("past deliveries gone: %d", len(ds))
		}
	})
}

// TestCreateIsIdempotentWithoutStoringTheSecret: a repeated create with the
// same Idempotency-Key answers the same endpoint and secret, another body
// under the key is 422, and the secret is stored nowhere in clear (the
// shared idempotency store keeps answers verbatim, so creation keeps its key
// with the sealed endpoint instead).
func TestCreateIsIdempotentWithoutStoringTheSecret(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		req := apptest.Request{Method: "POST", Path: "/v1/webhook_endpoints", Key: e.SK,
			Body: map[string]any{"url": "http://localhost:4242/hooks"}, Headers: map[string]string{"Idempotency-Key": "create-1"}}
		first := e.Do(req)
		again := e.Do(req)
		var a, b endpointJSON
		first.JSON(t, &a)
		again.JSON(t, &b)
		if first.Status != 201 || again.Status != 201 || a.ID != b.ID || a.Secret == "" || a.Secret != b.Secret ||
			again.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("replay: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
		}
		other := req
		other.Body = map[string]any{"url": "http://localhost:4243/hooks"}
		if r := e.Do(other); r.Status != 422 || r.ErrorCode() != "idempotency_key_reused" {
			t.Fatalf("reuse with another body: %d %s", r.Status, r.Body)
		}
		second := req
		second.Key = e.SK2 // another principal: its own key space
		var c endpointJSON
		r2 := e.Do(second)
		r2.JSON(t, &c)
		if r2.Status != 201 || c.ID == a.ID {
			t.Fatalf("another principal: %d %s", r2.Status, r2.Body)
		}
		var l struct{ Data []endpointJSON }
		e.Get("/v1/webhook_endpoints").JSON(t, &l)
		if len(l.Data) != 2 {
			t.Fatalf("%d endpoints, want 2", len(l.Data))
		}
		ctx := context.Background()
		for _, q := range []string{"SELECT COALESCE(body, '') FROM idempotency_keys", "SELECT secret_sealed FROM webhook_endpoints"} {
			rows, err := e.Main.DB.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v []byte
				rows.Scan(&v)
				if strings.Contains(string(v), "whsec_") || strings.Contains(string(v), strings.TrimPrefix(a.Secret, "whsec_")) {
					t.Fatalf("a secret is stored in clear (%s)", q)
				}
			}
			rows.Close()
		}
		e.RequireSecretsAbsent(a.Secret, c.Secret)
	})
}
