package webhooks

import (
	"regexp"
	"strings"
)

// ObjectKind is the kind of object an event type is about.
type ObjectKind string

// The kinds of object payd's events carry.
const (
	KindPaymentIntent ObjectKind = "payment_intent"
	KindPayout        ObjectKind = "payout"
	KindPayoutBatch   ObjectKind = "payout_batch"
	KindTransfer      ObjectKind = "transfer"
	KindInvoice       ObjectKind = "invoice"
	// KindSettings: a merchant's four-eyes controls in one mode, or a
	// pending change of them.
	KindSettings     ObjectKind = "settings"
	KindRefund       ObjectKind = "refund"
	KindCustomer     ObjectKind = "customer"
	KindSubscription ObjectKind = "subscription"
	KindDispute      ObjectKind = "dispute"
	// KindWebhookEndpoint: an endpoint payd disabled after repeated failure.
	KindWebhookEndpoint ObjectKind = "webhook_endpoint"
)

// eventTypes is the one list of every event type payd emits. Endpoint
// subscriptions, the events filter and the sandbox trigger all check against
// it; a capability that adds an event type adds it here.
var eventTypes = []struct {
	Type string
	Kind ObjectKind
}{
	{"payment_intent.created", KindPaymentIntent},
	{"payment_intent.succeeded", KindPaymentIntent},
	{"payment_intent.canceled", KindPaymentIntent},
	{"payment_intent.compliance_review", KindPaymentIntent},
	{"payment_intent.amount_capturable_updated", KindPaymentIntent},
	{"payout.created", KindPayout},
	{"payout.succeeded", KindPayout},
	{"payout.failed", KindPayout},
	{"payout.held", KindPayout},
	{"payout.canceled", KindPayout},
	{"payout_batch.completed", KindPayoutBatch},
	{"payout_batch.canceled", KindPayoutBatch},
	{"transfer.settled", KindTransfer},
	{"transfer.rejected", KindTransfer},
	{"transfer.returned", KindTransfer},
	// Billing (internal/billing).
	{"customer.created", KindCustomer},
	{"customer.updated", KindCustomer},
	{"customer.deleted", KindCustomer},
	{"customer.subscription.created", KindSubscription},
	{"customer.subscription.updated", KindSubscription},
	{"customer.subscription.deleted", KindSubscription},
	{"invoice.created", KindInvoice},
	{"invoice.finalized", KindInvoice},
	{"invoice.paid", KindInvoice},
	{"settings.updated", KindSettings},
	{"settings.change_requested", KindSettings},
	{"refund.created", KindRefund},
	{"refund.succeeded", KindRefund},
	{"refund.failed", KindRefund},
	{"refund.canceled", KindRefund},
	// Disputes (internal/disputes).
	{"dispute.created", KindDispute},
	{"dispute.updated", KindDispute},
	{"dispute.closed", KindDispute},
	{"dispute.funds_withdrawn", KindDispute},
	{"dispute.funds_reinstated", KindDispute},
	{"invoice.payment_failed", KindInvoice},
	{"invoice.voided", KindInvoice},
	// Webhooks themselves (breaker.go).
	{EventEndpointDisabled, KindWebhookEndpoint},
}

// EventTypes returns every event type, in a stable order.
func EventTypes() []string {
	out := make([]string, len(eventTypes))
	for i, t := range eventTypes {
		out[i] = t.Type
	}
	return out
}

// KindOf returns the object kind of an event type, and false for a type
// payd does not know.
func KindOf(eventType string) (ObjectKind, bool) {
	for _, t := range eventTypes {
		if t.Type == eventType {
			return t.Kind, true
		}
	}
	return "", false
}

// KnownEventType reports whether payd emits eventType.
func KnownEventType(eventType string) bool {
	_, ok := KindOf(eventType)
	return ok
}

var uetrRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// KindOfID tells the kind of object an id names, by its prefix (pi_
// payment intent, po_ payout, po_bulk_ or batch_ bulk batch; a UETR names
// a bank transfer; in_ an invoice; re_ a refund; dp_ a dispute; cus_ a customer; sub_ a subscription). ok is false for an id of no known kind.
func KindOfID(id string) (ObjectKind, bool) {
	switch {
	case strings.HasPrefix(id, "pi_"):
		return KindPaymentIntent, true
	case strings.HasPrefix(id, "po_bulk_"), strings.HasPrefix(id, "batch_"):
		return KindPayoutBatch, true
	case strings.HasPrefix(id, "po_"):
		return KindPayout, true
	case strings.HasPrefix(id, "in_"):
		return KindInvoice, true
	case strings.HasPrefix(id, "settings_"), strings.HasPrefix(id, "setchg_"):
		return KindSettings, true
	case strings.HasPrefix(id, "re_"):
		return KindRefund, true
	case strings.HasPrefix(id, "cus_"):
		return KindCustomer, true
	case strings.HasPrefix(id, "sub_"):
		return KindSubscription, true
	case strings.HasPrefix(id, "dp_"):
		return KindDispute, true
	case strings.HasPrefix(id, "we_"):
		return KindWebhookEndpoint, true
	case uetrRE.MatchString(id):
		return KindTransfer, true
	}
	return "", false
}

// subscribed reports whether an endpoint's enabled_events take eventType.
func subscribed(enabled []string, eventType string) bool {
	for _, e := range enabled {
		if e == "*" || e == eventType {
			return true
		}
	}
	return false
}
