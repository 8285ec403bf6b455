// Package loadgen runs a bounded closed-loop HTTP load against a payd on
// loopback and reports throughput and latency percentiles. Every scenario in
// bench/ uses it; it never targets anything but the address it is given.
package loadgen

import (
	"errors"
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
	Requests int64 // operations run, failed ones included
	Errors   int64 // operations that returned an error
	Elapsed  time.Duration
	P50, P99 time.Duration
	Max      time.Duration

	Latencies Latencies            // every operation's latency, failed ones included
	Phases    map[string]Latencies // what the operations recorded with Call.Record, by phase
	Failures  map[string]int       // operations' errors by message: 20 kinds at most, the rest as "other errors"
}

// maxFailureKinds bounds Result.Failures; further kinds count as otherFailures.
const maxFailureKinds = 20

const otherFailures = "other errors"

// Throughput is requests per second.
func (r Result) Throughput() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Succeeded is the number of operations that returned no error.
func (r Result) Succeeded() int64 { return r.Requests - r.Errors }

// String is the step's one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("clients=%-3d requests=%-7d errors=%-4d throughput=%8.0f/s p50=%7.2fms p99=%7.2fms max=%7.2fms",
		r.Clients, r.Requests, r.Errors, r.Throughput(), MS(r.P50), MS(r.P99), MS(r.Max))
}

// WriteFailures writes one "  failed: N × message" line per kind of error.
func (r Result) WriteFailures(w io.Writer) {
	kinds := make([]string, 0, len(r.Failures))
	for k := range r.Failures {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "  failed: %d × %s\n", r.Failures[k], k)
	}
}

// Op performs one logical operation (one or more requests) and reports
// whether it succeeded. n is the operation's sequence number.
type Op func(c *http.Client, n int64) error

// Run drives op from clients goroutines for d (and at most maxOps
// operations), measuring each op's latency.
func Run(clients int, d time.Duration, maxOps int64, op Op) Result {
	return RunWith(Options{Clients: clients, Duration: d, MaxOps: maxOps}, func(c *Call) error { return op(c.HTTP, c.N) })
}

// Options bound and shape one run; at least one of Duration and MaxOps must
// be set.
type Options struct {
	Clients  int           // concurrent clients, each running operations back to back
	Duration time.Duration // no operation starts after this long; 0: no time bound
	MaxOps   int64         // at most this many operations in all; 0: no count bound
	Timeout  time.Duration // per-request timeout of the HTTP client; 0: 30s
}

// Call describes one operation to the function performing it.
type Call struct {
	HTTP   *http.Client // shared by the run's clients, with a keep-alive pool sized for them
	Client int          // the client running the operation, 0 to Clients-1
	N      int64        // the operation's sequence number in the run, from 1
	I      int          // the operation's sequence number within its client, from 0

	phases map[string][]time.Duration
}

// Record adds d to the named phase's latencies (for example one request of
// an operation made of several).
func (c *Call) Record(phase string, d time.Duration) {
	c.phases[phase] = append(c.phases[phase], d)
}

// Done, returned by an operation, ends its client without counting the
// operation (for a client that has run out of prepared work).
var Done = errors.New("loadgen: client done")

// RunWith drives op from o.Clients goroutines until o.Duration has passed
// or o.MaxOps operations have started, measuring each operation's latency.
func RunWith(o Options, op func(*Call) error) Result {
	if o.Duration <= 0 && o.MaxOps <= 0 {
		panic("loadgen: a run needs a Duration or a MaxOps")
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	tr := &http.Transport{MaxIdleConns: o.Clients * 2, MaxIdleConnsPerHost: o.Clients * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: o.Timeout}
	defer tr.CloseIdleConnections()
	var seq, errCount atomic.Int64
	type clientResult struct {
		lat    []time.Duration
		phases map[string][]time.Duration
		fails  map[string]int
	}
	results := make([]clientResult, o.Clients)
	start := time.Now()
	deadline := start.Add(o.Duration)
	var wg sync.WaitGroup
	for i := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr := &results[i]
			cr.phases, cr.fails = map[string][]time.Duration{}, map[string]int{}
			for k := 0; o.Duration <= 0 || time.Now().Before(deadline); k++ {
				n := seq.Add(1)
				if o.MaxOps > 0 && n > o.MaxOps {
					return
				}
				c := &Call{HTTP: hc, Client: i, N: n, I: k, phases: cr.phases}
				t := time.Now()
				err := op(c)
				d := time.Since(t)
				if errors.Is(err, Done) {
					return
				}
				if err != nil {
					errCount.Add(1)
					msg := err.Error()
					if _, ok := cr.fails[msg]; !ok && len(cr.fails) >= maxFailureKinds {
						msg = otherFailures
					}
					cr.fails[msg]++
				}
				cr.lat = append(cr.lat, d)
			}
		}()
	}
	wg.Wait()
	r := Result{Clients: o.Clients, Errors: errCount.Load(), Elapsed: time.Since(start),
		Phases: map[string]Latencies{}, Failures: map[string]int{}}
	var all []time.Duration
	phases := map[string][]time.Duration{}
	for _, cr := range results {
		all = append(all, cr.lat...)
		for k, v := range cr.phases {
			phases[k] = append(phases[k], v...)
		}
		for k, v := range cr.fails {
			if _, ok := r.Failures[k]; !ok && len(r.Failures) >= maxFailureKinds {
				k = otherFailures
			}
			r.Failures[k] += v
		}
	}
	for k, v := range phases {
		r.Phases[k] = Sorted(v)
	}
	r.Latencies = Sorted(all)
	r.Requests = int64(len(all))
	r.P50, r.P99, r.Max = r.Latencies.Percentile(50), r.Latencies.Percentile(99), r.Latencies.Max()
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
