package portal_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/payd/payd/internal/app/apptest"
	"github.com/payd/payd/internal/money"
	"github.com/payd/payd/internal/portal"
)

// The portal's amount format: the currency code, a space, then the amount
// in major units with a comma every three digits and the currency's minor
// digits after a point (DJF 4,200; ETB 42.00; USD 1,234.56; −DJF is
// written DJF −4,200).
var (
	amountRE = regexp.MustCompile(`\b([A-Z]{3}) ([−-]?[0-9][0-9,.]*)`)
	// an amount written the other way round: 4200 DJF, 42.00 ETB
	reversedRE = regexp.MustCompile(`\b[0-9][0-9,.]* (DJF|ETB|USD|EUR|KES|IQD|JPY)\b`)
)

// badAmounts returns every amount in text not in the portal's format.
func badAmounts(text string) []string {
	var bad []string
	bad = append(bad, reversedRE.FindAllString(text, -1)...)
	for _, m := range amountRE.FindAllStringSubmatch(text, -1) {
		exp, err := money.Exponent(m[1])
		if err != nil {
			continue // not a currency (an upper-case word before a number)
		}
		n := strings.TrimRight(m[2], ".,") // the sentence's own punctuation
		frac := ""
		if exp > 0 {
			frac = fmt.Sprintf(`\.[0-9]{%d}`, exp)
		}
		if !regexp.MustCompile(`^[−]?[0-9]{1,3}(,[0-9]{3})*` + frac + `$`).MatchString(n) {
			bad = append(bad, m[0])
		}
	}
	return bad
}

// TestAmountScannerFails: the scanner finds each wrong format, and passes
// the formatter's own output.
func TestAmountScannerFails(t *testing.T) {
	for _, s := range []string{"4200 DJF", "DJF 4200", "ETB 42", "ETB 4,200.5", "USD 12.3", "paid 42.00 ETB.", "DJF -4,200"} {
		if len(badAmounts("x "+s+" y")) == 0 {
			t.Errorf("%q passes the scan", s)
		}
	}
	for _, c := range []struct {
		minor    int64
		currency string
		want     string
	}{{4200, "DJF", "DJF 4,200"}, {4200, "ETB", "ETB 42.00"}, {123456, "USD", "USD 1,234.56"}, {5, "ETB", "ETB 0.05"},
		{-4200, "DJF", "DJF −4,200"}, {1234567, "IQD", "IQD 1,234.567"}, {1500, "XXZ", "XXZ 1,500 (minor units)"}} {
		got := portal.FormatMoney(c.minor, c.currency)
		if got != c.want {
			t.Errorf("FormatMoney(%d, %s) = %q, want %q", c.minor, c.currency, got, c.want)
		}
		if bad := badAmounts(got); len(bad) != 0 && c.currency != "XXZ" {
			t.Errorf("the formatter's %q fails the scan: %v", got, bad)
		}
	}
}

// TestAmountFormats: every page of a merchant with payments in DJF and USD,
// a refund, a customer billed and an invoice paid shows its amounts in the
// one format (the currency first, grouped digits, the currency's minor
// digits).
func TestAmountFormats(t *testing.T) {
	t.Parallel()
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		cus, sub, inv, pi := billedCustomer(t, e, e.SK, "Hodan Ali", "hodan@example.com", map[string]string{"crm": "A-17"})
		djf := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 1234567, "currency": "DJF", "provider": "bank_a",
			"customer_msisdn": "77123456", "description": "Deposit"})
		djfID := djf.Map(t)["id"].(string)
		if c := e.Post("/v1/payment_intents/"+djfID+"/confirm", map[string]string{"otp": "123456"}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
		if r := e.Post("/v1/refunds", map[string]any{"payment_intent": djfID, "amount_minor": 4200}); r.Status/100 != 2 {
			t.Fatalf("refund: %d %s", r.Status, r.Body)
		}
		usd := e.Post("/v1/payment_intents", map[string]any{"amount_minor": 123456, "currency": "USD", "provider": "wallet_a",
			"return_url": e.URL + "/portal/test/", "description": "Dollars", "metadata": map[string]string{"wallet_a_mode": "card"}})
		if usd.Status/100 != 2 {
			t.Fatalf("usd intent: %d %s", usd.Status, usd.Body)
		}
		usdID := usd.Map(t)["id"].(string)

		p := e.NewPortal()
		p.Login(e.Merchant.Portal.Email, e.Merchant.Portal.Password)
		pages := []string{"/portal/test/", "/portal/test/payment_intents", "/portal/test/payment_intents/" + djfID,
			"/portal/test/payment_intents/" + usdID, "/portal/test/payment_intents/" + pi, "/portal/test/customers/" + cus,
			"/portal/test/subscriptions/" + sub, "/portal/test/invoices", "/portal/test/invoices/" + inv,
			"/portal/test/balance_transactions", "/portal/test/search?q=hodan%40example.com", "/portal/test/search?q=deposit",
			"/portal/test/payouts", "/portal/test/disputes", "/portal/test/settings"}
		seen := 0
		for _, path := range pages {
			pg := p.Get(path)
			if pg.Status != 200 {
				t.Fatalf("%s: %d", path, pg.Status)
			}
			text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(pg.Body, " ")
			if bad := badAmounts(text); len(bad) > 0 {
				t.Errorf("%s shows amounts in another format: %q", path, bad)
			}
			seen += len(amountRE.FindAllString(text, -1))
		}
		p.Get("/portal/test/payment_intents/"+djfID).Contains(t, "DJF 1,234,567", "DJF 4,200")
		p.Get("/portal/test/payment_intents/"+usdID).Contains(t, "USD 1,234.56")
		if seen < 10 {
			t.Fatalf("only %d amounts on the pages: the scan saw too little to mean anything", seen)
		}
	})
}
