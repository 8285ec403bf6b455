package api

import (
	"fmt"
	"testing"
)

// TestClientLimiterBounded (issue 15, finding 4): a flood from ever new
// addresses never grows the public limiter past its bound, and one address
// past its burst is refused.
func TestClientLimiterBounded(t *testing.T) {
	l := newClientLimiter(1, 3, 1000)
	for i := 0; i < 50_000; i++ {
		l.allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		if n := l.size(); n > 1000 {
			t.Fatalf("after %d addresses the limiter holds %d", i+1, n)
		}
	}
	refused := 0
	for i := 0; i < 10; i++ {
		if _, ok := l.allow("192.0.2.1"); !ok {
			refused++
		}
	}
	if refused < 6 {
		t.Fatalf("one address past its burst: %d of 10 refused", refused)
	}
}
