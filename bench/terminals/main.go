// Command terminals is the card-present load scenario: it starts payd on
// port 0 (SQLite in a temporary directory, or -db postgres://...) or targets
// a running one (-url with PAYD_API_KEY), registers and activates one
// terminal per worker (countertop and mobile alternately), encrypts every
// chip read beforehand the way the devices do, then posts the payments from
// the workers and reports payments per second and latency percentiles.
//
//	go run ./bench/terminals [-n 2000] [-c 8] [-duration 60s] [-db URL | -url URL]
//
// Loopback only, bounded in count (-n) and time (-duration).
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/ids"
	"github.com/payd/payd/internal/merchants"
	_ "github.com/payd/payd/internal/store" // registers the pgx driver
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/simulator"
)

func main() {
	n := flag.Int("n", 2000, "payments to send")
	c := flag.Int("c", 8, "concurrent workers (one terminal each)")
	maxDur := flag.Duration("duration", 60*time.Second, "stop after this long")
	db := flag.String("db", "", "database URL for the payd this starts (default: SQLite in a temporary directory)")
	url := flag.String("url", "", "target a running payd on loopback instead (key from PAYD_API_KEY)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the timed phase (client and in-process server) to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/terminals:", err)
			os.Exit(1)
		}
		defer f.Close()
		cpuProfile = f
	}
	if err := run(*n, *c, *maxDur, *db, *url); err != nil {
		fmt.Fprintln(os.Stderr, "bench/terminals:", err)
		os.Exit(1)
	}
}

// cpuProfile receives the CPU profile when -cpuprofile is given.
var cpuProfile *os.File

func run(n, workers int, maxDur time.Duration, dbURL, target string) error {
	ctx := context.Background()
	if n < 1 || workers < 1 || workers > 64 || n > 100_000 {
		return fmt.Errorf("-n must be 1..100000 and -c 1..64")
	}
	key := os.Getenv("PAYD_API_KEY")
	engine := "external"
	recorder := "external server"
	if target == "" {
		tmp, err := os.MkdirTemp("", "payd-bench-terminals")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		switch {
		case dbURL == "":
			dbURL = "sqlite:" + filepath.Join(tmp, "payd.db")
		case strings.HasPrefix(dbURL, "postgres"):
			// A schema of its own, dropped at the end, so the bench never
			// touches the database's other data.
			scoped, drop, err := freshSchema(dbURL)
			if err != nil {
				return err
			}
			defer drop()
			dbURL = scoped
		}
		cfg, err := app.ConfigFromEnv(func(string) string { return "" })
		if err != nil {
			return err
		}
		cfg.Addr, cfg.PublicURL, cfg.DatabaseURL, cfg.RateLimit = "127.0.0.1:0", "http://127.0.0.1:0", dbURL, 0
		cfg.SecretsKey = strings.Repeat("5a", 32)
		m := &app.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
		if err := m.Run(ctx); err != nil {
			return err
		}
		defer m.Close()
		created, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Bench merchant"})
		if err != nil {
			return err
		}
		key, target, engine = created.SecretKeys[0], m.URL(), m.DB.Dialect().String()
		recorder = "payments service (intent, ledger, event in one transaction)"
	}
	if !strings.HasPrefix(target, "http://127.0.0.1:") && !strings.HasPrefix(target, "http://localhost:") {
		return fmt.Errorf("-url must be a loopback http URL")
	}
	if key == "" {
		return fmt.Errorf("PAYD_API_KEY is not set")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}

	// Register, activate and prepare each worker's payloads up front, so the
	// timed phase measures only the server.
	type job struct{ path, body string }
	queues := make([][]job, workers)
	for w := 0; w < workers; w++ {
		model := terminals.Models[w%len(terminals.Models)]
		id, err := newTerminal(client, target, key, model, w)
		if err != nil {
			return err
		}
		dev, err := simulator.NewDevice(model, id, 1)
		if err != nil {
			return err
		}
		for i := w; i < n; i += workers {
			read, err := simulator.ChipRead(simulator.Payment{PAN: "4242424242424242", AmountMinor: 500})
			if err != nil {
				return err
			}
			ksn, payload, err := dev.Encrypt(read)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(map[string]any{"amount_minor": 500, "currency": "DJF", "ksn": ksn, "encrypted_payload": payload})
			queues[w] = append(queues[w], job{"/v1/terminals/" + id + "/payments", string(b)})
		}
	}

	var (
		mu        sync.Mutex
		latencies []time.Duration
		failures  = map[string]int{}
		sent      atomic.Int64
	)
	if cpuProfile != nil {
		if err := pprof.StartCPUProfile(cpuProfile); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	deadline := time.Now().Add(maxDur)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(q []job) {
			defer wg.Done()
			for i, j := range q {
				if time.Now().After(deadline) {
					return
				}
				t0 := time.Now()
				status, body, err := post(client, target+j.path, key, j.body, fmt.Sprintf("bench-%d-%d-%s", i, t0.UnixNano(), j.path[14:30]))
				d := time.Since(t0)
				sent.Add(1)
				mu.Lock()
				latencies = append(latencies, d)
				if err != nil {
					failures[err.Error()]++
				} else if status != http.StatusCreated {
					failures[fmt.Sprintf("%d %.80s", status, body)]++
				}
				mu.Unlock()
			}
		}(queues[w])
	}
	wg.Wait()
	elapsed := time.Since(start)

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[int(p*float64(len(latencies)-1))]
	}
	fmt.Printf("card-present payments over HTTP: engine %s, recorder %s\n", engine, recorder)
	fmt.Printf("  %d payments, %d workers (%d countertop, %d mobile terminals), %.2fs\n", sent.Load(), workers,
		(workers+1)/2, workers/2, elapsed.Seconds())
	fmt.Printf("  throughput %.0f payments/s\n", float64(sent.Load())/elapsed.Seconds())
	fmt.Printf("  latency p50 %s  p90 %s  p99 %s  max %s\n", ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(pct(1)))
	for k, v := range failures {
		fmt.Printf("  failed: %d × %s\n", v, k)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d kinds of failure", len(failures))
	}
	return nil
}

// freshSchema creates a schema for one run and returns the URL that uses it.
func freshSchema(base string) (string, func(), error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	schema := "bench_" + strings.ToLower(ids.New(""))
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
	u, err := neturl.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func newTerminal(c *http.Client, base, key string, model terminals.Model, i int) (string, error) {
	body := fmt.Sprintf(`{"serial_number":"BENCH-%d-%d","model":"%s","outlet_id":"bench"}`, time.Now().UnixNano(), i, model)
	status, resp, err := post(c, base+"/v1/terminals", key, body, "")
	if err != nil || status != http.StatusCreated {
		return "", fmt.Errorf("register terminal: %d %s %v", status, resp, err)
	}
	var t struct{ ID string }
	json.Unmarshal(resp, &t)
	if status, resp, err = post(c, base+"/v1/terminals/"+t.ID+"/activate", key, "", ""); err != nil || status != http.StatusOK {
		return "", fmt.Errorf("activate terminal: %d %s %v", status, resp, err)
	}
	return t.ID, nil
}

func post(c *http.Client, url, key, body, idemKey string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
