// Package providers is the boundary between payd's business logic and the
// payment rails. Capabilities call rails only through the adapter interfaces
// declared in this package (payments.go, payouts.go); the sandbox mock
// (sandbox/) and the live HTTP adapters (live/) implement them, and the
// registry picks one by the key's mode. Business logic never names a
// sandbox or live package.
package providers

import (
	"context"
	"database/sql"
)

// A Reader reads one row where its caller's statements run. A capability
// hands a live rail's lookup its request's store.Work (DB.Within(claim)), so
// that a merchant's provider connection read while the request's unit of
// work is open is read inside it; a worker hands one of its own
// (store.NoClaim). This package names no store type: a store.Work and a
// *store.DB are Readers.
type Reader interface {
	QueryRow(ctx context.Context, query string, args ...any) *sql.Row
}

// Provider codes.
const (
	BankA   = "bank_a"
	BankB   = "bank_b"
	WalletA = "wallet_a"
	WalletB = "wallet_b"
	WalletC = "wallet_c"
	WalletD = "wallet_d"
	// CardGatewayCNP is the card-not-present gateway behind wallet_a's card
	// mode; sandbox scenarios name it.
	CardGatewayCNP = "card_gateway_cnp"
)

// All lists every provider code that takes money (payments or payouts).
var All = []string{BankA, BankB, WalletA, WalletB, WalletC, WalletD}

// PaymentProviders are the codes a payment intent may use (wallet_b is a
// payout rail only).
var PaymentProviders = []string{BankA, BankB, WalletA, WalletC, WalletD}

// PayoutProviders are the rails payouts go through.
var PayoutProviders = []string{WalletA, WalletB, BankA, BankB, WalletC, WalletD}

// Known reports whether code is one of list.
func Known(code string, list []string) bool {
	for _, c := range list {
		if c == code {
			return true
		}
	}
	return false
}

// Failure is a provider's refusal, with payd's stable code (insufficient_funds, card_declined, wallet_locked,
// account_not_found, velocity_limit_exceeded, provider_timeout, ...).
type Failure struct {
	Code        string
	Message     string
	DeclineCode string // cards only, e.g. generic_decline
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// displayNames are the rails' names as customers see them on payment pages
// (the codes are for integrators).
var displayNames = map[string]string{
	BankA: "Bank A", BankB: "Bank B", WalletA: "Wallet A", WalletB: "Wallet B", WalletC: "Wallet C", WalletD: "Wallet D",
}

// DisplayName is the name a customer is shown for a rail; an unknown code
// is returned as given.
func DisplayName(code string) string {
	if n, ok := displayNames[code]; ok {
		return n
	}
	return code
}
