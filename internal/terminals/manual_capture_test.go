package terminals_test

import (
	"context"
	"strings"
	"testing"

	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/cardgateway"
)

// testManualCapture: a card-present payment taken with capture_method
// manual stops at requires_capture (201, nothing credited), is captured in
// part through the payment intent's capture, and a declined card is still
// declined; a bad capture_method is 400 and writes nothing.
func testManualCapture(t *testing.T, h *harness) {
	ctx := context.Background()
	id := h.activeTerminal(t, terminals.Countertop)
	dev := h.device(t, terminals.Countertop, id, 1)
	credited := func(pi string) int64 {
		var n int64
		if err := h.e.Main.DB.QueryRow(ctx, `SELECT COALESCE(SUM(le.amount), 0) FROM ledger_entries le
			JOIN ledger_transactions lt ON lt.id = le.transaction_id JOIN ledger_accounts la ON la.id = le.account_id
			WHERE lt.reference = ? AND la.kind = 'available'`, pi).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	body := h.payment(t, dev, cardgateway.CardApproved, 1000, readOpts{})
	body["capture_method"] = "manual"
	pi := requireIntent(t, h.pay(t, id, body), 201, "requires_capture", id, "visa", "4242")
	if pi.AmountCapturableMinor != 1000 || pi.AmountCapturedMinor != 0 || pi.CaptureMethod != "manual" || credited(pi.ID) != 0 {
		t.Fatalf("authorised: %+v", pi)
	}
	r := h.post(t, "/v1/payment_intents/"+pi.ID+"/capture", map[string]int64{"amount_to_capture_minor": 600})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"status":"succeeded"`) || credited(pi.ID) != 600 {
		t.Fatalf("capture: %d %s (credited %d)", r.Status, r.Body, credited(pi.ID))
	}

	declined := h.payment(t, dev, cardgateway.CardDeclined, 300, readOpts{})
	declined["capture_method"] = "manual"
	requireIntent(t, h.pay(t, id, declined), 402, "canceled", id, "visa", "0002")

	bad := h.payment(t, dev, cardgateway.CardApproved, 300, readOpts{})
	bad["capture_method"] = "sometime"
	h.requireNothingWritten(t, id, func() {
		requireError(t, h.pay(t, id, bad), 400, "parameter_invalid", "capture_method")
	})
	if err := ledger.Verify(ctx, h.e.Main.DB); err != nil {
		t.Fatal(err)
	}
}
