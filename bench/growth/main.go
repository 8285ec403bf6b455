// Command growth estimates a database's size after a year of steady traffic
// under the retention policy. It starts its own payd on a loopback port with a
// webhook endpoint that answers 200, drives -payments keyed create+confirm
// pairs through the API, lets the deliveries finish and the request log
// flush, and measures each table's rows and bytes (indexes included) per
// payment. It then projects a year at -rate payments per second: a table the
// retention job keeps to a horizon holds that horizon's worth of rows (the
// request log at most 1,000 per merchant and mode as well), every other
// table a year's worth.
//
//	go run ./bench/growth                                             # SQLite
//	go run ./bench/growth -engine postgres -payments 5000 -json out.json
//
// It is an estimate: bytes per row measured on a small table, tables whose
// space is reused after deletes, no bloat, no WAL, and test-mode payments
// standing for live ones (the sandbox purge is left out).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/retention"
	"github.com/payd/payd/internal/store"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	payments := flag.Int64("payments", 2000, "create+confirm pairs to measure the bytes per payment on")
	clients := flag.Int("clients", 4, "clients driving the pairs")
	rate := flag.Float64("rate", 50, "payments per second to project")
	days := flag.Float64("days", 365, "days to project")
	merchantsN := flag.Int("merchants", 100, "merchants the traffic is spread over (bounds the request log: 1,000 per merchant and mode)")
	jsonOut := flag.String("json", "", "also write the readings and the projection as JSON to this file")
	flag.Parse()
	policy, err := retention.PolicyFromEnv(os.Getenv)
	if err != nil {
		harness.Fatal(err)
	}
	ctx := context.Background()
	m, cleanup, err := db.Start(ctx, harness.Configure(func(c *app.Config) { c.Retention = policy }))
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	merchant, err := harness.NewMerchant(ctx, m, "Growth", "")
	if err != nil {
		harness.Fatal(err)
	}
	api := harness.API{Base: m.URL(), Key: merchant.SecretKeys[0]}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer hook.Close()
	if err := api.Post("/v1/webhook_endpoints", map[string]any{"url": hook.URL + "/hook", "enabled_events": []string{"*"}}, http.StatusCreated, nil); err != nil {
		harness.Fatal(err)
	}
	before, err := tableSizes(ctx, m.DB, db.Engine)
	if err != nil {
		harness.Fatal(err)
	}
	start := time.Now()
	tag := "growth-" + harness.RandomHex(4) + "-"
	res := loadgen.RunWith(loadgen.Options{Clients: *clients, Duration: time.Hour, MaxOps: *payments}, func(c *loadgen.Call) error {
		a := harness.API{Base: api.Base, Key: api.Key, HTTP: c.HTTP}
		var pi struct {
			ID string `json:"id"`
		}
		if err := a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", IdempotencyKey: tag + strconv.FormatInt(c.N, 10), Want: 201,
			Body: `{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"growth"}`}, &pi); err != nil {
			return err
		}
		return a.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + url.PathEscape(pi.ID) + "/confirm", Body: `{"otp":"123456"}`, Want: 200}, nil)
	})
	if res.Errors > 0 {
		res.WriteFailures(os.Stderr)
		harness.Fatal(fmt.Errorf("%d of %d pairs failed", res.Errors, res.Requests))
	}
	n := res.Succeeded()
	// Every delivery finished and every request logged.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var pending int
		if err := m.DB.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'").Scan(&pending); err != nil {
			harness.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			harness.Fatal(fmt.Errorf("%d deliveries still pending after two minutes", pending))
		}
	}
	for m.RequestLog().Flush(ctx) == nil && storeCount(ctx, m.DB, "request_logs") < 2*n && time.Since(start) < 5*time.Minute {
		time.Sleep(100 * time.Millisecond)
	}
	after, err := tableSizes(ctx, m.DB, db.Engine)
	if err != nil {
		harness.Fatal(err)
	}
	est := project(before, after, n, *rate, *days, *merchantsN, policy)
	fmt.Printf("growth: engine=%s payments=%d cpus=%d go=%s load=%s\n", db.Engine, n, runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	fmt.Printf("projection: %.0f payments/s for %.0f days = %.3g payments; retention events %s, deliveries %s, request logs %s, keys %s\n",
		*rate, *days, est.Payments, policy.Events, policy.Deliveries, policy.RequestLogs, policy.IdempotencyKeys)
	fmt.Println("(GB: with the retention policy; GB, no delete: if no row of the table were ever deleted)")
	fmt.Printf("%-28s %10s %10s %-22s %14s %12s %14s\n", "table", "rows/pay", "bytes/pay", "kept", "rows", "GB", "GB, no delete")
	for _, t := range est.Tables {
		fmt.Printf("%-28s %10.3f %10.0f %-22s %14.3g %12.2f %14.2f\n", t.Table, t.RowsPerPayment, t.BytesPerPayment, t.Kept, t.Rows, t.Bytes/1e9, t.BytesUnpurged/1e9)
	}
	fmt.Printf("%-28s %10s %10.0f %-22s %14s %12.2f %14.2f\n", "total", "", est.BytesPerPayment, "", "", est.Bytes/1e9, est.BytesUnpurged/1e9)
	if *jsonOut != "" {
		out := map[string]any{"engine": db.Engine, "payments_measured": n, "clients": *clients, "load_average": harness.LoadAvg(),
			"date": time.Now().UTC().Format(time.RFC3339), "command": os.Args, "estimate": est}
		b, _ := json.MarshalIndent(out, "", " ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			harness.Fatal(err)
		}
	}
}

// size is one table's rows and bytes (its indexes and TOAST included).
type size struct {
	Rows  int64
	Bytes int64
}

func storeCount(ctx context.Context, db *store.DB, table string) int64 {
	var n int64
	db.QueryRow(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
	return n
}

// tableSizes measures every table of payd's schema.
func tableSizes(ctx context.Context, db *store.DB, engine string) (map[string]size, error) {
	var q string
	if engine == "postgres" {
		q = `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND c.relkind = 'r'`
	} else {
		// dbstat counts the pages of every table and index; an index's
		// bytes go to its table.
		q = `SELECT m.tbl_name, SUM(s.pgsize) FROM dbstat s JOIN sqlite_master m ON m.name = s.name
			WHERE m.tbl_name NOT LIKE 'sqlite_%' GROUP BY m.tbl_name`
	}
	if _, err := db.Exec(ctx, "ANALYZE"); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[string]size{}
	var names []string
	for rows.Next() {
		var name string
		var bytes int64
		if err := rows.Scan(&name, &bytes); err != nil {
			rows.Close()
			return nil, err
		}
		out[name] = size{Bytes: bytes}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, name := range names {
		s := out[name]
		s.Rows = storeCount(ctx, db, name)
		out[name] = s
	}
	return out, nil
}

// Table is one table's projection.
type Table struct {
	Table           string  `json:"table"`
	RowsPerPayment  float64 `json:"rows_per_payment"`
	BytesPerPayment float64 `json:"bytes_per_payment"`
	Kept            string  `json:"kept"`
	Rows            float64 `json:"rows"`
	Bytes           float64 `json:"bytes"`
	BytesUnpurged   float64 `json:"bytes_if_nothing_deleted"`
}

// Estimate is the projection of every table that grew with the payments.
type Estimate struct {
	Rate            float64 `json:"payments_per_second"`
	Days            float64 `json:"days"`
	Payments        float64 `json:"payments"`
	BytesPerPayment float64 `json:"bytes_per_payment"`
	Bytes           float64 `json:"bytes"`
	BytesUnpurged   float64 `json:"bytes_if_nothing_deleted"`
	Tables          []Table `json:"tables"`
}

func project(before, after map[string]size, n int64, rate, days float64, merchants int, p retention.Policy) Estimate {
	e := Estimate{Rate: rate, Days: days, Payments: rate * days * 86400}
	horizon := map[string]time.Duration{"events": p.Events, "webhook_deliveries": p.Deliveries, "webhook_attempts": p.Deliveries,
		"request_logs": p.RequestLogs, "idempotency_keys": p.IdempotencyKeys}
	for name, a := range after {
		b := before[name]
		rowsPer := float64(a.Rows-b.Rows) / float64(n)
		if rowsPer < 0.05 {
			continue // rows of the merchant, not of its payments
		}
		// Bytes per row from the table as it stands (a small table's
		// first pages are mostly the fixed cost of its indexes).
		bytesPerRow := float64(a.Bytes-b.Bytes) / float64(a.Rows-b.Rows)
		t := Table{Table: name, RowsPerPayment: rowsPer, BytesPerPayment: rowsPer * bytesPerRow, Kept: "a year (never purged)"}
		t.BytesUnpurged = t.BytesPerPayment * e.Payments
		rows := rowsPer * e.Payments
		if h, ok := horizon[name]; ok && h > 0 {
			held := min(h.Seconds(), days*86400)
			rows = rowsPer * rate * held
			t.Kept = "horizon " + h.String()
			if name == "request_logs" {
				if limit := float64(2 * 1000 * merchants); rows > limit {
					rows, t.Kept = limit, fmt.Sprintf("1,000 per merchant and mode (%d merchants)", merchants)
				}
			}
		}
		t.Rows = rows
		t.Bytes = rows * bytesPerRow
		e.Tables = append(e.Tables, t)
		e.BytesPerPayment += t.BytesPerPayment
		e.Bytes += t.Bytes
		e.BytesUnpurged += t.BytesUnpurged
	}
	sort.Slice(e.Tables, func(i, j int) bool { return e.Tables[i].Bytes > e.Tables[j].Bytes })
	return e
}
