package payouts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/merchants"
)

// postBulk sends a bulk request with an Idempotency-Key.
func postBulk(e *apptest.Env, key string, body any, contentType string) *apptest.Response {
	e.T.Helper()
	h := map[string]string{"Idempotency-Key": fmt.Sprintf("bulk-%d", time.Now().UnixNano())}
	if contentType != "" {
		h["Content-Type"] = contentType
	}
	return e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk", Key: key, Body: body, Headers: h})
}

// waitBatch waits until the batch satisfies cond.
func waitBatch(t *testing.T, e *apptest.Env, id string, what string, cond func(b batch) bool) batch {
	t.Helper()
	var b batch
	waitFor(t, "batch "+id+" "+what, 60*time.Second, func() bool {
		b = getBatch(t, e, id)
		return cond(b)
	})
	return b
}

// TestRowsBatchLifecycle: a variant B batch waits for a second principal,
// fans out with each row's own outcome, a held row waits without blocking
// the others, and the batch completes once it is reviewed.
func testRowsBatchLifecycle(t *testing.T, e *apptest.Env) {
	ctx := context.Background()
	topup(t, e, "DJF", 1_000_000)
	rows := []map[string]any{
		{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "r1", "description": "June"},
		{"recipient_msisdn": "+253000000002", "amount": 2000, "provider": "wallet_a", "reference": "r2"},
		{"recipient_account": "sandbox_account_closed", "amount": 3000, "provider": "bank_a", "reference": "r3"},
		{"recipient_msisdn": "+2530000000010", "amount": 4000, "provider": "wallet_b", "reference": "r4"},
		{"recipient_account": "DJ0099887766", "amount": 5000, "provider": "bank_b", "reference": "r5"},
		{"recipient_msisdn": "+25377000009", "amount": 9999, "provider": "wallet_b", "reference": "r1"}, // duplicate: dropped
		{"recipient_msisdn": "+25377000006", "amount": 6000, "provider": "wallet_b", "reference": "r6", "recipient_name": "Daniel Moreno"},
	}
	r := postBulk(e, e.SK, map[string]any{"currency": "DJF", "description": "June payroll", "rows": rows}, "")
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var b batch
	r.JSON(t, &b)
	key1, _ := e.Main.Merchants.Authenticate(ctx, e.SK)
	key2, _ := e.Main.Merchants.Authenticate(ctx, e.SK2)
	if !strings.HasPrefix(b.ID, "batch_") || b.Status != "pending_approval" || b.RowCount != 6 || b.TotalAmountMinor != 21000 ||
		b.Currency != "DJF" || b.CreatedBy != key1.ID || b.RowsPending != nil {
		t.Fatalf("batch %s", r.Body)
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID); n != 0 {
		t.Fatal("rows became payouts before approval")
	}
	if r := e.Post("/v1/payouts/bulk/"+b.ID+"/approve", nil); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
		t.Fatalf("creator approves: %d %s", r.Status, r.Body)
	}
	r = e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2})
	r.JSON(t, &b)
	if r.Status != 200 || b.Status != "processing" || b.ApprovedBy == nil || *b.ApprovedBy != key2.ID || *b.RowsPending+*b.RowsSucceeded+*b.RowsFailed != 6 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2}); r.Status != 409 {
		t.Fatalf("approve twice: %d", r.Status)
	}
	b = waitBatch(t, e, b.ID, "to settle all but the held row", func(b batch) bool { return *b.RowsPending == 1 })
	if b.Status != "processing" || *b.RowsSucceeded != 2 || *b.RowsFailed != 3 {
		t.Fatalf("counters %+v", b)
	}
	var l struct{ Data []payout }
	e.Get("/v1/payouts?limit=100&batch_id="+b.ID).JSON(t, &l)
	if len(l.Data) != 6 {
		t.Fatalf("%d payouts in the batch", len(l.Data))
	}
	byRef := map[string]payout{}
	for _, p := range l.Data {
		byRef[p.Reference] = p
		if p.BatchID == nil || *p.BatchID != b.ID || p.ApprovedBy == nil || *p.ApprovedBy != key2.ID {
			t.Fatalf("row payout %+v", p)
		}
	}
	want := map[string]string{"r1": "succeeded", "r2": "failed", "r3": "failed", "r4": "failed", "r5": "succeeded", "r6": "held"}
	for ref, st := range want {
		if byRef[ref].Status != st {
			t.Fatalf("row %s is %s, want %s", ref, byRef[ref].Status, st)
		}
	}
	if byRef["r1"].Amount != 1000 || *byRef["r3"].FailureCode != "account_not_found" || *byRef["r4"].FailureCode != "velocity_limit_exceeded" {
		t.Fatalf("rows %+v", byRef)
	}
	held := byRef["r6"]
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + held.ID + "/review", Key: e.SK, Body: map[string]string{"decision": "release"}}); r.Status != 403 {
		t.Fatalf("batch creator reviews its row: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + held.ID + "/review", Key: e.SK2, Body: map[string]string{"decision": "release"}}); r.Status != 200 {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	b = waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	if *b.RowsSucceeded != 3 || *b.RowsFailed != 3 || *b.RowsPending != 0 {
		t.Fatalf("completed counters %+v", b)
	}
	if bal := balance(t, e, "DJF"); bal.Available != 1_000_000-12_000 || bal.Reserved != 0 {
		t.Fatalf("balance %+v", bal)
	}
	for _, p := range l.Data {
		if n := countRows(t, e, "SELECT COUNT(*) FROM ledger_transactions WHERE reference = ?", p.ID); n != 1 {
			t.Fatalf("payout %s has %d ledger transactions", p.ID, n)
		}
	}
	evs, _ := events.ForObject(ctx, e.Main.DB, b.ID)
	if len(evs) != 1 || evs[0].Type != "payout_batch.completed" {
		t.Fatalf("batch events %+v", evs)
	}
	if r := e.Post("/v1/payouts/bulk/"+b.ID+"/cancel", nil); r.Status != 409 || r.ErrorCode() != "batch_already_processing" {
		t.Fatalf("cancel a completed batch: %d %s", r.Status, r.Body)
	}
	// A failed row retried takes the batch back to processing, then completes it again.
	r = e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + byRef["r4"].ID + "/retry", Key: e.SK, Headers: map[string]string{"X-Service-Scenario": "success"}})
	if r.Status != 200 {
		t.Fatalf("retry row: %d %s", r.Status, r.Body)
	}
	waitPayout(t, e, byRef["r4"].ID, "succeeded")
	b = waitBatch(t, e, b.ID, "to complete again", func(b batch) bool { return b.Status == "completed" })
	if *b.RowsSucceeded != 4 || *b.RowsFailed != 2 {
		t.Fatalf("after retry %+v", b)
	}
	verifyLedger(t, e)
}

// TestItemsBatch: variant A reserves at submission (402 when short),
// answers 202, applies the approval threshold to its items' total per
// currency, and takes CSV.
func testItemsBatch(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 50_000)
	topup(t, e, "USD", 10_000)
	if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 20_000}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	items := []map[string]any{
		{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000001", "recipient_name": "Abebe Kebede", "metadata": map[string]string{"k": "v"}},
		{"amount": 2500, "currency": "USD", "provider": "bank_a", "recipient_account": "US123"},
		{"amount": 30_000, "currency": "DJF", "provider": "wallet_c", "recipient_msisdn": "+25377000003", "reference": "big"},
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk", Key: e.SK, Body: map[string]any{"items": items}}); r.Status != 400 || r.ErrorCode() != "idempotency_key_required" {
		t.Fatalf("no idempotency key: %d %s", r.Status, r.Body)
	}
	r := postBulk(e, e.SK, map[string]any{"description": "refunds", "items": items}, "")
	if r.Status != 202 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var b batch
	r.JSON(t, &b)
	if !strings.HasPrefix(b.ID, "po_bulk_") || b.Status != "processing" || b.ItemCount != 3 {
		t.Fatalf("batch %s", r.Body)
	}
	// The threshold applies to the batch's money per currency: the DJF items
	// together (31,000) pass it, so both wait, small one included; USD pays.
	b = waitBatch(t, e, b.ID, "to pay the USD item", func(b batch) bool { return b.Succeeded == 1 })
	if b.Pending != 2 || b.Status != "processing" {
		t.Fatalf("batch %+v", b)
	}
	if bal := balance(t, e, "DJF"); bal.Reserved != 31_000 || bal.Available != 19_000 {
		t.Fatalf("DJF %+v", bal)
	}
	var l struct{ Data []payout }
	e.Get("/v1/payouts?status=requires_approval&batch_id="+b.ID).JSON(t, &l)
	if len(l.Data) != 2 {
		t.Fatalf("waiting items %+v", l.Data)
	}
	if r := e.Post("/v1/payouts/"+l.Data[0].ID+"/approve", nil); r.Status != 403 {
		t.Fatalf("batch creator approves an item: %d", r.Status)
	}
	for _, p := range l.Data {
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/approve", Key: e.SK2}); r.Status != 200 {
			t.Fatalf("approve item: %d %s", r.Status, r.Body)
		}
	}
	b = waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	if b.Succeeded != 3 || b.Pending != 0 || b.Failed != 0 {
		t.Fatalf("completed %+v", b)
	}

	// Short of funds: 402, nothing written.
	nb, np := countRows(t, e, "SELECT COUNT(*) FROM payout_batches WHERE merchant_id = ?", e.Merchant.MerchantID), countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID)
	r = postBulk(e, e.SK, map[string]any{"items": []map[string]any{
		{"amount": 15_000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000001"},
		{"amount": 15_000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000002"}}}, "")
	if r.Status != 402 || r.ErrorCode() != "insufficient_balance" {
		t.Fatalf("short: %d %s", r.Status, r.Body)
	}
	if countRows(t, e, "SELECT COUNT(*) FROM payout_batches WHERE merchant_id = ?", e.Merchant.MerchantID) != nb || countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID) != np {
		t.Fatal("a refused batch wrote rows")
	}

	// CSV: external_ref becomes the reference.
	csv := "amount,currency,provider,recipient_msisdn,recipient_account,recipient_name,description,external_ref\n" +
		"700,DJF,wallet_b,+25377000011,,Kadra Waberi,bonus,emp-11\n" +
		"800,DJF,bank_b,,DJ4455,,bonus,emp-12\n" +
		"900,DJF,wallet_b,+253000000002,,,bonus,emp-13\n"
	r = postBulk(e, e.SK, csv, "text/csv")
	if r.Status != 202 {
		t.Fatalf("csv: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &b)
	b = waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	if b.ItemCount != 3 || b.Succeeded != 2 || b.Failed != 1 {
		t.Fatalf("csv batch %+v", b)
	}
	e.Get("/v1/payouts?batch_id="+b.ID).JSON(t, &l)
	refs := map[string]bool{}
	for _, p := range l.Data {
		refs[p.Reference] = true
	}
	if !refs["emp-11"] || !refs["emp-12"] || !refs["emp-13"] {
		t.Fatalf("references %v", refs)
	}
	verifyLedger(t, e)
}

// TestBatchCancel: a batch is canceled before any row is sent (its float
// released); cancel needs no second principal; at most five variant B
// batches are open at once.
func testBatchCancel(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000)
	var b batch
	postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": []map[string]any{
		{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "a"}}}, "").JSON(t, &b)
	r := e.Post("/v1/payouts/bulk/"+b.ID+"/cancel", nil)
	r.JSON(t, &b)
	if r.Status != 200 || b.Status != "canceled" {
		t.Fatalf("cancel pending_approval: %d %s", r.Status, r.Body)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2}); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("approve canceled: %d %s", r.Status, r.Body)
	}
	if r := e.Post("/v1/payouts/bulk/"+b.ID+"/cancel", nil); r.Status != 409 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("cancel twice: %d %s", r.Status, r.Body)
	}
	if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE merchant_id = ?", e.Merchant.MerchantID); n != 0 {
		t.Fatal("a canceled variant B batch left payouts")
	}
	// Variant A whose items all wait for approval: nothing has been sent.
	if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 10}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	postBulk(e, e.SK, map[string]any{"items": []map[string]any{
		{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000001"},
		{"amount": 2000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000002"}}}, "").JSON(t, &b)
	if bal := balance(t, e, "DJF"); bal.Reserved != 3000 {
		t.Fatalf("not reserved: %+v", bal)
	}
	r = e.Post("/v1/payouts/bulk/"+b.ID+"/cancel", nil)
	r.JSON(t, &b)
	if r.Status != 200 || b.Status != "canceled" || b.Canceled != 2 || b.Pending != 0 {
		t.Fatalf("cancel variant A: %d %s", r.Status, r.Body)
	}
	if bal := balance(t, e, "DJF"); bal.Reserved != 0 || bal.Available != 100_000 {
		t.Fatalf("not released: %+v", bal)
	}
	var l struct{ Data []payout }
	e.Get("/v1/payouts?batch_id="+b.ID).JSON(t, &l)
	for _, p := range l.Data {
		if p.Status != "canceled" {
			t.Fatalf("item %+v", p)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/" + p.ID + "/approve", Key: e.SK2}); r.Status != 409 {
			t.Fatalf("approve a canceled item: %d", r.Status)
		}
	}
	// Once a row has been sent: 409 batch_already_processing.
	// Clearing the threshold loosens four-eyes: another principal approves.
	var change struct{ ID string }
	if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": nil}); r.Status != 202 {
		t.Fatal(r.Status)
	} else {
		r.JSON(t, &change)
	}
	if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/settings/changes/" + change.ID + "/approve", Key: e.SK2}); r.Status != 200 {
		t.Fatal(r.Status, string(r.Body))
	}
	postBulk(e, e.SK, map[string]any{"items": []map[string]any{
		{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": "+25377000001"}}}, "").JSON(t, &b)
	waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	if r := e.Post("/v1/payouts/bulk/"+b.ID+"/cancel", nil); r.Status != 409 || r.ErrorCode() != "batch_already_processing" {
		t.Fatalf("cancel after sending: %d %s", r.Status, r.Body)
	}
	verifyLedger(t, e)

	// A sixth open variant B batch is refused (409 pending_batch_limit).
	var ids []string
	for i := 0; i < 6; i++ {
		r := postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": []map[string]any{
			{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "a"}}}, "")
		if i < 5 {
			r.JSON(t, &b)
			if r.Status != 201 {
				t.Fatalf("batch %d: %d %s", i, r.Status, r.Body)
			}
			ids = append(ids, b.ID)
			continue
		}
		if r.Status != 409 || r.ErrorCode() != "pending_batch_limit" {
			t.Fatalf("sixth batch: %d %s", r.Status, r.Body)
		}
	}
	e.Post("/v1/payouts/bulk/"+ids[0]+"/cancel", nil)
	r = postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": []map[string]any{
		{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "a"}}}, "")
	if r.Status != 201 {
		t.Fatalf("after a cancel: %d %s", r.Status, r.Body)
	}
}

// multipartRows builds a variant B upload.
func multipartRows(t testing.TB, csv []byte, fields map[string]string) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if csv != nil {
		fw, err := w.CreateFormFile("file", "rows.csv")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(csv)
	}
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

// TestMultipartRowsBatch: a CSV of rows uploaded as multipart/form-data.
func testMultipartRowsBatch(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 100_000)
	csv := "\xEF\xBB\xBFrecipient_msisdn,recipient_account,amount,provider,reference,description\r\n" +
		"+25377000001,,1500,wallet_b,emp-1,June\r\n" +
		",DJ0011,2500,bank_a,emp-2,\"June, bonus\"\r\n" +
		"+25377000001,,1500,wallet_b,emp-1,June again\r\n"
	body, ct := multipartRows(t, []byte(csv), map[string]string{"currency": "DJF", "description": "June"})
	r := postBulk(e, e.SK, body, ct)
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var b batch
	r.JSON(t, &b)
	if b.RowCount != 2 || b.TotalAmountMinor != 4000 || *b.Description != "June" {
		t.Fatalf("batch %s", r.Body)
	}
	e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2})
	b = waitBatch(t, e, b.ID, "to complete", func(b batch) bool { return b.Status == "completed" })
	if *b.RowsSucceeded != 2 {
		t.Fatalf("batch %+v", b)
	}
	for _, c := range []struct {
		name   string
		fields map[string]string
		file   []byte
		code   string
	}{
		{"no file", map[string]string{"currency": "DJF"}, nil, "parameter_missing"},
		{"no currency", map[string]string{}, []byte(csv), "parameter_missing"},
		{"USD", map[string]string{"currency": "USD"}, []byte(csv), "currency_not_supported"},
		{"unknown field", map[string]string{"currency": "DJF", "colour": "red"}, []byte(csv), "parameter_unknown"},
		{"description too long", map[string]string{"currency": "DJF", "description": strings.Repeat("d", 256)}, []byte(csv), "parameter_too_long"},
	} {
		body, ct := multipartRows(t, c.file, c.fields)
		if r := postBulk(e, e.SK, body, ct); r.Status != 400 || r.ErrorCode() != c.code {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	if r := postBulk(e, e.SK, "hello", "text/plain"); r.Status != 415 {
		t.Fatalf("text/plain: %d %s", r.Status, r.Body)
	}
	verifyLedger(t, e)
}

// testBatchIsolation: another merchant's batch, or the other mode's, is 404
// for every route that names it and is not listed.
func testBatchIsolation(t *testing.T, e *apptest.Env) {
	topup(t, e, "DJF", 10_000)
	r := postBulk(e, e.SK, map[string]any{"currency": "DJF", "rows": []map[string]any{
		{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "r1"}}}, "")
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var b batch
	r.JSON(t, &b)
	requireHidden(t, e, "/v1/payouts/bulk", func(key string) []apptest.Request {
		return []apptest.Request{
			{Method: "GET", Path: "/v1/payouts/bulk/" + b.ID, Key: key},
			{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: key},
			{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/cancel", Key: key},
		}
	})
	if got := getBatch(t, e, b.ID); got.Status != "pending_approval" {
		t.Fatalf("the batch changed: %+v", got)
	}
}

// requireHidden checks that what e's merchant made in test mode is hidden
// from another merchant and from the merchant's own live key: every request
// reqs makes with such a key is 404 resource_missing, and listPath lists
// nothing.
func requireHidden(t *testing.T, e *apptest.Env, listPath string, reqs func(key string) []apptest.Request) {
	t.Helper()
	other, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{other.SecretKeys[0], e.LiveKey(t, "wallet_b")} {
		for _, req := range reqs(key) {
			if r := e.Do(req); r.Status != 404 || r.ErrorCode() != "resource_missing" {
				t.Fatalf("%s %s with another merchant's or mode's key: %d %s", req.Method, req.Path, r.Status, r.Body)
			}
		}
		var l struct{ Data []json.RawMessage }
		r := e.Do(apptest.Request{Method: "GET", Path: listPath, Key: key})
		if r.Status != 200 {
			t.Fatalf("GET %s with another merchant's or mode's key: %d %s", listPath, r.Status, r.Body)
		}
		r.JSON(t, &l)
		if len(l.Data) != 0 {
			t.Fatalf("another merchant or mode lists %d at %s", len(l.Data), listPath)
		}
	}
}
