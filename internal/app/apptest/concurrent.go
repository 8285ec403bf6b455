package apptest

import (
	"sync"
	"testing"
)

// Concurrently runs do(0) … do(n-1) at once, at most limit at a time (all n
// when limit is 0), and returns what each returned, in the order of i.
func Concurrently(n, limit int, do func(i int) string) []string {
	if limit <= 0 {
		limit = n
	}
	out := make([]string, n)
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = do(i)
		}()
	}
	wg.Wait()
	return out
}

// TallyApproval counts the statuses of requests under the four-eyes rule:
// through (those that went ahead without a second person: any of ahead)
// and waiting (requires_approval). Any other status fails t, naming the
// request by its index.
func TallyApproval(t testing.TB, statuses []string, ahead ...string) (through, waiting int) {
	t.Helper()
next:
	for i, s := range statuses {
		if s == "requires_approval" {
			waiting++
			continue
		}
		for _, a := range ahead {
			if s == a {
				through++
				continue next
			}
		}
		t.Fatalf("request %d: %s", i, s)
	}
	return through, waiting
}
