// Package loadgen runs a bounded closed-loop HTTP load against a payd on
// loopback and reports throughput and latency percentiles. Every scenario in
// bench/ uses it; it never targets anything but the address it is given.
package loadgen

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Result is one load step's outcome.
type Result struct {
	Clients  int
	Requests int64
	Errors   int64
	Elapsed  time.Duration
	P50, P99 time.Duration
	Max      time.Duration
}

// Throughput is requests per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) String() string {
	return fmt.Sprintf("clients=%-3d requests=%-7d errors=%-4d throughput=%8.0f/s p50=%7.2fms p99=%7.2fms max=%7.2fms",
		r.Clients, r.Requests, r.Errors, r.Throughput(), ms(r.P50), ms(r.P99), ms(r.Max))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Op performs one logical operation (one or more requests) and reports
// whether it succeeded. n is the operation's sequence number.
type Op func(c *http.Client, n int64) error

// Run drives op from clients goroutines for d (and at most maxOps
// operations), measuring each op's latency.
func Run(clients int, d time.Duration, maxOps int64, op Op) Result {
	tr := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	var seq, errs atomic.Int64
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				n := seq.Add(1)
				if maxOps > 0 && n > maxOps {
					return
				}
				t := time.Now()
				if err := op(c, n); err != nil {
					errs.Add(1)
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	r := Result{Clients: clients, Requests: int64(len(all)), Errors: errs.Load(), Elapsed: elapsed}
	if len(all) > 0 {
		r.P50 = all[len(all)/2]
		r.P99 = all[len(all)*99/100]
		r.Max = all[len(all)-1]
	}
	return r
}

// Check turns an unexpected status into an error and drains the body.
func Check(resp *http.Response, err error, want ...int) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, w := range want {
		if resp.StatusCode == w {
			return nil
		}
	}
	return fmt.Errorf("status %d", resp.StatusCode)
}
