package payments

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/errs"
)

func TestProviderMSISDN(t *testing.T) {
	cases := []struct {
		provider, in, want string
		ok                 bool
	}{
		{"bank_a", "+25377123456", "77123456", true},
		{"bank_a", "77123456", "77123456", true},
		{"bank_a", "+253000000001", "000000001", true},
		{"bank_a", "+251911234567", "", false},
		{"bank_a", "+2537712", "", false},
		{"bank_a", "0025377123456", "", false}, // the 00 international prefix is not a local number
		{"bank_a", "77 12 34 56", "", false},
		{"bank_b", "+25377123456", "+25377123456", true},
		{"bank_b", "77123456", "77123456", true},
		{"wallet_a", "+25377123456", "+25377123456", true},
		{"wallet_c", "77123456", "", false},
		{"wallet_d", "+0911234567", "", false},
		{"wallet_d", "+251911234567", "+251911234567", true},
	}
	for _, c := range cases {
		got, err := ProviderMSISDN(c.provider, c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s %q → %q %v", c.provider, c.in, got, err)
		}
	}
}

func FuzzProviderMSISDN(f *testing.F) {
	for _, s := range []string{"+25377123456", "77123456", "+253000000001", "+2530000000012", "+251911234567", "", "+", "+253", "٣٣٣٣٣٣٣"} {
		f.Add("bank_a", s)
		f.Add("wallet_c", s)
	}
	f.Fuzz(func(t *testing.T, provider, s string) {
		local, err := ProviderMSISDN(provider, s)
		if err != nil {
			return
		}
		if !allDigits(strings.TrimPrefix(local, "+")) {
			t.Fatalf("%q gave %q", s, local)
		}
		if provider == "bank_a" && (strings.HasPrefix(local, "+") || !strings.HasSuffix(s, local)) {
			t.Fatalf("bank_a %q gave %q", s, local)
		}
	})
}

func TestParseListQuery(t *testing.T) {
	q := url.Values{"created[gte]": {"2026-01-02T03:04:05.9+03:00"}, "created[lte]": {"1767323045"}, "status": {"succeeded"}}
	lp, err := ParseListQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	if !lp.CreatedFrom.Equal(time.Date(2026, 1, 2, 0, 4, 5, 0, time.UTC)) || !lp.CreatedUntil.Equal(time.Unix(1767323046, 0)) || lp.Status != Succeeded {
		t.Fatalf("%+v", lp)
	}
	for _, bad := range []url.Values{{"created[gte]": {"soon"}}, {"created[lte]": {"-1"}}, {"created[lt]": {"99999999999999999999"}},
		{"created[gt]": {"1", "2"}}, {"status": {"done"}}, {"provider": {"wallet_b"}}} {
		if _, err := ParseListQuery(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"0", "1767323045", "253402300799", "253402300800", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123456789-07:00", "", "2026-02-30T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTime(s)
		if err != nil {
			return
		}
		if tm.Location() != time.UTC {
			t.Fatalf("%q parsed to a non-UTC time", s)
		}
		if allDigits(s) && tm.Unix() > maxUnixSeconds {
			t.Fatalf("%q beyond the last second", s)
		}
	})
}

func TestReturnURL(t *testing.T) {
	if got := ReturnURL("https://shop.example/back?order=1#top", "pi_1"); got != "https://shop.example/back?order=1&payment_intent=pi_1#top" {
		t.Fatal(got)
	}
	if got := ReturnURL("https://shop.example/back?payment_intent=evil", "pi_1"); got != "https://shop.example/back?payment_intent=pi_1" {
		t.Fatal(got)
	}
}

// FuzzParseCancellationReason: a cancel's reason is accepted exactly when it
// is one of the four, and anything else is a 400 naming
// cancellation_reason.
func FuzzParseCancellationReason(f *testing.F) {
	for _, s := range []string{"duplicate", "fraudulent", "requested_by_customer", "abandoned", "", "Duplicate", "abandoned ", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseCancellationReason(&s)
		known := s == ReasonDuplicate || s == ReasonFraudulent || s == ReasonRequestedByCustomer || s == ReasonAbandoned
		if known != (err == nil) {
			t.Fatalf("%q: err %v", s, err)
		}
		if known && (got == nil || *got != s) {
			t.Fatalf("%q parsed as %v", s, got)
		}
		if !known {
			if e := errs.As(err); e == nil || e.Param != "cancellation_reason" || e.Kind != errs.KindInvalid {
				t.Fatalf("%q: %v", s, err)
			}
		}
	})
}
