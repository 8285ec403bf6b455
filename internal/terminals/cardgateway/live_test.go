package cardgateway

import (
	"encoding/json"
	"testing"

	"github.com/payd/payd/internal/providers/protocol"
)

// FuzzAuthorizationOf: whatever a gateway answers, the authorisation payd
// reads from it is an approval with a code or a decline with a code, and
// nothing it keeps is longer than payd stores.
func FuzzAuthorizationOf(f *testing.F) {
	for _, s := range []string{
		`{"id":"cauth_1","status":"captured","auth_code":"K7QX2M"}`,
		`{"status":"authorized"}`,
		`{"status":"declined","failure":{"code":"card_declined","message":"no","decline_code":"insufficient_funds"}}`,
		`{"status":"voided","failure":null}`,
		`{"status":"weird"}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var au protocol.CardAuthorization
		if json.Unmarshal(raw, &au) != nil {
			return
		}
		got := authorizationOf(au)
		switch {
		case got.Approved && (got.AuthCode == "" || got.DeclineCode != ""):
			t.Fatalf("approval without a code or with a decline code: %+v", got)
		case !got.Approved && (got.DeclineCode == "" || got.AuthCode != ""):
			t.Fatalf("decline without a decline code or with an auth code: %+v", got)
		case len(got.DeclineCode) > 200 || len(got.Message) > 200:
			t.Fatalf("unbounded: %d %d", len(got.DeclineCode), len(got.Message))
		}
		if got.Approved != (au.Status == protocol.AuthorizationAuthorized || au.Status == protocol.AuthorizationCaptured) {
			t.Fatalf("status %q read as approved=%v", au.Status, got.Approved)
		}
	})
}
