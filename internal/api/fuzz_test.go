package api

import (
	"testing"

	"github.com/payd/payd/internal/errs"
)

// FuzzDecodeStrict feeds arbitrary bytes to the strict JSON decoder: it must
// never panic, and every failure must be a 400 with a code.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{"currency":"DJF","amount_minor":5}`, `{"a":1}`, `{`, `[]`, `{"amount_minor":1e400}`,
		`{"metadata":{"k":"v"}}`, `{"currency":"DJF"}{}`, "\xff\xfe", `{"amount_minor":-9223372036854775809}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v struct {
			Currency    string            `json:"currency"`
			AmountMinor *int64            `json:"amount_minor"`
			Metadata    map[string]string `json:"metadata"`
		}
		err := decodeStrict(data, &v)
		if err == nil {
			return
		}
		e := errs.As(err)
		if e == nil || e.Kind != errs.KindInvalid || e.Code == "" {
			t.Fatalf("decode error is not a 400 with a code: %v", err)
		}
	})
}
