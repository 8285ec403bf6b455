// Command walkthrough is payd's five-minute walk-through with the Go SDK
// (package github.com/payd/payd/client): it creates a payment intent,
// confirms it with the sandbox SMS code, receives and verifies the signed
// webhook, pays out part of the proceeds and refunds part of the payment.
//
//	go run ./cmd/payd serve                      # prints the demo secret key
//	PAYD_API_KEY=sk_test_... go run ./examples/go/walkthrough
//
// PAYD_URL (default http://127.0.0.1:8080) points at another payd. The
// example listens for webhooks on 127.0.0.1 (a random port; -webhook-addr
// picks one) and registers that address as a test-mode endpoint for the
// length of the run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/payd/payd/client"
)

func main() {
	webhookAddr := flag.String("webhook-addr", "127.0.0.1:0", "where the example receives webhooks")
	flag.Parse()
	key := os.Getenv("PAYD_API_KEY")
	if key == "" {
		log.Fatal("set PAYD_API_KEY to a test secret key (sk_test_...): `payd serve` prints the demo merchant's")
	}
	url := os.Getenv("PAYD_URL")
	if url == "" {
		url = client.DefaultBaseURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, client.New(key, client.WithBaseURL(url)), *webhookAddr, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run walks through the integration and prints each step to out.
func run(ctx context.Context, payd *client.Client, webhookAddr string, out io.Writer) error {
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }

	// 1. A webhook receiver: payd signs every delivery with the endpoint's
	// secret; verify it on the raw body before trusting anything in it.
	ln, err := net.Listen("tcp", webhookAddr)
	if err != nil {
		return err
	}
	deliveries := make(chan client.VerifiedDelivery, 64)
	var secret string
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _, err := client.VerifyWebhookRequest(r, secret)
		if err != nil {
			http.Error(w, "signature verification failed", http.StatusBadRequest)
			return
		}
		select {
		case deliveries <- d:
		default:
		}
		w.WriteHeader(http.StatusOK) // answer quickly; payd retries anything else
	})}
	go srv.Serve(ln)
	defer srv.Close()

	endpoint, err := payd.CreateWebhookEndpoint(ctx, &client.WebhookEndpointCreate{
		URL:           "http://" + ln.Addr().String() + "/webhooks",
		EnabledEvents: []string{"payment_intent.succeeded", "payout.succeeded", "payout.failed", "refund.succeeded", "refund.failed"},
		Description:   client.Value("walk-through"),
	})
	if err != nil {
		return fmt.Errorf("register the webhook endpoint: %w", err)
	}
	secret = endpoint.Secret // shown only in this answer: keep it in your secrets store
	defer payd.DeleteWebhookEndpoint(context.WithoutCancel(ctx), endpoint.ID)
	say("webhook endpoint %s -> %s", endpoint.ID, endpoint.URL)

	// 2. A payment intent. The SDK sends an Idempotency-Key and keeps it
	// across its own retries; passing your order's reference makes a retry
	// after a crash of your process safe too.
	order := "order-" + uuid.NewString()[:8]
	pi, err := payd.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{
		Amount:         client.Int64(1500), // major units: DJF has none smaller
		Currency:       "DJF",
		Provider:       "bank_a",
		CustomerMSISDN: client.String("+25377123456"),
		Description:    client.String("Order " + order),
		Metadata:       map[string]string{"order": order},
	}, client.WithIdempotencyKey(order))
	if err != nil {
		return fmt.Errorf("create the payment intent: %w", err)
	}
	say("payment intent %s: %s (next action %s)", pi.ID, pi.Status, pi.NextAction.Type)

	// 3. Confirm with the code the customer received (always 123456 in the
	// sandbox). A browser does this with the publishable key instead.
	pi, err = payd.ConfirmPaymentIntent(ctx, pi.ID, &client.ConfirmPaymentIntentRequest{OTP: "123456"})
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == client.CodeOTPInvalid {
		return fmt.Errorf("wrong code: the intent is canceled, create another: %w", err)
	}
	if err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	say("payment intent %s: %s, %d %s captured", pi.ID, pi.Status, pi.AmountCapturedMinor, pi.Currency)

	// 4. The signed webhook: fulfil the order here, not on the redirect.
	d, err := await(ctx, deliveries, "payment_intent.succeeded", pi.ID)
	if err != nil {
		return err
	}
	say("webhook %s %s for %s (signature verified)", d.EventID, d.EventType, d.Event.Data.ID)

	// 5. Pay out part of the proceeds to a wallet.
	po, err := payd.CreatePayout(ctx, &client.PayoutCreate{
		AmountMinor:     client.Int64(1000),
		Currency:        "DJF",
		Provider:        "wallet_a",
		RecipientMSISDN: client.String("+25377654321"),
		RecipientName:   client.String("Amina Hassan"),
		Reference:       client.String("payout-" + order),
	})
	if err != nil {
		return fmt.Errorf("payout: %w", err)
	}
	say("payout %s: %s", po.ID, po.Status)
	if d, err = await(ctx, deliveries, "payout.succeeded", po.ID); err != nil {
		return err
	}
	say("webhook %s %s for %s (signature verified)", d.EventID, d.EventType, d.Event.Data.ID)

	// 6. Refund part of the payment.
	re, err := payd.CreateRefund(ctx, &client.RefundCreate{PaymentIntent: pi.ID, AmountMinor: client.Int64(300), Reason: client.String("requested_by_customer")})
	if err != nil {
		return fmt.Errorf("refund: %w", err)
	}
	say("refund %s: %s", re.ID, re.Status)
	if re.Status != client.RefundStatusSucceeded {
		if d, err = await(ctx, deliveries, "refund.succeeded", re.ID); err != nil {
			return err
		}
		say("webhook %s %s for %s (signature verified)", d.EventID, d.EventType, d.Event.Data.ID)
	}

	// 7. The balance, and the intents so far (the iterator fetches pages as needed).
	bal, err := payd.GetBalance(ctx)
	if err != nil {
		return err
	}
	for _, b := range bal.Balances {
		say("balance %s: available %d, reserved %d, pending %d", b.Currency, b.AvailableMinor, b.ReservedMinor, b.PendingMinor)
	}
	n := 0
	for _, err := range payd.AllPaymentIntents(ctx, &client.ListPaymentIntentsParams{Status: client.PaymentIntentStatusSucceeded}) {
		if err != nil {
			return err
		}
		n++
	}
	say("%d succeeded payment intent(s)", n)
	return nil
}

// await returns the verified delivery of eventType about object id.
func await(ctx context.Context, deliveries <-chan client.VerifiedDelivery, eventType, id string) (client.VerifiedDelivery, error) {
	for {
		select {
		case d := <-deliveries:
			if d.EventType == eventType && d.Event.Data.ID == id {
				return d, nil
			}
			if d.Event.Data.ID == id && (eventType == "payout.succeeded" && d.EventType == "payout.failed" || eventType == "refund.succeeded" && d.EventType == "refund.failed") {
				return d, fmt.Errorf("%s: %s", id, d.EventType)
			}
		case <-ctx.Done():
			return client.VerifiedDelivery{}, fmt.Errorf("waiting for %s of %s: %w", eventType, id, ctx.Err())
		}
	}
}
