package providers

// PaymentChecker is implemented by adapters that refuse some payments
// before anything is recorded (a live rail that needs a field the sandbox
// does without, e.g. wallet_d direct's customer number). CheckPayment
// returns a 400-kind error naming the field.
type PaymentChecker interface {
	CheckPayment(p Payment) error
}

// AuthorizationHolder is implemented by adapters whose card payments can be
// authorised now and captured later (capture_method manual): their success
// on such a payment is an authorisation that payd holds at
// requires_capture, and the capture or release is recorded by payd. An
// adapter without it refuses manual capture (400 capture_method).
type AuthorizationHolder interface {
	HoldsAuthorizations() bool
}

// HoldsAuthorizations reports whether a may take manual-capture payments.
func HoldsAuthorizations(a PaymentAdapter) bool {
	h, ok := a.(AuthorizationHolder)
	return ok && h.HoldsAuthorizations()
}
