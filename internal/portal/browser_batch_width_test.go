package portal_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserBatchRowsFit1280: at 1280 × 900, a batch's rows table with long
// recipient names, bank accounts, references and failure codes fits the
// page: neither the page nor the content area scrolls sideways.
func TestBrowserBatchRowsFit1280(t *testing.T) {
	t.Parallel()
	e := apptest.Start(t, "sqlite")
	b := browser(t)
	topup(t, e, 1_000_000)
	var csv strings.Builder
	csv.WriteString("amount,currency,provider,recipient_msisdn,recipient_account,recipient_name,description,external_ref\n")
	for i := 0; i < 6; i++ {
		// Failing rows show a failure code under their status, and a Retry button.
		account := fmt.Sprintf("DJ21000100010001000100010001%02d", i)
		if i%2 == 1 {
			account = "sandbox_account_closed"
		}
		fmt.Fprintf(&csv, "%d,DJF,bank_a,,%s,Abdourahman Mohamed Ismail Guelleh-Warsame %d,November salary,salary-2026-11-employee-%02d-department-of-logistics-and-supply\n",
			1500+i, account, i, i)
	}
	r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk", Key: e.SK, Body: csv.String(),
		Headers: map[string]string{"Idempotency-Key": "width-batch", "Content-Type": "text/csv"}})
	if r.Status != 201 && r.Status != 202 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	id, _ := r.Map(t)["id"].(string)
	b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
	page := e.URL + "/portal/test/batches/" + id
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		b.open(page)
		if b.count(`tr[id^="payout-"] .status.failed`) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			b.shot("batch-rows-pending")
			t.Fatal("the batch's rows did not fail in time")
		}
	}
	b.shot("batch-rows-1280")
	requireFits1280(t, b, "table.payouts")
}
