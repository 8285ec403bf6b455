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
// (-db URL is the shorthand of bench/harness.) Every run is bounded:
// -duration per level and -max-pairs per level.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/payd/payd/bench/harness"
	"github.com/payd/payd/bench/loadgen"
	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/auth"
	"github.com/payd/payd/internal/merchants"
	"github.com/payd/payd/internal/providers/protocol"
	"github.com/payd/payd/internal/providers/sim"
)

func main() {
	db := harness.DatabaseFlags(flag.CommandLine)
	levels := flag.String("clients", "16,64", "comma-separated client counts")
	duration := flag.Duration("duration", 10*time.Second, "measuring time per level")
	warmup := flag.Duration("warmup", 2*time.Second, "unmeasured time before each level")
	maxPairs := flag.Int64("max-pairs", 50000, "stop a level after this many pairs")
	simLatency := flag.Duration("sim-latency", 0, "latency the simulator adds to every API call (its --latency)")
	nMerchants := flag.Int("merchants", 4, "spread the clients over this many live merchants")
	logLevel := flag.String("log-level", "warn", "payd's log level (to stderr)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (payd and the simulator included)")
	flag.Parse()
	clients, err := harness.Levels("-clients", *levels)
	if err != nil {
		harness.Fatal(err)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			harness.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			harness.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	s, err := sim.Serve("127.0.0.1:0", sim.Config{Latency: *simLatency})
	if err != nil {
		harness.Fatal(err)
	}
	defer s.Shutdown(ctx)
	m, cleanup, err := db.Start(ctx, harness.Logs(os.Stderr, *logLevel))
	if err != nil {
		harness.Fatal(err)
	}
	defer cleanup()
	var apis []harness.API
	for i := range max(*nMerchants, 1) {
		apis = append(apis, harness.API{Base: m.URL(), Key: goLive(ctx, m, s.URL, i)})
	}
	simAPI := harness.API{Base: s.URL, Key: "bench-sim-key"}

	fmt.Printf("providers bench: engine=%s merchants=%d sim-latency=%s cpus=%d go=%s load=%s\n",
		db.Engine, len(apis), *simLatency, runtime.NumCPU(), runtime.Version(), harness.LoadAvg())
	fmt.Printf("%-8s %-10s %8s %10s %9s %9s %9s %7s\n", "clients", "target", "pairs", "pairs/s", "p50_ms", "p99_ms", "max_ms", "errors")
	for _, n := range clients {
		viaPayd := func(c *loadgen.Call) error { return paydPair(apis[c.Client%len(apis)].With(c.HTTP), s.Sim, seq.Add(1)) }
		simAlone := func(c *loadgen.Call) error { return simPair(simAPI.With(c.HTTP), s.Sim, seq.Add(1)) }
		loadgen.RunWith(loadgen.Options{Clients: n, Duration: *warmup}, viaPayd)
		p := loadgen.RunWith(loadgen.Options{Clients: n, Duration: *duration, MaxOps: *maxPairs}, viaPayd)
		loadgen.RunWith(loadgen.Options{Clients: n, Duration: *warmup}, simAlone)
		a := loadgen.RunWith(loadgen.Options{Clients: n, Duration: *duration, MaxOps: *maxPairs}, simAlone)
		report(n, "payd", p)
		report(n, "sim alone", a)
		fmt.Printf("%-8d %-10s %8s %10s %9.2f %9.2f\n", n, "payd adds", "", "", loadgen.MS(p.P50-a.P50), loadgen.MS(p.P99-a.P99))
	}
	fmt.Printf("load after: %s\n", harness.LoadAvg())
}

func report(n int, target string, r loadgen.Result) {
	fmt.Printf("%-8d %-10s %8d %10.0f %9.2f %9.2f %9.2f %7d\n", n, target, r.Succeeded(), float64(r.Succeeded())/r.Elapsed.Seconds(),
		loadgen.MS(r.P50), loadgen.MS(r.P99), loadgen.MS(r.Max), r.Errors)
	r.WriteFailures(os.Stdout)
}

// goLive makes a merchant with approved KYC, bank_a connected to the
// simulator, and a live secret key.
func goLive(ctx context.Context, m *app.Main, simURL string, i int) string {
	c, err := harness.NewMerchant(ctx, m, fmt.Sprintf("Bench live %d", i), "")
	if err != nil {
		harness.Fatal(err)
	}
	if err := m.Merchants.SetKYC(ctx, c.MerchantID, "approved"); err != nil {
		harness.Fatal(err)
	}
	if err := m.Merchants.ConnectProvider(ctx, c.MerchantID, "bank_a", merchants.ProviderConfig{BaseURL: simURL + "/bank_a",
		APIKey: "bench_key_" + c.MerchantID, CallbackSecret: "bench_cbsec_" + c.MerchantID, Timeout: "10s"}); err != nil {
		harness.Fatal(err)
	}
	k, err := m.Merchants.CreateKey(ctx, c.MerchantID, true, auth.KindSecret)
	if err != nil {
		harness.Fatal(err)
	}
	return k.Secret
}

// seq numbers the pairs of the whole run, so idempotency keys, references
// and customer numbers never repeat.
var seq atomic.Int64

var runID = harness.RandomHex(4)

// msisdn is a distinct bare local number per pair (never ending in 0000,
// which the simulator refuses), so each pair reads its own code.
func msisdn(n int64) string { return fmt.Sprintf("7%07d1", n%10_000_000) }

// paydPair is one create + confirm through payd.
func paydPair(api harness.API, s *sim.Sim, n int64) error {
	number := msisdn(n)
	var in struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents", Want: 201, IdempotencyKey: "b-" + runID + "-" + strconv.FormatInt(n, 10),
		Body: map[string]any{"amount": 1500, "currency": "DJF", "provider": "bank_a", "customer_msisdn": number}}, &in); err != nil {
		return err
	}
	code, ok := s.LatestOTP(number)
	if !ok {
		return fmt.Errorf("no code for %s", number)
	}
	if err := api.Do(harness.Request{Method: "POST", Path: "/v1/payment_intents/" + url.PathEscape(in.ID) + "/confirm",
		Body: map[string]string{"otp": code}}, &in); err != nil {
		return err
	}
	if in.Status != "succeeded" {
		return fmt.Errorf("confirm left the intent %s", in.Status)
	}
	return nil
}

// simPair is the same pair's two protocol calls made to the simulator
// directly, as payd's adapter makes them.
func simPair(api harness.API, s *sim.Sim, n int64) error {
	number := msisdn(n)
	ref := "bench-sim-" + runID + "-" + strconv.FormatInt(n, 10)
	var p protocol.Payment
	if err := api.Do(harness.Request{Method: "POST", Path: "/bank_a/v1/payments", Want: 201, IdempotencyKey: ref + ":initiate",
		Body: protocol.PaymentRequest{Reference: ref, AmountMinor: 1500, Currency: "DJF", Mode: "otp", MSISDN: number,
			CallbackURL: "http://127.0.0.1:9/discard"}}, &p); err != nil {
		return err
	}
	code, _ := s.LatestOTP(number)
	if err := api.Do(harness.Request{Method: "POST", Path: "/bank_a/v1/payments/" + p.ID + "/otp", IdempotencyKey: ref + ":otp",
		Body: protocol.OTPRequest{OTP: code}}, &p); err != nil {
		return err
	}
	if p.Status != "succeeded" {
		return fmt.Errorf("the simulator left the payment %s", p.Status)
	}
	return nil
}
