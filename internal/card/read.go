package card

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// EntryMode says how the card was read, as shown in payment_method_details.
type EntryMode string

// The entry modes of a chip read.
const (
	EntryModeChip        EntryMode = "chip"
	EntryModeContactless EntryMode = "contactless"
)

// Read is the card data of one decrypted card-present read. Printing, logging
// or marshalling it shows only the brand and the last four digits.
type Read struct {
	brand     Brand
	last4     string
	entryMode EntryMode
	// The card data sits behind a function: fmt prints a Read held in another
	// struct's unexported field by reflection, without its Format method, and
	// follows pointers there (under %s, for one), but never calls a function.
	card func() *cardData
}

type cardData struct {
	pan          string
	track2       []byte
	cryptogram   []byte
	expiry       Expiry
	amountMinor  int64
	hasAmount    bool
	currencyCode string
}

// Brand returns the card's brand.
func (r Read) Brand() Brand { return r.brand }

// Last4 returns the last four digits of the PAN.
func (r Read) Last4() string { return r.last4 }

// EntryMode returns how the card was read.
func (r Read) EntryMode() EntryMode { return r.entryMode }

// PAN returns the full primary account number, for the card gateway only.
func (r Read) PAN() string {
	if r.card == nil {
		return ""
	}
	return r.card().pan
}

// Expiry returns the card's expiry month.
func (r Read) Expiry() Expiry {
	if r.card == nil {
		return Expiry{}
	}
	return r.card().expiry
}

// ExpiredAt reports whether the card has expired at t; see Expiry.ExpiredAt.
func (r Read) ExpiredAt(t time.Time) bool { return r.Expiry().ExpiredAt(t) }

// Cryptogram returns a copy of the 8-byte application cryptogram (tag 9F26).
func (r Read) Cryptogram() []byte {
	if r.card == nil {
		return nil
	}
	return append([]byte(nil), r.card().cryptogram...)
}

// Track2 returns a copy of the track 2 equivalent data (tag 57), or nil when the read had none.
func (r Read) Track2() []byte {
	if r.card == nil || r.card().track2 == nil {
		return nil
	}
	return append([]byte(nil), r.card().track2...)
}

// AmountMinor returns the amount authorised on the card (tag 9F02) in minor units, if the read carried one.
func (r Read) AmountMinor() (int64, bool) {
	if r.card == nil {
		return 0, false
	}
	return r.card().amountMinor, r.card().hasAmount
}

// CurrencyNumeric returns the ISO 4217 numeric currency code (tag 5F2A), such as "262", or "" when absent.
func (r Read) CurrencyNumeric() string {
	if r.card == nil {
		return ""
	}
	return r.card().currencyCode
}

// String returns the brand and last four digits only.
func (r Read) String() string {
	return fmt.Sprintf("card.Read{brand: %s, last4: %s}", r.brand, r.last4)
}

// GoString returns the brand and last four digits only.
func (r Read) GoString() string { return r.String() }

// Format prints String for every verb, so no verb reaches the card data.
func (r Read) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(r.String())) }

// LogValue logs the brand and last four digits only.
func (r Read) LogValue() slog.Value {
	return slog.GroupValue(slog.String("brand", string(r.brand)), slog.String("last4", r.last4))
}

// MarshalJSON encodes the brand and last four digits only.
func (r Read) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Brand Brand  `json:"brand"`
		Last4 string `json:"last4"`
	}{r.brand, r.last4})
}
