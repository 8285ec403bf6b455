package payments

import (
	"context"
	"encoding/json"

	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/store"
)

// Origin is where a payment was taken: its provider and, for a card-present
// payment, the outlet of the terminal that took it (empty otherwise).
type Origin struct {
	Provider string
	OutletID string
}

// originChunk bounds one IN (...) list.
const originChunk = 500

// Origins returns the origin of each of the principal's intents in ids;
// ids of other merchants or modes, or of no intent, are absent from the map.
// Settlement reports use it to split a day's payments by provider and outlet.
func (s *Service) Origins(ctx context.Context, p auth.Principal, ids []string) (map[string]Origin, error) {
	out := make(map[string]Origin, len(ids))
	for start := 0; start < len(ids); start += originChunk {
		part := ids[start:min(start+originChunk, len(ids))]
		ph, in := store.PaddedIn(part)
		rows, err := s.db.Query(ctx, `SELECT id, provider, flow, metadata FROM payment_intents
			WHERE merchant_id = ? AND livemode = ? AND id IN (`+ph+`)`,
			append([]any{p.MerchantID, p.Livemode}, in...)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, provider, flow, metadata string
			if err := rows.Scan(&id, &provider, &flow, &metadata); err != nil {
				rows.Close()
				return nil, err
			}
			o := Origin{Provider: provider}
			if flow == string(flowCardPresent) {
				// The terminal's outlet is recorded in the intent's metadata
				// when the payment is taken (RecordCardPresent).
				var md map[string]string
				if json.Unmarshal([]byte(metadata), &md) == nil {
					o.OutletID = md["outlet_id"]
				}
			}
			out[id] = o
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
