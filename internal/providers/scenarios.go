package providers

import (
	"fmt"
	"strings"
)

// Scenario is one of the sandbox's twelve named outcomes.
type Scenario struct {
	Index int
	Name  string
}

// The twelve sandbox scenarios, in their documented order (the magic numbers' order).
var (
	Success            = Scenario{1, "success"}
	InsufficientFunds  = Scenario{2, "insufficient_funds"}
	OTPExpired         = Scenario{3, "otp_expired"}
	CardDeclined       = Scenario{4, "card_declined"}
	Card3DSRequired    = Scenario{5, "card_3ds_required"}
	NetworkTimeout     = Scenario{6, "network_timeout"}
	DuplicateMSISDN    = Scenario{7, "duplicate_msisdn"}
	KYCBlocked         = Scenario{8, "kyc_blocked"}
	AccountClosed      = Scenario{9, "account_closed"}
	VelocityLimit      = Scenario{10, "velocity_limit"}
	PartialCapture     = Scenario{11, "partial_capture"}
	SandboxWebhookFail = Scenario{12, "sandbox_webhook_fail"}
)

// Scenarios lists them by index (Scenarios[0] is index 1).
var Scenarios = []Scenario{Success, InsufficientFunds, OTPExpired, CardDeclined, Card3DSRequired, NetworkTimeout,
	DuplicateMSISDN, KYCBlocked, AccountClosed, VelocityLimit, PartialCapture, SandboxWebhookFail}

// applicability says which rails offer each scenario.
// "all" covers every provider code and the card gateway.
var applicability = map[string][]string{
	"success":              {"all"},
	"insufficient_funds":   {WalletA, WalletB},
	"otp_expired":          {WalletA, WalletB},
	"card_declined":        {CardGatewayCNP},
	"card_3ds_required":    {CardGatewayCNP},
	"network_timeout":      {"all"},
	"duplicate_msisdn":     {WalletA},
	"kyc_blocked":          {"all"},
	"account_closed":       {BankA, BankB},
	"velocity_limit":       {WalletB},
	"partial_capture":      {BankA},
	"sandbox_webhook_fail": {"all"},
}

// ScenarioByName finds a scenario by its name.
func ScenarioByName(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// ScenarioFromMSISDN reads the magic number: +25300000000 followed by the
// scenario index as written (+253000000001 … +253000000009, then
// +2530000000010 … +2530000000012), exactly as the
// client sent it.
func ScenarioFromMSISDN(msisdn string) (Scenario, bool) {
	for _, s := range Scenarios {
		if msisdn == MagicMSISDN(s) {
			return s, true
		}
	}
	return Scenario{}, false
}

// MagicMSISDN is the sandbox number that selects s.
func MagicMSISDN(s Scenario) string { return fmt.Sprintf("+25300000000%d", s.Index) }

// ScenarioFromAccount reads "sandbox_<name>" in a bank payout row's
// recipient_account.
func ScenarioFromAccount(account string) (Scenario, bool) {
	name, ok := strings.CutPrefix(account, "sandbox_")
	if !ok {
		return Scenario{}, false
	}
	return ScenarioByName(name)
}

// Offers reports whether rail (a provider code, or CardGatewayCNP for card
// payments) offers scenario s.
func Offers(rail string, s Scenario) bool {
	for _, r := range applicability[s.Name] {
		if r == "all" || r == rail {
			return true
		}
	}
	return false
}
