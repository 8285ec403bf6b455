package providers

// PaymentChecker is implemented by adapters that refuse some payments
// before anything is recorded (a live rail that needs a field the sandbox
// does without, e.g. wallet_d direct's customer number). CheckPayment
// returns a 400-kind error naming the field.
type PaymentChecker interface {
	CheckPayment(p Payment) error
}
