package harness

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/payd/payd/internal/store"
)

// Sizes parses the ascending, comma-separated database sizes of a cost-curve
// program's -seed flag (each from 0 to 10,000,000).
func Sizes(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 10_000_000 {
			return nil, fmt.Errorf("-%s: %q is not a size from 0 to 10,000,000", name, f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("-%s: sizes must ascend", name)
		}
		out = append(out, n)
	}
	return out, nil
}

// ExplainPrefix is the statement prefix that shows a query's plan on the
// database's engine: the executed plan with timings on PostgreSQL, the
// query plan on SQLite.
func ExplainPrefix(q store.Querier) string {
	return q.Dialect().ExplainPrefix(true)
}

// PrintPlan runs ExplainPrefix+query on q and writes its plan, one line per
// row (the last column), under "plan, name:".
func PrintPlan(ctx context.Context, q store.Querier, w io.Writer, name, query string, args ...any) error {
	rows, err := q.Query(ctx, ExplainPrefix(q)+query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(w, "plan, %s:\n", name)
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Fprintf(w, "   %v\n", vals[len(vals)-1])
	}
	return rows.Err()
}
