package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/payd/payd/client"
)

func Example() {
	ctx := context.Background()
	payd := client.New(os.Getenv("PAYD_API_KEY"), client.WithBaseURL("http://127.0.0.1:8080"))

	pi, err := payd.CreatePaymentIntent(ctx, &client.PaymentIntentCreate{
		Amount: client.Int64(1500), Currency: "DJF", Provider: "bank_a",
		CustomerMSISDN: client.String("+25377123456"),
	}, client.WithIdempotencyKey("order-1001"))
	if err != nil {
		log.Fatal(err)
	}
	pi, err = payd.ConfirmPaymentIntent(ctx, pi.ID, &client.ConfirmPaymentIntentRequest{OTP: "123456"})
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatus == http.StatusPaymentRequired:
		fmt.Println("refused:", apiErr.Code, "- the intent is", pi.Status)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println(pi.ID, pi.Status)
	}
}

func ExampleClient_AllPaymentIntents() {
	payd := client.New(os.Getenv("PAYD_API_KEY"))
	for pi, err := range payd.AllPaymentIntents(context.Background(), &client.ListPaymentIntentsParams{Status: client.PaymentIntentStatusSucceeded}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pi.ID, pi.AmountMinor, pi.Currency)
	}
}

func ExampleVerifyWebhookRequest() {
	secret := os.Getenv("PAYD_WEBHOOK_SECRET") // whsec_..., from CreateWebhookEndpoint
	http.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		d, _, err := client.VerifyWebhookRequest(r, secret)
		if err != nil {
			http.Error(w, "signature verification failed", http.StatusBadRequest)
			return
		}
		fmt.Println(d.EventID, d.EventType, d.Event.Data.ID)
	})
}
