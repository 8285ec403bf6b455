package portal_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
)

// A variant B CSV: two rows that succeed, one whose account the sandbox
// reports closed (it fails, and fails again when retried).
const batchCSV = "recipient_msisdn,recipient_account,amount,provider,reference,description\n" +
	"+25377000001,,1500,wallet_b,emp-1,June\n" +
	",DJ0011,2500,bank_a,emp-2,\"June, bonus\"\n" +
	",sandbox_account_closed,700,bank_a,emp-3,June\n"

var batchRE = regexp.MustCompile(`^/portal/test/batches/(batch_[0-9A-Z]+)`)

func topup(t *testing.T, e *apptest.Env, amount int) {
	t.Helper()
	if r := e.Post("/v1/sandbox/topups", map[string]any{"currency": "DJF", "amount_minor": amount}); r.Status != 201 {
		t.Fatalf("top-up: %d %s", r.Status, r.Body)
	}
}

// newUser adds a portal user of the test merchant with a role and signs it in.
func newUser(t *testing.T, e *apptest.Env, email, role string) *apptest.Portal {
	t.Helper()
	if _, err := e.Main.Merchants.CreateUser(context.Background(), e.Merchant.MerchantID, email, "password-"+role+"-1", role); err != nil {
		t.Fatal(err)
	}
	p := e.NewPortal()
	p.Login(email, "password-"+role+"-1")
	return p
}

// waitPage reloads a page until it contains s.
func waitPage(t *testing.T, p *apptest.Portal, path, s string) *apptest.Page {
	t.Helper()
	var pg *apptest.Page
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if pg = p.Get(path); strings.Contains(pg.Body, s) {
			return pg
		}
	}
	t.Fatalf("%s never showed %q:\n%.1500s", path, s, pg.Body)
	return nil
}

// TestBatchPages: a CSV upload with bad rows lists every one and creates
// nothing; a good one makes a variant B batch; its creator's approval is
// refused (403 self_approval_not_allowed on the page), a viewer's too (403
// permission_denied); a second user approves, the batch completes, a failed
// row is retried, the results download as CSV. A batch created with an API
// key is approved by a user; a pending batch is canceled. Other merchants
// and the other mode see 404.
func TestBatchPages(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		topup(t, e, 1_000_000)
		admin := e.NewPortal()
		admin.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		admin.Get("/portal/test/batches").Contains(t, `enctype="multipart/form-data"`, `<label for="f-file">`)

		bad := "recipient_msisdn,recipient_account,amount,provider,reference,description\n" +
			"+25377000001,DJ0011,1500,wallet_b,r1,both set\n" +
			"+25377000002,,abc,wallet_b,r2,\n" +
			"+25377000003,,100,wallet_z,r3,\n"
		pg := admin.Upload("/portal/test/batches", url.Values{"currency": {"DJF"}}, "bad.csv", []byte(bad))
		if pg.Status != http.StatusBadRequest {
			t.Fatalf("bad CSV: %d %.600s", pg.Status, pg.Body)
		}
		pg.Contains(t, `id="row-errors"`, `<td class="num">1</td>`, `<td class="num">2</td>`, `<td class="num">3</td>`, `id="f-file-error"`)
		if pg := admin.Upload("/portal/test/batches", url.Values{"currency": {"DJF"}}, "empty.csv", nil); pg.Status != http.StatusBadRequest {
			t.Fatalf("empty file: %d", pg.Status)
		}
		if strings.Contains(admin.Get("/portal/test/batches").Body, "batch_") {
			t.Fatal("a refused upload created a batch")
		}

		pg = admin.Upload("/portal/test/batches", url.Values{"currency": {"DJF"}, "description": {"June salaries"}}, "june.csv", []byte(batchCSV))
		m := batchRE.FindStringSubmatch(pg.Location)
		if pg.Status != http.StatusSeeOther || m == nil {
			t.Fatalf("upload: %d %s %.600s", pg.Status, pg.Location, pg.Body)
		}
		id := m[1]
		page := admin.Get("/portal/test/batches/" + id)
		page.Contains(t, "pending_approval", "June salaries", "DJF 4,700", `id="approve-batch"`)

		// Four-eyes: the user who uploaded it cannot approve it.
		self := admin.Post("/portal/test/batches/"+id+"/approve", nil)
		if self.Status != http.StatusForbidden {
			t.Fatalf("self-approval: %d", self.Status)
		}
		self.Contains(t, "self_approval_not_allowed", "pending_approval")
		viewer := newUser(t, e, "viewer@example.com", "viewer")
		viewer.Get("/portal/test/batches/" + id)
		if pg := viewer.Post("/portal/test/batches/"+id+"/approve", nil); pg.Status != http.StatusForbidden || !strings.Contains(pg.Body, "permission_denied") {
			t.Fatalf("viewer approval: %d", pg.Status)
		}

		approver := newUser(t, e, "approver@example.com", "approver")
		approver.Get("/portal/test/batches/" + id)
		if pg := approver.Post("/portal/test/batches/"+id+"/approve", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("approve: %d %.600s", pg.Status, pg.Body)
		}
		done := waitPage(t, approver, "/portal/test/batches/"+id, `id="batch-status">completed<`)
		done.Contains(t, "3 of 3 rows done", `<progress id="progress-bar" max="3" value="3">`, "account_not_found", `id="retry-failed"`)
		if !strings.Contains(done.Body, `data-live-active="false"`) {
			t.Fatal("a completed batch still asks the script to refresh")
		}

		// Retry the failed row: it fails again (the account is still closed).
		if pg := approver.Post("/portal/test/batches/"+id+"/retry_failed", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("retry failed rows: %d %.400s", pg.Status, pg.Body)
		}
		waitPage(t, approver, "/portal/test/batches/"+id, `id="batch-status">completed<`)

		res := approver.Get("/portal/test/batches/" + id + "/results.csv")
		if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("results: %d %s", res.Status, res.Header.Get("Content-Type"))
		}
		recs, err := csv.NewReader(strings.NewReader(res.Body)).ReadAll()
		if err != nil || len(recs) != 4 {
			t.Fatalf("results CSV (%v): %q", err, res.Body)
		}
		if recs[0][0] != "reference" || recs[1][0] != "emp-1" || recs[1][2] != "succeeded" || recs[1][6] != "+25377000001" ||
			recs[3][0] != "emp-3" || recs[3][2] != "failed" || recs[3][8] != "account_not_found" {
			t.Fatalf("results rows: %q", recs)
		}

		// A batch made with an API key is approved by a portal user.
		r := e.Do(apptest.Request{Method: "POST", Path: "/v1/payouts/bulk", Key: e.SK, Headers: map[string]string{"Idempotency-Key": "portal-b2"},
			Body: map[string]any{"currency": "DJF", "rows": []map[string]any{{"recipient_msisdn": "+25377000009", "amount": 300, "provider": "wallet_b", "reference": "k1"}}}})
		if r.Status != 201 {
			t.Fatalf("API batch: %d %s", r.Status, r.Body)
		}
		keyBatch := r.Map(t)["id"].(string)
		admin.Get("/portal/test/batches/" + keyBatch)
		if pg := admin.Post("/portal/test/batches/"+keyBatch+"/approve", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("user approving a key's batch: %d %.400s", pg.Status, pg.Body)
		}
		waitPage(t, admin, "/portal/test/batches/"+keyBatch, `id="batch-status">completed<`)

		// Cancel a pending batch.
		pg = approver.Upload("/portal/test/batches", url.Values{"currency": {"DJF"}}, "c.csv", []byte(batchCSV))
		cancelID := batchRE.FindStringSubmatch(pg.Location)[1]
		approver.Get(pg.Location)
		if pg := approver.Post("/portal/test/batches/"+cancelID+"/cancel", nil); pg.Status != http.StatusSeeOther {
			t.Fatalf("cancel: %d", pg.Status)
		}
		approver.Get("/portal/test/batches/"+cancelID).Contains(t, `id="batch-status">canceled<`)

		// Lists and isolation.
		admin.Get("/portal/test/payouts?batch_id="+id).Contains(t, "emp-1", "emp-2", "emp-3")
		if pg := admin.Get("/portal/live/batches/" + id); pg.Status != http.StatusNotFound {
			t.Fatalf("live mode: %d", pg.Status)
		}
		c2 := e.NewMerchant(merchants.CreateParams{Name: "Other"})
		other := e.NewPortal()
		other.Login(c2.Portal.Email, c2.Portal.Password)
		for _, path := range []string{"/portal/test/batches/" + id, "/portal/test/batches/" + id + "/results.csv"} {
			if pg := other.Get(path); pg.Status != http.StatusNotFound {
				t.Fatalf("other merchant %s: %d", path, pg.Status)
			}
		}
		other.Get("/portal/test/batches")
		if pg := other.Post("/portal/test/batches/"+keyBatch+"/cancel", nil); pg.Status != http.StatusNotFound {
			t.Fatalf("other merchant cancel: %d", pg.Status)
		}
		admin.Get("/portal/test/audit").Contains(t, "batch.create", "batch.approve", "self_approval_not_allowed", "batch.retry_failed", "batch.cancel")
		if err := ledger.Verify(ctx, e.Main.DB); err != nil {
			t.Fatal(err)
		}
	})
}

// TestHeldPayoutReview: a payout held by screening shows in the compliance
// queue with its matched list entry and score; a viewer cannot release it;
// a user releases it with a note (the key that made it could not), and it
// is then paid.
func TestHeldPayoutReview(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		topup(t, e, 100_000)
		mk := func(name string) string {
			r := e.Post("/v1/payouts", map[string]any{"amount": 900, "currency": "DJF", "provider": "wallet_b",
				"recipient_msisdn": "+25377000005", "recipient_name": name})
			if r.Status != 201 {
				t.Fatalf("payout: %d %s", r.Status, r.Body)
			}
			return r.Map(t)["id"].(string)
		}
		held, held2 := mk("Daniel Moreno"), mk("Daniel Moreno")
		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		q := p.Get("/portal/test/compliance")
		q.Contains(t, "Held payouts", held, held2, "MORENO", `id="note-release-`+held+`"`, `<label for="note-release-`+held+`">`)
		viewer := newUser(t, e, "viewer2@example.com", "viewer")
		viewer.Get("/portal/test/compliance")
		if pg := viewer.Post("/portal/test/payouts/"+held+"/review", url.Values{"decision": {"release"}}); pg.Status != http.StatusForbidden {
			t.Fatalf("viewer release: %d", pg.Status)
		}
		if pg := p.Post("/portal/test/payouts/"+held+"/review", url.Values{"decision": {"maybe"}}); pg.Status != http.StatusBadRequest {
			t.Fatalf("bad decision: %d", pg.Status)
		}
		pg := p.Post("/portal/test/payouts/"+held+"/review", url.Values{"decision": {"release"}, "note": {"different person"}, "back": {"compliance"}})
		if pg.Status != http.StatusSeeOther || !strings.HasPrefix(pg.Location, "/portal/test/compliance") {
			t.Fatalf("release: %d %s %.500s", pg.Status, pg.Location, pg.Body)
		}
		waitPage(t, p, "/portal/test/payouts/"+held, `id="payout-status">succeeded<`)
		if pg := p.Post("/portal/test/payouts/"+held2+"/review", url.Values{"decision": {"reject"}, "note": {"confirmed"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("reject: %d", pg.Status)
		}
		p.Get("/portal/test/payouts/"+held2).Contains(t, "canceled", "screening_rejected")
		if strings.Contains(p.Get("/portal/test/compliance").Body, "held-"+held) {
			t.Fatal("a released payout is still in the queue")
		}
		p.Get("/portal/test/audit").Contains(t, "payout.review", "different person")
		if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
			t.Fatal(err)
		}
	}, withSanctions(t))
}
