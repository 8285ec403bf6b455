package iso20022

import "regexp"

var (
	// uetrPattern is the schema's UUIDv4Identifier: a version 4, RFC 4122
	// variant UUID in lower case.
	uetrPattern = regexp.MustCompile(`^[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[89ab][a-f0-9]{3}-[a-f0-9]{12}$`)
	// bicPattern is ISO 9362 as the schema writes it (BICFIDec2014Identifier):
	// party prefix, country code, location, optional branch.
	bicPattern = regexp.MustCompile(`^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	// ibanShape is the schema's IBAN2007Identifier. An account of this shape
	// is taken to be an IBAN and must pass the ISO 13616 check.
	ibanShape = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{1,30}$`)
)

// ValidUETR reports whether s is a UETR: a lower-case version 4 UUID.
func ValidUETR(s string) bool { return uetrPattern.MatchString(s) }

// ValidBIC reports whether s has the ISO 9362 shape (8 or 11 characters).
func ValidBIC(s string) bool { return bicPattern.MatchString(s) }

// LooksLikeIBAN reports whether an account identifier has the IBAN shape.
func LooksLikeIBAN(s string) bool { return ibanShape.MatchString(s) }

// ValidIBAN reports whether s has the IBAN shape and passes the ISO 7064
// mod 97-10 check: with the first four characters moved to the end and
// letters read as 10..35, the number leaves remainder 1 when divided by 97.
// Lower-case letters are read as their upper-case forms, as ISO 13616 allows
// in the basic part.
func ValidIBAN(s string) bool {
	if !LooksLikeIBAN(s) {
		return false
	}
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[(i+4)%len(s)]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		case c >= 'a' && c <= 'z':
			rem = (rem*100 + int(c-'a') + 10) % 97
		}
	}
	return rem == 1
}
