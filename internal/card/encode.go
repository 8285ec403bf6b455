package card

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/payd/payd/internal/terminals/tlv"
)

// ChipReadOption adjusts a chip read built by EncodeChipRead.
type ChipReadOption func(*chipRead)

type chipRead struct {
	date        time.Time
	atc         uint16
	serviceCode string
}

// WithTransactionDate sets the transaction date (tag 9A); the default is today in UTC.
func WithTransactionDate(t time.Time) ChipReadOption {
	return func(c *chipRead) { c.date = t }
}

// WithATC sets the application transaction counter (tag 9F36); the default is 1.
func WithATC(atc uint16) ChipReadOption {
	return func(c *chipRead) { c.atc = atc }
}

// EncodeChipRead builds the BER-TLV a chip terminal produces for a purchase:
// tags 57, 5A, 5F24, 9F26, 9F27, 9F36, 9F02, 5F2A, 9A, 9C, 95 and 82. The
// cryptogram must be 8 bytes, the currency a 3-digit ISO 4217 numeric code.
// The result is not padded; the DUKPT encryption pads it.
func EncodeChipRead(pan string, expiryYear int, expiryMonth time.Month, cryptogram []byte,
	amountMinor int64, currencyNumeric string, opts ...ChipReadOption) ([]byte, error) {
	c := chipRead{date: time.Now().UTC(), atc: 1, serviceCode: "201"}
	for _, opt := range opts {
		opt(&c)
	}
	if !allDigits(pan) || len(pan) < minPANLength || len(pan) > maxPANLength {
		return nil, fmt.Errorf("%w: PAN must be %d to %d digits", ErrInvalidChipData, minPANLength, maxPANLength)
	}
	if expiryYear < 2000 || expiryYear > 2099 || expiryMonth < time.January || expiryMonth > time.December {
		return nil, fmt.Errorf("%w: expiry must be a month of 2000 to 2099", ErrInvalidChipData)
	}
	if len(cryptogram) != cryptogramLength {
		return nil, fmt.Errorf("%w: cryptogram is %d bytes, want %d", ErrInvalidChipData, len(cryptogram), cryptogramLength)
	}
	if amountMinor < 0 || amountMinor > 999_999_999_999 {
		return nil, fmt.Errorf("%w: amount must fit 12 digits", ErrInvalidChipData)
	}
	if len(currencyNumeric) != 3 || !allDigits(currencyNumeric) {
		return nil, fmt.Errorf("%w: currency must be a 3-digit ISO 4217 numeric code", ErrInvalidChipData)
	}
	exp := Expiry{Year: expiryYear, Month: expiryMonth}
	yymm := fmt.Sprintf("%02d%02d", expiryYear%100, int(expiryMonth))
	atc := make([]byte, 2)
	binary.BigEndian.PutUint16(atc, c.atc)

	objects := tlv.List{
		tlv.Primitive(TagTrack2Equivalent, packNibbles(pan+"D"+yymm+c.serviceCode+"0000000000")),
		tlv.Primitive(TagPAN, packNibbles(pan)),
		tlv.Primitive(TagExpiryDate, packNibbles(fmt.Sprintf("%s%02d", yymm, exp.lastDay()))),
		tlv.Primitive(TagApplicationCryptogram, append([]byte(nil), cryptogram...)),
		tlv.Primitive(TagCryptogramInfo, []byte{0x80}), // ARQC: the card asks to go online
		tlv.Primitive(TagATC, atc),
		tlv.Primitive(TagAmountAuthorised, packNibbles(fmt.Sprintf("%012d", amountMinor))),
		tlv.Primitive(TagCurrencyCode, packNibbles("0"+currencyNumeric)),
		tlv.Primitive(TagTransactionDate, packNibbles(c.date.Format("060102"))),
		tlv.Primitive(TagTransactionType, []byte{0x00}), // purchase
		tlv.Primitive(TagTVR, make([]byte, 5)),          // no terminal verification failures
		tlv.Primitive(TagAIP, []byte{0x19, 0x80}),       // CDA, cardholder verification, terminal risk management
	}
	return tlv.Encode(objects)
}

// packNibbles packs hex digits two to a byte, padding an odd count with F.
func packNibbles(s string) []byte {
	if len(s)%2 == 1 {
		s += "F"
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err) // unreachable: callers pass digits and D only
	}
	return b
}
