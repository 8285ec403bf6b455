// Command payouts is the payouts benchmark. It measures two things:
//
//   - screening latency: p50, p99 and max of screening recipient names
//     through the payout service (payouts.Service.Screen, the call every
//     payout makes) against the full sanctions list, for names derived from
//     listed ones (typos, dropped and swapped words) and invented ones;
//   - fan-out: the time from approving a variant B batch (POST
//     /v1/payouts/bulk/{id}/approve) to the batch being completed, for
//     batches of -rows rows (1 in 20 fails at the sandbox rail), as seen by
//     a client polling GET /v1/payouts/bulk/{id} and as recorded by the
//     server (completed_at − approved_at).
//
// It starts payd itself on 127.0.0.1:0 (SQLite in a temporary directory, or
// a fresh schema of the PostgreSQL database given) unless -url points at a
// running payd on loopback (then -key and -key2 are its two secret test keys):
//
//	go run ./bench/payouts -engine sqlite
//	go run ./bench/payouts -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//	go run ./bench/payouts -url http://127.0.0.1:8080 -key sk_test_... -key2 sk_test_... -screening=false
//
// Every run is bounded: -repeat batches per size, each waited for at most
// -timeout; -names names screened.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/screening"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	target := flag.String("url", "", "benchmark a running payd at this URL instead of starting one")
	key := flag.String("key", os.Getenv("PAYD_API_KEY"), "secret test key that creates the batches (-url)")
	key2 := flag.String("key2", "", "another secret test key of the same merchant, which approves them (-url)")
	sizes := flag.String("rows", "100,1000,10000", "comma-separated batch sizes")
	repeat := flag.Int("repeat", 3, "batches per size")
	timeout := flag.Duration("timeout", 5*time.Minute, "longest wait for one batch")
	doScreen := flag.Bool("screening", true, "measure screening latency")
	list := flag.String("sanctions", filepath.Join(sharedData(), "sanctions", "ofac_full_2021", "sdn.csv"), "the sdn.csv screened against")
	names := flag.Int("names", 10000, "names screened")
	logLevel := flag.String("log-level", "warn", "payd's log level when started here")
	flag.Parse()
	rows, err := harness.Levels("rows", *sizes)
	if err != nil {
		harness.Fatal(err)
	}
	for _, n := range rows {
		if n > payouts.MaxBatchRows {
			harness.Fatal(fmt.Errorf("-rows: %d is more than %d", n, payouts.MaxBatchRows))
		}
	}
	engine := db.Engine
	if *target != "" {
		if err := harness.RequireLoopback(*target); err != nil {
			harness.Fatal(err)
		}
		engine = "remote " + *target
	}

	fmt.Printf("payouts bench: engine=%s cpus=%d go=%s load=%s\n", engine, runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	if *doScreen {
		if err := benchScreening(*list, *names); err != nil {
			harness.Fatal(err)
		}
	}
	base, k1, k2 := *target, *key, *key2
	if base == "" {
		ctx := context.Background()
		m, cleanup, err := db.Start(ctx, harness.Logs(os.Stderr, *logLevel))
		if err != nil {
			harness.Fatal(err)
		}
		defer cleanup()
		c, err := harness.NewMerchant(ctx, m, "Payouts bench", "")
		if err != nil {
			harness.Fatal(err)
		}
		base, k1, k2 = m.URL(), c.SecretKeys[0], c.SecretKeys[1]
	} else if k1 == "" || k2 == "" {
		harness.Fatal(fmt.Errorf("-url needs -key and -key2 (two principals: the creator cannot approve)"))
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	creator := harness.API{Base: base, Key: k1, HTTP: client}
	approver := harness.API{Base: base, Key: k2, HTTP: client}
	if err := creator.TopUp("DJF", int64(1)<<40); err != nil {
		harness.Fatal(err)
	}
	fmt.Printf("\nfan-out: approve → completed (variant B, 1 row in 20 fails at the rail)\n")
	fmt.Printf("%-7s %-7s %12s %12s %12s %14s\n", "rows", "run", "approve_ms", "client_ms", "server_ms", "rows/s(server)")
	for _, n := range rows {
		for r := 1; r <= *repeat; r++ {
			res, err := fanOut(creator, approver, n, *timeout)
			if err != nil {
				harness.Fatal(err)
			}
			fmt.Printf("%-7d %-7d %12.0f %12.0f %12.0f %14.0f\n", n, r, loadgen.MS(res.approve), loadgen.MS(res.client), loadgen.MS(res.server), float64(n)/res.server.Seconds())
		}
	}
	fmt.Printf("load after: %s\n", harness.LoadAvg())
}

// benchScreening screens names through the payout service's Screen.
func benchScreening(path string, n int) error {
	start := time.Now()
	l, err := screening.Load(context.Background(), path)
	if err != nil {
		return err
	}
	fmt.Printf("\nscreening: %s (%d entries, %d aliases, loaded in %v)\n", path, l.Size(), l.AliasCount(), time.Since(start).Round(time.Millisecond))
	svc := payouts.New(payouts.Config{Screener: screening.NewScreenerFromList(l, screening.Options{})})
	listed, err := listedNames(path)
	if err != nil {
		return err
	}
	qs := screeningNames(listed, n)
	for _, q := range qs[:min(200, len(qs))] {
		svc.Screen(q) // warm up
	}
	took := make([]time.Duration, len(qs))
	hits := 0
	for i, q := range qs {
		t := time.Now()
		if svc.Screen(q).Status == screening.StatusHit {
			hits++
		}
		took[i] = time.Since(t)
	}
	fmt.Printf("%-8s %-6s %9s %9s %9s %9s\n", "names", "hits", "p50_us", "p90_us", "p99_us", "max_us")
	lat := loadgen.Sorted(took)
	fmt.Printf("%-8d %-6d %9.1f %9.1f %9.1f %9.1f\n", len(qs), hits, loadgen.US(lat.Percentile(50)), loadgen.US(lat.Percentile(90)), loadgen.US(lat.Percentile(99)), loadgen.US(lat.Max()))
	return nil
}

// listedNames reads the primary names of an sdn.csv.
func listedNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord, r.LazyQuotes = -1, true
	var out []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err == nil && len(rec) > 1 {
			out = append(out, rec[1])
		}
	}
}

// screeningNames mixes listed names, perturbed as people misspell them, with
// invented names from the region that are not listed.
func screeningNames(listed []string, n int) []string {
	rng := mrand.New(mrand.NewPCG(1, 2))
	given := []string{"Mohamed", "Ahmed", "Ali", "Hassan", "Fatouma", "Amina", "Abdi", "Omar", "Ismail", "Houssein",
		"Kadra", "Youssouf", "Abebe", "Tigist", "Dawit", "Jean", "Marie", "Khalid", "Layla", "Hodan"}
	family := []string{"Farah", "Guelleh", "Robleh", "Djama", "Waberi", "Bouh", "Tesfaye", "Bekele", "Haile", "Dubois",
		"Moreau", "Haddad", "Warsame", "Jama", "Egal", "Daoud", "Kamil", "Okieh", "Dabar", "Aden"}
	out := make([]string, 0, n)
	for len(out) < n {
		if len(out)%2 == 0 && len(listed) > 0 {
			words := strings.Fields(strings.ReplaceAll(listed[rng.IntN(len(listed))], ",", ""))
			switch rng.IntN(4) {
			case 0:
				k := rng.IntN(len(words))
				if w := []rune(words[k]); len(w) > 2 {
					w[1+rng.IntN(len(w)-1)] = rune('a' + rng.IntN(26))
					words[k] = string(w)
				}
			case 1:
				if len(words) > 2 {
					i := rng.IntN(len(words))
					words = append(words[:i], words[i+1:]...)
				}
			case 2:
				rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
			}
			out = append(out, strings.Join(words, " "))
			continue
		}
		words := []string{given[rng.IntN(len(given))]}
		for range 1 + rng.IntN(3) {
			words = append(words, family[rng.IntN(len(family))])
		}
		out = append(out, strings.Join(words, " "))
	}
	return out
}

type fanOutResult struct{ approve, client, server time.Duration }

// fanOut creates a batch of n rows, approves it with the second key and
// waits until it is completed.
func fanOut(creator, approver harness.API, n int, timeout time.Duration) (fanOutResult, error) {
	rows := make([]map[string]any, n)
	tag := harness.RandomHex(4)
	for i := range rows {
		row := map[string]any{"amount": 100 + i%50, "reference": fmt.Sprintf("%s-%d", tag, i)}
		switch {
		case i%20 == 19:
			row["provider"], row["recipient_msisdn"] = "wallet_b", "+253000000002" // insufficient_funds
		case i%2 == 0:
			row["provider"], row["recipient_account"] = "bank_b", fmt.Sprintf("DJ%08d", i)
		default:
			row["provider"], row["recipient_msisdn"] = "wallet_b", fmt.Sprintf("+25377%06d", i%1000000)
		}
		rows[i] = row
	}
	var b struct {
		ID          string  `json:"id"`
		Status      string  `json:"status"`
		ApprovedAt  *string `json:"approved_at"`
		CompletedAt *string `json:"completed_at"`
		RowsPending *int    `json:"rows_pending"`
	}
	if err := creator.Post("/v1/payouts/bulk", map[string]any{"currency": "DJF", "rows": rows}, 201, &b); err != nil {
		return fanOutResult{}, err
	}
	start := time.Now()
	if err := approver.Post("/v1/payouts/bulk/"+url.PathEscape(b.ID)+"/approve", nil, 200, &b); err != nil {
		return fanOutResult{}, err
	}
	res := fanOutResult{approve: time.Since(start)}
	for b.Status != "completed" {
		if time.Since(start) > timeout {
			return res, fmt.Errorf("batch %s not completed after %v (%d rows pending)", b.ID, timeout, *b.RowsPending)
		}
		time.Sleep(5 * time.Millisecond)
		if err := creator.Get("/v1/payouts/bulk/"+url.PathEscape(b.ID), &b); err != nil {
			return res, err
		}
	}
	res.client = time.Since(start)
	approved, err1 := time.Parse(time.RFC3339Nano, *b.ApprovedAt)
	completed, err2 := time.Parse(time.RFC3339Nano, *b.CompletedAt)
	if err1 != nil || err2 != nil {
		return res, fmt.Errorf("batch times: %v %v", err1, err2)
	}
	res.server = completed.Sub(approved)
	return res, nil
}

// sharedData is the project's reference data: PAYD_SHARED_DATA, or
// ../shared/data beside the repository.
func sharedData() string {
	if p := os.Getenv("PAYD_SHARED_DATA"); p != "" {
		return p
	}
	return filepath.Join("..", "shared", "data")
}
