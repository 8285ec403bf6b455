package loadgen

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	l := Sorted([]time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6})
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}, {0, 1}} {
		if got := l.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if Latencies(nil).Percentile(50) != 0 || Latencies(nil).Max() != 0 {
		t.Error("empty latencies are not 0")
	}
}

func TestRunWithCountsBoundsAndPhases(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	r := RunWith(Options{Clients: 3, MaxOps: 30}, func(c *Call) error {
		path := "/"
		if c.N%10 == 0 {
			path = "/fail"
		}
		t0 := time.Now()
		resp, err := c.HTTP.Get(srv.URL + path)
		c.Record("get", time.Since(t0))
		return Check(resp, err, 200)
	})
	if r.Requests != 30 || r.Errors != 3 || r.Succeeded() != 27 || len(r.Latencies) != 30 || len(r.Phases["get"]) != 30 {
		t.Fatalf("requests=%d errors=%d latencies=%d phases=%d", r.Requests, r.Errors, len(r.Latencies), len(r.Phases["get"]))
	}
	if r.Failures["status 500"] != 3 || r.P50 > r.P99 || r.P99 > r.Max {
		t.Fatalf("failures=%v p50=%v p99=%v max=%v", r.Failures, r.P50, r.P99, r.Max)
	}

	// A client that runs out of work ends without counting that operation.
	r = RunWith(Options{Clients: 2, Duration: time.Minute}, func(c *Call) error {
		if c.I >= 5+c.Client {
			return Done
		}
		if c.Client == 1 {
			return errors.New("boom")
		}
		return nil
	})
	if r.Requests != 11 || r.Errors != 6 || r.Failures["boom"] != 6 {
		t.Fatalf("requests=%d errors=%d failures=%v", r.Requests, r.Errors, r.Failures)
	}
}
