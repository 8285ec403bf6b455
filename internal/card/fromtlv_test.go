package card

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

const (
	visaTrack2 = "57 13 4242424242424242D28122011234567890000F"
	visaPAN    = "5A 08 4242424242424242"
	visaExpiry = "5F24 03 281231"
	visaAC     = "9F26 08 1A2B3C4D5E6F7081"
)

func TestFromTLV(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		pan       string
		brand     Brand
		expiry    Expiry
		track2    bool
		entryMode EntryMode
	}{
		{"track 2 only", visaTrack2 + visaAC, "4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeChip},
		{"5A and 5F24", visaPAN + visaExpiry + visaAC, "4242424242424242", BrandVisa, Expiry{2028, time.December}, false, EntryModeChip},
		{"all three agree", visaTrack2 + visaPAN + visaExpiry + visaAC, "4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeChip},
		{"zero padded to the block", visaTrack2 + visaAC + "00 00 00 00 00 00 00", "4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeChip},
		{"inside a response template", "77 24" + visaTrack2 + visaAC + "9F27 01 80", "4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeChip},
		{"odd-length PAN F-padded", "5A 08 378282246310005F 5F24 03 270630" + visaAC, "378282246310005", BrandAmex, Expiry{2027, time.June}, false, EntryModeChip},
		{"track 2 with odd PAN", "57 0F 378282246310005D2706201000000F" + visaAC, "378282246310005", BrandAmex, Expiry{2027, time.June}, true, EntryModeChip},
		{"other chip tags accepted", visaTrack2 + visaAC +
			"9F27 01 80 9F10 07 06010A03A00000 9F36 02 0042 95 05 0000008000 9A 03 261121 9C 01 00" +
			"9F02 06 000000000500 5F2A 02 0262 82 02 1980 84 07 A0000000031010 9F1A 02 0262" +
			"9F33 03 E0F8C8 9F34 03 420300 9F37 04 9BADBCAB DF8101 01 00",
			"4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeChip},
		{"contactless entry mode", visaTrack2 + visaAC + "9F39 01 07", "4242424242424242", BrandVisa, Expiry{2028, time.December}, true, EntryModeContactless},
		{"mastercard 2-series", "57 13 2223003122003222D25122010000000000000F" + visaAC, "2223003122003222", BrandMastercard, Expiry{2025, time.December}, true, EntryModeChip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := FromTLV(unhex(t, tt.in))
			if err != nil {
				t.Fatalf("FromTLV: %v", err)
			}
			if r.PAN() != tt.pan || r.Brand() != tt.brand || r.Expiry() != tt.expiry || r.EntryMode() != tt.entryMode {
				t.Errorf("got PAN %s brand %s expiry %s mode %s", r.PAN(), r.Brand(), r.Expiry(), r.EntryMode())
			}
			if r.Last4() != tt.pan[len(tt.pan)-4:] {
				t.Errorf("Last4() = %s", r.Last4())
			}
			if !bytes.Equal(r.Cryptogram(), unhex(t, "1A2B3C4D5E6F7081")) {
				t.Errorf("Cryptogram() = %X", r.Cryptogram())
			}
			if (r.Track2() != nil) != tt.track2 {
				t.Errorf("Track2() = %X, want present %v", r.Track2(), tt.track2)
			}
		})
	}
}

func TestFromTLVAmountAndCurrency(t *testing.T) {
	r, err := FromTLV(unhex(t, visaTrack2+visaAC+"9F02 06 000000012345 5F2A 02 0262"))
	if err != nil {
		t.Fatal(err)
	}
	if amt, ok := r.AmountMinor(); !ok || amt != 12345 || r.CurrencyNumeric() != "262" {
		t.Errorf("amount %d %v, currency %q", amt, ok, r.CurrencyNumeric())
	}
	r, err = FromTLV(unhex(t, visaTrack2+visaAC+"9F02 06 00000001234A 5F2A 01 02"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.AmountMinor(); ok || r.CurrencyNumeric() != "" {
		t.Errorf("malformed amount or currency should be absent, got %q", r.CurrencyNumeric())
	}
}

func TestFromTLVErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrMissingPAN},
		{"only padding", "00 00 00 00", ErrMissingPAN},
		{"malformed TLV", "57 13 4242", ErrMalformedTLV},
		{"no cryptogram", visaTrack2, ErrMissingCryptogram},
		{"short cryptogram", visaTrack2 + "9F26 07 1A2B3C4D5E6F70", ErrInvalidCryptogram},
		{"long cryptogram", visaTrack2 + "9F26 09 1A2B3C4D5E6F708100", ErrInvalidCryptogram},
		{"no PAN", visaExpiry + visaAC, ErrMissingPAN},
		{"5A without 5F24", visaPAN + visaAC, ErrMissingExpiry},
		{"Luhn failure", "5A 08 4242424242424241" + visaExpiry + visaAC, ErrInvalidPAN},
		{"Luhn failure in track 2", "57 13 4242424242424241D28122011234567890000F" + visaAC, ErrInvalidPAN},
		{"short PAN", "5A 05 4242424242" + visaExpiry + visaAC, ErrInvalidPAN},
		{"non-digit PAN", "5A 08 42424242424242A2" + visaExpiry + visaAC, ErrInvalidPAN},
		{"track 2 without separator", "57 08 4242424242424242" + visaAC, ErrInvalidTrack2},
		{"track 2 month 13", "57 13 4242424242424242D28132011234567890000F" + visaAC, ErrInvalidTrack2},
		{"track 2 month 00", "57 13 4242424242424242D28002011234567890000F" + visaAC, ErrInvalidTrack2},
		{"track 2 cut short", "57 0B 4242424242424242D2812F" + visaAC, ErrInvalidTrack2},
		{"track 2 too long", "57 14 4242424242424242D28122011234567890000000" + visaAC, ErrInvalidTrack2},
		{"track 2 empty", "57 00" + visaAC, ErrInvalidTrack2},
		{"5F24 not BCD", visaPAN + "5F24 03 28123A" + visaAC, ErrInvalidExpiry},
		{"5F24 short", visaPAN + "5F24 02 2812" + visaAC, ErrInvalidExpiry},
		{"5F24 month 13", visaPAN + "5F24 03 281331" + visaAC, ErrInvalidExpiry},
		{"57 and 5A disagree", visaTrack2 + "5A 08 4000000000000002" + visaAC, ErrInconsistentRead},
		{"57 and 5F24 disagree", visaTrack2 + "5F24 03 291231" + visaAC, ErrInconsistentRead},
		{"57 with bad 5A", visaTrack2 + "5A 02 4242" + visaAC, ErrInvalidPAN},
		{"57 with bad 5F24", visaTrack2 + "5F24 01 28" + visaAC, ErrInvalidExpiry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromTLV(unhex(t, tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("FromTLV error = %v, want %v", err, tt.want)
			}
			for _, secret := range []string{"4242424242", "4000000000", "1A2B3C4D", "1a2b3c4d"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains card data", err)
				}
			}
		})
	}
}
