package card

import "strconv"

// Brand is a card network, as shown in payment_method_details.
type Brand string

// The brands payd recognises.
const (
	BrandVisa       Brand = "visa"
	BrandMastercard Brand = "mastercard"
	BrandAmex       Brand = "amex"
	BrandDiscover   Brand = "discover"
	BrandUnionPay   Brand = "unionpay"
	BrandJCB        Brand = "jcb"
	BrandUnknown    Brand = "unknown"
)

// brandRanges lists issuer identification number ranges by prefix length: a
// PAN belongs to a brand when its first len(lo) digits lie in [lo, hi]. Earlier
// entries win.
var brandRanges = []struct {
	lo, hi string
	brand  Brand
}{
	{"34", "34", BrandAmex},
	{"37", "37", BrandAmex},
	{"3528", "3589", BrandJCB},
	{"4", "4", BrandVisa},
	{"51", "55", BrandMastercard},
	{"2221", "2720", BrandMastercard}, // the 2-series BINs
	{"6011", "6011", BrandDiscover},
	{"644", "649", BrandDiscover},
	{"65", "65", BrandDiscover},
	{"62", "62", BrandUnionPay},
	{"81", "81", BrandUnionPay},
}

// BrandOf detects the brand from the PAN's leading digits, or BrandUnknown.
func BrandOf(pan string) Brand {
	if !allDigits(pan) {
		return BrandUnknown
	}
	for _, r := range brandRanges {
		n := len(r.lo)
		if len(pan) < n {
			continue
		}
		p, _ := strconv.Atoi(pan[:n])
		lo, _ := strconv.Atoi(r.lo)
		hi, _ := strconv.Atoi(r.hi)
		if p >= lo && p <= hi {
			return r.brand
		}
	}
	return BrandUnknown
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
