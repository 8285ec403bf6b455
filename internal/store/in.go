package store

import (
	"context"
	"database/sql"
	"strings"
)

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

// PaddedIn returns the placeholders and arguments of an IN (...) list of
// values padded to the next power of two by repeating the last value, which
// changes no IN list's meaning. A query whose list length follows its data
// (a dispatch batch, a set of ids read back) would otherwise be a different
// statement for every length: each one parsed, planned and kept in every
// connection's statement cache, pushing out the statements that are reused.
// Padded, at most a handful of lengths occur. An empty list gives "NULL",
// with no arguments: IN (NULL) is valid SQL on both engines and matches no
// row, as an empty list would.
func PaddedIn[T any](values []T) (string, []any) {
	if len(values) == 0 {
		return "NULL", nil
	}
	n := 1
	for n < len(values) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = values[min(i, len(values)-1)]
	}
	return Placeholders(n), args
}

// Rows returns the VALUES list of a multi-row INSERT: n rows of cols
// placeholders each, "(?, ?), (?, ?)". n and cols must be at least 1.
func Rows(n, cols int) string {
	row := "(" + Placeholders(cols) + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// AddIDs adds the first column of every row to set and closes rows: for a
// query that answers ids (SELECT id …, … RETURNING id), run in chunks whose
// answers make one set.
func AddIDs(rows *sql.Rows, set map[string]bool) error {
	return eachString(rows, func(id string) { set[id] = true })
}

// Strings answers the first column of every row of a query that answers
// text (SELECT id FROM …), in the rows' order.
func Strings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	err = eachString(rows, func(v string) { out = append(out, v) })
	return out, err
}

// eachString hands fn the first column of every row, as text, and closes
// rows.
func eachString(rows *sql.Rows, fn func(string)) error {
	defer rows.Close()
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		fn(v)
	}
	return rows.Err()
}
