package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/testutil"
)

// withSanctions screens against the small OFAC fixture.
func withSanctions(t *testing.T) apptest.Option {
	path := testutil.TestData(t, "sanctions", "ofac_fixture_small", "sdn.csv")
	return func(c *app.Config) { c.SanctionsList = path }
}

// sendTransfer posts a one-transaction JSON pacs.008 from the debtor bank's
// key and returns its UETR.
func sendTransfer(t *testing.T, e *apptest.Env, key, debtorBIC, creditorBIC, creditor string, want int) string {
	t.Helper()
	u := uuid.New().String()
	msg := map[string]any{"msg_id": "MSG-" + u[:8], "created_at": "2026-03-14T09:26:50Z", "settlement": map[string]any{"method": "CLRG"},
		"transactions": []map[string]any{{"uetr": u, "end_to_end_id": "E2E-1", "amount_minor": 4000, "currency": "DJF", "charge_bearer": "SLEV",
			"debtor": map[string]any{"name": "Amina Hassan", "account": "DJ2100010000000154000100186"}, "debtor_agent": debtorBIC,
			"creditor": map[string]any{"name": creditor, "account": "GB82WEST12345698765432"}, "creditor_agent": creditorBIC}}}
	r := e.Do(apptest.Request{Method: "POST", Path: "/banking/v1/transfers", Key: key, Body: msg})
	if r.Status != want {
		t.Fatalf("transfer to %s: %d, want %d: %s", creditor, r.Status, want, r.Body)
	}
	return u
}

// TestTransferPagesAndCompliance: a participant bank sees its transfers; the
// creditor agent releases one held transfer and rejects another from the
// compliance queue (with the matched list entries shown); the debtor agent
// sees them but cannot review; other merchants get 404.
func TestTransferPagesAndCompliance(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		debtor := e.NewMerchant(merchants.CreateParams{Name: "Debtor bank", BIC: "BANKDJJDXXX"})
		creditor := e.NewMerchant(merchants.CreateParams{Name: "Creditor bank", BIC: "CACEDJJDXXX"})
		if r := e.Do(apptest.Request{Method: "POST", Path: "/v1/sandbox/topups", Key: debtor.SecretKeys[0],
			Body: map[string]any{"currency": "DJF", "amount_minor": 100000}}); r.Status != 201 {
			t.Fatalf("fund: %d", r.Status)
		}
		settled := sendTransfer(t, e, debtor.SecretKeys[0], "BANKDJJDXXX", "CACEDJJDXXX", "Omar Farah Trading SARL", 200)
		held1 := sendTransfer(t, e, debtor.SecretKeys[0], "BANKDJJDXXX", "CACEDJJDXXX", "Daniel Moreno", 202)
		held2 := sendTransfer(t, e, debtor.SecretKeys[0], "BANKDJJDXXX", "CACEDJJDXXX", "Daniel Moreno", 202)

		cp := e.NewPortal()
		cp.Login(creditor.Portal.Email, creditor.Portal.Password)
		list := cp.Get("/portal/test/transfers")
		list.Contains(t, settled, held1, held2, "ACSC", "ACWP", "CACEDJJDXXX")
		if pg := cp.Get("/portal/test/transfers?status=ACWP"); strings.Contains(pg.Body, settled) || !strings.Contains(pg.Body, held1) {
			t.Fatal("status filter")
		}
		queue := cp.Get("/portal/test/compliance")
		queue.Contains(t, "Held bank transfers", held1, held2, "MORENO", "Score", `name="note"`)
		// Release from the queue with a note; back to the queue.
		pg := cp.Post("/portal/test/transfers/"+held1+"/review", url.Values{"decision": {"release"}, "note": {"false positive: other person"}, "back": {"compliance"}})
		if pg.Status != http.StatusSeeOther || pg.Location != "/portal/test/compliance?done=transfer_released" {
			t.Fatalf("release: %d %s %.500s", pg.Status, pg.Location, pg.Body)
		}
		after := cp.Get(pg.Location)
		after.Contains(t, "was released")
		if strings.Contains(after.Body, "held-"+held1) {
			t.Fatal("a released transfer is still in the queue")
		}
		cp.Get("/portal/test/transfers/"+held1).Contains(t, "ACSC", "false positive: other person", "transfer.settled")
		// A second decision on it is refused on the page (409).
		cp.Get("/portal/test/transfers/" + held2)
		if pg := cp.Post("/portal/test/transfers/"+held1+"/review", url.Values{"decision": {"reject"}}); pg.Status != http.StatusConflict {
			t.Fatalf("review of a settled transfer: %d", pg.Status)
		} else {
			pg.Contains(t, "invalid_state")
		}
		if pg := cp.Post("/portal/test/transfers/"+held2+"/review", url.Values{"decision": {"reject"}, "note": {"confirmed match"}}); pg.Status != http.StatusSeeOther {
			t.Fatalf("reject: %d %.500s", pg.Status, pg.Body)
		}
		cp.Get("/portal/test/transfers/"+held2).Contains(t, "RJCT", "RR04", "confirmed match")

		// The debtor agent sees its transfers but reviews nothing.
		dp := e.NewPortal()
		dp.Login(debtor.Portal.Email, debtor.Portal.Password)
		held3 := sendTransfer(t, e, debtor.SecretKeys[0], "BANKDJJDXXX", "CACEDJJDXXX", "Daniel Moreno", 202)
		dpg := dp.Get("/portal/test/transfers/" + held3)
		dpg.Contains(t, "ACWP")
		if strings.Contains(dpg.Body, "/review") {
			t.Fatal("the debtor agent is offered the review")
		}
		if pg := dp.Post("/portal/test/transfers/"+held3+"/review", url.Values{"decision": {"release"}}); pg.Status != http.StatusForbidden {
			t.Fatalf("debtor agent review: %d", pg.Status)
		}
		// A merchant that is no agent of it: 404; not a participant: told so.
		op := e.NewPortal()
		op.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		if pg := op.Get("/portal/test/transfers/" + held3); pg.Status != http.StatusNotFound {
			t.Fatalf("non-agent: %d", pg.Status)
		}
		op.Get("/portal/test/transfers").Contains(t, "not-participant")
		if pg := cp.Get("/portal/live/transfers/" + held3); pg.Status != http.StatusNotFound {
			t.Fatalf("live mode: %d", pg.Status)
		}
		cp.Get("/portal/test/audit").Contains(t, "transfer.review", held1, "invalid_state")
		if err := ledger.Verify(ctx, e.Main.DB); err != nil {
			t.Fatal(err)
		}
	}, withSanctions(t))
}
