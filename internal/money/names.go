package money

import "github.com/payd/payd/internal/errs"

// OneAmount picks the amount of a request that accepts it under two names:
// "amount" where the established request field has it, and "amount_minor", the name payd uses
// for minor units everywhere else. Giving both is a 400 naming amount_minor,
// even when they agree, so a request never carries two readings of one
// value. It returns the value given (nil when neither) and its field name
// for later errors ("amount" when neither).
func OneAmount(amount, amountMinor *int64) (*int64, string, error) {
	switch {
	case amount != nil && amountMinor != nil:
		return nil, "amount_minor", errs.Invalid("amount_minor", "parameter_invalid", "give amount or amount_minor, not both (both are minor units)")
	case amountMinor != nil:
		return amountMinor, "amount_minor", nil
	}
	return amount, "amount", nil
}
