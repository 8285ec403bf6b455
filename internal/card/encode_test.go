package card

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/payd/payd/internal/terminals/tlv"
)

var testCryptogram = []byte{0x1A, 0x2B, 0x3C, 0x4D, 0x5E, 0x6F, 0x70, 0x81}

// TestEncodeChipRead checks the exact bytes of a simulator chip read.
func TestEncodeChipRead(t *testing.T) {
	got, err := EncodeChipRead("4242424242424242", 2028, time.December, testCryptogram, 500, "262",
		WithTransactionDate(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)), WithATC(0x42))
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, "57 11 4242424242424242D28122010000000000"+
		"5A 08 4242424242424242 5F24 03 281231 9F26 08 1A2B3C4D5E6F7081 9F27 01 80 9F36 02 0042"+
		"9F02 06 000000000500 5F2A 02 0262 9A 03 261121 9C 01 00 95 05 0000000000 82 02 1980")
	if !bytes.Equal(got, want) {
		t.Errorf("EncodeChipRead =\n%X\nwant\n%X", got, want)
	}
	objects, err := tlv.Parse(got)
	if err != nil || len(objects) != 12 {
		t.Fatalf("parse: %d objects, %v", len(objects), err)
	}
}

// TestEncodeChipReadRoundTrip checks that FromTLV reads back what the simulator encodes.
func TestEncodeChipReadRoundTrip(t *testing.T) {
	tests := []struct {
		pan   string
		year  int
		month time.Month
		brand Brand
	}{
		{"4242424242424242", 2028, time.December, BrandVisa},
		{"4000000000000002", 2030, time.January, BrandVisa},
		{"5555555555554444", 2027, time.February, BrandMastercard},
		{"378282246310005", 2029, time.June, BrandAmex},
		{"6011111111111117", 2031, time.September, BrandDiscover},
		{"3566002020360505", 2026, time.November, BrandJCB},
		{"6200000000000005", 2032, time.March, BrandUnionPay},
		{"6759649826438453", 2032, time.March, BrandUnknown},
		{"4111111111111111110", 2099, time.December, BrandVisa},
	}
	for _, tt := range tests {
		t.Run(tt.pan, func(t *testing.T) {
			data, err := EncodeChipRead(tt.pan, tt.year, tt.month, testCryptogram, 123456, "840")
			if err != nil {
				t.Fatal(err)
			}
			// A device pads to the cipher block before encrypting.
			data = append(data, make([]byte, 16-len(data)%16)...)
			r, err := FromTLV(data)
			if err != nil {
				t.Fatalf("FromTLV: %v", err)
			}
			if r.PAN() != tt.pan || r.Brand() != tt.brand || r.Expiry() != (Expiry{tt.year, tt.month}) {
				t.Errorf("read back PAN %s brand %s expiry %s", r.PAN(), r.Brand(), r.Expiry())
			}
			if amt, ok := r.AmountMinor(); !ok || amt != 123456 || r.CurrencyNumeric() != "840" {
				t.Errorf("amount %d %v currency %s", amt, ok, r.CurrencyNumeric())
			}
			if !bytes.Equal(r.Cryptogram(), testCryptogram) || r.EntryMode() != EntryModeChip {
				t.Errorf("cryptogram %X mode %s", r.Cryptogram(), r.EntryMode())
			}
		})
	}
}

func TestEncodeChipReadErrors(t *testing.T) {
	tests := []struct {
		name     string
		pan      string
		year     int
		month    time.Month
		ac       []byte
		amount   int64
		currency string
	}{
		{"short PAN", "42424242424", 2028, 12, testCryptogram, 1, "262"},
		{"long PAN", "42424242424242424242", 2028, 12, testCryptogram, 1, "262"},
		{"non-digit PAN", "4242-4242-4242-4242", 2028, 12, testCryptogram, 1, "262"},
		{"two-digit year", "4242424242424242", 28, 12, testCryptogram, 1, "262"},
		{"month 13", "4242424242424242", 2028, 13, testCryptogram, 1, "262"},
		{"month 0", "4242424242424242", 2028, 0, testCryptogram, 1, "262"},
		{"short cryptogram", "4242424242424242", 2028, 12, testCryptogram[:7], 1, "262"},
		{"negative amount", "4242424242424242", 2028, 12, testCryptogram, -1, "262"},
		{"amount over 12 digits", "4242424242424242", 2028, 12, testCryptogram, 1_000_000_000_000, "262"},
		{"alphabetic currency", "4242424242424242", 2028, 12, testCryptogram, 1, "DJF"},
		{"4-digit currency", "4242424242424242", 2028, 12, testCryptogram, 1, "0262"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeChipRead(tt.pan, tt.year, tt.month, tt.ac, tt.amount, tt.currency)
			if !errors.Is(err, ErrInvalidChipData) {
				t.Fatalf("error = %v, want ErrInvalidChipData", err)
			}
			if bytes.Contains([]byte(err.Error()), []byte("42424242")) {
				t.Errorf("error contains the PAN: %v", err)
			}
		})
	}
}
