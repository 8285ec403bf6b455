package merchants

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/payd/payd/internal/errs"
)

// MaxEmailLength bounds a portal user's email (RFC 5321's path limit).
const MaxEmailLength = 254

// NormalizeEmail is the one form a portal user's email is stored, compared
// and looked up in (create, login, password reset): trimmed, NFKC-normalised
// (so a full-width or composed look-alike of an address is the address
// itself) and lower-cased. An email with a control character (CR, LF, NUL,
// tab...) or an invisible format character (zero-width space, byte order
// mark) is refused with a 400 naming email: such a value could split a
// header or a log line, or make a second account that looks like the first.
func NormalizeEmail(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errs.Invalid("email", "parameter_invalid", "email is not valid UTF-8")
	}
	if hasControl(raw) {
		return "", errs.Invalid("email", "parameter_invalid", "email must not contain control characters such as CR or LF")
	}
	s := strings.TrimSpace(raw)
	s = norm.NFKC.String(strings.ToLower(norm.NFKC.String(s)))
	if hasControl(s) {
		return "", errs.Invalid("email", "parameter_invalid", "email must not contain control characters such as CR or LF")
	}
	if len(s) > MaxEmailLength {
		return "", errs.Invalid("email", "parameter_invalid", "email must be at most %d bytes", MaxEmailLength)
	}
	return s, nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
