package api

import (
	"encoding/json"
	"testing"

	"github.com/payd/payd/internal/errs"
)

// FuzzDecodeStrict feeds arbitrary bytes to the strict JSON decoder: it must
// never panic, every failure must be a 400 with a code, and a well-formed body
// gets the answer encoding/json alone gives over the whole body.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{`{"currency":"DJF","amount_minor":5}`, `{"a":1}`, `{`, `[]`, `{"amount_minor":1e400}`,
		`{"metadata":{"k":"v"}}`, `{"currency":"DJF"}{}`, "\xff\xfe", `{"amount_minor":-9223372036854775809}`, `null`,
		`{"Currency":"DJF","colour":1}`, `{"amount_minor":"1","colour":1}`, `{"reference":"r","secret":"s","-":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v strictParams
		err := decodeStrict(data, &v)
		if json.Valid(data) {
			var w strictParams
			if got, want := outcome(err), outcome(decodeWhole(data, &w)); got != want {
				t.Fatalf("%q: got %s, encoding/json alone %s", data, got, want)
			}
		}
		if err == nil {
			return
		}
		e := errs.As(err)
		if e == nil || e.Kind != errs.KindInvalid || e.Code == "" {
			t.Fatalf("decode error is not a 400 with a code: %v", err)
		}
	})
}
