package portal

import "testing"

// TestCSVCellFormulaGuard: cells a spreadsheet would evaluate are defused;
// phone numbers and plain values are left alone.
func TestCSVCellFormulaGuard(t *testing.T) {
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
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}
