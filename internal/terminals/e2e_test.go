package terminals_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
	"github.com/payd/payd/internal/terminals/simulator"
)

// TestTerminals runs the registry, card-present payments, bad input and the
// card-data search against a real payd on each engine.
func TestTerminals(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		h := newHarness(t, e)
		t.Run("registry", func(t *testing.T) { testRegistry(t, h) })
		t.Run("payments", func(t *testing.T) { testPayments(t, h) })
		t.Run("bad payments", func(t *testing.T) { testBadPayments(t, h) })
		t.Run("races", func(t *testing.T) { testRaces(t, h) })
		t.Run("manual capture", func(t *testing.T) { testManualCapture(t, h) })
		t.Run("live mode", func(t *testing.T) { testLiveMode(t, h) })
		t.Run("simulator", func(t *testing.T) { testSimulatorClient(t, h) })
		t.Run("no card data anywhere", func(t *testing.T) { testNoCardData(t, h) })
	})
}

func testRegistry(t *testing.T, h *harness) {
	countTerminals := func() int {
		var n int
		if err := h.e.Main.DB.QueryRow(context.Background(), "SELECT COUNT(*) FROM terminals").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	meta := map[string]any{"lane": "3", "pos_vendor": "Acme POS", "empty": ""}
	term := h.register(t, map[string]any{"serial_number": "CT-0001", "model": "countertop", "outlet_id": "outlet_a",
		"label": "Front desk", "metadata": meta})
	id := term["id"].(string)
	if !strings.HasPrefix(id, "term_") || term["status"] != "inactive" || term["object"] != "terminal" ||
		term["model"] != "countertop" || term["outlet_id"] != "outlet_a" || term["label"] != "Front desk" || term["livemode"] != false {
		t.Fatalf("registered terminal: %v", term)
	}
	requireMeta := func(where string, got any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(meta) {
			t.Fatalf("%s: metadata %v, want %v", where, got, meta)
		}
	}
	requireMeta("create", term["metadata"])
	requireMeta("retrieve", h.get(t, "/v1/terminals/"+id).Map(t)["metadata"])

	t.Run("label of 60 characters, no metadata", func(t *testing.T) {
		m := h.register(t, map[string]any{"serial_number": "MB-0001", "model": "mobile", "label": strings.Repeat("é", 60)})
		if m["metadata"] == nil || len(m["metadata"].(map[string]any)) != 0 || m["outlet_id"] != nil {
			t.Fatalf("defaults: %v", m)
		}
	})

	bad := []struct {
		name        string
		body        map[string]any
		code, param string
		status      int
	}{
		{"unknown model", map[string]any{"serial_number": "X-1", "model": "kiosk"}, "parameter_invalid", "model", 400},
		{"label of 61 characters", map[string]any{"serial_number": "X-2", "model": "mobile", "label": strings.Repeat("a", 61)}, "parameter_invalid", "label", 400},
		{"missing serial", map[string]any{"model": "mobile"}, "parameter_missing", "serial_number", 400},
		{"missing model", map[string]any{"serial_number": "X-3"}, "parameter_missing", "model", 400},
		{"metadata not a string", map[string]any{"serial_number": "X-4", "model": "mobile", "metadata": map[string]any{"n": 1}}, "parameter_invalid", "metadata", 400},
		{"unknown field", map[string]any{"serial_number": "X-5", "model": "mobile", "bdk": "00"}, "parameter_unknown", "bdk", 400},
		{"serial already registered", map[string]any{"serial_number": "CT-0001", "model": "mobile"}, "serial_number_in_use", "serial_number", 409},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			before := countTerminals()
			requireError(t, h.post(t, "/v1/terminals", c.body), c.status, c.code, c.param)
			if countTerminals() != before {
				t.Fatal("a refused registration wrote a terminal")
			}
		})
	}

	t.Run("list", func(t *testing.T) {
		h.register(t, map[string]any{"serial_number": "CT-0002", "model": "countertop", "outlet_id": "outlet_b"})
		requireError(t, h.get(t, "/v1/terminals?limit=101"), 400, "parameter_invalid", "limit")
		requireError(t, h.get(t, "/v1/terminals?status=broken"), 400, "parameter_invalid", "status")
		var all []string
		path := "/v1/terminals?limit=1"
		for i := 0; ; i++ {
			var page struct {
				Object  string `json:"object"`
				Data    []terminals.Terminal
				HasMore bool `json:"has_more"`
			}
			h.get(t, path).JSON(t, &page)
			if page.Object != "list" || len(page.Data) != 1 || i > 5 {
				t.Fatalf("page %d: %+v", i, page)
			}
			all = append(all, page.Data[0].ID)
			if !page.HasMore {
				break
			}
			path = "/v1/terminals?limit=1&starting_after=" + page.Data[0].ID
		}
		if len(all) != 3 || all[2] != id {
			t.Fatalf("paged through %v, want 3 terminals, oldest %s last", all, id)
		}
		var byOutlet struct{ Data []terminals.Terminal }
		h.get(t, "/v1/terminals?outlet_id=outlet_a").JSON(t, &byOutlet)
		if len(byOutlet.Data) != 1 || byOutlet.Data[0].ID != id || byOutlet.Data[0].Metadata["lane"] != "3" {
			t.Fatalf("outlet filter: %+v", byOutlet.Data)
		}
	})

	t.Run("activate and deregister", func(t *testing.T) {
		r := h.post(t, "/v1/terminals/"+id+"/activate", nil)
		if r.Status != 200 || r.Map(t)["status"] != "active" || r.Map(t)["activated_at"] == nil {
			t.Fatalf("activate: %d %s", r.Status, r.Body)
		}
		requireMeta("activate", r.Map(t)["metadata"])
		requireError(t, h.post(t, "/v1/terminals/"+id+"/activate", nil), 409, "invalid_state", "")
		var active struct{ Data []terminals.Terminal }
		h.get(t, "/v1/terminals?status=active").JSON(t, &active)
		if len(active.Data) != 1 || active.Data[0].ID != id {
			t.Fatalf("status=active: %+v", active.Data)
		}

		d := h.do(t, apptest.Request{Method: "DELETE", Path: "/v1/terminals/" + id})
		if d.Status != 200 || string(bytes.TrimSpace(d.Body)) != `{"id":"`+id+`","object":"terminal","deleted":true}` {
			t.Fatalf("delete: %d %s", d.Status, d.Body)
		}
		g := h.get(t, "/v1/terminals/"+id).Map(t)
		if g["status"] != "deregistered" || g["deregistered_at"] == nil {
			t.Fatalf("after delete: %v", g)
		}
		requireMeta("deregistered", g["metadata"])
		requireError(t, h.do(t, apptest.Request{Method: "DELETE", Path: "/v1/terminals/" + id}), 409, "invalid_state", "")
		requireError(t, h.post(t, "/v1/terminals/"+id+"/activate", nil), 409, "invalid_state", "")

		var list struct{ Data []terminals.Terminal }
		h.get(t, "/v1/terminals?limit=100").JSON(t, &list)
		for _, x := range list.Data {
			if x.ID == id {
				t.Fatal("the default list shows a deregistered terminal")
			}
		}
		h.get(t, "/v1/terminals?status=deregistered").JSON(t, &list)
		if len(list.Data) != 1 || list.Data[0].ID != id {
			t.Fatalf("status=deregistered: %+v", list.Data)
		}
		// The serial is free again once deregistered.
		h.register(t, map[string]any{"serial_number": "CT-0001", "model": "countertop"})
	})

	t.Run("unknown terminal", func(t *testing.T) {
		requireError(t, h.get(t, "/v1/terminals/term_nope"), 404, "resource_missing", "id")
		requireError(t, h.post(t, "/v1/terminals/term_nope/activate", nil), 404, "resource_missing", "id")
	})
}

func testPayments(t *testing.T, h *harness) {
	var approved, declined []string // intent ids
	defer func() {
		if !t.Failed() {
			t.Run("ledger, events and retrieval", func(t *testing.T) { testRecorded(t, h, approved, declined) })
		}
	}()
	for _, model := range terminals.Models {
		t.Run(string(model), func(t *testing.T) {
			id := h.activeTerminal(t, model)
			dev := h.device(t, model, id, 1)

			r := h.pay(t, id, h.payment(t, dev, cardgateway.CardApproved, 500, readOpts{}))
			pi := requireIntent(t, r, 201, "succeeded", id, "visa", "4242")
			if pi.AmountMinor != 500 || pi.Currency != "DJF" {
				t.Fatalf("intent amount: %+v", pi)
			}
			approved = append(approved, pi.ID)

			r = h.pay(t, id, h.payment(t, dev, "5555555555554444", 12_345, readOpts{currency: "USD"}))
			requireIntent(t, r, 201, "succeeded", id, "mastercard", "4444")

			// 3-D Secure is a card-not-present check; at a terminal the chip read suffices.
			r = h.pay(t, id, h.payment(t, dev, cardgateway.Card3DS, 700, readOpts{}))
			requireIntent(t, r, 201, "succeeded", id, "visa", "3220")

			r = h.pay(t, id, h.payment(t, dev, cardgateway.CardDeclined, 900, readOpts{}))
			pi = requireIntent(t, r, 402, "canceled", id, "visa", "0002")
			if pi.LastError == nil || pi.LastError.Code != "card_declined" || pi.LastError.DeclineCode != "generic_decline" {
				t.Fatalf("decline: %s", r.Body)
			}
			declined = append(declined, pi.ID)

			r = h.pay(t, id, h.payment(t, dev, cardgateway.CardApproved, 900, readOpts{expiry: card.Expiry{Year: 2020, Month: time.January}}))
			pi = requireIntent(t, r, 402, "canceled", id, "visa", "4242")
			if pi.LastError == nil || pi.LastError.DeclineCode != terminals.DeclineExpiredCard {
				t.Fatalf("expired card: %s", r.Body)
			}

			t.Run("idempotent retry", func(t *testing.T) {
				body := h.payment(t, dev, cardgateway.CardApproved, 800, readOpts{})
				req := apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/payments", Body: body,
					Headers: map[string]string{"Idempotency-Key": newKey()}}
				first := h.do(t, req)
				second := h.do(t, req)
				if first.Status != 201 || second.Status != 201 || !bytes.Equal(first.Body, second.Body) ||
					second.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("retry: %d %s / %d %s", first.Status, first.Body, second.Status, second.Body)
				}
			})

			t.Run("retry after a failure resumes the payment", func(t *testing.T) {
				body := h.payment(t, dev, cardgateway.CardApproved, 810, readOpts{})
				key := newKey()
				req := apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/payments", Body: body,
					Headers: map[string]string{"Idempotency-Key": key}}
				h.svc.SetRecorder(failingRecorder{})
				requireError(t, h.do(t, req), 503, "card_present_unavailable", "")
				h.svc.SetRecorder(h.recorder)
				requireIntent(t, h.do(t, req), 201, "succeeded", id, "visa", "4242")
				// The same KSN under another key is a replay.
				req.Headers = map[string]string{"Idempotency-Key": newKey()}
				requireError(t, h.do(t, req), 400, "ksn_replayed", "ksn")
			})

			w := h.written(t, id)
			if w.payments != 7 || w.counter != int64(dev.NextCounter()-1) || w.keyID == "" {
				t.Fatalf("terminal state after 7 payments: %+v (device next counter %d)", w, dev.NextCounter())
			}
		})
	}
}

// testRecorded checks what the payments service recorded for the terminal
// payments: each intent retrievable with its card-present details, a
// payment_intent.succeeded event carrying them for each approval (the documented
// example payload: data.object with id, amount_minor, currency, status,
// payment_method_details), none for a decline, and a ledger whose available
// balance is the sum of the approvals and whose invariants hold.
func testRecorded(t *testing.T, h *harness, approved, declined []string) {
	ctx := context.Background()
	db := h.e.Main.DB
	for _, id := range append(append([]string{}, approved...), declined...) {
		r := h.get(t, "/v1/payment_intents/"+id)
		var pi struct {
			Status  string       `json:"status"`
			Details *cardPresent `json:"payment_method_details"`
		}
		r.JSON(t, &pi)
		if r.Status != 200 || pi.Details == nil || pi.Details.Type != "card_present" || pi.Details.CardPresent.TerminalID == "" {
			t.Fatalf("GET %s: %d %s", id, r.Status, r.Body)
		}
		evs, err := events.ForObject(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		var succeeded []events.Event
		canceled := 0
		for _, ev := range evs {
			switch ev.Type {
			case "payment_intent.succeeded":
				succeeded = append(succeeded, ev)
			case "payment_intent.canceled":
				canceled++
			}
		}
		if pi.Status != "succeeded" {
			if len(succeeded) != 0 || canceled != 1 {
				t.Fatalf("declined %s: %d succeeded and %d canceled events", id, len(succeeded), canceled)
			}
			continue
		}
		if len(succeeded) != 1 {
			t.Fatalf("%s: %d payment_intent.succeeded events", id, len(succeeded))
		}
		env, _ := json.Marshal(succeeded[0].Envelope())
		var payload struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID     string `json:"id"`
				Object struct {
					ID          string       `json:"id"`
					AmountMinor int64        `json:"amount_minor"`
					Currency    string       `json:"currency"`
					Status      string       `json:"status"`
					Details     *cardPresent `json:"payment_method_details"`
				} `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(env, &payload); err != nil {
			t.Fatal(err)
		}
		o := payload.Data.Object
		if !strings.HasPrefix(payload.ID, "evt_") || payload.Data.ID != id || o.ID != id || o.Status != "succeeded" || o.AmountMinor <= 0 ||
			o.Currency == "" || o.Details == nil || *o.Details.CardPresent.P2PE != true || o.Details.CardPresent.AuthCode == "" {
			t.Fatalf("payment_intent.succeeded payload: %s", env)
		}
	}
	var want int64
	if err := db.QueryRow(ctx, `SELECT COALESCE(SUM(amount_captured_minor), 0) FROM payment_intents
		WHERE merchant_id = ? AND livemode = ? AND status = 'succeeded' AND currency = 'DJF'`, h.e.Merchant.MerchantID, false).Scan(&want); err != nil {
		t.Fatal(err)
	}
	var bal struct {
		Balances []struct {
			Currency  string `json:"currency"`
			Available int64  `json:"available"`
		} `json:"balances"`
	}
	h.get(t, "/v1/balance").JSON(t, &bal)
	got := int64(-1)
	for _, b := range bal.Balances {
		if b.Currency == "DJF" {
			got = b.Available
		}
	}
	if want < 500*4 || got != want {
		t.Fatalf("DJF available %d, want the %d of succeeded intents", got, want)
	}
	if err := ledger.Verify(ctx, db); err != nil {
		t.Fatal(err)
	}
}

// failingRecorder fails as a database outage would (a 5xx, so the
// idempotency key is released and the client retries).
type failingRecorder struct{}

func (failingRecorder) RecordCardPresent(context.Context, storeClaim, authPrincipal, paymentsCardPresent) (paymentsIntent, error) {
	return paymentsIntent{}, errUnavailable
}

func testBadPayments(t *testing.T, h *harness) {
	for _, model := range terminals.Models {
		t.Run(string(model), func(t *testing.T) {
			id := h.activeTerminal(t, model)
			dev := h.device(t, model, id, 1)
			alg, _ := model.Algorithm()
			// One good payment first, so the terminal has a counter to replay.
			first := h.payment(t, dev, cardgateway.CardApproved, 500, readOpts{})
			requireIntent(t, h.pay(t, id, first), 201, "succeeded", id, "visa", "4242")

			with := func(body map[string]any, k string, v any) map[string]any {
				out := map[string]any{}
				for kk, vv := range body {
					out[kk] = vv
				}
				if v == nil {
					delete(out, k)
				} else {
					out[k] = v
				}
				return out
			}
			good := func() map[string]any { return h.payment(t, dev, cardgateway.CardApproved, 500, readOpts{}) }
			tampered := func() map[string]any {
				b := good()
				ct, _ := hex.DecodeString(b["encrypted_payload"].(string))
				// CBC without a MAC: a flipped bit garbles its block, which the
				// chip-data checks refuse unless the noise happens to parse as
				// TLV (about 1 in 256). Garbling the first and the last block
				// makes that about 1 in 65,536.
				ct[2] ^= 0x40
				ct[len(ct)-1] ^= 0x40
				b["encrypted_payload"] = hex.EncodeToString(ct)
				return b
			}
			otherDevice := func() map[string]any {
				other := h.device(t, model, id+"x", dev.NextCounter())
				return h.payment(t, other, cardgateway.CardApproved, 500, readOpts{})
			}
			initial, _ := simulator.InitialKSN(model, id)
			cases := []struct {
				name        string
				body        map[string]any
				status      int
				code, param string
			}{
				{"malformed KSN (not hex)", with(good(), "ksn", strings.Repeat("Z", 2*alg.KSNLength())), 400, "decryption_failed", "ksn"},
				{"malformed KSN (short)", with(good(), "ksn", "FFFF9876"), 400, "decryption_failed", "ksn"},
				{"KSN of the other model's length", with(good(), "ksn", strings.Repeat("1", 2*(22-alg.KSNLength()))), 400, "decryption_failed", "ksn"},
				{"initial KSN (counter 0)", with(good(), "ksn", initial.String()), 400, "decryption_failed", "ksn"},
				{"wrong-length payload", with(good(), "encrypted_payload", strings.Repeat("ab", alg.BlockSize()+3)), 400, "decryption_failed", "encrypted_payload"},
				{"payload not hex", with(good(), "encrypted_payload", "zz"+strings.Repeat("00", alg.BlockSize()-1)), 400, "decryption_failed", "encrypted_payload"},
				{"tampered ciphertext", tampered(), 400, "decryption_failed", "encrypted_payload"},
				{"payload of another KSN", with(good(), "encrypted_payload", good()["encrypted_payload"]), 400, "decryption_failed", "encrypted_payload"},
				{"KSN of another device", otherDevice(), 400, "decryption_failed", "ksn"},
				{"replayed KSN", first, 400, "ksn_replayed", "ksn"},
				{"amount differs from the chip", with(good(), "amount_minor", 501), 400, "amount_mismatch", "amount_minor"},
				{"currency differs from the chip", with(good(), "currency", "USD"), 400, "currency_mismatch", "currency"},
				{"unknown currency", with(good(), "currency", "XYZ"), 400, "parameter_invalid", "currency"},
				{"zero amount", with(good(), "amount_minor", 0), 400, "parameter_invalid", "amount_minor"},
				{"missing ksn", with(good(), "ksn", nil), 400, "parameter_missing", "ksn"},
				{"missing payload", with(good(), "encrypted_payload", nil), 400, "parameter_missing", "encrypted_payload"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					h.requireNothingWritten(t, id, func() {
						requireError(t, h.pay(t, id, c.body), c.status, c.code, c.param)
					})
				})
			}
			t.Run("older KSN", func(t *testing.T) {
				old := h.device(t, model, id, 1)
				h.requireNothingWritten(t, id, func() {
					requireError(t, h.pay(t, id, h.payment(t, old, cardgateway.CardApproved, 500, readOpts{})), 400, "ksn_replayed", "ksn")
				})
			})
			t.Run("no Idempotency-Key", func(t *testing.T) {
				h.requireNothingWritten(t, id, func() {
					r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/payments", Body: good()})
					requireError(t, r, 400, "idempotency_key_required", "Idempotency-Key")
				})
			})
			t.Run("inactive terminal", func(t *testing.T) {
				idle := h.register(t, map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)})["id"].(string)
				h.requireNothingWritten(t, idle, func() {
					body := h.payment(t, h.device(t, model, idle, 1), cardgateway.CardApproved, 500, readOpts{})
					requireError(t, h.pay(t, idle, body), 409, "invalid_state", "")
				})
			})
			t.Run("deregistered terminal", func(t *testing.T) {
				if r := h.do(t, apptest.Request{Method: "DELETE", Path: "/v1/terminals/" + id}); r.Status != 200 {
					t.Fatalf("delete: %d %s", r.Status, r.Body)
				}
				h.requireNothingWritten(t, id, func() {
					requireError(t, h.pay(t, id, good()), 409, "invalid_state", "")
				})
			})
			t.Run("unknown terminal", func(t *testing.T) {
				requireError(t, h.pay(t, "term_nope", good()), 404, "resource_missing", "id")
			})
		})
	}
}

// testRaces sends racing requests: of two activations, and of two payments
// with one KSN, exactly one wins on either engine.
func testRaces(t *testing.T, h *harness) {
	const n = 4
	race := func(reqs []apptest.Request) map[int]int {
		statuses := make(chan int, len(reqs))
		var wg sync.WaitGroup
		for _, req := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := h.e.Do(req)
				h.keep(r.Body)
				statuses <- r.Status
			}()
		}
		wg.Wait()
		close(statuses)
		count := map[int]int{}
		for s := range statuses {
			count[s]++
		}
		return count
	}
	for _, model := range terminals.Models {
		id := h.register(t, map[string]any{"serial_number": "SN-" + newKey(), "model": string(model)})["id"].(string)
		var reqs []apptest.Request
		for i := 0; i < n; i++ {
			reqs = append(reqs, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/activate", Key: h.e.SK,
				Headers: map[string]string{"Idempotency-Key": newKey()}})
		}
		if got := race(reqs); got[200] != 1 || got[409] != n-1 {
			t.Fatalf("%s: racing activations answered %v", model, got)
		}
		body := h.payment(t, h.device(t, model, id, 1), cardgateway.CardApproved, 500, readOpts{})
		reqs = reqs[:0]
		for i := 0; i < n; i++ {
			reqs = append(reqs, apptest.Request{Method: "POST", Path: "/v1/terminals/" + id + "/payments", Key: h.e.SK, Body: body,
				Headers: map[string]string{"Idempotency-Key": newKey()}})
		}
		before := h.intentCount(t)
		if got := race(reqs); got[201] != 1 || got[400] != n-1 {
			t.Fatalf("%s: racing payments with one KSN answered %v", model, got)
		}
		if w := h.written(t, id); w.payments != 1 || w.intents != before+1 {
			t.Fatalf("%s: racing payments wrote %+v", model, w)
		}
	}
}

// testLiveMode checks mode isolation and that live mode without a key file
// refuses card-present payments before writing anything.
func testLiveMode(t *testing.T, h *harness) {
	ctx := context.Background()
	ms := h.e.Main.Merchants
	mid := h.e.Merchant.MerchantID
	if err := ms.SetKYC(ctx, mid, "approved"); err != nil {
		t.Fatal(err)
	}
	if err := ms.ConnectProvider(ctx, mid, "wallet_a", merchants.ProviderConfig{BaseURL: "http://127.0.0.1:1/wallet_a", APIKey: "k", CallbackSecret: "s"}); err != nil {
		t.Fatal(err)
	}
	live, err := ms.CreateKey(ctx, mid, true, "secret")
	if err != nil {
		t.Fatal(err)
	}
	testID := h.activeTerminal(t, terminals.Countertop)
	requireError(t, h.do(t, apptest.Request{Method: "GET", Path: "/v1/terminals/" + testID, Key: live.Secret}), 404, "resource_missing", "id")
	var list struct{ Data []terminals.Terminal }
	h.do(t, apptest.Request{Method: "GET", Path: "/v1/terminals?limit=100", Key: live.Secret}).JSON(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("live list shows test terminals: %+v", list.Data)
	}
	// Same serial in live mode: a different registry.
	r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals", Key: live.Secret,
		Body: map[string]any{"serial_number": "CT-0001", "model": "countertop"}})
	if r.Status != 201 || r.Map(t)["livemode"] != true {
		t.Fatalf("live register: %d %s", r.Status, r.Body)
	}
	liveID := r.Map(t)["id"].(string)
	initial, err := simulator.InitialKSN(terminals.Countertop, liveID)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + liveID + "/activate", Key: live.Secret,
		Body: map[string]any{"ksn": initial.String()}}); r.Status != 200 {
		t.Fatalf("live activate: %d %s", r.Status, r.Body)
	}
	body := h.payment(t, h.device(t, terminals.Countertop, liveID, 1), cardgateway.CardApproved, 500, readOpts{})
	h.requireNothingWritten(t, liveID, func() {
		r := h.do(t, apptest.Request{Method: "POST", Path: "/v1/terminals/" + liveID + "/payments", Key: live.Secret, Body: body,
			Headers: map[string]string{"Idempotency-Key": newKey()}})
		requireError(t, r, 503, "p2pe_keys_unavailable", "")
	})
}

// testSimulatorClient runs the simulator (what `payd terminal simulate`
// runs) for both models, twice each, so the stored counter must advance.
func testSimulatorClient(t *testing.T, h *harness) {
	c := &simulator.Client{BaseURL: h.e.URL, APIKey: h.e.SK, State: simulator.State{Dir: t.TempDir()}}
	for _, model := range terminals.Models {
		id := h.activeTerminal(t, model)
		for i := 0; i < 2; i++ {
			res, err := c.Pay(context.Background(), simulator.Payment{TerminalID: id, PAN: cardgateway.CardApproved, AmountMinor: 250})
			if err != nil {
				t.Fatal(err)
			}
			h.keep(res.Body)
			if !res.Succeeded || res.HTTPStatus != 201 {
				t.Fatalf("%s run %d: %d %s", model, i, res.HTTPStatus, res.Body)
			}
		}
		res, err := c.Pay(context.Background(), simulator.Payment{TerminalID: id, PAN: cardgateway.CardDeclined, AmountMinor: 250})
		if err != nil {
			t.Fatal(err)
		}
		h.keep(res.Body)
		if res.Succeeded || res.HTTPStatus != 402 || res.Status != "canceled" {
			t.Fatalf("%s decline: %d %s", model, res.HTTPStatus, res.Body)
		}
		if w := h.written(t, id); w.payments != 3 {
			t.Fatalf("%s: %d terminal payments, want 3", model, w.payments)
		}
	}
}

// testNoCardData searches every log line, every row of every table and every
// response body the tests produced for the PANs, track 2 data (hex and
// ASCII) and cryptograms they encrypted.
func testNoCardData(t *testing.T, h *harness) {
	h.scanForCardData(t, 50, 50)
}

// scanForCardData searches every log line of payd, every response body and
// every row of every table for the card data the tests encrypted; at least
// minSecrets pieces of it must have been recorded and minRows rows read.
func (h *harness) scanForCardData(t *testing.T, minSecrets, minRows int) {
	if len(h.secrets) < minSecrets {
		t.Fatalf("only %d card secrets recorded: the earlier tests did not run", len(h.secrets))
	}
	for _, line := range strings.Split(h.e.Logs.String(), "\n") {
		if s, ok := h.find(line, nil); ok {
			t.Errorf("card data %.6s… in a log line: %.300s", s, line)
		}
	}
	for i, b := range h.bodies {
		if s, ok := h.find(string(b), b); ok {
			t.Errorf("card data %.6s… in response body %d: %.300s", s, i, b)
		}
	}
	ctx := context.Background()
	db := h.e.Main.DB
	tables, err := db.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("found only tables %v", tables)
	}
	rowsSeen := 0
	for _, table := range tables {
		rows, err := db.Query(ctx, "SELECT * FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			rowsSeen++
			for i, v := range vals {
				var text string
				var raw []byte
				switch x := v.(type) {
				case []byte:
					raw, text = x, string(x)+" "+hex.EncodeToString(x)
				default:
					text = fmt.Sprint(x)
				}
				if s, ok := h.find(text, raw); ok {
					t.Errorf("card data %.6s… in %s.%s", s, table, cols[i])
				}
			}
		}
		rows.Close()
	}
	if rowsSeen < minRows {
		t.Fatalf("searched only %d rows", rowsSeen)
	}
}

func queryStrings(t *testing.T, query func(context.Context, string, ...any) (*sql.Rows, error), ctx context.Context, q string) []string {
	rows, err := query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
