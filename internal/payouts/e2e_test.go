package payouts_test

import (
	"context"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/store"
)

// TestEndToEnd runs the payout scenarios against one payd per engine
// (started with the small sanctions fixture), each scenario in parallel as
// its own merchant, so merchant and mode isolation holds between them as it
// must in production.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	scenarios := []struct {
		name string
		fn   func(t *testing.T, e *apptest.Env)
	}{
		{"single payout succeeds", testSinglePayoutSucceeds},
		{"single payout scenarios", testSinglePayoutScenarios},
		{"single payout validation", testSinglePayoutValidation},
		{"amount_minor", testAmountMinor},
		{"four-eyes", testFourEyesSinglePayout},
		{"screening hold and review", testScreeningHoldAndReview},
		{"retry", testRetry},
		{"rows batch lifecycle", testRowsBatchLifecycle},
		{"items batch", testItemsBatch},
		{"batch cancel and limit", testBatchCancel},
		{"batch isolation", testBatchIsolation},
		{"multipart rows batch", testMultipartRowsBatch},
		{"bad batches", testBadBatches},
		{"10,000 rows", testTenThousandRows},
	}
	apptest.ForEachEngine(t, func(t *testing.T, env *apptest.Env) {
		for _, s := range scenarios {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				s.fn(t, asNewMerchant(t, env))
			})
		}
	}, withSanctions(t))
}

// asNewMerchant returns env acting for a fresh merchant with two secret keys.
// The merchant is inserted directly rather than with merchants.Create,
// whose portal login costs an argon2 hash (seconds under the race detector).
func asNewMerchant(t *testing.T, env *apptest.Env) *apptest.Env {
	t.Helper()
	ctx := context.Background()
	id := ids.New("mer_")
	if _, err := env.Main.DB.Exec(ctx, "INSERT INTO merchants (id, name, kyc_status, deferred_settlement, created_at) VALUES (?, ?, 'pending', ?, ?)",
		id, t.Name(), false, store.Micros(env.Main.DB.Now())); err != nil {
		t.Fatal(err)
	}
	e := *env
	e.T = t
	e.Merchant = merchants.Created{MerchantID: id}
	for i := 0; i < 2; i++ {
		k, err := env.Main.Merchants.CreateKey(ctx, id, false, "secret")
		if err != nil {
			t.Fatal(err)
		}
		e.Merchant.SecretKeys = append(e.Merchant.SecretKeys, k.Secret)
	}
	e.SK, e.SK2 = e.Merchant.SecretKeys[0], e.Merchant.SecretKeys[1]
	return &e
}
