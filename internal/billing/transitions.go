package billing

import "errors"

// subTransition is one named move of a subscription. Every status change is
// written as a compare-and-set (UPDATE ... WHERE id = ? AND version = ? AND
// status IN (from)), so two billing runners or two requests never both win.
type subTransition struct {
	name string
	from []SubStatus
	to   SubStatus
}

// The subscription transition table.
var (
	// startPeriod opens a period: a trial's end starts the first paid one.
	startPeriod = subTransition{"start_period", []SubStatus{Trialing, Active, PastDue, Unpaid}, ""} // keeps the status, trialing becomes active
	// fallPastDue records a failed payment attempt with retries left.
	fallPastDue = subTransition{"fall_past_due", []SubStatus{Active, PastDue}, PastDue}
	// giveUp records that the last retry failed.
	giveUp = subTransition{"give_up", []SubStatus{Active, PastDue}, Unpaid}
	// recover records the latest invoice paid.
	recoverPaid = subTransition{"recover", []SubStatus{PastDue, Unpaid}, Active}
	// cancelSub ends the subscription, now or at its period's end.
	cancelSub = subTransition{"cancel", []SubStatus{Trialing, Active, PastDue, Unpaid}, Canceled}
	// changeSub changes items, cancel_at_period_end or metadata.
	changeSub = subTransition{"change", []SubStatus{Trialing, Active, PastDue, Unpaid}, ""}
)

var subTransitions = []subTransition{startPeriod, fallPastDue, giveUp, recoverPaid, cancelSub, changeSub}

// invTransition is one named move of an invoice, a compare-and-set like
// subTransition; event is what the move emits.
type invTransition struct {
	name  string
	from  []InvStatus
	to    InvStatus
	event string
}

// The invoice transition table. Creation inserts a draft (one-off
// invoices) or an open invoice (a subscription's period, finalized at
// once); everything after is one of these.
var (
	finalize          = invTransition{"finalize", []InvStatus{Draft}, Open, EventInvoiceFinalized}
	payInvoice        = invTransition{"pay", []InvStatus{Open, Uncollectible}, Paid, EventInvoicePaid}
	voidInvoice       = invTransition{"void", []InvStatus{Open, Uncollectible}, Void, EventInvoiceVoided}
	markUncollectible = invTransition{"mark_uncollectible", []InvStatus{Open}, Uncollectible, ""}
)

var invTransitions = []invTransition{finalize, payInvoice, voidInvoice, markUncollectible}

// The events of billing.
const (
	EventCustomerCreated     = "customer.created"
	EventCustomerUpdated     = "customer.updated"
	EventCustomerDeleted     = "customer.deleted"
	EventSubscriptionCreated = "customer.subscription.created"
	EventSubscriptionUpdated = "customer.subscription.updated"
	EventSubscriptionDeleted = "customer.subscription.deleted"
	EventInvoiceCreated      = "invoice.created"
	EventInvoiceFinalized    = "invoice.finalized"
	EventInvoicePaid         = "invoice.paid"
	EventInvoicePaymentFail  = "invoice.payment_failed"
	EventInvoiceVoided       = "invoice.voided"
)

func subAllowed(t subTransition, s SubStatus) bool {
	for _, f := range t.from {
		if f == s {
			return true
		}
	}
	return false
}

func invAllowed(t invTransition, s InvStatus) bool {
	for _, f := range t.from {
		if f == s {
			return true
		}
	}
	return false
}

// errLostRace means another runner or request moved the row first.
var errLostRace = errors.New("billing: the row changed under this step")
