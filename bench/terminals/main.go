// Command terminals is the card-present load scenario: it starts payd on
// port 0 (SQLite in a temporary directory, or a fresh schema of the
// PostgreSQL database of -db postgres://...) or targets a running one (-url
// with PAYD_API_KEY), registers and activates one terminal per worker
// (countertop and mobile alternately), encrypts every chip read beforehand
// the way the devices do, then posts the payments from the workers and
// reports payments per second and latency percentiles.
//
//	go run ./bench/terminals [-n 2000] [-c 8] [-duration 60s] [-db URL | -url URL]
//
// Loopback only, bounded in count (-n) and time (-duration).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/terminals"
	"github.com/payd/payd/internal/terminals/simulator"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	n := flag.Int("n", 2000, "payments to send")
	c := flag.Int("c", 8, "concurrent workers (one terminal each)")
	maxDur := flag.Duration("duration", 60*time.Second, "stop after this long")
	url := flag.String("url", "", "target a running payd on loopback instead (key from PAYD_API_KEY)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the timed phase (client and in-process server) to this file")
	flag.Parse()
	if err := run(db, *n, *c, *maxDur, *url, *profile); err != nil {
		harness.Fatal(err)
	}
}

func run(db *harness.Database, n, workers int, maxDur time.Duration, target, profile string) error {
	ctx := context.Background()
	if n < 1 || workers < 1 || workers > 64 || n > 100_000 {
		return fmt.Errorf("-n must be 1..100000 and -c 1..64")
	}
	key := os.Getenv("PAYD_API_KEY")
	engine := "external"
	recorder := "external server"
	if target == "" {
		m, cleanup, err := db.Start(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		created, err := harness.NewMerchant(ctx, m, "Bench merchant", "")
		if err != nil {
			return err
		}
		key, target, engine = created.SecretKeys[0], m.URL(), m.DB.Dialect().String()
		recorder = "payments service (intent, ledger, event in one transaction)"
	}
	if err := harness.RequireLoopback(target); err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if key == "" {
		return fmt.Errorf("PAYD_API_KEY is not set")
	}
	api := harness.API{Base: target, Key: key, HTTP: &http.Client{Timeout: 10 * time.Second}}

	// Register, activate and prepare each worker's payloads up front, so the
	// timed phase measures only the server.
	type job struct{ path, body string }
	queues := make([][]job, workers)
	for w := range workers {
		model := terminals.Models[w%len(terminals.Models)]
		id, err := newTerminal(api, model, w)
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

	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// Each worker posts its own terminal's payments in the order they were
	// encrypted (the replay check wants the KSN counter to rise); the queues
	// bound the count, -duration the time.
	r := loadgen.RunWith(loadgen.Options{Clients: workers, Duration: maxDur, Timeout: 10 * time.Second}, func(c *loadgen.Call) error {
		q := queues[c.Client]
		if c.I >= len(q) {
			return loadgen.Done
		}
		return api.With(c.HTTP).Post(q[c.I].path, q[c.I].body, http.StatusCreated, nil)
	})

	ms := func(d time.Duration) string { return fmt.Sprintf("%.1fms", loadgen.MS(d)) }
	fmt.Printf("card-present payments over HTTP: engine %s, recorder %s\n", engine, recorder)
	fmt.Printf("  %d payments, %d workers (%d countertop, %d mobile terminals), %.2fs\n", r.Requests, workers,
		(workers+1)/2, workers/2, r.Elapsed.Seconds())
	fmt.Printf("  throughput %.0f payments/s\n", r.Throughput())
	fmt.Printf("  latency p50 %s  p90 %s  p99 %s  max %s\n", ms(r.Latencies.Percentile(50)), ms(r.Latencies.Percentile(90)),
		ms(r.P99), ms(r.Max))
	r.WriteFailures(os.Stdout)
	if len(r.Failures) > 0 {
		return fmt.Errorf("%d kinds of failure", len(r.Failures))
	}
	return nil
}

// newTerminal registers and activates a terminal of the model.
func newTerminal(api harness.API, model terminals.Model, i int) (string, error) {
	body := fmt.Sprintf(`{"serial_number":"BENCH-%d-%d","model":"%s","outlet_id":"bench"}`, time.Now().UnixNano(), i, model)
	var t struct{ ID string }
	if err := api.Post("/v1/terminals", body, http.StatusCreated, &t); err != nil {
		return "", fmt.Errorf("register terminal: %w", err)
	}
	if err := api.Post("/v1/terminals/"+t.ID+"/activate", nil, http.StatusOK, nil); err != nil {
		return "", fmt.Errorf("activate terminal: %w", err)
	}
	return t.ID, nil
}
