package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/payd/payd/internal/merchants"
)

// merchantParams names the k-th merchant; the first is the hot one.
func merchantParams(k int) merchants.CreateParams {
	if k == 0 {
		return merchants.CreateParams{Name: "Scale bench hot merchant"}
	}
	return merchants.CreateParams{Name: fmt.Sprintf("Scale bench merchant %d", k)}
}

// report is a run's readings.
type report struct {
	engine, header string
	merchants      int
	shape          string // the history's shape: retained or whole
	sizes          []sizeResult
	seedSeconds    [][2]float64 // size reached, seconds it took
	stopped        string       // why the run stopped before its last size, if it did
}

// sizeResult is the readings at one database size.
type sizeResult struct {
	Size            int // seeded payment intents
	Payments        int64
	Bytes           int64
	BytesPerPayment float64
	// GrowingBytesPerPayment is the bytes per payment of every table but
	// the retained ones (events, deliveries, attempts, idempotency keys),
	// whose RetainedBytes are apart: with the retained shape they stop
	// growing past their windows.
	GrowingBytesPerPayment float64
	RetainedBytes          int64
	DeepPageAfter          int // rows before the deep page (less than the page's when the list is shorter)
	// ReportDate is the measured settlement report's day, ReportDayPayments
	// the hot merchant's payments in it.
	ReportDate        string
	ReportDayPayments int64
	Verified          bool
	Load              string
	Steps             []stepResult
}

// stepResult is one step at one concurrency level.
type stepResult struct {
	Name             string
	Clients          int
	Requests, Errors int64
	PerSecond        float64
	P50, P99         float64 // ms
}

// ratios are each step's throughput and p99 at the largest size over the
// smallest size's (the empty database's when the run starts at 0).
func (r *report) ratios() map[string][2]float64 {
	out := map[string][2]float64{}
	if len(r.sizes) < 2 {
		return out
	}
	first, last := r.sizes[0], r.sizes[len(r.sizes)-1]
	for i, st := range last.Steps {
		if i >= len(first.Steps) || first.Steps[i].PerSecond == 0 || first.Steps[i].P99 == 0 {
			continue
		}
		out[fmt.Sprintf("%s @%d", st.Name, st.Clients)] = [2]float64{st.PerSecond / first.Steps[i].PerSecond, st.P99 / first.Steps[i].P99}
	}
	return out
}

// columns are the table's: one row per step and level, one pair of
// columns (per second, p99 ms) per size, then the ratios.
func (r *report) table() ([]string, [][]any) {
	cols := []string{"step", "clients"}
	for _, sz := range r.sizes {
		cols = append(cols, fmt.Sprintf("%d: /s", sz.Size), fmt.Sprintf("%d: p99 ms", sz.Size))
	}
	if len(r.sizes) >= 2 {
		cols = append(cols, "throughput ratio (last/empty)", "p99 ratio (last/empty)")
	}
	var rows [][]any
	if len(r.sizes) == 0 {
		return cols, rows
	}
	ratios := r.ratios()
	for i, st := range r.sizes[0].Steps {
		row := []any{st.Name, st.Clients}
		for _, sz := range r.sizes {
			if i < len(sz.Steps) {
				row = append(row, round(sz.Steps[i].PerSecond, 0), round(sz.Steps[i].P99, 2))
			}
		}
		if q, ok := ratios[fmt.Sprintf("%s @%d", st.Name, st.Clients)]; ok {
			row = append(row, round(q[0], 2), round(q[1], 2))
		}
		rows = append(rows, row)
	}
	row := []any{"disk bytes per payment", ""}
	grow := []any{"of which tables that only grow, bytes per payment", ""}
	ret := []any{"events, deliveries, attempts, keys: bytes in all", ""}
	for _, sz := range r.sizes {
		row = append(row, round(sz.BytesPerPayment, 0), fmt.Sprintf("%d payments", sz.Payments))
		grow = append(grow, round(sz.GrowingBytesPerPayment, 0), "")
		ret = append(ret, sz.RetainedBytes, "")
	}
	rows = append(rows, row, grow, ret)
	return cols, rows
}

func round(f float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}

// print writes the table.
func (r *report) print(w io.Writer) {
	cols, rows := r.table()
	fmt.Fprintf(w, "\n%s, %d merchants\n", r.header, r.merchants)
	fmt.Fprintln(w, strings.Join(cols, " | "))
	for _, row := range rows {
		s := make([]string, len(row))
		for i, c := range row {
			s[i] = fmt.Sprint(c)
		}
		fmt.Fprintln(w, strings.Join(s, " | "))
	}
	if r.stopped != "" {
		fmt.Fprintln(w, r.stopped)
	}
}

// writeJSON writes the readings in the shape of bench/results' files.
func (r *report) writeJSON(path string, start time.Time, args []string) error {
	cols, rows := r.table()
	var loads []string
	for _, sz := range r.sizes {
		loads = append(loads, sz.Load)
	}
	notes := []string{r.header}
	for _, s := range r.seedSeconds {
		notes = append(notes, fmt.Sprintf("seeded to %.0f payment intents in %.0f s", s[0], s[1]))
	}
	for _, sz := range r.sizes {
		// Verified is false both when ledger.Verify was not run (a size above
		// -verify) and never otherwise: a failed Verify ends the run.
		verified := "not run (above -verify)"
		if sz.Verified {
			verified = "passed"
		}
		notes = append(notes, fmt.Sprintf("size %d: %d payment intents, %d bytes on disk, deep page after row %d, settlement report of %s with %d payments, ledger.Verify: %s",
			sz.Size, sz.Payments, sz.Bytes, sz.DeepPageAfter, sz.ReportDate, sz.ReportDayPayments, verified))
	}
	if r.stopped != "" {
		notes = append(notes, r.stopped)
	}
	doc := map[string]any{
		"section":      "Scale",
		"sitting":      fmt.Sprintf("The scale bench on %s, %d merchants (one hot), history %s", r.engine, r.merchants, r.shape),
		"date":         start.Format(time.DateOnly),
		"utc_window":   []string{start.Format("15:04"), time.Now().UTC().Format("15:04")},
		"load_average": loads,
		"anchors":      map[string]any{"pgbench_tps_and_floor_rps_pairs": []any{}, "as_recorded": []string{"None in this file: the bench's goal is a ratio to its own empty database, taken in the same run."}},
		"commands":     []string{"go run ./bench/scale " + strings.Join(args[1:], " ")},
		"tables":       []any{map[string]any{"title": r.engine + ": figures at each size (16 clients unless said)", "columns": cols, "rows": rows}},
		"notes":        notes,
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
