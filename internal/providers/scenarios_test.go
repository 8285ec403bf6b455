package providers

import "testing"

func TestMagicNumbers(t *testing.T) {
	cases := map[string]string{
		"+253000000001":  "success",
		"+253000000006":  "network_timeout",
		"+2530000000010": "velocity_limit",
		"+2530000000012": "sandbox_webhook_fail",
	}
	for msisdn, want := range cases {
		s, ok := ScenarioFromMSISDN(msisdn)
		if !ok || s.Name != want {
			t.Errorf("%s → %v %v, want %s", msisdn, s, ok, want)
		}
	}
	for _, no := range []string{"+253000000000", "+2530000000013", "253000000001", "+25377123456", ""} {
		if s, ok := ScenarioFromMSISDN(no); ok {
			t.Errorf("%q selected %v", no, s)
		}
	}
	if s, ok := ScenarioFromAccount("sandbox_account_closed"); !ok || s != AccountClosed {
		t.Fatal("account scenario")
	}
}

func TestApplicability(t *testing.T) {
	yes := [][2]string{{WalletA, "insufficient_funds"}, {WalletB, "velocity_limit"}, {BankA, "partial_capture"},
		{CardGatewayCNP, "card_declined"}, {WalletD, "kyc_blocked"}, {BankB, "account_closed"}}
	no := [][2]string{{BankA, "insufficient_funds"}, {WalletA, "velocity_limit"}, {BankB, "partial_capture"},
		{WalletA, "card_declined"}, {WalletC, "duplicate_msisdn"}}
	for _, c := range yes {
		s, _ := ScenarioByName(c[1])
		if !Offers(c[0], s) {
			t.Errorf("%s should offer %s", c[0], c[1])
		}
	}
	for _, c := range no {
		s, _ := ScenarioByName(c[1])
		if Offers(c[0], s) {
			t.Errorf("%s should not offer %s", c[0], c[1])
		}
	}
}
