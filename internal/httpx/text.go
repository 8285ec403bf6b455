package httpx

import (
	"strings"
	"unicode/utf8"
)

// CleanText reports whether s is text payd stores and echoes: valid UTF-8
// with no NUL (PostgreSQL refuses both in a text column).
func CleanText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }
