// Package csvcell makes values safe to put in a CSV cell that a spreadsheet
// will open: the one place payd neutralises CSV formula injection. Every
// CSV payd writes (settlement reports, balance history, batch results) passes
// its text cells through Safe.
//
// A spreadsheet evaluates a cell that starts with =, +, - or @ (or their
// full-width forms ＝ ＋ － ＠), and some also when such a character comes after
// leading blanks or after characters that look like separators: " =1+1",
// ";=cmd", ",=cmd", "|=cmd", or after a leading tab, carriage return or line
// feed. Safe prefixes any such cell with an apostrophe, which spreadsheets
// show as text and do not evaluate.
//
// Numbers stay readable: a cell that is exactly a plain decimal number with a
// leading + or - (-500, -12.5, a phone number such as +25377123456) is left
// as it is, because a spreadsheet reads it as a number, not a formula.
// Amount columns are written from integers (strconv) and never pass through
// Safe, so negative amounts are always plain numbers.
package csvcell

import (
	"unicode"
	"unicode/utf8"
)

// Safe returns s, or s with a leading apostrophe when a spreadsheet would
// evaluate it as a formula.
func Safe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '\t', '\r', '\n':
		return "'" + s
	}
	skipped := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isTrigger(r):
			if !skipped && (r == '+' || r == '-') && plainNumber(s[i+size:]) {
				return s
			}
			return "'" + s
		case isSkippable(r):
			skipped = true
			i += size
		default:
			return s
		}
	}
	return s
}

// isTrigger: the characters that start a formula.
func isTrigger(r rune) bool {
	switch r {
	case '=', '+', '-', '@', '＝', '＋', '－', '＠':
		return true
	}
	return false
}

// isSkippable: what a spreadsheet may pass over before a formula character:
// blanks, invisible format characters (a byte order mark, zero-width space)
// and separator-like punctuation.
func isSkippable(r rune) bool {
	switch r {
	case ';', ',', '|', ':', '；', '，', '｜', '：':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

// plainNumber: digits with at most one decimal point, and at least one digit.
func plainNumber(s string) bool {
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}
