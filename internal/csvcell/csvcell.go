// Package csvcell makes values safe to put in a CSV cell that a spreadsheet
// will open: the one place payd neutralises CSV formula injection.
package csvcell

import "strconv"

// Safe neutralises CSV formula injection: a value a spreadsheet would
// evaluate (starting =, @, a tab or CR, or + or - not followed by a number
// only) gets a leading apostrophe. A phone number such as +25377123456 and a
// negative amount such as -500 are left as they are.
func Safe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '@', '\t', '\r':
		return "'" + s
	case '+', '-':
		if _, err := strconv.ParseFloat(s[1:], 64); err != nil {
			return "'" + s
		}
	}
	return s
}
