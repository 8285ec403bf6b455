package apptest

import "testing"

func TestSecretAt(t *testing.T) {
	logs := `{"time":"2026-11-26T16:58:01.987654321Z","msg":"request","ms":1987654}` + "\n" + `{"msg":"form","pin":"987654"}`
	for _, c := range []struct {
		logs, secret string
		found        bool
	}{
		{logs, "987654", true},                            // the quoted PIN, not the timestamp
		{logs[:len(logs)-30], "987654", false},            // inside longer digit runs only
		{`card 4000 0000 0000 3220 x`, "0000 3220", true}, // not digits alone: any occurrence
		{`{"cvc":"737"}`, `"737"`, true},
		{"no secrets here", "", false},
	} {
		if got := secretAt(c.logs, c.secret) >= 0; got != c.found {
			t.Errorf("secretAt(%q, %q) found=%v, want %v", c.logs, c.secret, got, c.found)
		}
	}
}
