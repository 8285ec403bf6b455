// Package reports is the merchant's view of its money after the fact:
// balance transactions (every movement of its available balance, with the
// balance right after it) and the daily settlement report per currency,
// provider and outlet.
//
// Both are read models over the append-only ledger and add no table that a
// posting would have to update: a balance transaction is one ledger entry on
// a merchant's available account, so the sum of a merchant's balance
// transactions in a currency is its available balance by construction, and
// nothing here serialises the writers that post.
package reports

import (
	"context"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/payments"
	"github.com/payd/payd/internal/store"
)

// Origins looks up where payment intents were taken (payments.Service.Origins).
type Origins interface {
	Origins(ctx context.Context, p auth.Principal, ids []string) (map[string]payments.Origin, error)
}

// RefundIntents maps refund ids (re_...) to the ids of the payment intents
// they refund; unknown ids are absent from the map.
type RefundIntents func(ctx context.Context, p auth.Principal, refundIDs []string) (map[string]string, error)

// Config is what the service needs.
type Config struct {
	DB       *store.DB
	Payments Origins
	// Refunds resolves refunds to their intents for the settlement report
	// (refunds.Service.IntentsOf).
	Refunds RefundIntents
}

// Service answers balance transaction lists and settlement reports.
type Service struct {
	db       *store.DB
	payments Origins
	refunds  RefundIntents
}

// NewService builds the service.
func NewService(cfg Config) *Service {
	return &Service{db: cfg.DB, payments: cfg.Payments, refunds: cfg.Refunds}
}

// inChunk bounds one IN (...) list.
const inChunk = 500
