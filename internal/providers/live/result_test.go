package live

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/payd/payd/internal/providers"
	"github.com/payd/payd/internal/providers/protocol"
)

func TestPaymentResult(t *testing.T) {
	cases := []struct {
		in      protocol.Payment
		outcome providers.Outcome
		action  string
		err     bool
	}{
		{protocol.Payment{ID: "pay_1", Status: "pending", Action: &protocol.Action{Type: "otp", OTPLength: 6}}, providers.Pending, providers.ActionCollectOTP, false},
		{protocol.Payment{ID: "pay_1", Status: "pending", Action: &protocol.Action{Type: "redirect", URL: "https://p.example/pay/1?t=x"}}, providers.Pending, providers.ActionRedirect, false},
		{protocol.Payment{ID: "pay_1", Status: "pending", Action: &protocol.Action{Type: "push"}}, providers.Pending, providers.ActionPushApproval, false},
		{protocol.Payment{ID: "pay_1", Status: "pending", Action: &protocol.Action{Type: "redirect", URL: "javascript:alert(1)"}}, 0, "", true},
		{protocol.Payment{ID: "pay_1", Status: "pending"}, 0, "", true},
		{protocol.Payment{ID: "pay_1", Status: "succeeded", CapturedMinor: 5}, providers.Succeeded, "", false},
		{protocol.Payment{ID: "pay_1", Status: "failed"}, providers.Failed, "", false},
		{protocol.Payment{ID: "pay_1", Status: "weird"}, 0, "", true},
	}
	for _, c := range cases {
		res, err := PaymentResult(c.in)
		if (err != nil) != c.err || res.Outcome != c.outcome || (c.action != "" && res.NextAction.Type != c.action) {
			t.Errorf("%+v: %+v %v", c.in, res, err)
		}
		if res.Outcome == providers.Failed && (res.Failure == nil || res.Failure.Code == "") {
			t.Errorf("a failure without a code: %+v", res)
		}
	}
	if got := withIntent("https://shop.example/r?x=1", "pi_1"); got != "https://shop.example/r?payment_intent=pi_1&x=1" {
		t.Errorf("return url %s", got)
	}
}

// FuzzPaymentResult: whatever a provider answers, the mapping neither
// panics nor lets through a redirect that is not http(s).
func FuzzPaymentResult(f *testing.F) {
	f.Add([]byte(`{"id":"pay_1","status":"pending","action":{"type":"redirect","url":"https://x.example/p"}}`))
	f.Add([]byte(`{"status":"succeeded","captured_minor":-5,"method_details":{"type":"card","last4":"4242"}}`))
	f.Add([]byte(`{"status":"failed","failure":{"code":"` + string(make([]byte, 300)) + `"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p protocol.Payment
		if json.Unmarshal(body, &p) != nil {
			return
		}
		res, err := PaymentResult(p)
		if err != nil {
			return
		}
		if res.NextAction != nil && res.NextAction.RedirectURL != "" {
			u, err := url.Parse(res.NextAction.RedirectURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Fatalf("redirect to %q", res.NextAction.RedirectURL)
			}
		}
		if res.Failure != nil && (len(res.Failure.Code) > 200 || len(res.Failure.Message) > 200) {
			t.Fatal("an unbounded failure")
		}
		PayoutResult(protocol.Payout{Status: p.Status, Failure: p.Failure})
	})
}
