package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/internal/card"
	"github.com/payd/payd/internal/errs"
	"github.com/payd/payd/internal/providers"
)

func TestCards(t *testing.T) {
	// The sandbox's test cards are valid numbers of the brand the page shows
	// (card checks and brands live in internal/card).
	for n, b := range map[string]string{CardSuccess: "visa", CardDeclined: "visa", Card3DS: "visa"} {
		if !card.LuhnValid(n) || string(card.BrandOf(n)) != b {
			t.Errorf("%s: luhn %v brand %s", n, card.LuhnValid(n), card.BrandOf(n))
		}
	}
	var details struct{ Card struct{ Brand, Last4 string } }
	json.Unmarshal(cardDetails("5555555555554444"), &details)
	if details.Card.Brand != "mastercard" || details.Card.Last4 != "4444" {
		t.Errorf("details %+v", details)
	}
	if NormalizeCardNumber("4242 4242-4242 4242") != CardSuccess || NormalizeCardNumber("4242x") != "" || NormalizeCardNumber("42424242424") != "" {
		t.Error("normalisation")
	}
	if got := string(cardDetails(Card3DS)); got != `{"card":{"brand":"visa","last4":"3220"},"type":"card"}` {
		t.Error(got)
	}
}

func FuzzNormalizeCardNumber(f *testing.F) {
	for _, s := range []string{CardSuccess, "4242 4242 4242 4242", "4000-0000-0000-0002", "", "1234567890123456789012", "４２４２"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeCardNumber(s)
		if n == "" {
			return
		}
		if len(n) < 12 || len(n) > 19 || !digits(n) {
			t.Fatalf("%q → %q", s, n)
		}
		cardDetails(n)
	})
}

func TestSubmissionHidesSecrets(t *testing.T) {
	s := providers.PageSubmission{Step: providers.StepCard, PIN: "9876", Card: providers.Card{Number: CardSuccess, CVC: "321"}}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%v", &s), fmt.Sprint(s.Card)} {
		for _, secret := range []string{"9876", "4242", "321"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q shows %s", out, secret)
			}
		}
	}
}

func TestSelectScenario(t *testing.T) {
	s := New(Config{})
	cases := []struct {
		rail, header, msisdn, want, param string
	}{
		{"wallet_a", "", "+253000000002", "insufficient_funds", ""},
		{"wallet_a", "success", "+253000000002", "success", ""},
		{"bank_a", "", "+253000000002", "", "customer_msisdn"},
		{"bank_a", "partial_capture", "", "partial_capture", ""},
		{"bank_b", "partial_capture", "", "", "X-Service-Scenario"},
		{"card_gateway_cnp", "card_declined", "", "card_declined", ""},
		{"wallet_a", "card_declined", "", "", "X-Service-Scenario"},
		{"wallet_c", "velocity_limit", "", "", "X-Service-Scenario"},
		{"wallet_d", "Success", "", "", "X-Service-Scenario"},
		{"wallet_d", "", "+25377123456", "", ""},
	}
	for _, c := range cases {
		got, err := s.SelectScenario(c.rail, c.header, c.msisdn)
		e := errs.As(err)
		if got != c.want || (c.param == "") != (err == nil) || (e != nil && (e.Param != c.param || e.Code != "invalid_scenario")) {
			t.Errorf("%+v → %q %v", c, got, err)
		}
	}
	if err := s.CheckScenario("wallet_a", "account_closed"); errs.As(err) == nil || errs.As(err).Param != "scenario" {
		t.Errorf("override check: %v", err)
	}
}

// TestAdapterSteps checks the adapter's answers without a database.
func TestAdapterSteps(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(Config{PublicURL: "http://payd.test", PushDelay: 3 * time.Second, TimeoutDelay: time.Millisecond, Now: func() time.Time { return now }})
	ctx := context.Background()
	p := providers.Payment{ID: "pi_1", Provider: "bank_a", Rail: "bank_a", Flow: providers.FlowOTP, AmountMinor: 999, Currency: "DJF", CreatedAt: now}

	res, _ := s.Initiate(ctx, p)
	if res.Outcome != providers.Pending || res.NextAction.Type != "collect_otp" || res.NextAction.OTPLength != 6 {
		t.Fatalf("otp initiate %+v", res)
	}
	if res, _ := s.ConfirmOTP(ctx, p, "123456"); res.Outcome != providers.Succeeded || res.CapturedMinor != 999 {
		t.Fatalf("right code %+v", res)
	}
	if res, _ := s.ConfirmOTP(ctx, p, "12345"); res.Outcome != providers.Failed || res.Failure.Code != "otp_invalid" {
		t.Fatalf("wrong code %+v", res)
	}
	p.Scenario = "partial_capture"
	if res, _ := s.ConfirmOTP(ctx, p, "123456"); res.CapturedMinor != 799 {
		t.Fatalf("partial capture %+v", res)
	}
	p.Scenario = "sandbox_webhook_fail"
	if res, _ := s.Initiate(ctx, p); !res.FailFirstWebhook || res.Outcome != providers.Pending {
		t.Fatalf("webhook fail %+v", res)
	}

	push := providers.Payment{ID: "pi_2", Provider: "wallet_c", Rail: "wallet_c", Flow: providers.FlowPush, AmountMinor: 5, CreatedAt: now}
	res, _ = s.Initiate(ctx, push)
	if res.NextAction.Type != "push_approval" || res.PollAfter != 3*time.Second {
		t.Fatalf("push initiate %+v", res)
	}
	if res, _ := s.Status(ctx, push); res.Outcome != providers.Pending || res.PollAfter != 3*time.Second {
		t.Fatalf("early status %+v", res)
	}
	push.CreatedAt = now.Add(-3 * time.Second)
	if res, _ := s.Status(ctx, push); res.Outcome != providers.Succeeded {
		t.Fatalf("due status %+v", res)
	}
	push.Scenario = "network_timeout"
	if res, _ := s.Status(ctx, push); res.Outcome != providers.Failed || res.Failure.Code != "provider_timeout" {
		t.Fatalf("timeout status %+v", res)
	}

	card := providers.Payment{ID: "pi 3", Provider: "wallet_a", Rail: "card_gateway_cnp", Flow: providers.FlowCardPage, AmountMinor: 100}
	res, _ = s.Initiate(ctx, card)
	if res.NextAction.Type != "redirect" || res.PageStep != "card" || res.PageToken == "" ||
		res.NextAction.RedirectURL != "http://payd.test/sandbox/pay/pi%203?t="+res.PageToken {
		t.Fatalf("card initiate %+v", res)
	}
	sub := providers.PageSubmission{Step: providers.StepCard, Card: providers.Card{Number: Card3DS}}
	if res, _ := s.CompletePage(ctx, card, sub); res.Outcome != providers.Pending || res.PageStep != providers.StepThreeDS {
		t.Fatalf("3-D Secure card %+v", res)
	}
	sub.Card.Number = CardDeclined
	if res, _ := s.CompletePage(ctx, card, sub); res.Outcome != providers.Failed || res.Failure.DeclineCode != "generic_decline" {
		t.Fatalf("declined card %+v", res)
	}
	card.Scenario = "card_3ds_required"
	if res, _ := s.Initiate(ctx, card); res.NextAction.Type != "redirect_to_url" || res.PageStep != providers.StepThreeDS {
		t.Fatalf("forced 3-D Secure %+v", res)
	}
	hpp := providers.Payment{ID: "pi_4", Provider: "wallet_a", Rail: "wallet_a", Flow: providers.FlowHostedPage, AmountMinor: 100, Scenario: "otp_expired"}
	if res, _ := s.CompletePage(ctx, hpp, providers.PageSubmission{Step: providers.StepWalletAHPP, Phone: "+25377123456", PIN: "1234"}); res.Outcome != providers.Failed || res.Failure.Code != "otp_expired" {
		t.Fatalf("hpp under otp_expired %+v", res)
	}
	s.SetPublicURL("http://elsewhere")
	card.Scenario = ""
	if res, _ := s.Initiate(ctx, card); res.NextAction.RedirectURL[:17] != "http://elsewhere/" {
		t.Fatalf("public URL change: %s", res.NextAction.RedirectURL)
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()
	slow := New(Config{TimeoutDelay: time.Hour})
	if _, err := slow.Initiate(cancelled, providers.Payment{Scenario: "network_timeout", Flow: providers.FlowOTP}); err == nil {
		t.Fatal("the timeout wait ignores its context")
	}
}

func TestFormatAmount(t *testing.T) {
	for in, want := range map[string]string{"1500 DJF": "1500 DJF", "12345 USD": "123.45 USD", "5 ETB": "0.05 ETB", "1234 IQD": "1.234 IQD"} {
		var n int64
		var cur string
		fmt.Sscanf(in, "%d %s", &n, &cur)
		if got := formatAmount(n, cur); got != want {
			t.Errorf("%s → %s", in, got)
		}
	}
}
