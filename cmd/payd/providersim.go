package main

import (
	"context"
	"fmt"
	"time"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/providers/sim"
)

func init() {
	register(command{name: "provider-sim", summary: "run the provider simulator (all six rails, docs/providers.md)", run: runProviderSim})
	describe("provider-sim", usage{
		synopsis: "[--addr 127.0.0.1:9090] [--latency D] [--error-rate F] [--timeout-rate F] [--push-delay D] [--duplicate-callbacks] [--late-callbacks] [--drop-callbacks]",
		about:    "Serves a simulator of the six live rails speaking the provider protocol, for staging and tests.",
	})
}

// runProviderSim serves the simulator until interrupted.
func runProviderSim(ctx context.Context, e *env, args []string) error {
	fs := newFlags("provider-sim")
	addr := fs.String("addr", "127.0.0.1:9090", "listen address")
	publicURL := fs.String("public-url", "", "base URL of the hosted pages (default http://ADDR)")
	latency := fs.Duration("latency", 0, "latency added to every API call")
	errorRate := fs.Float64("error-rate", 0, "fraction of API calls answered 500 (before anything is done)")
	timeoutRate := fs.Float64("timeout-rate", 0, "fraction of initiate, payout and refund calls that hang after the provider has acted")
	refundFailureRate := fs.Float64("refund-failure-rate", 0, "fraction of refunds the provider refuses (refund_declined)")
	pushDelay := fs.Duration("push-delay", 3*time.Second, "time before a push payment is approved")
	duplicate := fs.Bool("duplicate-callbacks", false, "send every callback twice")
	late := fs.Bool("late-callbacks", false, "send every callback 2 s late")
	drop := fs.Bool("drop-callbacks", false, "send no callbacks (outcomes only by status queries)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	for name, f := range map[string]float64{"--error-rate": *errorRate, "--timeout-rate": *timeoutRate,
		"--refund-failure-rate": *refundFailureRate} {
		if f < 0 || f > 1 {
			return badUsage(e, fs, "%s must be between 0 and 1", name)
		}
	}
	cfg := sim.Config{Latency: *latency, ErrorRate: *errorRate, TimeoutRate: *timeoutRate, PushDelay: *pushDelay,
		RefundFailureRate:  *refundFailureRate,
		DuplicateCallbacks: *duplicate, LateCallbacks: *late, DropCallbacks: *drop, PublicURL: *publicURL,
		Logger: app.NewLogger(e.stderr, "info")}
	srv, err := sim.Serve(*addr, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "provider simulator listening on %s (rails: %s/{bank_a,bank_b,wallet_a,wallet_b,wallet_c,wallet_d})\n", srv.URL, srv.URL)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
