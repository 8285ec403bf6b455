package webhooks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/store"
)

// TriggerParams is POST /v1/sandbox/webhooks/trigger.
type TriggerParams struct {
	EventType       string
	RelatedObjectID *string
}

var kindExample = map[ObjectKind]string{
	KindPaymentIntent:   "a payment intent (pi_...)",
	KindPayout:          "a payout (po_...)",
	KindPayoutBatch:     "a payout batch (po_bulk_... or batch_...)",
	KindTransfer:        "a bank transfer (its UETR)",
	KindInvoice:         "an invoice (in_...)",
	KindRefund:          "a refund (re_...)",
	KindDispute:         "a dispute (dp_...)",
	KindCustomer:        "a customer (cus_...)",
	KindSubscription:    "a subscription (sub_...)",
	KindWebhookEndpoint: "a webhook endpoint (we_...)",
}

// Trigger records a test-mode event of any type payd emits, about a real
// object (its latest snapshot in the events table) or, without
// RelatedObjectID, a synthetic fixture of the right shape. The event goes
// through the outbox like any other, so it reaches every subscribed endpoint.
// It is written in the unit of work of the request cl claims (store.NoClaim:
// on its own).
func (s *Service) Trigger(ctx context.Context, cl store.Claim, o Owner, p TriggerParams) (events.Event, error) {
	if o.Livemode {
		return events.Event{}, errs.Permission("permission_denied", "sandbox endpoints answer only test-mode keys")
	}
	if p.EventType == "" {
		return events.Event{}, errs.Missing("event_type")
	}
	kind, ok := KindOf(p.EventType)
	if !ok {
		return events.Event{}, errs.Invalid("event_type", "event_type_unknown", "unknown event type %q; known types: %s",
			p.EventType, strings.Join(EventTypes(), ", "))
	}
	var ev events.Event
	err := s.db.Within(cl).InTx(ctx, func(tx *store.Tx) error {
		var objectType, objectID string
		var object any
		if p.RelatedObjectID != nil {
			id := strings.TrimSpace(*p.RelatedObjectID)
			if id == "" {
				return errs.Invalid("related_object_id", "parameter_invalid", "related_object_id must be an object id, or be left out for a synthetic object")
			}
			if k, ok := KindOfID(id); !ok || k != kind {
				return errs.Invalid("related_object_id", "related_object_mismatch", "%s is about %s; %q is not one", p.EventType, kindExample[kind], id)
			}
			var data string
			err := tx.QueryRow(ctx, `SELECT object_type, data FROM events WHERE object_id = ? AND merchant_id = ? AND livemode = ?
				ORDER BY id DESC LIMIT 1`, id, o.MerchantID, o.Livemode).Scan(&objectType, &data)
			if store.IsNotFound(err) && kind == KindTransfer && strings.ToLower(id) != id {
				id = strings.ToLower(id)
				err = tx.QueryRow(ctx, `SELECT object_type, data FROM events WHERE object_id = ? AND merchant_id = ? AND livemode = ?
					ORDER BY id DESC LIMIT 1`, id, o.MerchantID, o.Livemode).Scan(&objectType, &data)
			}
			if store.IsNotFound(err) {
				nf := errs.NotFound(string(kind), id)
				nf.Param = "related_object_id"
				return nf
			}
			if err != nil {
				return err
			}
			objectID, object = id, json.RawMessage(data)
		} else {
			objectType, objectID, object = fixture(p.EventType, kind, tx.Now())
		}
		var err error
		ev, err = events.Emit(ctx, tx, o.MerchantID, false, p.EventType, objectType, objectID, object)
		return err
	})
	return ev, err
}

// fixture makes a synthetic object for an event type, shaped like the real
// one, marked with metadata sandbox_fixture.
func fixture(eventType string, kind ObjectKind, now time.Time) (objectType, id string, object map[string]any) {
	ts := now.UTC().Format(time.RFC3339)
	meta := map[string]string{"sandbox_fixture": "true"}
	switch kind {
	case KindPaymentIntent:
		id = ids.New("pi_")
		pi := map[string]any{"id": id, "object": "payment_intent", "status": "requires_action", "amount_minor": 1000,
			"amount_captured_minor": 0, "amount_refunded_minor": 0, "refunded": false, "disputed": false, "currency": "DJF", "provider": "bank_a", "customer_msisdn": "+253000000001",
			"description": "Sandbox fixture", "metadata": meta, "return_url": nil, "next_action": nil, "last_error": nil,
			"payment_method_details": nil, "livemode": false, "created_at": ts, "succeeded_at": nil, "canceled_at": nil,
			"amount_capturable_minor": 0, "capture_method": "automatic", "cancellation_reason": nil}
		switch eventType {
		case "payment_intent.created":
			pi["next_action"] = map[string]any{"type": "collect_otp", "otp_length": 6}
		case "payment_intent.succeeded":
			pi["status"], pi["amount_captured_minor"], pi["succeeded_at"] = "succeeded", 1000, ts
		case "payment_intent.canceled":
			pi["status"], pi["canceled_at"] = "canceled", ts
			pi["last_error"] = map[string]any{"code": "insufficient_funds", "message": "the wallet balance is too low", "provider": "bank_a"}
		case "payment_intent.compliance_review":
			pi["status"] = "compliance_review"
		case "payment_intent.amount_capturable_updated":
			pi["status"], pi["capture_method"], pi["amount_capturable_minor"], pi["provider"] = "requires_capture", "manual", 1000, "wallet_a"
			pi["customer_msisdn"], pi["metadata"] = nil, map[string]string{"sandbox_fixture": "true", "wallet_a_mode": "card"}
		}
		return "payment_intent", id, pi
	case KindPayout:
		id = ids.New("po_")
		po := map[string]any{"id": id, "object": "payout", "status": "pending", "amount_minor": 5000, "amount": 5000, "currency": "DJF",
			"provider": "wallet_b", "recipient_msisdn": "+253000000001", "recipient_account": nil, "recipient_name": "Sandbox Recipient",
			"description": "Sandbox fixture", "metadata": meta, "reference": "sandbox_fixture_" + id[len("po_"):], "batch_id": nil,
			"screening": map[string]any{"status": "clear", "matches": []any{}}, "failure_code": nil, "failure_message": nil,
			"approved_by": nil, "livemode": false, "created_at": ts, "updated_at": ts, "succeeded_at": nil, "failed_at": nil}
		switch eventType {
		case "payout.succeeded":
			po["status"], po["succeeded_at"] = "succeeded", ts
		case "payout.failed":
			po["status"], po["failed_at"] = "failed", ts
			po["failure_code"], po["failure_message"] = "insufficient_funds", "the provider refused the payout: insufficient funds"
		case "payout.canceled":
			po["status"] = "canceled"
			po["failure_code"], po["failure_message"] = "canceled", "the payout was canceled before it was sent"
		case "payout.held":
			po["status"] = "held"
			po["screening"] = map[string]any{"status": "hit", "matches": []any{map[string]any{"name": "SANDBOX LISTED PERSON", "score": 0.97}}}
		}
		return "payout", id, po
	case KindPayoutBatch:
		id = ids.New("batch_")
		b := map[string]any{"id": id, "object": "payout_batch", "status": "completed", "currency": "DJF",
			"row_count": 2, "total_amount_minor": 3000, "description": "Sandbox fixture", "created_at": ts, "created_by": "key_sandbox_fixture",
			"approved_at": ts, "approved_by": "key_sandbox_fixture_2", "rows_succeeded": 2, "rows_failed": 0, "rows_pending": 0, "livemode": false}
		if eventType == "payout_batch.canceled" {
			b["status"], b["approved_at"], b["approved_by"], b["rows_succeeded"] = "canceled", nil, nil, 0
		}
		return "payout_batch", id, b
	case KindTransfer:
		id = uuid.NewString()
		tr := map[string]any{"uetr": id, "object": "transfer", "msg_id": "SANDBOX" + strings.ToUpper(ids.Secret("", 8)),
			"end_to_end_id": "E2E-SANDBOX", "status": "ACSC", "status_reason": nil, "amount_minor": 25000, "currency": "DJF",
			"debtor": map[string]any{"name": "Sandbox Debtor", "account": "DJ2100010000000154000100186"}, "debtor_agent": "SANDDJJDXXX",
			"creditor": map[string]any{"name": "Sandbox Creditor", "account": "DJ2100010000000154000100187"}, "creditor_agent": "SANCDJJDXXX",
			"remittance_info": "Sandbox fixture", "returned_amount_minor": 0, "returns": []any{}, "created_at": ts, "settled_at": ts}
		switch eventType {
		case "transfer.rejected":
			tr["status"], tr["settled_at"] = "RJCT", nil
			tr["status_reason"] = map[string]any{"code": "AM04", "text": "Insufficient funds"}
		case "transfer.returned":
			tr["returned_amount_minor"] = 25000
			tr["returns"] = []any{map[string]any{"amount_minor": 25000, "reason_code": "AC04", "reason_text": "Closed account", "created_at": ts}}
		}
		return "transfer", id, tr
	case KindSettings:
		if eventType == "settings.change_requested" {
			id = ids.New("setchg_")
			return "settings_change", id, map[string]any{"id": id, "object": "settings_change", "livemode": false,
				"approval_threshold_minor": nil, "approval_window_seconds": 86400, "status": "pending", "requested_by": "key_sandbox_fixture", "approved_by": nil,
				"created_at": ts, "decided_at": nil}
		}
		return "settings", "settings_test", map[string]any{"object": "settings", "livemode": false, "approval_threshold_minor": 100000, "approval_window_seconds": 86400}
	case KindRefund:
		id = ids.New("re_")
		re := map[string]any{"id": id, "object": "refund", "payment_intent": ids.New("pi_"), "amount_minor": 1000, "currency": "DJF",
			"status": "pending", "reason": "requested_by_customer", "failure_code": nil, "failure_message": nil, "metadata": meta,
			"approved_by": nil, "livemode": false, "created_at": ts, "succeeded_at": nil, "failed_at": nil}
		switch eventType {
		case "refund.succeeded":
			re["status"], re["succeeded_at"] = "succeeded", ts
		case "refund.failed":
			re["status"], re["failed_at"] = "failed", ts
			re["failure_code"], re["failure_message"] = "account_not_found", "the customer's account does not exist or is closed"
		case "refund.canceled":
			re["status"] = "canceled"
		}
		return "refund", id, re
	case KindDispute:
		id = ids.New("dp_")
		evidence := map[string]any{"customer_name": nil, "customer_email": nil, "product_description": nil,
			"shipping_tracking_number": nil, "receipt_text": nil, "uncategorized_text": nil}
		due := now.UTC().Add(7 * 24 * time.Hour).Format(time.RFC3339)
		dp := map[string]any{"id": id, "object": "dispute", "payment_intent": ids.New("pi_"), "amount_minor": 1000, "currency": "DJF",
			"reason": "fraudulent", "status": "needs_response", "evidence": evidence, "evidence_due_by": due, "metadata": meta,
			"livemode": false, "created_at": ts, "closed_at": nil}
		switch eventType {
		case "dispute.updated":
			evidence["receipt_text"] = "Sandbox fixture receipt"
		case "dispute.closed":
			dp["status"], dp["closed_at"] = "lost", ts
		case "dispute.funds_reinstated":
			dp["status"], dp["closed_at"] = "won", ts
		}
		return "dispute", id, dp
	case KindCustomer:
		id = ids.New("cus_")
		if eventType == "customer.deleted" {
			return "customer", id, map[string]any{"id": id, "object": "customer", "deleted": true}
		}
		return "customer", id, map[string]any{"id": id, "object": "customer", "name": "Sandbox Customer", "email": nil, "phone": "+25377000001",
			"metadata": meta, "default_payment": map[string]any{"provider": "wallet_c", "customer_msisdn": "+25377000001", "metadata": map[string]string{}},
			"test_clock": nil, "livemode": false, "created_at": ts}
	case KindSubscription:
		id = ids.New("sub_")
		status := map[string]string{"customer.subscription.deleted": "canceled"}[eventType]
		if status == "" {
			status = "active"
		}
		return "subscription", id, map[string]any{"id": id, "object": "subscription", "customer": ids.New("cus_"), "status": status,
			"currency": "DJF", "interval": "month", "interval_count": 1, "collection_method": "charge_automatically",
			"items":                []any{map[string]any{"id": ids.New("si_"), "description": "Sandbox plan", "amount_minor": 1500, "quantity": 1}},
			"current_period_start": ts, "current_period_end": ts, "cancel_at_period_end": false, "latest_invoice": nil,
			"metadata": meta, "livemode": false, "created_at": ts}
	case KindWebhookEndpoint:
		id = ids.New("we_")
		return "webhook_endpoint", id, map[string]any{"id": id, "object": "webhook_endpoint", "url": "https://example.com/webhooks",
			"enabled_events": []string{"*"}, "description": "Sandbox fixture", "status": "disabled", "livemode": false, "created_at": ts,
			"disabled_reason": DisabledRepeatedFailure, "disabled_at": ts, "consecutive_failures": DefaultBreakerFailures, "failing_since": ts}
	default: // invoice
		id = ids.New("in_")
		status, paid, paidAt := "open", 0, any(nil)
		switch eventType {
		case "invoice.paid":
			status, paid, paidAt = "paid", 1500, ts
		case "invoice.created":
			status = "draft"
		case "invoice.voided":
			status = "void"
		}
		return "invoice", id, map[string]any{"id": id, "object": "invoice", "status": status, "customer": ids.New("cus_"),
			"subscription": ids.New("sub_"), "amount_due_minor": 1500, "amount_paid_minor": paid, "amount_remaining_minor": 1500 - paid,
			"amount_due": 1500, "amount_paid": paid, "amount_remaining": 1500 - paid, "number": "INV-000001", "currency": "DJF", "livemode": false,
			"created_at": ts, "paid_at": paidAt, "metadata": meta}
	}
}

// IsFixture reports whether an event's object (its data as stored) is a
// synthetic fixture made by the sandbox trigger rather than a real object:
// such an object has no page, so the portal shows its id without a link.
func IsFixture(object []byte) bool {
	var o struct {
		Metadata       map[string]string `json:"metadata"`
		CreatedBy      string            `json:"created_by"`
		RemittanceInfo *string           `json:"remittance_info"`
		MsgID          string            `json:"msg_id"`
	}
	if json.Unmarshal(object, &o) != nil {
		return false
	}
	return o.Metadata["sandbox_fixture"] == "true" || o.CreatedBy == "key_sandbox_fixture" ||
		(o.RemittanceInfo != nil && *o.RemittanceInfo == "Sandbox fixture" && strings.HasPrefix(o.MsgID, "SANDBOX"))
}
