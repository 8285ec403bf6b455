package money

import gomoney "github.com/Rhymond/go-money"

// Numeric returns the ISO 4217 numeric code of an alphabetic currency code
// ("DJF" → "262"), as EMV chip data carries it (tag 5F2A).
func Numeric(code string) (string, error) {
	if _, err := Exponent(code); err != nil {
		return "", err
	}
	c := gomoney.GetCurrency(code)
	if c == nil || len(c.NumericCode) != 3 {
		return "", ErrUnknownCurrency
	}
	return c.NumericCode, nil
}
