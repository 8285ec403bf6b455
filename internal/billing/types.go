// Package billing owns customers, subscriptions, invoices and test clocks:
// their types, the state machines of subscriptions and invoices, the
// service, its SQL, and the billing clock that opens each period's invoice
// and collects it through payment intents (internal/payments).
//
// Every billing step is written in one transaction with its events: a
// period's invoice with the subscription's move to the next period, a
// payment's outcome (through payments' status hook) with the invoice's.
// Period boundaries come from period.go, a small pure calculator.
package billing

import "time"

// DefaultPayment is how a customer pays by default: a rail and, for the
// rails that need one, the wallet or phone number. Metadata is passed to
// the payment intent (auth_mode, wallet_a_mode, wallet_d_mode, ...), so it
// chooses the flow exactly as on POST /v1/payment_intents.
type DefaultPayment struct {
	Provider       string            `json:"provider"`
	CustomerMSISDN *string           `json:"customer_msisdn"`
	Metadata       map[string]string `json:"metadata"`
}

// Customer is the customer object.
type Customer struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"` // "customer"
	Name           string            `json:"name"`
	Email          *string           `json:"email"`
	Phone          *string           `json:"phone"`
	Metadata       map[string]string `json:"metadata"`
	DefaultPayment *DefaultPayment   `json:"default_payment"`
	TestClock      *string           `json:"test_clock"`
	Livemode       bool              `json:"livemode"`
	CreatedAt      time.Time         `json:"created_at"`
	MerchantID     string            `json:"-"`
}

// Deleted is the answer to DELETE /v1/customers/{id}.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// ClockStatus is a test clock's state.
type ClockStatus string

// A test clock is ready, or advancing while its due steps run.
const (
	ClockReady     ClockStatus = "ready"
	ClockAdvancing ClockStatus = "advancing"
)

// TestClock is the test_clock object: a frozen time that the billing of
// its customers follows instead of the real one.
type TestClock struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"` // "test_clock"
	Name       *string     `json:"name"`
	FrozenTime int64       `json:"frozen_time"` // unix seconds
	Status     ClockStatus `json:"status"`
	Livemode   bool        `json:"livemode"`
	CreatedAt  time.Time   `json:"created_at"`
	MerchantID string      `json:"-"`
	version    int64
}

// SubStatus is a subscription's state.
type SubStatus string

// The states of a subscription. Canceled is terminal.
const (
	Trialing SubStatus = "trialing"
	Active   SubStatus = "active"
	PastDue  SubStatus = "past_due"
	Unpaid   SubStatus = "unpaid"
	Canceled SubStatus = "canceled"
)

// Collection methods of subscriptions and invoices.
const (
	ChargeAutomatically = "charge_automatically"
	SendInvoice         = "send_invoice"
)

// Item is one priced line of a subscription: unit amount × quantity each
// period.
type Item struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	AmountMinor int64  `json:"amount_minor"` // per unit
	Quantity    int64  `json:"quantity"`
}

// Subscription is the subscription object.
type Subscription struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"` // "subscription"
	Customer           string            `json:"customer"`
	Status             SubStatus         `json:"status"`
	Currency           string            `json:"currency"`
	Interval           Interval          `json:"interval"`
	IntervalCount      int               `json:"interval_count"`
	Items              []Item            `json:"items"`
	CollectionMethod   string            `json:"collection_method"`
	DaysUntilDue       *int              `json:"days_until_due"`
	Metadata           map[string]string `json:"metadata"`
	BillingCycleAnchor time.Time         `json:"billing_cycle_anchor"`
	TrialEnd           *time.Time        `json:"trial_end"`
	CurrentPeriodStart time.Time         `json:"current_period_start"`
	CurrentPeriodEnd   time.Time         `json:"current_period_end"`
	CancelAtPeriodEnd  bool              `json:"cancel_at_period_end"`
	CanceledAt         *time.Time        `json:"canceled_at"`
	EndedAt            *time.Time        `json:"ended_at"`
	LatestInvoice      *string           `json:"latest_invoice"`
	TestClock          *string           `json:"test_clock"`
	Livemode           bool              `json:"livemode"`
	StartDate          time.Time         `json:"start_date"`
	CreatedAt          time.Time         `json:"created_at"`
	MerchantID         string            `json:"-"`

	periodNumber int    // the index of the period that starts at CurrentPeriodEnd
	pending      []Line // proration lines waiting for the next invoice
	version      int64
}

// InvStatus is an invoice's state.
type InvStatus string

// The states of an invoice. Paid and void are terminal.
const (
	Draft         InvStatus = "draft"
	Open          InvStatus = "open"
	Paid          InvStatus = "paid"
	Void          InvStatus = "void"
	Uncollectible InvStatus = "uncollectible"
)

// Line is one line of an invoice. AmountMinor is the line's total
// (UnitAmountMinor × Quantity); a proration credit is negative.
type Line struct {
	Description     string     `json:"description"`
	UnitAmountMinor int64      `json:"unit_amount_minor"`
	Quantity        int64      `json:"quantity"`
	AmountMinor     int64      `json:"amount_minor"`
	PeriodStart     *time.Time `json:"period_start"`
	PeriodEnd       *time.Time `json:"period_end"`
	Proration       bool       `json:"proration"`
}

// Invoice is the invoice object.
type Invoice struct {
	ID                 string     `json:"id"`
	Object             string     `json:"object"` // "invoice"
	Number             *string    `json:"number"` // per merchant and mode: INV-000001, ... (numbering.go)
	Customer           string     `json:"customer"`
	Subscription       *string    `json:"subscription"`
	Status             InvStatus  `json:"status"`
	Currency           string     `json:"currency"`
	CollectionMethod   string     `json:"collection_method"`
	BillingReason      string     `json:"billing_reason"`
	Lines              []Line     `json:"lines"`
	AmountDue          int64      `json:"amount_due"`
	AmountPaid         int64      `json:"amount_paid"`
	AmountRemaining    int64      `json:"amount_remaining"`
	PeriodStart        *time.Time `json:"period_start"`
	PeriodEnd          *time.Time `json:"period_end"`
	DueDate            *time.Time `json:"due_date"`
	PaymentIntent      *string    `json:"payment_intent"`
	AttemptCount       int        `json:"attempt_count"`
	NextPaymentAttempt *time.Time `json:"next_payment_attempt"`
	HostedInvoiceURL   *string    `json:"hosted_invoice_url"`
	TestClock          *string    `json:"test_clock"`
	Livemode           bool       `json:"livemode"`
	CreatedAt          time.Time  `json:"created_at"`
	EffectiveAt        time.Time  `json:"effective_at"`
	FinalizedAt        *time.Time `json:"finalized_at"`
	PaidAt             *time.Time `json:"paid_at"`
	VoidedAt           *time.Time `json:"voided_at"`
	MerchantID         string     `json:"-"`

	daysUntilDue        *int
	clockCreatedAt      *time.Time // the test clock's time when it was made
	attemptDue          *time.Time
	attemptClaimedUntil *time.Time
	hostedToken         string
	version             int64
}

// Billing reasons of an invoice.
const (
	ReasonSubscriptionCreate = "subscription_create"
	ReasonSubscriptionCycle  = "subscription_cycle"
	ReasonManual             = "manual"
)
