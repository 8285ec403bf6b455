package store

import "strings"

// Placeholders returns "?, ?, ?" for n values, for an IN (...) list written
// once for both engines (Rebind numbers them for PostgreSQL). n must be at
// least 1; an empty IN list is not valid SQL, so callers skip the query.
func Placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Args converts values to query arguments.
func Args[T any](values []T) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
