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
// running payd (then -key and -key2 are its two secret test keys):
//
//	go run ./bench/payouts -engine sqlite
//	go run ./bench/payouts -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//	go run ./bench/payouts -url http://127.0.0.1:8080 -key sk_test_... -key2 sk_test_... -screening=false
//
// Every run is bounded: -repeat batches per size, each waited for at most
// -timeout; -names names screened.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/payouts"
	"github.com/payd/payd/internal/screening"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres (when payd is started here)")
	dbURL := flag.String("database-url", os.Getenv("PAYD_TEST_DATABASE_URL"), "PostgreSQL URL; a fresh schema is made in it and dropped after")
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

	fmt.Printf("payouts bench: engine=%s cpus=%d go=%s load=%s\n", engineName(*engine, *target), runtime.NumCPU(), runtime.Version(), loadavg())
	if *doScreen {
		if err := benchScreening(*list, *names); err != nil {
			fatal(err)
		}
	}
	base, k1, k2 := *target, *key, *key2
	if base == "" {
		m, cleanup, err := startPayd(*engine, *dbURL, *logLevel)
		if err != nil {
			fatal(err)
		}
		defer cleanup()
		c, err := m.Merchants.Create(context.Background(), merchants.CreateParams{Name: "Payouts bench"})
		if err != nil {
			fatal(err)
		}
		base, k1, k2 = m.URL(), c.SecretKeys[0], c.SecretKeys[1]
	} else if k1 == "" || k2 == "" {
		fatal(fmt.Errorf("-url needs -key and -key2 (two principals: the creator cannot approve)"))
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	if err := call(client, "POST", base+"/v1/sandbox/topups", k1, map[string]any{"currency": "DJF", "amount_minor": int64(1) << 40}, 201, nil); err != nil {
		fatal(err)
	}
	fmt.Printf("\nfan-out: approve → completed (variant B, 1 row in 20 fails at the rail)\n")
	fmt.Printf("%-7s %-7s %12s %12s %12s %14s\n", "rows", "run", "approve_ms", "client_ms", "server_ms", "rows/s(server)")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > payouts.MaxBatchRows {
			fatal(fmt.Errorf("bad batch size %q", s))
		}
		for r := 1; r <= *repeat; r++ {
			res, err := fanOut(client, base, k1, k2, n, *timeout)
			if err != nil {
				fatal(err)
			}
			fmt.Printf("%-7d %-7d %12.0f %12.0f %12.0f %14.0f\n", n, r, ms(res.approve), ms(res.client), ms(res.server), float64(n)/res.server.Seconds())
		}
	}
	fmt.Printf("load after: %s\n", loadavg())
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
	fmt.Printf("%-8d %-6d %9.1f %9.1f %9.1f %9.1f\n", len(qs), hits, us(pct(took, 50)), us(pct(took, 90)), us(pct(took, 99)), us(pct(took, 100)))
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
func fanOut(c *http.Client, base, k1, k2 string, n int, timeout time.Duration) (fanOutResult, error) {
	rows := make([]map[string]any, n)
	tag := hex.EncodeToString(randBytes(4))
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
	if err := call(c, "POST", base+"/v1/payouts/bulk", k1, map[string]any{"currency": "DJF", "rows": rows}, 201, &b); err != nil {
		return fanOutResult{}, err
	}
	start := time.Now()
	if err := call(c, "POST", base+"/v1/payouts/bulk/"+url.PathEscape(b.ID)+"/approve", k2, nil, 200, &b); err != nil {
		return fanOutResult{}, err
	}
	res := fanOutResult{approve: time.Since(start)}
	for b.Status != "completed" {
		if time.Since(start) > timeout {
			return res, fmt.Errorf("batch %s not completed after %v (%d rows pending)", b.ID, timeout, *b.RowsPending)
		}
		time.Sleep(5 * time.Millisecond)
		if err := call(c, "GET", base+"/v1/payouts/bulk/"+url.PathEscape(b.ID), k1, nil, 200, &b); err != nil {
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

func call(c *http.Client, method, u, key string, body any, want int, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == "POST" {
		req.Header.Set("Idempotency-Key", "bench-"+hex.EncodeToString(randBytes(8)))
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %.300s", method, u, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// startPayd runs payd in this process on 127.0.0.1:0 over a fresh database.
func startPayd(engine, pgURL, logLevel string) (*app.Main, func(), error) {
	cfg, err := app.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return nil, nil, err
	}
	cfg.Addr, cfg.PublicURL, cfg.RateLimit, cfg.LogLevel = "127.0.0.1:0", "http://127.0.0.1:0", 0, logLevel
	var drop func()
	switch engine {
	case "sqlite":
		dir, err := os.MkdirTemp("", "payd-bench-")
		if err != nil {
			return nil, nil, err
		}
		cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "payd.db")
		drop = func() { os.RemoveAll(dir) }
	case "postgres":
		if pgURL == "" {
			return nil, nil, fmt.Errorf("-engine postgres needs -database-url (or PAYD_TEST_DATABASE_URL)")
		}
		u, d, err := freshSchema(pgURL)
		if err != nil {
			return nil, nil, err
		}
		cfg.DatabaseURL, drop = u, d
	default:
		return nil, nil, fmt.Errorf("unknown engine %q", engine)
	}
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: app.NewLogger(os.Stderr, logLevel)}
	if err := m.Run(context.Background()); err != nil {
		drop()
		return nil, nil, err
	}
	return m, func() { m.Close(); drop() }, nil
}

func freshSchema(base string) (string, func(), error) {
	schema := "bench_" + hex.EncodeToString(randBytes(6))
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() {
		if a, err := sql.Open("pgx", base); err == nil {
			a.Exec("DROP SCHEMA " + schema + " CASCADE")
			a.Close()
		}
	}, nil
}

// sharedData is the project's reference data: PAYD_SHARED_DATA, or
// ../shared/data beside the repository.
func sharedData() string {
	if p := os.Getenv("PAYD_SHARED_DATA"); p != "" {
		return p
	}
	return filepath.Join("..", "shared", "data")
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func engineName(engine, target string) string {
	if target != "" {
		return "remote " + target
	}
	return engine
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "payouts bench:", err)
	os.Exit(1)
}
