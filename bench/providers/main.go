// Command providers is the live-provider load benchmark: clients that each
// create a live bank_a payment intent through payd and confirm it with the
// code the provider simulator "sent by SMS", as fast as they can, at
// several concurrency levels. Beside it, the same clients drive the
// simulator alone with the two protocol calls payd makes for one pair
// (initiate, confirm code), so the difference is what payd adds over the
// provider's own latency.
//
// It starts the simulator and payd itself on 127.0.0.1:0 (SQLite in a
// temporary directory, or a fresh schema of the PostgreSQL database given):
//
//	go run ./bench/providers -engine sqlite
//	go run ./bench/providers -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_test?sslmode=disable'
//	go run ./bench/providers -sim-latency 20ms
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
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres")
	dbURL := flag.String("database-url", os.Getenv("PAYD_TEST_DATABASE_URL"), "PostgreSQL URL; a fresh schema is made in it and dropped after")
	levels := flag.String("clients", "16,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per level")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
	maxPairs := flag.Int("max-pairs", 50000, "stop a level after this many pairs")
	simLatency := flag.Duration("sim-latency", 0, "latency the simulator adds to every API call (its --latency)")
	nMerchants := flag.Int("merchants", 4, "spread the clients over this many live merchants")
	logLevel := flag.String("log-level", "warn", "payd's log level")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (payd and the simulator included)")
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

	s, err := sim.Serve("127.0.0.1:0", sim.Config{Latency: *simLatency})
	if err != nil {
		fatal(err)
	}
	defer s.Shutdown(context.Background())
	m, cleanup, err := startPayd(*engine, *dbURL, *logLevel)
	if err != nil {
		fatal(err)
	}
	defer cleanup()
	var keys []string
	for i := range max(*nMerchants, 1) {
		keys = append(keys, goLive(m, s.URL, i))
	}

	fmt.Printf("providers bench: engine=%s merchants=%d sim-latency=%s cpus=%d go=%s load=%s\n",
		*engine, len(keys), *simLatency, runtime.NumCPU(), runtime.Version(), loadavg())
	fmt.Printf("%-8s %-10s %8s %10s %9s %9s %9s %7s\n", "clients", "target", "pairs", "pairs/s", "p50_ms", "p99_ms", "max_ms", "errors")
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad client count %q", f))
		}
		viaPayd := func(c *http.Client, seq int64, client int) error {
			return paydPair(c, m.URL(), keys[client%len(keys)], s.Sim, seq)
		}
		simAlone := func(c *http.Client, seq int64, client int) error { return simPair(c, s, seq) }
		run(n, *warmup, 0, viaPayd)
		p := run(n, *duration, *maxPairs, viaPayd)
		run(n, *warmup, 0, simAlone)
		a := run(n, *duration, *maxPairs, simAlone)
		p.print(n, "payd")
		a.print(n, "sim alone")
		fmt.Printf("%-8d %-10s %8s %10s %9.2f %9.2f\n", n, "payd adds", "", "", ms(pct(p.pairs, 50)-pct(a.pairs, 50)), ms(pct(p.pairs, 99)-pct(a.pairs, 99)))
	}
	fmt.Printf("load after: %s\n", loadavg())
}

// goLive makes a merchant with approved KYC, bank_a connected to the
// simulator, and a live secret key.
func goLive(m *app.Main, simURL string, i int) string {
	ctx := context.Background()
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: fmt.Sprintf("Bench live %d", i)})
	if err != nil {
		fatal(err)
	}
	if err := m.Merchants.SetKYC(ctx, c.MerchantID, "approved"); err != nil {
		fatal(err)
	}
	if err := m.Merchants.ConnectProvider(ctx, c.MerchantID, "bank_a", merchants.ProviderConfig{BaseURL: simURL + "/bank_a",
		APIKey: "bench_key_" + c.MerchantID, CallbackSecret: "bench_cbsec_" + c.MerchantID, Timeout: "10s"}); err != nil {
		fatal(err)
	}
	k, err := m.Merchants.CreateKey(ctx, c.MerchantID, true, auth.KindSecret)
	if err != nil {
		fatal(err)
	}
	return k.Secret
}

var runID = strconv.FormatInt(time.Now().UnixNano(), 36)

// msisdn is a distinct bare local number per pair, so each pair reads its
// own code.
func msisdn(seq int64) string { return fmt.Sprintf("7%07d1", seq%10_000_000) }

// paydPair is one create + confirm through payd.
func paydPair(c *http.Client, base, key string, s *sim.Sim, seq int64) error {
	number := msisdn(seq)
	var in struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	body := []byte(`{"amount":1500,"currency":"DJF","provider":"bank_a","customer_msisdn":"` + number + `"}`)
	if err := post(c, base+"/v1/payment_intents", key, "b-"+runID+"-"+strconv.FormatInt(seq, 10), body, 201, &in); err != nil {
		return err
	}
	code, ok := s.LatestOTP(number)
	if !ok {
		return fmt.Errorf("no code for %s", number)
	}
	if err := post(c, base+"/v1/payment_intents/"+url.PathEscape(in.ID)+"/confirm", key, "", []byte(`{"otp":"`+code+`"}`), 200, &in); err != nil {
		return err
	}
	if in.Status != "succeeded" {
		return fmt.Errorf("confirm left %s %s", in.ID, in.Status)
	}
	return nil
}

// simPair is the same pair's two protocol calls made to the simulator
// directly, as payd's adapter makes them.
func simPair(c *http.Client, s *sim.Server, seq int64) error {
	number := msisdn(seq)
	ref := "bench-sim-" + runID + "-" + strconv.FormatInt(seq, 10)
	body, _ := json.Marshal(protocol.PaymentRequest{Reference: ref, AmountMinor: 1500, Currency: "DJF", Mode: "otp", MSISDN: number,
		CallbackURL: "http://127.0.0.1:9/discard"})
	var p protocol.Payment
	if err := post(c, s.URL+"/bank_a/v1/payments", "bench-sim-key", ref+":initiate", body, 201, &p); err != nil {
		return err
	}
	code, _ := s.LatestOTP(number)
	if err := post(c, s.URL+"/bank_a/v1/payments/"+p.ID+"/otp", "bench-sim-key", ref+":otp", []byte(`{"otp":"`+code+`"}`), 200, &p); err != nil {
		return err
	}
	if p.Status != "succeeded" {
		return fmt.Errorf("simulator left %s %s", p.ID, p.Status)
	}
	return nil
}

type result struct {
	pairs   []time.Duration
	errors  int64
	elapsed time.Duration
}

func (r result) print(n int, target string) {
	fmt.Printf("%-8d %-10s %8d %10.0f %9.2f %9.2f %9.2f %7d\n", n, target, len(r.pairs), float64(len(r.pairs))/r.elapsed.Seconds(),
		ms(pct(r.pairs, 50)), ms(pct(r.pairs, 99)), ms(pct(r.pairs, 100)), r.errors)
}

var seq atomic.Int64

// run drives n clients for d (or until maxPairs pairs, when > 0).
func run(n int, d time.Duration, maxPairs int, pair func(c *http.Client, seq int64, client int) error) result {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: n * 2, MaxIdleConnsPerHost: n * 2}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(d)
	var done, errCount atomic.Int64
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	start := time.Now()
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				if maxPairs > 0 && done.Add(1) > int64(maxPairs) {
					break
				}
				t0 := time.Now()
				if err := pair(client, seq.Add(1), c); err != nil {
					if errCount.Add(1) <= 3 {
						fmt.Fprintln(os.Stderr, "error:", err)
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			res.pairs = append(res.pairs, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.errors = errCount.Load()
	return res
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
	key := make([]byte, 32)
	rand.Read(key)
	cfg.SecretsKey = hex.EncodeToString(key)
	drop := func() {}
	switch engine {
	case "sqlite":
		dir, err := os.MkdirTemp("", "payd-bench-providers-")
		if err != nil {
			return nil, nil, err
		}
		cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "payd.db")
		drop = func() { os.RemoveAll(dir) }
	case "postgres":
		if pgURL == "" {
			return nil, nil, fmt.Errorf("-engine postgres needs -database-url (or PAYD_TEST_DATABASE_URL)")
		}
		if cfg.DatabaseURL, drop, err = freshSchema(pgURL); err != nil {
			return nil, nil, err
		}
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

// freshSchema makes a schema of its own in the PostgreSQL database.
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
	i := (len(s) - 1) * p / 100
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "providers bench:", err)
	os.Exit(1)
}
