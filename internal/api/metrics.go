package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series holds each route's and status's resolved counter and
	// histogram, so a request does not hash its labels again: at most the
	// routes times the statuses they answer, as the vectors hold.
	mu     sync.RWMutex
	series map[seriesKey]*routeSeries
}

type seriesKey struct {
	route  string
	status int
}

type routeSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payd_http_requests_total", Help: "HTTP requests by route pattern and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "payd_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route"}),
	}
	m.series = map[seriesKey]*routeSeries{}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *httpMetrics) observe(route string, status int, d time.Duration) {
	k := seriesKey{route, status}
	m.mu.RLock()
	s := m.series[k]
	m.mu.RUnlock()
	if s == nil {
		s = &routeSeries{requests: m.requests.WithLabelValues(route, strconv.Itoa(status)), duration: m.duration.WithLabelValues(route)}
		m.mu.Lock()
		m.series[k] = s
		m.mu.Unlock()
	}
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}
