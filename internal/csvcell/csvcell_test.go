package csvcell

import "testing"

// TestSafe: cells a spreadsheet would evaluate are defused;
// phone numbers and plain values are left alone.
func TestSafe(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"emp-1":              "emp-1",
		"+25377000001":       "+25377000001",
		"-12.5":              "-12.5",
		"=HYPERLINK(\"x\")":  "'=HYPERLINK(\"x\")",
		"@SUM(A1)":           "'@SUM(A1)",
		"+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
		"-2+3":               "'-2+3",
		"\tx":                "'\tx",
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
}
