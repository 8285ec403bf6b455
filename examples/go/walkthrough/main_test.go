package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/payd/payd/client"
	"github.com/payd/payd/internal/app/apptest"
)

// TestWalkthrough runs the example against a real payd on each engine.
func TestWalkthrough(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out bytes.Buffer
		if err := run(ctx, client.New(e.SK, client.WithBaseURL(e.URL)), "127.0.0.1:0", &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		t.Log("\n" + out.String())
		for _, want := range []string{"requires_action (next action collect_otp)", "succeeded, 1500 DJF captured",
			"payment_intent.succeeded", "payout.succeeded", "refund ", "balance DJF: available 200", "1 succeeded payment intent(s)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	})
}
