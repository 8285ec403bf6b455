package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/payd/payd/internal/events"
	"github.com/payd/payd/internal/store"
	"github.com/payd/payd/internal/store/storetest"
	"github.com/payd/payd/internal/webhooks"
)

// TestMaxRateAcrossProcesses: two delivery workers sharing the database
// (two payd processes) together start at most max_rate attempts per second
// to an endpoint (10/s here: 40 deliveries take about 4 s and no second holds
// more than 10 plus one of slack for the arrival times' jitter), while an
// endpoint of the same merchant without a limit gets its 40 at once.
func TestMaxRateAcrossProcesses(t *testing.T) {
	const rate, total = 10, 40
	for _, eng := range storetest.Engines() {
		t.Run(string(eng), func(t *testing.T) {
			db, svcs := twoProcesses(t, eng, webhooks.Config{Poll: 50 * time.Millisecond,
				RetrySchedule: []time.Duration{time.Second}})
			var mu sync.Mutex
			arrivals := map[string][]time.Time{}
			rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				arrivals[r.URL.Path] = append(arrivals[r.URL.Path], time.Now())
				mu.Unlock()
			}))
			defer rcv.Close()
			ctx := context.Background()
			owner := webhooks.Owner{MerchantID: "mer_rate", Livemode: false}
			limited, free := rcv.URL+"/limited", rcv.URL+"/free"
			r := rate
			if _, _, err := svcs[0].CreateEndpoint(ctx, owner, webhooks.EndpointParams{URL: &limited, MaxRate: &webhooks.MaxRate{Value: &r}}, nil); err != nil {
				t.Fatal(err)
			}
			if _, _, err := svcs[1].CreateEndpoint(ctx, owner, webhooks.EndpointParams{URL: &free}, nil); err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for _, s := range svcs {
				wg.Add(1)
				go func(s *webhooks.Service) { defer wg.Done(); s.Run(runCtx) }(s)
			}
			defer func() { stop(); wg.Wait() }()
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				for j := 0; j < total; j++ {
					if _, err := events.Emit(ctx, tx, owner.MerchantID, false, "payout.succeeded", "payout", fmt.Sprintf("po_rate_%03d", j), map[string]int{"n": j}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			svcs[0].Notify()
			svcs[1].Notify()
			waitFor(t, time.Minute, "every delivery", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(arrivals["/limited"]) >= total && len(arrivals["/free"]) >= total
			})
			mu.Lock()
			lim, fr := append([]time.Time(nil), arrivals["/limited"]...), append([]time.Time(nil), arrivals["/free"]...)
			mu.Unlock()
			sort.Slice(lim, func(i, j int) bool { return lim[i].Before(lim[j]) })
			sort.Slice(fr, func(i, j int) bool { return fr[i].Before(fr[j]) })
			if peak := peakWithin(lim, time.Second); peak > rate+1 {
				t.Fatalf("%d deliveries to the limited endpoint within one second; max_rate is %d", peak, rate)
			}
			if span := lim[len(lim)-1].Sub(lim[0]); span < time.Duration(total-rate-1)*time.Second/rate {
				t.Fatalf("%d deliveries at %d/s took %s", total, rate, span)
			}
			if span := fr[len(fr)-1].Sub(fr[0]); span > 2*time.Second {
				t.Fatalf("the unlimited endpoint's %d deliveries took %s: the limit slowed it", total, span)
			}
			t.Logf("limited: %d in %s (peak %d in 1 s); unlimited: %d in %s", len(lim), lim[len(lim)-1].Sub(lim[0]).Round(time.Millisecond),
				peakWithin(lim, time.Second), len(fr), fr[len(fr)-1].Sub(fr[0]).Round(time.Millisecond))
		})
	}
}
