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
	"database/sql"

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
	// Refunds resolves refunds to their intents for the settlement report;
	// nil reads the refunds table (RefundIntentsFromTable).
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
	s := &Service{db: cfg.DB, payments: cfg.Payments, refunds: cfg.Refunds}
	if s.refunds == nil {
		s.refunds = RefundIntentsFromTable(cfg.DB)
	}
	return s
}

// RefundIntentsFromTable reads refunds(id, payment_intent). The refunds
// capability owns that table; this is the read the report needs until it
// exports one of its own.
func RefundIntentsFromTable(db *store.DB) RefundIntents {
	return func(ctx context.Context, _ auth.Principal, refundIDs []string) (map[string]string, error) {
		out := make(map[string]string, len(refundIDs))
		for start := 0; start < len(refundIDs); start += inChunk {
			part := refundIDs[start:min(start+inChunk, len(refundIDs))]
			rows, err := db.Query(ctx, "SELECT id, payment_intent FROM refunds WHERE id IN ("+store.Placeholders(len(part))+")", store.Args(part)...)
			if err != nil {
				return nil, err
			}
			for rows.Next() {
				var id string
				var pi sql.NullString
				if err := rows.Scan(&id, &pi); err != nil {
					rows.Close()
					return nil, err
				}
				out[id] = pi.String
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// inChunk bounds one IN (...) list.
const inChunk = 500
