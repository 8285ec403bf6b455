package payouts_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
)

// TestFourEyesComparesPeople (issue 15, finding 6): a portal user and the
// key that user created are one person; a rolled key is the key it replaced
// (its batch cannot be approved by the successor); another person can; and
// a variant A batch whose items together exceed the threshold needs
// approval for every item, even items exactly at the threshold.
func TestFourEyesComparesPeople(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		mid := e.Merchant.MerchantID
		var userID string
		if err := e.Main.DB.QueryRow(ctx, "SELECT id FROM users WHERE merchant_id = ?", mid).Scan(&userID); err != nil {
			t.Fatal(err)
		}
		k1, err := e.Main.Merchants.CreateKeyBy(ctx, mid, false, auth.KindSecret, userID, "")
		if err != nil {
			t.Fatal(err)
		}
		if same, err := merchants.SamePerson(ctx, e.Main.DB, k1.ID, userID, time.Now()); err != nil || !same {
			t.Fatalf("a user and the key they made: same=%v %v", same, err)
		}
		var sk2ID string
		if err := e.Main.DB.QueryRow(ctx, "SELECT id FROM api_keys WHERE merchant_id = ? AND created_by IS NULL AND kind = 'secret' AND livemode = ? ORDER BY id DESC LIMIT 1",
			mid, false).Scan(&sk2ID); err != nil {
			t.Fatal(err)
		}
		if same, _ := merchants.SamePerson(ctx, e.Main.DB, k1.ID, sk2ID, time.Now()); same {
			t.Fatal("keys of different people count as one")
		}
		topup(t, e, "DJF", 2_000_000)

		// A variant B batch made with k1; k1 is rolled; the successor cannot
		// approve what its predecessor created.
		var b batch
		r := postBulk(e, k1.Secret, map[string]any{"currency": "DJF", "rows": []map[string]any{
			{"recipient_msisdn": "+25377000001", "amount": 1000, "provider": "wallet_b", "reference": "r1"}}}, "")
		r.JSON(t, &b)
		if r.Status != 201 || b.Status != "pending_approval" {
			t.Fatalf("variant B: %d %s", r.Status, r.Body)
		}
		k2, err := e.Main.Merchants.CreateKeyBy(ctx, mid, false, auth.KindSecret, userID, k1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: k2.Secret,
			Headers: map[string]string{"Idempotency-Key": "approve-rolled"}}); r.Status != 403 || r.ErrorCode() != "self_approval_not_allowed" {
			t.Fatalf("rolled key approves its predecessor's batch: %d %s", r.Status, r.Body)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: k1.Secret}); r.Status != 401 {
			t.Fatalf("the rolled-away key still works: %d", r.Status)
		}
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk/" + b.ID + "/approve", Key: e.SK2,
			Headers: map[string]string{"Idempotency-Key": "approve-other"}}); r.Status != 200 {
			t.Fatalf("another person approves: %d %s", r.Status, r.Body)
		}

		// Variant A: 1,000 items of exactly the threshold all wait.
		if r := e.Post("/v1/settings", map[string]any{"approval_threshold_minor": 1000}); r.Status != 200 {
			t.Fatal(r.Status, string(r.Body))
		}
		items := make([]map[string]any, 1000)
		for i := range items {
			items[i] = map[string]any{"amount": 1000, "currency": "DJF", "provider": "wallet_b", "recipient_msisdn": fmt.Sprintf("+25377%06d", i)}
		}
		r = postBulk(e, e.SK, map[string]any{"items": items}, "")
		r.JSON(t, &b)
		if r.Status != 202 {
			t.Fatalf("variant A: %d %.300s", r.Status, r.Body)
		}
		if n := countRows(t, e, "SELECT COUNT(*) FROM payouts WHERE batch_id = ? AND status = 'requires_approval'", b.ID); n != 1000 {
			t.Fatalf("%d of 1,000 items at the threshold wait for approval", n)
		}
		verifyLedger(t, e)
	})
}
