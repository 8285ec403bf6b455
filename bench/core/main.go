// Command core measures payd's HTTP core on one engine: authenticated GET
// /v1/balance (auth, rate limiter, logging, metrics, one indexed read) and
// idempotent creates (POST /v1/sandbox/topups, each with its own key: the
// idempotency claim, a ledger posting and the stored response), at 1, 16
// and 64 concurrent clients. It starts its own payd on a loopback port.
//
//	go run ./bench/core -engine sqlite
//	go run ./bench/core -engine postgres -database-url 'postgres://postgres@127.0.0.1:5432/payd_bench?sslmode=disable'
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/merchants"
)

func main() {
	engine := flag.String("engine", "sqlite", "sqlite or postgres")
	dbURL := flag.String("database-url", "", "database URL (postgres: an empty database you can drop)")
	dur := flag.Duration("duration", 5*time.Second, "duration of each step")
	clients := flag.String("clients", "1,16,64", "concurrency levels")
	flag.Parse()

	url := *dbURL
	if *engine == "sqlite" && url == "" {
		dir, _ := os.MkdirTemp("", "payd-bench")
		defer os.RemoveAll(dir)
		url = "sqlite:" + filepath.Join(dir, "bench.db")
	}
	if url == "" {
		fmt.Fprintln(os.Stderr, "-database-url is required for postgres")
		os.Exit(2)
	}
	cfg, _ := app.ConfigFromEnv(func(string) string { return "" })
	cfg.Addr, cfg.PublicURL, cfg.DatabaseURL, cfg.RateLimit = "127.0.0.1:0", "", url, 0
	cfg.Workers = false
	m := &app.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	ctx := context.Background()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer m.Close()
	c, err := m.Merchants.Create(ctx, merchants.CreateParams{Name: "Bench"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	base, key := m.URL(), c.SecretKeys[0]
	fmt.Printf("engine=%s cores=2 go=%s\n", *engine, strings.TrimPrefix(os.Getenv("GOVERSION"), ""))

	var levels []int
	for _, s := range strings.Split(*clients, ",") {
		n, _ := strconv.Atoi(s)
		levels = append(levels, n)
	}
	fmt.Println("\nGET /v1/balance (authenticated read)")
	for _, n := range levels {
		fmt.Println(loadgen.Run(n, *dur, 0, func(cl *http.Client, _ int64) error {
			req, _ := http.NewRequest("GET", base+"/v1/balance", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := cl.Do(req)
			return loadgen.Check(resp, err, 200)
		}))
	}
	fmt.Println("\nPOST /v1/sandbox/topups with a fresh Idempotency-Key (idempotent create + ledger posting)")
	for _, n := range levels {
		run := strconv.Itoa(n)
		fmt.Println(loadgen.Run(n, *dur, 0, func(cl *http.Client, i int64) error {
			req, _ := http.NewRequest("POST", base+"/v1/sandbox/topups", bytes.NewReader([]byte(`{"currency":"DJF","amount_minor":5}`)))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "bench-"+run+"-"+strconv.FormatInt(i, 10))
			resp, err := cl.Do(req)
			return loadgen.Check(resp, err, 201)
		}))
	}
}
