// Command payments is the payment-intent load benchmark: clients that each
// create a bank_a intent and confirm it with the sandbox code, as fast as
// they can, at several concurrency levels. It reports create+confirm pairs
// per second and pair latency percentiles.
//
// It starts payd itself on 127.0.0.1:0 (SQLite in a temporary directory, or
// a fresh schema of the PostgreSQL database given) unless -url points at a
// running payd:
//
//	go run ./bench/payments -engine sqlite
//	go run ./bench/payments -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//	go run ./bench/payments -url http://127.0.0.1:8080 -key sk_test_...
//
// Every run is bounded: -duration per level and -max-pairs per level.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres (when payd is started here)")
	dbURL := flag.String("database-url", os.Getenv("PAYD_TEST_DATABASE_URL"), "PostgreSQL URL; a fresh schema is made in it and dropped after")
	target := flag.String("url", "", "benchmark a running payd at this URL instead of starting one")
	key := flag.String("key", os.Getenv("PAYD_API_KEY"), "secret test key for -url")
	levels := flag.String("clients", "1,16,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per level")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
	maxPairs := flag.Int("max-pairs", 100000, "stop a level after this many pairs")
	logLevel := flag.String("log-level", "warn", "payd's log level when started here (info logs every request)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (payd included when started here)")
	nMerchants := flag.Int("merchants", 1, "spread the clients over this many merchants (each merchant's balance rows are a hot spot)")
	flag.Parse()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	base, keys := *target, []string{*key}
	if base == "" {
		m, cleanup, err := startPayd(*engine, *dbURL, *logLevel)
		if err != nil {
			fatal(err)
		}
		defer cleanup()
		keys = nil
		for i := range max(*nMerchants, 1) {
			c, err := m.Merchants.Create(context.Background(), merchants.CreateParams{Name: fmt.Sprintf("Bench %d", i)})
			if err != nil {
				fatal(err)
			}
			keys = append(keys, c.SecretKeys[0])
		}
		base = m.URL()
	} else if *key == "" {
		fatal(fmt.Errorf("-url needs -key (or PAYD_API_KEY)"))
	}

	fmt.Printf("payments bench: engine=%s merchants=%d cpus=%d go=%s load=%s\n", engineName(*engine, *target), len(keys), runtime.NumCPU(), runtime.Version(), loadavg())
	fmt.Printf("%-8s %8s %10s %9s %9s %9s %11s %11s %7s\n", "clients", "pairs", "pairs/s", "p50_ms", "p99_ms", "max_ms", "create_p99", "confirm_p99", "errors")
	for _, s := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad client count %q", s))
		}
		run(base, keys, n, *warmup, 0)
		r := run(base, keys, n, *duration, *maxPairs)
		fmt.Printf("%-8d %8d %10.0f %9.2f %9.2f %9.2f %11.2f %11.2f %7d\n", n, len(r.pairs), float64(len(r.pairs))/r.elapsed.Seconds(),
			ms(pct(r.pairs, 50)), ms(pct(r.pairs, 99)), ms(pct(r.pairs, 100)), ms(pct(r.creates, 99)), ms(pct(r.confirms, 99)), r.errors)
	}
	fmt.Printf("load after: %s\n", loadavg())
}

type result struct {
	pairs, creates, confirms []time.Duration
	errors                   int64
	elapsed                  time.Duration
}

// run drives n clients for d (or until maxPairs pairs, when > 0); client c
// uses keys[c % len(keys)].
func run(base string, keys []string, n int, d time.Duration, maxPairs int) result {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: n * 2, MaxIdleConnsPerHost: n * 2}}
	deadline := time.Now().Add(d)
	var done atomic.Int64
	var errCount atomic.Int64
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	start := time.Now()
	for c := range n {
		wg.Add(1)
		key := keys[c%len(keys)]
		go func() {
			defer wg.Done()
			var pairs, creates, confirms []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				if maxPairs > 0 && done.Add(1) > int64(maxPairs) {
					break
				}
				t0 := time.Now()
				id, err := createIntent(client, base, key, fmt.Sprintf("bench-%d-%d-%d", start.UnixNano(), c, i))
				t1 := time.Now()
				if err == nil {
					err = confirmIntent(client, base, key, id)
				}
				t2 := time.Now()
				if err != nil {
					errCount.Add(1)
					if errCount.Load() <= 3 {
						fmt.Fprintln(os.Stderr, "error:", err)
					}
					continue
				}
				pairs, creates, confirms = append(pairs, t2.Sub(t0)), append(creates, t1.Sub(t0)), append(confirms, t2.Sub(t1))
			}
			mu.Lock()
			res.pairs = append(res.pairs, pairs...)
			res.creates = append(res.creates, creates...)
			res.confirms = append(res.confirms, confirms...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.errors = errCount.Load()
	client.CloseIdleConnections()
	return res
}

var createBody = []byte(`{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377123456","description":"bench"}`)

func createIntent(c *http.Client, base, key, idem string) (string, error) {
	var out struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := post(c, base+"/v1/payment_intents", key, idem, createBody, 201, &out); err != nil {
		return "", err
	}
	return out.ID, nil
}

func confirmIntent(c *http.Client, base, key, id string) error {
	var out struct {
		Status string `json:"status"`
	}
	if err := post(c, base+"/v1/payment_intents/"+url.PathEscape(id)+"/confirm", key, "", []byte(`{"otp":"123456"}`), 200, &out); err != nil {
		return err
	}
	if out.Status != "succeeded" {
		return fmt.Errorf("confirm left %s %s", id, out.Status)
	}
	return nil
}

func post(c *http.Client, u, key, idem string, body []byte, want int, out any) error {
	req, err := http.NewRequest("POST", u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
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
		return fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
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
	slog.SetDefault(m.Logger)
	return m, func() { m.Close(); drop() }, nil
}

func freshSchema(base string) (string, func(), error) {
	b := make([]byte, 6)
	rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
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

func engineName(engine, target string) string {
	if target != "" {
		return "external " + target
	}
	return engine
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
