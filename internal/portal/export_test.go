package portal

import "time"

// TOTPNow is the current code for a base32 secret, for end-to-end tests
// that play the authenticator app.
func TOTPNow(secret string, at time.Time, offsetSteps int64) string {
	c, _ := totpCode(secret, totpStepAt(at)+offsetSteps)
	return c
}

// FormatMoney is the portal's one amount formatter.
var FormatMoney = formatMoney
