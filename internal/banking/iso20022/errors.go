package iso20022

import (
	"errors"
	"strings"
)

// Sentinel errors that a *ParseError unwraps to, so callers can choose an
// HTTP status with errors.Is.
var (
	// ErrMalformed: the body is not well-formed XML or JSON.
	ErrMalformed = errors.New("iso20022: malformed message")
	// ErrForbiddenMarkup: the XML carries a DOCTYPE, an entity declaration or a
	// processing instruction other than the XML declaration.
	ErrForbiddenMarkup = errors.New("iso20022: forbidden XML markup")
	// ErrTooLarge: the body is over MaxMessageBytes.
	ErrTooLarge = errors.New("iso20022: message too large")
	// ErrTooDeep: elements (or JSON values) are nested deeper than allowed.
	ErrTooDeep = errors.New("iso20022: message nested too deeply")
	// ErrUnsupportedMessage: well-formed, but not a message this endpoint
	// accepts (another message type or version, or an envelope that is not an
	// AppHdr followed by the Document).
	ErrUnsupportedMessage = errors.New("iso20022: unsupported message")
)

// ParseError reports a body that cannot be read as a message at all: the
// HTTP layer answers it with a 4xx error instead of a status report. Its text
// never quotes the body.
type ParseError struct {
	// Kind is one of the sentinel errors above.
	Kind error
	// Path locates the problem when known, e.g. "Envelope/AppHdr".
	Path string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *ParseError) Error() string {
	msg := e.Kind.Error()
	if e.Path != "" {
		msg += " at " + e.Path
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}

// Unwrap returns the sentinel kind.
func (e *ParseError) Unwrap() error { return e.Kind }

// FieldError is one rule a field breaks. Path is an XPath-like path below the
// message element for XML ("CdtTrfTxInf[2]/PmtId/UETR", 1-based indexes) and
// a dotted path for JSON ("transactions[1].uetr", 0-based indexes).
type FieldError struct {
	// Path is where the field is.
	Path string
	// Code is the ISO 20022 reason code the rule maps to; it may be empty.
	Code string
	// Reason says what is wrong without quoting the value.
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Code != "" {
		b.WriteString(" (")
		b.WriteString(e.Code)
		b.WriteString(")")
	}
	return b.String()
}

// SchemaError reports a message that parses but does not satisfy its schema:
// for a pacs.008 the whole group is rejected with reason FF01. Problems holds
// the first violation found (the checker stops there, since later ones are
// usually consequences of it).
type SchemaError struct {
	// Problems holds the violation found, with Code FF01.
	Problems []FieldError
}

// Error implements error.
func (e *SchemaError) Error() string {
	if len(e.Problems) == 0 {
		return "iso20022: not schema-valid"
	}
	return "iso20022: not schema-valid: " + e.Problems[0].Error()
}

// Detail is a one-line description of the first problem, fit for a status
// report's additional information.
func (e *SchemaError) Detail() string {
	if len(e.Problems) == 0 {
		return ""
	}
	return e.Problems[0].Path + ": " + e.Problems[0].Reason
}

// safeName renders an element or attribute name taken from the body for an
// error message: names are short tokens, anything else is elided.
func safeName(s string) string {
	if len(s) == 0 || len(s) > 40 {
		return "(element)"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "(element)"
		}
	}
	return s
}
