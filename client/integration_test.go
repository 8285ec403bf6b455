package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payd/payd/client"
	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/ledger"
	"github.com/payd/payd/internal/merchants"
)

// The SDK against a real payd (app.Main on port 0) on SQLite and PostgreSQL,
// one resource family per subtest; the ledger is verified after each.
func TestAgainstPayd(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		rec := &recordingTransport{}
		hc := &http.Client{Transport: rec, Timeout: time.Minute}
		sk := client.New(e.SK, client.WithBaseURL(e.URL), client.WithHTTPClient(hc))
		t.Cleanup(func() {
			if err := ledger.Verify(context.Background(), e.Main.DB); err != nil {
				t.Errorf("ledger: %v", err)
			}
			checkAnswersDecodeStrictly(t, rec)
		})

		t.Run("health", func(t *testing.T) {
			if _, err := sk.GetHealth(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := sk.GetReadiness(ctx); err != nil {
				t.Fatal(err)
			}
		})

		var paid *client.PaymentIntent
		t.Run("payment intents", func(t *testing.T) {
			var resp client.Response
			pi, err := sk.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{
				Amount: client.Int64(1500), Currency: "DJF", Provider: "bank_a",
				CustomerMSISDN: client.String("+25377123456"), Description: client.String("Order 1001"),
				Metadata: map[string]string{"order": "1001"},
			}, client.WithResponse(&resp))
			if err != nil {
				t.Fatal(err)
			}
			if pi.Status != client.PaymentIntentStatusRequiresAction || pi.NextAction == nil || pi.NextAction.Type != "collect_otp" || pi.Metadata["order"] != "1001" {
				t.Fatalf("created %+v", pi)
			}
			if !strings.HasPrefix(resp.RequestID, "req_") || !strings.HasPrefix(resp.IdempotencyKey, "payd-go-") {
				t.Fatalf("response %+v", resp)
			}
			// The publishable key confirms (and can do nothing else).
			pk := client.New(e.PK, client.WithBaseURL(e.URL), client.WithHTTPClient(hc))
			if _, err := pk.GetBalance(ctx); client.ErrorCode(err) != client.CodePermissionDenied {
				t.Fatalf("publishable key read the balance: %v", err)
			}
			confirmed, err := pk.ConfirmPaymentIntent(ctx, pi.ID, &client.ConfirmPaymentIntentRequest{OTP: "123456"})
			if err != nil {
				t.Fatal(err)
			}
			if confirmed.Status != client.PaymentIntentStatusSucceeded || confirmed.AmountCapturedMinor != 1500 || confirmed.SucceededAt == nil {
				t.Fatalf("confirmed %+v", confirmed)
			}
			got, err := sk.GetPaymentIntent(ctx, pi.ID)
			if err != nil || got.Status != client.PaymentIntentStatusSucceeded {
				t.Fatalf("retrieved %+v %v", got, err)
			}
			paid = got

			// A refusal answers 402: the canceled intent and a typed error.
			refused, err := sk.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{Amount: client.Int64(200), Currency: "DJF", Provider: "wallet_a",
				CustomerMSISDN: client.String("+25377123456")}, client.WithScenario(client.SandboxScenarioInsufficientFunds))
			var apiErr *client.Error
			if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 402 || apiErr.Code != "insufficient_funds" {
				t.Fatalf("refusal: %v", err)
			}
			if refused == nil || refused.Status != client.PaymentIntentStatusCanceled || refused.LastError == nil {
				t.Fatalf("refused intent %+v", refused)
			}

			// Same idempotency key, same request: the stored answer, replayed.
			params := &client.PaymentIntentCreate{AmountMinor: client.Int64(700), Currency: "DJF", Provider: "bank_a", CustomerMSISDN: client.String("+25377123456")}
			key := "order-" + uuid.NewString()
			first, err := sk.CreatePaymentIntent(ctx, params, client.WithIdempotencyKey(key))
			if err != nil {
				t.Fatal(err)
			}
			var replay client.Response
			second, err := sk.CreatePaymentIntent(ctx, params, client.WithIdempotencyKey(key), client.WithResponse(&replay))
			if err != nil || second.ID != first.ID || !replay.IdempotentReplayed {
				t.Fatalf("replay %+v %+v %v", second, replay, err)
			}
			// ...and with another body, a typed 422.
			params.AmountMinor = client.Int64(701)
			if _, err := sk.CreatePaymentIntent(ctx, params, client.WithIdempotencyKey(key)); client.ErrorCode(err) != client.CodeIdempotencyKeyReused {
				t.Fatalf("reused key: %v", err)
			}
			// Validation errors name the field.
			_, err = sk.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{Currency: "DJF", Provider: "bank_a"})
			if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 400 || apiErr.Param == "" || apiErr.Type != client.TypeInvalidRequest || !strings.HasPrefix(apiErr.RequestID, "req_") {
				t.Fatalf("validation: %+v", err)
			}
			if _, err := sk.GetPaymentIntent(ctx, "pi_missing"); client.ErrorCode(err) != client.CodeResourceMissing {
				t.Fatalf("missing: %v", err)
			}

			// A sandbox override on an intent still waiting for its code.
			if _, err := sk.CreateSandboxOverride(ctx, &client.CreateSandboxOverrideRequest{PaymentIntentID: first.ID, Scenario: client.SandboxScenarioSuccess}); err != nil {
				t.Fatal(err)
			}

			// Iterate over every intent, two per page.
			var ids []string
			for it, err := range sk.AllPaymentIntents(ctx, &client.ListPaymentIntentsParams{Limit: 2}) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, it.ID)
			}
			if len(ids) != 3 || ids[len(ids)-1] != pi.ID {
				t.Fatalf("iterated %v", ids)
			}
			page, err := sk.ListPaymentIntents(ctx, &client.ListPaymentIntentsParams{Status: client.PaymentIntentStatusSucceeded})
			if err != nil || len(page.Data) != 1 || page.Data[0].ID != pi.ID || page.HasMore {
				t.Fatalf("filtered page %+v %v", page, err)
			}
		})
		if paid == nil {
			t.Fatal("no paid intent to go on with")
		}

		t.Run("refunds", func(t *testing.T) {
			re, err := sk.CreateRefund(ctx, &client.RefundCreate{PaymentIntent: paid.ID, AmountMinor: client.Int64(500), Reason: client.String("requested_by_customer")})
			if err != nil {
				t.Fatal(err)
			}
			if re.AmountMinor != 500 || re.PaymentIntent != paid.ID {
				t.Fatalf("refund %+v", re)
			}
			got, err := sk.GetRefund(ctx, re.ID)
			if err != nil || got.ID != re.ID {
				t.Fatalf("%+v %v", got, err)
			}
			n := 0
			for r, err := range sk.AllRefunds(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				if r.ID == re.ID {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("refund listed %d times", n)
			}
		})

		t.Run("balance and reports", func(t *testing.T) {
			if _, err := sk.CreateSandboxTopup(ctx, &client.CreateSandboxTopupRequest{Currency: "DJF", AmountMinor: client.Int64(100000)}); err != nil {
				t.Fatal(err)
			}
			bal, err := sk.GetBalance(ctx)
			if err != nil || len(bal.Balances) == 0 {
				t.Fatalf("%+v %v", bal, err)
			}
			var types []client.BalanceTransactionType
			for bt, err := range sk.AllBalanceTransactions(ctx, &client.ListBalanceTransactionsParams{Limit: 1}) {
				if err != nil {
					t.Fatal(err)
				}
				types = append(types, bt.Type)
				if _, err := sk.GetBalanceTransaction(ctx, bt.ID); err != nil {
					t.Fatal(err)
				}
			}
			if len(types) < 2 {
				t.Fatalf("balance transactions %v", types)
			}
			rep, err := sk.GetSettlementReport(ctx, &client.GetSettlementReportParams{Date: time.Now().UTC().Format("2006-01-02")})
			if err != nil || rep.Object != "settlement_report" || len(rep.Rows) == 0 {
				t.Fatalf("report %+v %v\n%s", rep, err, e.Logs.String())
			}
			st, err := sk.GetSettings(ctx)
			if err != nil || st.Object != "settings" {
				t.Fatalf("settings %+v %v", st, err)
			}
			res, err := sk.UpdateSettings(ctx, &client.UpdateSettingsRequest{ApprovalThresholdMinor: client.Value[int64](1_000_000)})
			if err != nil || res.Settings == nil || res.Settings.ApprovalThresholdMinor == nil || *res.Settings.ApprovalThresholdMinor != 1_000_000 {
				t.Fatalf("tighten %+v %v", res, err)
			}
			res, err = sk.UpdateSettings(ctx, &client.UpdateSettingsRequest{ApprovalThresholdMinor: client.Null[int64]()})
			if err != nil || res.SettingsChange == nil || res.SettingsChange.Status != "pending" {
				t.Fatalf("loosen %+v %v", res, err)
			}
			if ch, err := sk.GetSettingsChange(ctx, res.SettingsChange.ID); err != nil || ch.ID != res.SettingsChange.ID {
				t.Fatalf("%+v %v", ch, err)
			}
			sk2 := client.New(e.SK2, client.WithBaseURL(e.URL), client.WithHTTPClient(hc))
			if ch, err := sk2.ApproveSettingsChange(ctx, res.SettingsChange.ID); err != nil || ch.Status != "applied" {
				t.Fatalf("approve %+v %v", ch, err)
			}
		})

		t.Run("payouts", func(t *testing.T) {
			po, err := sk.CreatePayout(ctx, &client.PayoutCreate{AmountMinor: client.Int64(2500), Currency: "DJF", Provider: "wallet_a",
				RecipientMSISDN: client.String("+25377111222"), RecipientName: client.String("Amina Hassan")})
			if err != nil {
				t.Fatal(err)
			}
			if po.Amount != 2500 || po.Object != "payout" {
				t.Fatalf("payout %+v", po)
			}
			if got, err := sk.GetPayout(ctx, po.ID); err != nil || got.ID != po.ID {
				t.Fatalf("%+v %v", got, err)
			}
			batch, err := sk.CreatePayoutBatch(ctx, &client.CreatePayoutBatchRequest{Items: []client.PayoutBatchItem{
				{AmountMinor: client.Int64(100), Currency: "DJF", Provider: "wallet_a", RecipientMSISDN: client.String("+25377111333"), Reference: client.String("r1")},
				{AmountMinor: client.Int64(200), Currency: "DJF", Provider: "wallet_a", RecipientMSISDN: client.String("+25377111444"), Reference: client.String("r2")},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(batch.ID, "po_bulk_") || batch.ItemCount != 2 {
				t.Fatalf("batch %+v", batch)
			}
			if got, err := sk.GetPayoutBatch(ctx, batch.ID); err != nil || got.ID != batch.ID {
				t.Fatalf("%+v %v", got, err)
			}
			if page, err := sk.ListPayoutBatches(ctx, nil); err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			n := 0
			for _, err := range sk.AllPayouts(ctx, &client.ListPayoutsParams{Limit: 1}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != 3 {
				t.Fatalf("%d payouts listed, want 3", n)
			}
			// CSV goes through Raw with the same retries and idempotency.
			csv := "amount,currency,provider,recipient_msisdn,recipient_account,recipient_name,description,external_ref\n300,DJF,wallet_a,+25377111555,,,,r3\n"
			if _, err := sk.Raw(ctx, "POST", "/v1/payouts/bulk", "text/csv", []byte(csv)); err != nil {
				t.Fatal(err)
			}
		})

		t.Run("webhooks", func(t *testing.T) {
			type received struct {
				d   client.VerifiedDelivery
				err error
			}
			got := make(chan received, 16)
			// A delivery may arrive before CreateWebhookEndpoint has returned
			// the secret (an event just before it is dispatched to every
			// endpoint enabled then): the receiver waits for the secret.
			var secret string
			known := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				<-known
				d, _, err := client.VerifyWebhookRequest(r, secret)
				got <- received{d, err}
				if err != nil {
					w.WriteHeader(400)
				}
			}))
			defer srv.Close()
			var once sync.Once
			release := func() { once.Do(func() { close(known) }) }
			defer release() // before srv.Close, should the test end early
			we, err := sk.CreateWebhookEndpoint(ctx, &client.WebhookEndpointCreate{URL: srv.URL + "/webhooks", EnabledEvents: []string{"*"}, Description: client.Value("sdk test")})
			if err != nil {
				t.Fatal(err)
			}
			secret = we.Secret
			release()
			if !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("endpoint %+v", we)
			}
			ev, err := sk.TriggerSandboxEvent(ctx, &client.TriggerSandboxEventRequest{EventType: client.EventTypePaymentIntentSucceeded})
			if err != nil {
				t.Fatal(err)
			}
			timeout := time.After(30 * time.Second)
			for done := false; !done; {
				select {
				case r := <-got: // earlier events may arrive first; each must verify
					if r.err != nil {
						t.Fatalf("delivery did not verify: %v", r.err)
					}
					if r.d.EventID == ev.ID {
						if r.d.EventType != string(client.EventTypePaymentIntentSucceeded) {
							t.Fatalf("delivery %+v", r.d)
						}
						done = true
					}
				case <-timeout:
					t.Fatal("no delivery of the triggered event in 30s")
				}
			}
			if _, err := sk.GetEvent(ctx, ev.ID); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				dl, err := sk.ListEventDeliveries(ctx, ev.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(dl.Data) == 1 && dl.Data[0].Status == "succeeded" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("deliveries %+v", dl.Data)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if again, err := sk.RedeliverEvent(ctx, ev.ID, &client.RedeliverEventRequest{EndpointID: client.String(we.ID)}); err != nil || len(again.Data) != 1 {
				t.Fatalf("redeliver %+v %v", again, err)
			}
			if page, err := sk.ListWebhookEndpoints(ctx, nil); err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			if _, err := sk.UpdateWebhookEndpoint(ctx, we.ID, &client.WebhookEndpointUpdate{Disabled: client.Bool(true)}); err != nil {
				t.Fatal(err)
			}
			if got, err := sk.GetWebhookEndpoint(ctx, we.ID); err != nil || got.Status != "disabled" {
				t.Fatalf("%+v %v", got, err)
			}
			n := 0
			for _, err := range sk.AllEvents(ctx, &client.ListEventsParams{Limit: 3}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n < 5 {
				t.Fatalf("only %d events", n)
			}
			if del, err := sk.DeleteWebhookEndpoint(ctx, we.ID); err != nil || !del.Deleted {
				t.Fatalf("%+v %v", del, err)
			}

			// The event stream sees an event made after it opened.
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			stream, err := sk.StreamEvents(sctx, &client.StreamEventsParams{Types: "payout.created"})
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			po, err := sk.CreatePayout(ctx, &client.PayoutCreate{AmountMinor: client.Int64(10), Currency: "DJF", Provider: "wallet_a", RecipientMSISDN: client.String("+25377111666")})
			if err != nil {
				t.Fatal(err)
			}
			sev, err := stream.Next()
			if err != nil || sev.Type != client.EventTypePayoutCreated || sev.Data.ID != po.ID {
				t.Fatalf("streamed %+v %v", sev, err)
			}
		})

		t.Run("terminals", func(t *testing.T) {
			term, err := sk.CreateTerminal(ctx, &client.TerminalCreate{SerialNumber: "SN-" + uuid.NewString()[:8], Model: "countertop", OutletID: client.String("outlet-1")})
			if err != nil {
				t.Fatal(err)
			}
			if term.Status != "inactive" {
				t.Fatalf("terminal %+v", term)
			}
			act, err := sk.ActivateTerminal(ctx, term.ID, nil)
			if err != nil || act.Status != "active" {
				t.Fatalf("%+v %v", act, err)
			}
			if _, err := sk.ActivateTerminal(ctx, term.ID, nil); client.ErrorCode(err) != client.CodeInvalidState {
				t.Fatalf("second activation: %v", err)
			}
			if got, err := sk.GetTerminal(ctx, term.ID); err != nil || got.ID != term.ID {
				t.Fatalf("%+v %v", got, err)
			}
			page, err := sk.ListTerminals(ctx, nil)
			if err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			if del, err := sk.DeleteTerminal(ctx, term.ID); err != nil || !del.Deleted {
				t.Fatalf("%+v %v", del, err)
			}
		})

		t.Run("billing", func(t *testing.T) {
			clock, err := sk.CreateTestClock(ctx, &client.CreateTestClockRequest{FrozenTime: int(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()), Name: client.String("sdk")})
			if err != nil {
				t.Fatal(err)
			}
			cus, err := sk.CreateCustomer(ctx, &client.CustomerCreate{Name: client.String("Hodan Ali"), Email: client.String("hodan@example.com"), TestClock: client.String(clock.ID),
				DefaultPayment: &client.DefaultPayment{Provider: "wallet_a", CustomerMSISDN: client.Value("+25377123456")}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sk.UpdateCustomer(ctx, cus.ID, &client.CustomerCreate{Metadata: map[string]string{"tier": "gold"}}); err != nil {
				t.Fatal(err)
			}
			sub, err := sk.CreateSubscription(ctx, &client.SubscriptionCreate{Customer: cus.ID, Currency: "DJF", Interval: "month",
				Items: []client.ItemCreate{{Description: "Plan", AmountMinor: 1000}}})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := sk.GetSubscription(ctx, sub.ID); err != nil || got.Customer != cus.ID {
				t.Fatalf("%+v %v", got, err)
			}
			if up, err := sk.UpdateSubscription(ctx, sub.ID, &client.SubscriptionUpdate{CancelAtPeriodEnd: client.Bool(true)}); err != nil || !up.CancelAtPeriodEnd {
				t.Fatalf("%+v %v", up, err)
			}
			if got, err := sk.GetCustomer(ctx, cus.ID); err != nil || got.ID != cus.ID || got.Metadata["tier"] != "gold" {
				t.Fatalf("%+v %v", got, err)
			}
			if page, err := sk.ListCustomers(ctx, nil); err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			if page, err := sk.ListSubscriptions(ctx, nil); err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			if got, err := sk.GetTestClock(ctx, clock.ID); err != nil || got.ID != clock.ID {
				t.Fatalf("%+v %v", got, err)
			}
			if page, err := sk.ListTestClocks(ctx, nil); err != nil || len(page.Data) != 1 {
				t.Fatalf("%+v %v", page, err)
			}
			inv, err := sk.CreateInvoice(ctx, &client.InvoiceCreate{Customer: cus.ID, Currency: "DJF", Lines: []client.ItemCreate{{Description: "Setup", AmountMinor: 500}},
				CollectionMethod: client.String("send_invoice"), DaysUntilDue: client.Int(7)})
			if err != nil {
				t.Fatal(err)
			}
			if inv.Status != client.InvoiceStatusDraft {
				t.Fatalf("invoice %+v", inv)
			}
			fin, err := sk.FinalizeInvoice(ctx, inv.ID)
			if err != nil || fin.Status != client.InvoiceStatusOpen {
				t.Fatalf("%+v %v", fin, err)
			}
			if v, err := sk.VoidInvoice(ctx, inv.ID); err != nil || v.Status != client.InvoiceStatusVoid {
				t.Fatalf("%+v %v", v, err)
			}
			inv2, err := sk.CreateInvoice(ctx, &client.InvoiceCreate{Customer: cus.ID, Currency: "DJF", Lines: []client.ItemCreate{{Description: "Extra", AmountMinor: 200}},
				CollectionMethod: client.String("send_invoice"), DaysUntilDue: client.Int(7)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sk.FinalizeInvoice(ctx, inv2.ID); err != nil {
				t.Fatal(err)
			}
			if u, err := sk.MarkInvoiceUncollectible(ctx, inv2.ID); err != nil || u.Status != client.InvoiceStatusUncollectible {
				t.Fatalf("%+v %v", u, err)
			}
			if got, err := sk.GetInvoice(ctx, inv2.ID); err != nil || got.ID != inv2.ID {
				t.Fatalf("%+v %v", got, err)
			}
			n := 0
			for _, err := range sk.AllInvoices(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n < 2 { // the subscription's first invoice and ours
				t.Fatalf("%d invoices", n)
			}
			if c, err := sk.CancelSubscription(ctx, sub.ID, nil); err != nil || c.Status != client.SubscriptionStatusCanceled {
				t.Fatalf("%+v %v", c, err)
			}
			if _, err := sk.AdvanceTestClock(ctx, clock.ID, &client.AdvanceTestClockRequest{FrozenTime: int(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Unix())}); err != nil {
				t.Fatal(err)
			}
			if d, err := sk.DeleteCustomer(ctx, cus.ID); err != nil || !d.Deleted {
				t.Fatalf("%+v %v", d, err)
			}
		})

		t.Run("request logs", func(t *testing.T) {
			// The log is written in batches off the request path: wait for ours.
			deadline := time.Now().Add(20 * time.Second)
			for {
				n := 0
				for l, err := range sk.AllRequestLogs(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if l.Path == "/v1/balance" && l.Method == "GET" && l.Status == 200 {
						n++
					}
				}
				if n > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("GET /v1/balance never appeared in the request log")
				}
				time.Sleep(100 * time.Millisecond)
			}
		})

		t.Run("banking", func(t *testing.T) {
			bankA := newBank(t, e, "SDK Bank A", "SDKADJJD")
			bankB := newBank(t, e, "SDK Bank B", "SDKBDJJD")
			a := client.New(bankA, client.WithBaseURL(e.URL), client.WithHTTPClient(hc))
			b := client.New(bankB, client.WithBaseURL(e.URL), client.WithHTTPClient(hc))
			if _, err := a.CreateSandboxTopup(ctx, &client.CreateSandboxTopupRequest{Currency: "DJF", AmountMinor: client.Int64(50000)}); err != nil {
				t.Fatal(err)
			}
			uetr := uuid.NewString()
			rep, err := a.CreateTransfer(ctx, &client.CreditTransferMessage{
				MsgID: "MSG-" + uetr[:8], CreatedAt: time.Now().UTC().Truncate(time.Second), Settlement: client.CreditTransferMessageSettlement{Method: "CLRG"},
				Transactions: []client.CreditTransferMessageTransaction{{
					UETR: uetr, EndToEndID: "E2E-1", AmountMinor: 1000, Currency: "DJF", ChargeBearer: "SLEV",
					Debtor: client.TransferParty{Name: "Amina Hassan", Account: "DJ2100010000000154000100186"}, DebtorAgent: "SDKADJJD",
					Creditor: client.TransferParty{Name: "Omar Farah Trading SARL", Account: "GB82WEST12345698765432"}, CreditorAgent: "SDKBDJJD",
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Transactions) != 1 || rep.Transactions[0].UETR != uetr || rep.Transactions[0].Status == "RJCT" {
				t.Fatalf("report %+v", rep)
			}
			tr, err := b.GetTransfer(ctx, uetr)
			if err != nil || tr.AmountMinor != 1000 {
				t.Fatalf("%+v %v", tr, err)
			}
			n := 0
			for x, err := range b.AllTransfers(ctx, &client.ListTransfersParams{Role: "creditor"}) {
				if err != nil {
					t.Fatal(err)
				}
				if x.UETR == uetr {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("transfer listed %d times", n)
			}
		})
	})
}

// recordingTransport keeps every JSON success answer the client received.
type recordingTransport struct {
	mu      sync.Mutex
	answers []recordedAnswer
}

type recordedAnswer struct {
	method, path string
	status       int
	body         []byte
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || resp.StatusCode >= 300 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rt.mu.Lock()
	rt.answers = append(rt.answers, recordedAnswer{r.Method, r.URL.Path, resp.StatusCode, body})
	rt.mu.Unlock()
	return resp, nil
}

// checkAnswersDecodeStrictly decodes every recorded answer into the SDK's
// type for it, refusing unknown fields: a field payd sends that the
// generated types lack fails the test.
func checkAnswersDecodeStrictly(t *testing.T, rt *recordingTransport) {
	t.Helper()
	type route struct {
		key string
		re  *regexp.Regexp
	}
	var routes []route
	for key := range client.Operations {
		method, path, _ := strings.Cut(key, " ")
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, "{") {
				segs[i] = "[^/]+"
			} else {
				segs[i] = regexp.QuoteMeta(seg)
			}
		}
		pattern := strings.Join(segs, "/")
		routes = append(routes, route{key, regexp.MustCompile("^" + method + " " + pattern + "$")})
	}
	checked := map[string]bool{}
	for _, a := range rt.answers {
		var key string
		for _, r := range routes {
			if r.re.MatchString(a.method + " " + a.path) {
				// a literal path (/v1/payouts/bulk) wins over a template (/v1/payouts/{id})
				if key == "" || !strings.Contains(r.key, "{") {
					key = r.key
				}
			}
		}
		if key == "" {
			t.Errorf("%s %s: no operation matches", a.method, a.path)
			continue
		}
		v := client.AnswerType(key, a.status)
		if v == nil {
			t.Errorf("%s (%d): the SDK has no type for this answer", key, a.status)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(a.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("%s (%d): %v\n%s", key, a.status, err, a.body)
		}
		checked[key] = true
	}
	if len(checked) < 60 {
		t.Errorf("only %d operations' answers were checked", len(checked))
	}
}

func newBank(t *testing.T, e *apptest.Env, name, bic string) string {
	t.Helper()
	c, err := e.Main.Merchants.Create(context.Background(), merchants.CreateParams{Name: name, BIC: bic})
	if err != nil {
		t.Fatal(fmt.Errorf("bank %s: %w", bic, err))
	}
	return c.SecretKeys[0]
}
