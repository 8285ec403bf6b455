package timestamp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// benchObject has the shape of a payd object: a dozen scalar fields, four
// timestamps (two of them pointers), metadata and a nested list.
type benchObject struct {
	ID, Object, Status, Currency, Provider string
	AmountMinor                            int64
	Metadata                               map[string]string
	Lines                                  []struct {
		Description string
		AmountMinor int64
		PeriodStart *time.Time
	}
	CreatedAt, UpdatedAt    time.Time
	SucceededAt, CanceledAt *time.Time
}

func newBenchObject() *benchObject {
	now := time.Now()
	o := &benchObject{ID: "po_01M8JS2E5M1MC9350YZ2GPR64C", Object: "payout", Status: "succeeded", Currency: "DJF", Provider: "wallet_b",
		AmountMinor: 700, Metadata: map[string]string{"order": "1042", "channel": "web"}, CreatedAt: now, UpdatedAt: now, SucceededAt: &now}
	o.Lines = make([]struct {
		Description string
		AmountMinor int64
		PeriodStart *time.Time
	}, 3)
	for i := range o.Lines {
		o.Lines[i].Description, o.Lines[i].AmountMinor, o.Lines[i].PeriodStart = "line", 100, &now
	}
	return o
}

// BenchmarkEncode is what WriteJSON did before: encode the object.
func BenchmarkEncode(b *testing.B) {
	o := newBenchObject()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		json.NewEncoder(&buf).Encode(o)
	}
}

// BenchmarkSecondsEncode is what WriteJSON does now: copy with whole-second
// times, then encode.
func BenchmarkSecondsEncode(b *testing.B) {
	o := newBenchObject()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		json.NewEncoder(&buf).Encode(Seconds(o))
	}
}
