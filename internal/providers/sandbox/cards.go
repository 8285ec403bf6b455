package sandbox

import (
	"encoding/json"
	"strings"

	"github.com/payd/payd/internal/card"
)

// The sandbox test cards. Any other number that passes
// the Luhn check succeeds too.
const (
	CardSuccess  = "4242424242424242"
	CardDeclined = "4000000000000002"
	Card3DS      = "4000000000003220"
	// CardDisputed succeeds, and the payment is disputed (fraudulent)
	// PushDelay later.
	CardDisputed = "4000000000000259"
)

// NormalizeCardNumber drops the spaces and dashes people type between
// groups; it returns "" when anything else than digits remains or the
// length is not 12 to 19 digits.
func NormalizeCardNumber(s string) string {
	s = strings.NewReplacer(" ", "", "-", "").Replace(s)
	if len(s) < 12 || len(s) > 19 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return ""
		}
	}
	return s
}

// cardDetails is the payment_method_details of a card payment: brand and
// last four digits only, never the number.
func cardDetails(number string) json.RawMessage {
	if len(number) < 4 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "card", "card": map[string]string{"brand": string(card.BrandOf(number)), "last4": number[len(number)-4:]}})
	return b
}
