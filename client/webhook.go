package client

import (
	"net/http"

	"github.com/payd/payd/webhook"
)

// The webhook verifier of package github.com/payd/payd/webhook, re-exported
// so an integration needs one import. Verify deliveries with the raw body
// exactly as received.
type (
	// WebhookVerifier checks deliveries against one or more signing secrets.
	WebhookVerifier = webhook.Verifier
	// VerifiedDelivery is a verified webhook delivery; EventID is its de-duplication key.
	VerifiedDelivery = webhook.Delivery
	// WebhookEvent is the event envelope a delivery carries.
	WebhookEvent = webhook.Event
)

// The webhook verification errors (test with errors.Is).
var (
	ErrWebhookMissingHeader    = webhook.ErrMissingHeader
	ErrWebhookMalformedHeader  = webhook.ErrMalformedHeader
	ErrWebhookNoValidSignature = webhook.ErrNoValidSignature
	ErrWebhookTimestamp        = webhook.ErrTimestampOutsideTolerance
	ErrWebhookEventMismatch    = webhook.ErrEventMismatch
	ErrWebhookBodyTooLarge     = webhook.ErrBodyTooLarge
)

// VerifyWebhook checks one delivery (its headers and raw body) with one
// signing secret and the default five-minute tolerance.
func VerifyWebhook(secret string, header http.Header, body []byte) (VerifiedDelivery, error) {
	return webhook.Verify(secret, header, body)
}

// VerifyWebhookRequest reads and verifies a delivery request, returning the
// body it consumed.
func VerifyWebhookRequest(r *http.Request, secret string) (VerifiedDelivery, []byte, error) {
	return webhook.VerifyRequest(r, secret)
}
