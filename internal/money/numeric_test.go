package money

import "testing"

func TestNumeric(t *testing.T) {
	for code, want := range map[string]string{"DJF": "262", "USD": "840", "ETB": "230", "EUR": "978"} {
		if got, err := Numeric(code); err != nil || got != want {
			t.Errorf("Numeric(%s) = %q, %v; want %s", code, got, err, want)
		}
	}
	for _, bad := range []string{"", "djf", "ABC", "DJFX"} {
		if got, err := Numeric(bad); err == nil {
			t.Errorf("Numeric(%q) = %q, want an error", bad, got)
		}
	}
}
