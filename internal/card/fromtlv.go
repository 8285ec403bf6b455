package card

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/terminals/tlv"
)

// FromTLV reads the card from a decrypted chip read: the PAN and expiry from
// tag 57 (track 2 equivalent) or from 5A and 5F24, and the application
// cryptogram from 9F26, which is required. Other EMV tags are accepted and,
// apart from 9F02, 5F2A and 9F39, ignored; the payload's zero padding is skipped.
func FromTLV(data []byte) (Read, error) {
	objects, err := tlv.Parse(data)
	if err != nil {
		return Read{}, fmt.Errorf("%w: %w", ErrMalformedTLV, err)
	}
	c := &cardData{}

	track2, hasTrack2 := objects.Find(TagTrack2Equivalent)
	panObj, hasPAN := objects.Find(TagPAN)
	expObj, hasExpiry := objects.Find(TagExpiryDate)
	switch {
	case hasTrack2:
		pan, exp, err := parseTrack2(track2.Value)
		if err != nil {
			return Read{}, err
		}
		c.pan, c.expiry = pan, exp
		c.track2 = append([]byte(nil), track2.Value...)
		if hasPAN {
			chipPAN, err := parsePAN(panObj.Value)
			if err != nil {
				return Read{}, err
			}
			if chipPAN != pan {
				return Read{}, fmt.Errorf("%w: PAN in 57 differs from 5A", ErrInconsistentRead)
			}
		}
		if hasExpiry {
			chipExp, err := parseExpiryDate(expObj.Value)
			if err != nil {
				return Read{}, err
			}
			if chipExp != exp {
				return Read{}, fmt.Errorf("%w: expiry in 57 differs from 5F24", ErrInconsistentRead)
			}
		}
	case hasPAN:
		if c.pan, err = parsePAN(panObj.Value); err != nil {
			return Read{}, err
		}
		if !hasExpiry {
			return Read{}, ErrMissingExpiry
		}
		if c.expiry, err = parseExpiryDate(expObj.Value); err != nil {
			return Read{}, err
		}
	default:
		return Read{}, ErrMissingPAN
	}
	if !validPAN(c.pan) {
		return Read{}, fmt.Errorf("%w: %d digits or failed Luhn check", ErrInvalidPAN, len(c.pan))
	}

	ac, ok := objects.Find(TagApplicationCryptogram)
	if !ok {
		return Read{}, ErrMissingCryptogram
	}
	if len(ac.Value) != cryptogramLength {
		return Read{}, fmt.Errorf("%w: %d bytes, want %d", ErrInvalidCryptogram, len(ac.Value), cryptogramLength)
	}
	c.cryptogram = append([]byte(nil), ac.Value...)

	if o, ok := objects.Find(TagAmountAuthorised); ok && len(o.Value) == amountAuthorisedLength {
		if s, ok := bcdDigits(o.Value); ok {
			c.amountMinor, _ = strconv.ParseInt(s, 10, 64)
			c.hasAmount = true
		}
	}
	if o, ok := objects.Find(TagCurrencyCode); ok && len(o.Value) == currencyCodeLength {
		if s, ok := bcdDigits(o.Value); ok && s[0] == '0' {
			c.currencyCode = s[1:]
		}
	}
	mode := EntryModeChip
	if o, ok := objects.Find(TagPOSEntryMode); ok && bytes.Equal(o.Value, []byte{posEntryModeContactless}) {
		mode = EntryModeContactless
	}
	return Read{brand: BrandOf(c.pan), last4: c.pan[len(c.pan)-4:], entryMode: mode, card: func() *cardData { return c }}, nil
}

// parseTrack2 reads the PAN and expiry from a track 2 equivalent: PAN,
// separator D, YYMM, service code, discretionary data, F padding to a whole byte.
func parseTrack2(v []byte) (string, Expiry, error) {
	if len(v) == 0 || len(v) > 19 {
		return "", Expiry{}, fmt.Errorf("%w: %d bytes, want 1 to 19", ErrInvalidTrack2, len(v))
	}
	s := strings.ToUpper(hex.EncodeToString(v))
	s = strings.TrimRight(s, "F")
	pan, rest, ok := strings.Cut(s, "D")
	if !ok {
		return "", Expiry{}, fmt.Errorf("%w: no separator", ErrInvalidTrack2)
	}
	if !allDigits(pan) || len(pan) < minPANLength || len(pan) > maxPANLength {
		return "", Expiry{}, fmt.Errorf("%w: PAN of %d characters", ErrInvalidTrack2, len(pan))
	}
	if len(rest) < 7 || !allDigits(rest) {
		return "", Expiry{}, fmt.Errorf("%w: expiry, service code or discretionary data malformed", ErrInvalidTrack2)
	}
	yy, _ := strconv.Atoi(rest[0:2])
	mm, _ := strconv.Atoi(rest[2:4])
	exp, err := newExpiry(yy, mm)
	if err != nil {
		return "", Expiry{}, fmt.Errorf("%w: %w", ErrInvalidTrack2, err)
	}
	return pan, exp, nil
}

// parsePAN reads a compressed-numeric PAN (tag 5A), padded with F to a whole byte.
func parsePAN(v []byte) (string, error) {
	s := strings.ToUpper(hex.EncodeToString(v))
	s = strings.TrimRight(s, "F")
	if !allDigits(s) || len(s) < minPANLength || len(s) > maxPANLength {
		return "", fmt.Errorf("%w: 5A holds %d characters", ErrInvalidPAN, len(s))
	}
	return s, nil
}

// parseExpiryDate reads an n6 YYMMDD date (tag 5F24).
func parseExpiryDate(v []byte) (Expiry, error) {
	s, ok := bcdDigits(v)
	if !ok || len(s) != 6 {
		return Expiry{}, fmt.Errorf("%w: 5F24 is not YYMMDD", ErrInvalidExpiry)
	}
	yy, _ := strconv.Atoi(s[0:2])
	mm, _ := strconv.Atoi(s[2:4])
	return newExpiry(yy, mm)
}

// bcdDigits returns the decimal digits of a packed BCD value, or false if any nibble is not a digit.
func bcdDigits(v []byte) (string, bool) {
	s := hex.EncodeToString(v)
	return s, allDigits(s)
}
