package app_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/payd/payd/internal/app"
	"github.com/payd/payd/internal/app/apptest"
)

func metricsSize(t *testing.T, e *apptest.Env) (int, string) {
	t.Helper()
	resp, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return len(b), string(b)
}

// TestUnknownProviderCallbacksBounded (issue 15, finding 4): callbacks for
// providers payd does not know answer 404 and never become metric labels, so
// 2,000 of them (sent concurrently) leave /metrics the size it was; a public
// route past its per-address rate answers 429.
func TestUnknownProviderCallbacksBounded(t *testing.T) {
	apptest.ForEachEngine(t, func(t *testing.T, e *apptest.Env) {
		post := func(provider string) int {
			resp, err := http.Post(e.URL+"/providers/"+provider+"/callbacks?merchant=x", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Error(err)
				return 0
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		post("bank_a") // a known provider's series exists from here on
		before, _ := metricsSize(t, e)
		var wg sync.WaitGroup
		var mu sync.Mutex
		codes := map[int]int{}
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 250; i++ {
					c := post(fmt.Sprintf("attacker-%d-%d", w, i))
					mu.Lock()
					codes[c]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if codes[404] != 2000 {
			t.Fatalf("unknown providers: %v", codes)
		}
		after, body := metricsSize(t, e)
		if strings.Contains(body, "attacker-") || after > before+2048 {
			t.Fatalf("/metrics grew from %d to %d bytes", before, after)
		}
	}, func(c *app.Config) { c.PublicRateLimit = 0 })

	// With the public limit on, one address is throttled.
	e := apptest.Start(t, "sqlite", func(c *app.Config) { c.PublicRateLimit = 5 })
	limited := 0
	for i := 0; i < 40; i++ {
		resp, err := http.Get(e.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			limited++
		} else if resp.StatusCode != 200 {
			t.Fatalf("healthz: %d", resp.StatusCode)
		}
	}
	if limited == 0 {
		t.Fatal("40 quick public requests from one address: no 429")
	}
}
