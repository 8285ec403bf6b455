package portal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payd/payd/internal/app/apptest"
)

// TestBrowserBatchFourEyes is the portal's main path in a real browser: sign
// in, upload a CSV as a batch, see the self-approval refused on the page,
// sign in as a second user and approve, watch the progress bar reach the
// end (refreshed by the page's script, no reload by the test), then release
// a held payout from the compliance queue with a note.
func TestBrowserBatchFourEyes(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		b := browser(t)
		topup(t, e, 1_000_000)
		if _, err := e.Main.Merchants.CreateUser(context.Background(), e.Merchant.MerchantID, "second@example.com", "second-password-1", "approver"); err != nil {
			t.Fatal(err)
		}
		r := e.Post("/v1/payouts", map[string]any{"amount": 900, "currency": "DJF", "provider": "wallet_b",
			"recipient_msisdn": "+25377000005", "recipient_name": "Daniel Moreno"})
		if r.Status != 201 || r.Map(t)["status"] != "held" {
			t.Fatalf("held payout: %d %s", r.Status, r.Body)
		}
		held := r.Map(t)["id"].(string)
		file := filepath.Join(t.TempDir(), "june.csv")
		if err := os.WriteFile(file, []byte(batchCSV), 0o644); err != nil {
			t.Fatal(err)
		}

		b.login(e.URL, e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		b.shot("signed-in")
		b.open(e.URL + "/portal/test/batches")
		b.do(chromedp.SetUploadFiles(chromedp.ID("f-file"), []string{file}),
			chromedp.SendKeys(chromedp.ID("f-description"), "June salaries"))
		b.click(`form[enctype="multipart/form-data"] button[type=submit]`)
		if s := b.text("#batch-status"); s != "pending_approval" {
			t.Fatalf("uploaded batch: %q", s)
		}
		b.shot("batch-uploaded")
		batchURL, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.pathname`))
		if err != nil || !strings.HasPrefix(batchURL, "/portal/test/batches/batch_") {
			t.Fatalf("batch page URL %q (%v)", batchURL, err)
		}

		b.click("#approve-batch")
		if code := b.text("#page-error .code"); code != "self_approval_not_allowed" {
			t.Fatalf("self-approval: %q", code)
		}
		if s := b.text("#batch-status"); s != "pending_approval" {
			t.Fatalf("status after the refused approval: %q", s)
		}
		b.shot("self-approval-refused")

		b.click(`form[action="/portal/logout"] button`)
		b.login(e.URL, "second@example.com", "second-password-1")
		b.open(e.URL + batchURL)
		b.click("#approve-batch")
		b.shot("approved")
		// The page's script refreshes the progress; the test only reads.
		if !b.waitText("batch-status", "completed", 30*time.Second) {
			b.shot("not-completed")
			t.Fatal("the batch page never showed completed")
		}
		// The script reloads the page once the batch is done; load it afresh
		// so what follows does not race that reload.
		b.open(e.URL + batchURL)
		if v, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`document.getElementById("progress-bar").value`)); err != nil || v != 3 {
			t.Fatalf("progress bar value %v (%v)", v, err)
		}
		b.shot("batch-completed")
		if n := b.count(`tr[id^="payout-"] .status.failed`); n != 1 {
			t.Errorf("failed rows shown: %d", n)
		}

		b.open(e.URL + "/portal/test/compliance")
		b.do(chromedp.SendKeys(chromedp.ID("note-release-"+held), "not the listed person"))
		b.shot("compliance-queue")
		b.click(`form[aria-label="Release ` + held + `"] button[type=submit]`)
		if n := b.text("p.notice"); !strings.Contains(n, "released") {
			t.Fatalf("notice after release: %q", n)
		}
		b.shot("payout-released")
		b.open(e.URL + "/portal/test/payouts/" + held)
		for deadline := time.Now().Add(15 * time.Second); b.text("#payout-status") != "succeeded"; {
			if time.Now().After(deadline) {
				t.Fatalf("released payout: %q", b.text("#payout-status"))
			}
			time.Sleep(200 * time.Millisecond)
			b.open(e.URL + "/portal/test/payouts/" + held)
		}
		b.shot("released-payout-paid")
	}, withSanctions(t))
}
