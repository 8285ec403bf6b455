package webhooks

import (
	"encoding/json"
	"time"

	"github.com/payd/payd/internal/timestamp"
)

// Time is a timestamp that encodes as RFC 3339 UTC with second precision,
// like every payd timestamp.
type Time struct{ time.Time }

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	return json.Marshal(timestamp.Format(t.Time))
}

func timePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	return &Time{*t}
}
