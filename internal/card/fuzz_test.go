package card

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// longDigitRun finds what could be card data in an error message; errors name
// only tags, offsets and lengths.
var longDigitRun = regexp.MustCompile(`[0-9]{8,}`)

// FuzzFromTLV checks that FromTLV never panics, that its errors carry no card
// data, and that every read it accepts is consistent, redacted, and survives a
// round trip through EncodeChipRead. Seeds are in testdata/fuzz/FuzzFromTLV.
func FuzzFromTLV(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := FromTLV(data)
		if err != nil {
			if longDigitRun.MatchString(err.Error()) {
				t.Fatalf("error may carry card data: %v", err)
			}
			return
		}
		pan := r.PAN()
		if !validPAN(pan) || r.Last4() != pan[len(pan)-4:] || r.Brand() != BrandOf(pan) {
			t.Fatalf("inconsistent read: %d digits, last4 %s, brand %s", len(pan), r.Last4(), r.Brand())
		}
		if len(r.Cryptogram()) != cryptogramLength {
			t.Fatalf("cryptogram of %d bytes", len(r.Cryptogram()))
		}
		j, _ := json.Marshal(r)
		for _, out := range []string{r.String(), string(j)} {
			if strings.Contains(out, pan) {
				t.Fatalf("output reveals the PAN: %s", out)
			}
		}
		amount, _ := r.AmountMinor()
		currency := r.CurrencyNumeric()
		if currency == "" {
			currency = "999"
		}
		exp := r.Expiry()
		enc, err := EncodeChipRead(pan, exp.Year, exp.Month, r.Cryptogram(), amount, currency)
		if err != nil {
			t.Fatalf("EncodeChipRead of an accepted read: %v", err)
		}
		back, err := FromTLV(enc)
		if err != nil {
			t.Fatalf("FromTLV of the re-encoded read: %v", err)
		}
		if back.PAN() != pan || back.Expiry() != exp || !bytes.Equal(back.Cryptogram(), r.Cryptogram()) {
			t.Fatalf("round trip changed the read")
		}
	})
}
