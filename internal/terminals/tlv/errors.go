package tlv

import (
	"errors"
	"fmt"
)

// The kinds of malformed input; a *SyntaxError wraps one of them, so callers
// test with errors.Is.
var (
	// ErrTruncated reports a tag, length or value that runs past the end of its enclosing data.
	ErrTruncated = errors.New("truncated")
	// ErrTagTooLong reports a tag of more than four bytes.
	ErrTagTooLong = errors.New("tag longer than 4 bytes")
	// ErrInvalidTag reports a tag Encode cannot write (see Tag.Valid) or a primitive object with children.
	ErrInvalidTag = errors.New("invalid tag")
	// ErrInvalidLength reports the indefinite form, the reserved 0xFF form, or a length field longer than 4 bytes.
	ErrInvalidLength = errors.New("invalid length")
	// ErrTooDeep reports constructed objects nested deeper than MaxDepth.
	ErrTooDeep = errors.New("nested too deep")
	// ErrTooLarge reports input longer than MaxSize.
	ErrTooLarge = errors.New("input too large")
	// ErrTooManyObjects reports more than MaxObjects objects in one input.
	ErrTooManyObjects = errors.New("too many objects")
)

// SyntaxError describes malformed input: what is wrong, at which byte offset of
// the whole input, and in which object when the tag was already read. It never
// includes value bytes.
type SyntaxError struct {
	Offset int
	Tag    Tag // zero when the error precedes the tag
	Err    error
	Detail string
}

// Error renders the error, e.g. "tlv: offset 12, tag 9F26: truncated: value needs 8 bytes, 3 left".
func (e *SyntaxError) Error() string {
	s := fmt.Sprintf("tlv: offset %d", e.Offset)
	if e.Tag != 0 {
		s += ", tag " + e.Tag.String()
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the kind of error, one of the package's Err values.
func (e *SyntaxError) Unwrap() error { return e.Err }
