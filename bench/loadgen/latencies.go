package loadgen

import (
	"math"
	"slices"
	"time"
)

// Latencies is a set of durations sorted in ascending order.
type Latencies []time.Duration

// Sorted returns a sorted copy of ds.
func Sorted(ds []time.Duration) Latencies {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100): the
// smallest latency that at least p % of them do not exceed; 0 when empty.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(l))*p/100)) - 1
	return l[min(max(i, 0), len(l)-1)]
}

// Max is the largest latency; 0 when empty.
func (l Latencies) Max() time.Duration { return l.Percentile(100) }

// MS is d in milliseconds, with microsecond precision.
func MS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// US is d in microseconds, with nanosecond precision.
func US(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
