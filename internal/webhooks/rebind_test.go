package webhooks_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/pagination"
	"github.com/payd/payd/internal/secretbox"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/webhooks"
)

// TestDNSRebindingRefused: a live endpoint whose name resolved to a public
// address at registration and resolves to loopback at delivery time is never
// reached; the attempt records why.
func TestDNSRebindingRefused(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var hits atomic.Int32
		internal := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		defer internal.Close()
		port := internal.URL[strings.LastIndex(internal.URL, ":")+1:]
		var lookups atomic.Int32
		resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
			if lookups.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil // public, at registration
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil // rebound to the host itself
		}
		box, _ := secretbox.New(strings.Repeat("cd", 32))
		svc := webhooks.New(webhooks.Config{DB: db, Box: box, Resolve: resolve, RetrySchedule: []time.Duration{10 * time.Millisecond},
			Poll: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			TLSConfig: &tls.Config{InsecureSkipVerify: true}})
		owner := webhooks.Owner{MerchantID: "mer_rebind", Livemode: true}
		url := "https://hooks.rebind.example:" + port + "/hooks"
		if _, _, err := svc.CreateEndpoint(ctx, owner, webhooks.EndpointParams{URL: &url}, nil); err != nil {
			t.Fatalf("registration (public address): %v", err)
		}
		var ev events.Event
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			ev, err = events.Emit(ctx, tx, owner.MerchantID, true, "payout.succeeded", "payout", "po_REBIND", map[string]string{"id": "po_REBIND"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { svc.Run(runCtx); close(done) }()
		defer func() { stop(); <-done }()
		var d webhooks.Delivery
		waitFor(t, 20*time.Second, "the delivery to fail", func() bool {
			ds, _, err := svc.ListDeliveries(ctx, owner, ev.ID, pageOf(10))
			if err != nil || len(ds) != 1 {
				return false
			}
			d = ds[0]
			return d.Status == webhooks.DeliveryFailed
		})
		if hits.Load() != 0 {
			t.Fatalf("the internal server was reached %d times", hits.Load())
		}
		if len(d.Attempts) != 2 {
			t.Fatalf("%d attempts", len(d.Attempts))
		}
		for _, a := range d.Attempts {
			if a.Error == nil || !strings.Contains(*a.Error, "127.0.0.1 is a loopback address") || a.HTTPStatus != nil {
				t.Fatalf("attempt %+v: %v", a, *a.Error)
			}
		}
	})
}

func pageOf(n int) pagination.Page { return pagination.Page{Limit: n} }
